"""The Cold Path's LLM: an OpenAI-compatible chat endpoint behind budgets and a schema check.

* **Endpoint.** ``LOCAL_LLM_BASE_URL`` (llama.cpp ``llama-server``, llama-cpp-python, ollama,
  vLLM…) or else ``LLM_BASE_URL`` + ``LLM_API_KEY`` for a cloud (``OPENAI_API_KEY`` is used when
  that URL is OpenAI's). Neither configured: :func:`.llm_routing.create_llm` returns ``None``
  and every job uses its heuristic (``doctor``: ``degraded: no LLM``). Roles may have endpoints
  of their own and a fallback endpoint is asked when the primary fails: :mod:`.llm_routing`.
* **Models.** Per role (:data:`ROLES`): ``<ROLE>_MODEL``, else ``LLM_MODEL``; a local endpoint
  without any is sent ``"local"`` (llama-server serves whatever it loaded).
* **Structured output.** ``response_format`` ``json_schema`` (strict); a server that refuses it
  (llama-cpp-python answers HTTP 500 "Input should be 'text' or 'json_object'") is asked again
  with ``{"type": "json_object", "schema": …}`` and that choice is kept for the endpoint.
  ``LLM_RESPONSE_FORMAT=json_object`` starts there. Local calls also turn thinking off
  (thinking plus a grammar returns empty answers in llama.cpp).
* **Validation.** The answer must parse into the role's reply model
  (:mod:`agents_memory.coldpath.replies`; pydantic also writes the schema that is sent); an
  invalid answer is retried once, then ``None``.
* **Budgets.** Each role has a daily token budget (``<ROLE>_DAILY_TOKEN_BUDGET``, else
  ``LLM_DAILY_TOKEN_BUDGET``; 0 = no calls). Before every request the role's tokens for the
  UTC day are read; at or over budget no request is sent, the refusal is counted and a warning
  is logged once per role and day. After every answer calls, tokens in/out and the estimated
  cost (``LLM_PRICE_IN_PER_MTOK`` / ``LLM_PRICE_OUT_PER_MTOK``) are recorded in ``llm_usage``.
  If usage cannot be read, no request is sent.
* **Failures.** Requests time out after ``LLM_TIMEOUT_SEC`` with no SDK retries; a connection
  failure or timeout marks the endpoint down for :data:`DOWN_FOR_SEC` seconds, during which
  calls return ``None`` at once instead of each waiting for the timeout.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, date, datetime
from typing import TYPE_CHECKING, Any, Generic, Literal, Protocol

import psycopg

from agents_memory.coldpath.replies import ReplyT, parse_reply, reply_schema
from agents_memory.config import Settings
from agents_memory.errors import first_line
from agents_memory.store.coldpath import usage as usage_store

if TYPE_CHECKING:
    from openai import OpenAI

log = logging.getLogger(__name__)

ROLES = ("tagger", "librarian", "clusterer", "project_alias_judge")
DOWN_FOR_SEC = 60.0
OPENAI_HOST = "api.openai.com"
ResponseFormat = Literal["json_schema", "json_object"]


# --- configuration ---------------------------------------------------------------------------
@dataclass(frozen=True, slots=True)
class Endpoint:
    base_url: str
    api_key: str | None
    local: bool


def llm_endpoint(settings: Settings) -> Endpoint | None:
    """The configured chat endpoint, or ``None`` when the Cold Path runs without an LLM."""
    if settings.local_llm_base_url:
        return Endpoint(settings.local_llm_base_url.rstrip("/"), settings.llm_api_key, True)
    if settings.llm_base_url:
        key = settings.llm_api_key
        if key is None and OPENAI_HOST in settings.llm_base_url:
            key = settings.openai_api_key
        return Endpoint(settings.llm_base_url.rstrip("/"), key, False)
    return None


def role_model(settings: Settings, role: str) -> str | None:
    value = getattr(settings, f"{role}_model", None)
    return str(value) if value else settings.llm_model


def role_budget(settings: Settings, role: str) -> int:
    """Tokens (in + out) the role may spend per UTC day."""
    value = getattr(settings, f"{role}_daily_token_budget", None)
    return int(value) if value is not None else settings.llm_daily_token_budget


# --- usage ------------------------------------------------------------------------------------
class UsageRecorder(Protocol):
    def spent(self, role: str, day: date) -> int:
        """Tokens the role used on ``day``; raises when that cannot be known."""

    def record(
        self, role: str, day: date, *, tokens_in: int, tokens_out: int, cost: float
    ) -> None: ...

    def refused(self, role: str, day: date) -> None: ...


class DbUsageRecorder:
    """Usage in ``llm_usage``, on a connection of its own (autocommit), so that spend is
    recorded even when the job's unit of work rolls back. Reconnects after a failure."""

    def __init__(self, connect: Callable[[], psycopg.Connection[Any]]) -> None:
        self._connect = connect
        self._conn: psycopg.Connection[Any] | None = None
        self._lock = threading.Lock()

    def spent(self, role: str, day: date) -> int:
        tokens: int = self._run(lambda conn: usage_store.usage_on(conn, role, day).tokens)
        return tokens

    def record(self, role: str, day: date, *, tokens_in: int, tokens_out: int, cost: float) -> None:
        self._run(
            lambda conn: usage_store.record_usage(
                conn, role, day=day, tokens_in=tokens_in, tokens_out=tokens_out, est_cost=cost
            )
        )

    def refused(self, role: str, day: date) -> None:
        self._run(lambda conn: usage_store.record_usage(conn, role, day=day, calls=0, refused=1))

    def close(self) -> None:
        with self._lock:
            if self._conn is not None:
                self._conn.close()
                self._conn = None

    def _run(self, action: Callable[[psycopg.Connection[Any]], Any]) -> Any:
        with self._lock:
            for attempt in range(2):
                if self._conn is None or self._conn.closed:
                    self._conn = self._connect()
                    self._conn.autocommit = True
                try:
                    return action(self._conn)
                except psycopg.OperationalError:
                    self._conn.close()
                    self._conn = None
                    if attempt:
                        raise
            raise AssertionError("unreachable")


