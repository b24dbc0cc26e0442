"""Per-role LLM routing with a fallback endpoint (the JS original's ``<ROLE>_PROVIDER`` and
``LOCAL_GROK_FALLBACK`` ideas).

* **Primary, per role.** ``<ROLE>_BASE_URL`` gives a role an endpoint of its own; otherwise
  ``<ROLE>_PROVIDER`` picks ``local`` (``LOCAL_LLM_BASE_URL``) or any other name (``xai``,
  ``openai``, ``cloud``…: the cloud endpoint ``LLM_BASE_URL``); unset, the local endpoint when
  there is one, else the cloud one. A role URL is treated as local unless the role's provider
  names a cloud (then ``LLM_API_KEY`` is sent).
* **Fallback.** ``LLM_FALLBACK_BASE_URL`` (+ ``LLM_FALLBACK_API_KEY``, ``LLM_FALLBACK_MODEL``,
  ``LLM_FALLBACK_PROVIDER``: cloud unless ``local``) is asked when the primary *fails*:
  unreachable, timed out, marked down, an HTTP error. Not when the primary's budget is spent
  nor when its answer is invalid: a spent budget degrades to heuristics, as without fallback.
* **Budgets per endpoint.** Each endpoint's spend is recorded under its own ``llm_usage`` role
  (``tagger`` for the primary, ``tagger@fallback`` for the fallback) and each is held to the
  role's daily budget on its own.

Backends are shared per endpoint, so a primary marked down is skipped by every role at once.
"""

from __future__ import annotations

from dataclasses import dataclass

from agents_memory.coldpath.llm import (
    ROLES,
    Endpoint,
    OpenAICompatibleLLM,
    UsageRecorder,
    llm_endpoint,
    role_model,
)
from agents_memory.coldpath.replies import ReplyT
from agents_memory.config import Settings
from agents_memory.errors import ConfigError

FALLBACK_LABEL = "@fallback"


def _is_local(provider: str | None) -> bool:
    return provider is None or provider.strip().lower() == "local"


def role_endpoint(settings: Settings, role: str) -> Endpoint | None:
    """The endpoint a role asks first (``None``: no endpoint for it)."""
    provider = getattr(settings, f"{role}_provider", None)
    own = getattr(settings, f"{role}_base_url", None)
    if own:
        local = _is_local(provider)
        return Endpoint(str(own).rstrip("/"), settings.llm_api_key, local)
    if provider is not None and settings.local_llm_base_url and settings.llm_base_url:
        if _is_local(provider):
            return Endpoint(settings.local_llm_base_url.rstrip("/"), settings.llm_api_key, True)
        return llm_endpoint(settings.model_copy(update={"local_llm_base_url": None}))
    return llm_endpoint(settings)


def fallback_endpoint(settings: Settings) -> Endpoint | None:
    url = settings.llm_fallback_base_url
    if not url:
        return None
    local = settings.llm_fallback_provider is not None and _is_local(settings.llm_fallback_provider)
    return Endpoint(url.rstrip("/"), settings.llm_fallback_api_key, local)


@dataclass(slots=True)
class RoutedLLM:
    """The Cold Path's LLM: each role's primary backend, then the fallback backend."""

    routes: dict[str, list[OpenAICompatibleLLM]]

    @property
    def available(self) -> bool:
        return True

    def complete(
        self,
        role: str,
        reply: type[ReplyT],
        *,
        system: str,
        user: str,
        max_tokens: int = 256,
    ) -> ReplyT | None:
        for backend in self.routes.get(role, []):
            answer = backend.attempt(role, reply, system=system, user=user, max_tokens=max_tokens)
            if not answer.endpoint_failed:
                return answer.value
        return None

    def close(self) -> None:
        seen: set[int] = set()
        for chain in self.routes.values():
            for backend in chain:
                if id(backend) not in seen:
                    seen.add(id(backend))
                    backend.close()


def create_routed_llm(settings: Settings, usage: UsageRecorder) -> RoutedLLM | None:
    """Every role's chain of backends, or ``None`` when no role has any endpoint."""
    backends: dict[tuple[Endpoint, str], OpenAICompatibleLLM] = {}

    def backend(endpoint: Endpoint, label: str, model: str | None) -> OpenAICompatibleLLM:
        key = (endpoint, label)
        if key not in backends:
            backends[key] = OpenAICompatibleLLM(
                settings, endpoint, usage, usage_label=label, model=model
            )
        return backends[key]

    fallback = fallback_endpoint(settings)
    routes: dict[str, list[OpenAICompatibleLLM]] = {}
    for role in ROLES:
        chain = []
        primary = role_endpoint(settings, role)
        if primary is not None:
            if not primary.local and role_model(settings, role) is None:
                raise ConfigError(
                    f"{primary.base_url} is a cloud endpoint but no model is set: set "
                    f"LLM_MODEL (or {role.upper()}_MODEL)"
                )
            chain.append(backend(primary, "", None))
        if fallback is not None:
            model = settings.llm_fallback_model or role_model(settings, role)
            if not fallback.local and model is None:
                raise ConfigError(
                    "LLM_FALLBACK_BASE_URL is set but no model is: set LLM_FALLBACK_MODEL"
                )
            chain.append(backend(fallback, FALLBACK_LABEL, settings.llm_fallback_model))
        if chain:
            routes[role] = chain
    if not routes:
        return None
    return RoutedLLM(routes)


def create_llm(settings: Settings, usage: UsageRecorder) -> RoutedLLM | None:
    """The configured LLM (each role routed to its endpoint, then the fallback), or ``None``
    without any endpoint. ``usage`` reads and records spend
    (:class:`~agents_memory.coldpath.llm.DbUsageRecorder` in production). Raises
    :class:`ConfigError` for a cloud endpoint without a model."""
    return create_routed_llm(settings, usage)