# --- the backend ------------------------------------------------------------------------------
@dataclass(frozen=True, slots=True)
class Attempt(Generic[ReplyT]):
    value: ReplyT | None
    endpoint_failed: bool


class LLMBackend(Protocol):
    """What :func:`.llm_routing.create_llm` returns (the Cold Path's :class:`~.base.LLM`,
    closable)."""

    @property
    def available(self) -> bool: ...

    def complete(
        self, role: str, reply: type[ReplyT], *, system: str, user: str, max_tokens: int = 256
    ) -> ReplyT | None: ...

    def close(self) -> None: ...


class OpenAICompatibleLLM:
    """:class:`~agents_memory.coldpath.base.LLM` over an OpenAI-compatible endpoint."""

    def __init__(
        self,
        settings: Settings,
        endpoint: Endpoint,
        usage: UsageRecorder,
        *,
        clock: Callable[[], datetime] = lambda: datetime.now(UTC),
        usage_label: str = "",
        model: str | None = None,
    ) -> None:
        from openai import OpenAI

        self.settings = settings
        self.endpoint = endpoint
        self.usage = usage
        self.usage_label = usage_label
        """Appended to the role in ``llm_usage`` (``tagger@fallback``): each endpoint's spend
        is recorded, and budgeted, on its own."""
        self.model = model
        self.response_format: ResponseFormat = settings.llm_response_format
        self._format_settled = False
        self._clock = clock
        self._warned: dict[str, date] = {}
        self._down_until = 0.0
        self._client: OpenAI = OpenAI(
            base_url=endpoint.base_url,
            api_key=endpoint.api_key or "not-needed",
            timeout=settings.llm_timeout_sec,
            max_retries=0,
        )

    @property
    def available(self) -> bool:
        return True

    def close(self) -> None:
        self._client.close()
        closer = getattr(self.usage, "close", None)
        if callable(closer):
            closer()

    def complete(
        self,
        role: str,
        reply: type[ReplyT],
        *,
        system: str,
        user: str,
        max_tokens: int = 256,
    ) -> ReplyT | None:
        return self.attempt(role, reply, system=system, user=user, max_tokens=max_tokens).value

    def attempt(
        self,
        role: str,
        reply: type[ReplyT],
        *,
        system: str,
        user: str,
        max_tokens: int = 256,
    ) -> Attempt[ReplyT]:
        """Like :meth:`complete`, also saying whether the endpoint failed (unreachable, timed
        out, an HTTP error): then a fallback endpoint may be asked."""
        schema = reply_schema(reply)
        for attempt in range(2):
            if not self._within_budget(role):
                return Attempt(None, endpoint_failed=False)
            text = self._ask(role, system, user, schema, max_tokens)
            if text is None:
                return Attempt(None, endpoint_failed=True)
            value, problem = parse_reply(text, reply)
            if value is not None:
                return Attempt(value, endpoint_failed=False)
            log.warning(
                "LLM answer for %s did not fit the schema (%s)%s",
                role,
                problem[:200],
                "; asking once more" if attempt == 0 else "; using the heuristic",
            )
        return Attempt(None, endpoint_failed=False)

    # --- budget -------------------------------------------------------------------------
    def _within_budget(self, role: str) -> bool:
        day = self._clock().astimezone(UTC).date()
        budget = role_budget(self.settings, role)
        label = role + self.usage_label
        try:
            spent = self.usage.spent(label, day)
        except psycopg.Error as exc:
            log.warning("cannot read LLM usage (%s); no LLM call for %s", first_line(exc), role)
            return False
        if spent < budget:
            return True
        try:
            self.usage.refused(label, day)
        except psycopg.Error:
            log.debug("could not count a refused LLM call", exc_info=True)
        if self._warned.get(role) != day:
            self._warned[role] = day
            log.warning(
                "LLM daily token budget for %s is spent (%d of %d tokens on %s UTC): using "
                "heuristics until tomorrow (raise %s_DAILY_TOKEN_BUDGET or "
                "LLM_DAILY_TOKEN_BUDGET to allow more)",
                label,
                spent,
                budget,
                day.isoformat(),
                role.upper(),
            )
        return False

    def _record(self, role: str, tokens_in: int, tokens_out: int) -> None:
        day = self._clock().astimezone(UTC).date()
        cost = (
            tokens_in * self.settings.llm_price_in_per_mtok
            + tokens_out * self.settings.llm_price_out_per_mtok
        ) / 1_000_000
        try:
            self.usage.record(
                role + self.usage_label, day, tokens_in=tokens_in, tokens_out=tokens_out, cost=cost
            )
        except psycopg.Error as exc:
            log.warning("could not record LLM usage for %s: %s", role, first_line(exc))

    # --- requests -----------------------------------------------------------------------
    def _ask(
        self, role: str, system: str, user: str, schema: dict[str, Any], max_tokens: int
    ) -> str | None:
        """One answer's text (format fallback included), or ``None`` when the endpoint failed."""
        import openai

        if time.monotonic() < self._down_until:
            return None
        model = self.model or role_model(self.settings, role) or "local"
        messages = [{"role": "system", "content": system}, {"role": "user", "content": user}]
        fmt = self.response_format
        try:
            return self._send(role, model, messages, schema, max_tokens, fmt)
        except (openai.APIConnectionError, openai.APITimeoutError) as exc:
            self._down_until = time.monotonic() + DOWN_FOR_SEC
            log.warning(
                "LLM endpoint %s unreachable (%s); heuristics for the next %.0f s",
                self.endpoint.base_url,
                type(exc).__name__,
                DOWN_FOR_SEC,
            )
            return None
        except openai.APIStatusError as exc:
            if (
                fmt == "json_schema"
                and not self._format_settled
                and exc.status_code
                in (
                    400,
                    422,
                    500,
                )
            ):
                return self._ask_json_object(role, model, messages, schema, max_tokens, exc)
            log.warning(
                "LLM endpoint %s answered HTTP %s for %s: %s",
                self.endpoint.base_url,
                exc.status_code,
                role,
                _status_detail(exc),
            )
            return None

    def _ask_json_object(
        self,
        role: str,
        model: str,
        messages: list[dict[str, str]],
        schema: dict[str, Any],
        max_tokens: int,
        refusal: Exception,
    ) -> str | None:
        import openai

        try:
            text = self._send(role, model, messages, schema, max_tokens, "json_object")
        except openai.OpenAIError as exc:
            log.warning(
                "LLM endpoint %s refused json_schema (%s) and json_object+schema (%s)",
                self.endpoint.base_url,
                _status_detail(refusal),
                _status_detail(exc),
            )
            return None
        log.warning(
            "LLM endpoint %s does not take response_format json_schema (%s); using "
            "json_object+schema from now on (set LLM_RESPONSE_FORMAT=json_object to skip "
            "the probe)",
            self.endpoint.base_url,
            _status_detail(refusal),
        )
        self.response_format = "json_object"
        self._format_settled = True
        return text

    def _send(
        self,
        role: str,
        model: str,
        messages: list[dict[str, str]],
        schema: dict[str, Any],
        max_tokens: int,
        fmt: ResponseFormat,
    ) -> str:
        response_format: dict[str, Any]
        if fmt == "json_schema":
            response_format = {
                "type": "json_schema",
                "json_schema": {"name": _schema_name(role), "schema": schema, "strict": True},
            }
        else:
            response_format = {"type": "json_object", "schema": schema}
        import openai

        local = self.endpoint.local
        response = self._client.chat.completions.create(  # type: ignore[call-overload]
            model=model,
            messages=messages,
            response_format=response_format,
            max_tokens=max_tokens if local else openai.omit,
            max_completion_tokens=openai.omit if local else max_tokens,
            extra_body={"chat_template_kwargs": {"enable_thinking": False}} if local else None,
        )
        if fmt == "json_schema":
            self._format_settled = True
        text = response.choices[0].message.content if response.choices else None
        used = response.usage
        if used is not None:
            tokens_in, tokens_out = int(used.prompt_tokens), int(used.completion_tokens)
        else:  # estimated: about four characters per token
            tokens_in = sum(len(m["content"]) for m in messages) // 4
            tokens_out = len(text or "") // 4
        self._record(role, tokens_in, tokens_out)
        return text or ""


def _schema_name(role: str) -> str:
    return "".join(c if c.isalnum() or c in "_-" else "_" for c in role)[:64] or "answer"


def _status_detail(exc: BaseException) -> str:
    status = getattr(exc, "status_code", None)
    body = getattr(exc, "body", None)
    message = body.get("message") if isinstance(body, dict) else None
    if isinstance(body, dict) and isinstance(body.get("error"), dict):
        message = body["error"].get("message")
    text = str(message).strip() if message else ""
    detail = (text.splitlines()[0] if text else first_line(exc))[:160]
    return f"HTTP {status}: {detail}" if status else detail
