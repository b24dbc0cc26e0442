"""Settings: read once per entry point from the environment and the user's ``.env`` file.

Variable names follow the JS original so an existing ``.env`` carries over. Nothing else in the
package
reads ``os.environ``; entry points call :func:`load_settings` and pass the result down.
"""

from __future__ import annotations

import os
import socket
from pathlib import Path
from typing import Annotated, Any, Literal

import platformdirs
from pydantic import Field, ValidationError, field_validator
from pydantic_settings import BaseSettings, NoDecode, SettingsConfigDict

from agents_memory.errors import ConfigError
from agents_memory.paths import (
    APP_NAME,
    brief_socket_path,
    capture_socket_path,
    hook_budget_ms,
    login_name,
    user_config_dir,
    user_state_dir,
)

__all__ = [
    "APP_NAME",
    "Settings",
    "brief_socket_path",
    "capture_socket_path",
    "default_env_file",
    "hook_budget_ms",
    "load_settings",
    "user_config_dir",
    "user_state_dir",
]


CommaList = Annotated[tuple[str, ...], NoDecode]

SECRET_SETTINGS = (
    "database_url",
    "db_pass",
    "mcp_http_token",
    "openai_api_key",
    "llm_api_key",
    "llm_fallback_api_key",
)
"""Settings whose values are passwords or tokens: never shown, and masked in every message
(:mod:`agents_memory.masking`)."""


def default_env_file() -> Path:
    """``$MEMORY_CONFIG_PATH`` if set, else ``<user config dir>/mcp-agents-memory/.env``."""
    override = os.environ.get("MEMORY_CONFIG_PATH")
    return Path(override) if override else user_config_dir() / ".env"


class Settings(BaseSettings):
    """Every knob of the product. Field names are the environment variable names, lower-cased."""

    model_config = SettingsConfigDict(
        env_file_encoding="utf-8",
        extra="ignore",
        case_sensitive=False,
        frozen=True,
    )

    # --- database -------------------------------------------------------------------------
    database_url: str | None = Field(None, description="PostgreSQL URL; unset = embedded server")
    db_host: str | None = None
    db_port: int = Field(5432, ge=1, le=65535)
    db_user: str | None = None
    db_pass: str | None = None
    db_name: str | None = None
    db_ssl: str | None = Field(None, description="sslmode for DB_* settings (e.g. require)")
    memory_data_dir: Path | None = Field(None, description="where the embedded server lives")
    embedded_listen: str | None = Field(
        None, description="TCP address(es) the embedded server also listens on (for a team)"
    )
    embedded_port: int = Field(5432, ge=1, le=65535)
    db_pool_max: int = Field(4, ge=1, le=64)

    # --- identity ---------------------------------------------------------------------------
    user_name: str = Field(default_factory=login_name)
    device_name: str = Field(default_factory=socket.gethostname)

    # --- capture ----------------------------------------------------------------------------
    capture_enabled_platforms: CommaList = Field(
        (), description="platforms to capture (names in `memory-capture status`); empty = all"
    )
    capture_exclude: CommaList = ()
    capture_rescan_sec: float = Field(30.0, gt=0)
    capture_debounce_ms: int = Field(200, ge=0, le=60_000)
    redact_enabled: bool = True

    # --- recall -----------------------------------------------------------------------------
    short_term_days: int = Field(3, ge=0, le=3650)
    short_term_token_limit: int = Field(8000, ge=0)
    search_fallback_threshold: float = Field(0.3, ge=0, le=1)
    search_recency_halflife_days: float = Field(30.0, gt=0)
    instructions_max_chars: int = Field(1900, ge=200, le=100_000)
    hook_timeout_ms: int = Field(1500, ge=50, le=60_000)
    prompt_recall: bool = Field(
        True, description="per-prompt recall: the few memories a prompt needs (off = never)"
    )
    prompt_hook_timeout_ms: int = Field(300, ge=50, le=60_000)
    mcp_http_token: str | None = Field(None, description="bearer token for serve --http")
    mcp_http_allowed_hosts: CommaList = Field(
        (), description="extra Host names serve --http answers (DNS-rebinding allow-list)"
    )

    # --- embeddings -------------------------------------------------------------------------
    embedding_backend: Literal["local", "openai", "none"] = "local"
    embedding_model: str | None = None
    embedding_base_url: str | None = None
    embedding_dim: int | None = Field(None, ge=1, le=4000, description="openai backend only")
    openai_api_key: str | None = None

    # --- cold path --------------------------------------------------------------------------
    cold_path_enabled: bool = True
    cold_path_interval_sec: float = Field(60.0, gt=0)
    cold_path_batch_size: int = Field(5, ge=1, le=10_000)
    archive_after_days: int = Field(0, ge=0)
    local_llm_base_url: str | None = None
    tagger_model: str | None = None
    librarian_enabled: bool = True
    librarian_msg_threshold: int = Field(30, ge=1)
    librarian_cooldown_hours: float = Field(24.0, ge=0)
    llm_daily_token_budget: int = Field(200_000, ge=0)
    cold_path_warmup_sec: float = Field(30.0, ge=0, description="pause before the first tick")
    cold_path_embed_batch_size: int = Field(32, ge=1, le=10_000)
    llm_base_url: str | None = Field(None, description="cloud OpenAI-compatible endpoint")
    llm_api_key: str | None = None
    llm_model: str | None = Field(None, description="default model for every Cold Path role")
    librarian_model: str | None = None
    clusterer_model: str | None = None
    project_alias_judge_model: str | None = None
    llm_response_format: Literal["json_schema", "json_object"] = "json_schema"
    llm_timeout_sec: float = Field(60.0, gt=0, le=3600)
    llm_price_in_per_mtok: float = Field(0.0, ge=0, description="USD per million input tokens")
    llm_price_out_per_mtok: float = Field(0.0, ge=0, description="USD per million output tokens")
    tagger_daily_token_budget: int | None = Field(None, ge=0)
    librarian_daily_token_budget: int | None = Field(None, ge=0)
    clusterer_daily_token_budget: int | None = Field(None, ge=0)
    project_alias_judge_daily_token_budget: int | None = Field(None, ge=0)
    tagger_provider: str | None = Field(None, description="local, or a cloud name (any other)")
    librarian_provider: str | None = None
    clusterer_provider: str | None = None
    project_alias_judge_provider: str | None = None
    tagger_base_url: str | None = Field(None, description="the role's own endpoint")
    librarian_base_url: str | None = None
    clusterer_base_url: str | None = None
    project_alias_judge_base_url: str | None = None
    llm_fallback_base_url: str | None = Field(None, description="asked when the primary fails")
    llm_fallback_provider: str | None = None
    llm_fallback_api_key: str | None = None
    llm_fallback_model: str | None = None

    # --- cold path jobs: tagger, librarian, clusterer, alias promoter ----------------------
    tagger_candidate_limit: int = Field(20, ge=1, le=200)
    tagger_candidate_strategy: Literal["oldest", "frequent"] = "oldest"
    librarian_recent_slice: int = Field(25, ge=1, le=500)
    librarian_history_slice: int = Field(25, ge=0, le=500)
    librarian_max_tokens: int = Field(2048, ge=64)
    clusterer_period_days: int = Field(7, ge=1, le=366)
    clusterer_idle_minutes: float = Field(60.0, ge=0)
    clusterer_summary_max_chars: int = Field(900, ge=200, le=20_000)
    dtag_promote_enabled: bool = True
    dtag_promote_min_count: int = Field(10, ge=1)
    dtag_promote_window_days: int = Field(30, ge=1)
    project_alias_enabled: bool = True
    project_alias_max_tags: int = Field(120, ge=2)
    project_alias_candidate_limit: int = Field(12, ge=1)
    project_alias_pending_min: float = Field(0.85, ge=0, le=1)
    project_alias_rejudge_days: int = Field(30, ge=0)
    alias_auto_apply: bool = False

    # --- logging ----------------------------------------------------------------------------
    log_level: Literal["DEBUG", "INFO", "WARNING", "ERROR"] = "INFO"

    @field_validator(
        "capture_enabled_platforms", "capture_exclude", "mcp_http_allowed_hosts", mode="before"
    )
    @classmethod
    def _split_commas(cls, value: Any) -> Any:
        if isinstance(value, str):
            return tuple(part.strip() for part in value.split(",") if part.strip())
        return value

    @field_validator("database_url")
    @classmethod
    def _conninfo(cls, value: str | None) -> str | None:
        if not value:
            return None
        from psycopg.conninfo import conninfo_to_dict

        try:
            conninfo_to_dict(value)
        except Exception:  # the driver's message quotes the value: say what is wrong instead
            raise ValueError(
                "not a PostgreSQL URL (postgresql://USER:PASSWORD@HOST:PORT/DBNAME) "
                "or key=value connection string"
            ) from None
        return value

    @field_validator("log_level", mode="before")
    @classmethod
    def _upper(cls, value: Any) -> Any:
        return value.upper() if isinstance(value, str) else value

    def secrets(self) -> list[str]:
        """The configured passwords and tokens (and the password inside ``DATABASE_URL``)."""
        values = [str(v) for v in (getattr(self, name) for name in SECRET_SETTINGS) if v]
        if self.database_url:
            values.extend(_url_passwords(self.database_url))
        return values

    @property
    def uses_embedded_server(self) -> bool:
        return not self.database_url and not self.db_host

    @property
    def data_dir(self) -> Path:
        return self.memory_data_dir or Path(platformdirs.user_data_dir(APP_NAME))


def load_settings(env_file: Path | None = None, **overrides: Any) -> Settings:
    """Read settings once. A bad value raises :class:`ConfigError` with a one-line message."""
    path = env_file if env_file is not None else default_env_file()
    try:
        return Settings(_env_file=path if path.is_file() else None, **overrides)  # type: ignore[call-arg]
    except ValidationError as exc:
        raise ConfigError(_describe(exc, path)) from exc
    except UnicodeDecodeError as exc:
        raise ConfigError(
            f"{path} is not UTF-8 text (byte {exc.start} cannot be read): save it as UTF-8"
        ) from None


RACY_NS = 2_000_000_000
"""A ``.env`` file changed this recently (its modification or change time, in nanoseconds) is
read again at every :meth:`SettingsCache.load`: two writes within one tick of the file
system's clock can leave the same size and times."""


class SettingsCache:
    """:func:`load_settings` (no arguments) read again only when what it reads has changed:
    the environment (a keyed digest of every variable: no value is kept), the ``.env`` file
    (its path, inode, size, mode and times), the host and login names (the defaults of
    ``DEVICE_NAME`` and ``USER_NAME``). What it returns equals a fresh read; a file changed
    within :data:`RACY_NS` or that cannot be examined is read every time. For a long-running
    process that compares its settings with the files' at every request (the capture
    daemon's search, :mod:`agents_memory.cli.search_remote`)."""

    def __init__(self, racy_ns: int = RACY_NS) -> None:
        self._racy_ns = racy_ns
        self._key = os.urandom(16)
        self._kept: tuple[tuple[object, ...], Settings] | None = None

    def load(self) -> Settings:
        path = default_env_file()
        signature = self._signature(path)  # before the read: a change meanwhile is read next
        kept = self._kept
        if signature is not None and kept is not None and kept[0] == signature:
            return kept[1]
        settings = load_settings(path)
        if signature is not None:
            self._kept = (signature, settings)
        return settings

    def _signature(self, path: Path) -> tuple[object, ...] | None:
        """What the read depends on, or ``None`` when it cannot be trusted to tell a change."""
        import hashlib
        import time

        try:
            st = path.stat()
        except FileNotFoundError:
            file: tuple[int, ...] | None = None
        except OSError:
            return None
        else:
            if time.time_ns() - max(st.st_mtime_ns, st.st_ctime_ns) < self._racy_ns:
                return None
            file = (st.st_dev, st.st_ino, st.st_mode, st.st_size, st.st_mtime_ns, st.st_ctime_ns)
        environment = hashlib.blake2b(key=self._key, digest_size=32)
        for name, value in sorted(os.environ.items()):
            item = f"{len(name)}:{name}={len(value)}:{value}"
            environment.update(item.encode("utf-8", "surrogateescape"))
        return (str(path), file, environment.digest(), socket.gethostname(), login_name())


def configured_secrets(env_file: Path | None = None) -> list[str]:
    """Secrets as configured, read without validating anything: for masking the message of a
    configuration that did not load. Values from the environment and the ``.env`` file."""
    path = env_file if env_file is not None else default_env_file()
    values: list[str] = []
    names = {name.upper() for name in SECRET_SETTINGS}
    try:
        lines = path.read_text(encoding="utf-8", errors="replace").splitlines()
    except OSError:
        lines = []
    for line in lines:
        key, sep, value = line.strip().removeprefix("export ").partition("=")
        if sep and key.strip() in names:
            values.append(value.strip().strip("'\""))
    values.extend(os.environ[name] for name in names if os.environ.get(name))
    values.extend(p for v in list(values) for p in _url_passwords(v))
    return [v for v in values if v]


_NO_TUNNEL = (
    "no built-in SSH tunnel: open one yourself (ssh -L) or connect with DATABASE_URL and"
    " sslmode=require"
)
_V0 = "seed A v0.x setting, dead there too"

SEED_A_IGNORED: dict[str, str] = {
    "XAI_API_KEY": "no per-provider keys: set LLM_BASE_URL=https://api.x.ai/v1 and LLM_API_KEY",
    "GOOGLE_GENERATIVE_AI_API_KEY": "no per-provider keys: set LLM_BASE_URL to Gemini's"
    " OpenAI-compatible endpoint and LLM_API_KEY",
    "LOCAL_GROK_FALLBACK": "set LLM_FALLBACK_BASE_URL (any OpenAI-compatible endpoint, e.g."
    " https://api.x.ai/v1) with LLM_FALLBACK_API_KEY and LLM_FALLBACK_MODEL",
    "SSH_ENABLED": _NO_TUNNEL,
    "SSH_HOST": _NO_TUNNEL,
    "SSH_PORT": _NO_TUNNEL,
    "SSH_USER": _NO_TUNNEL,
    "SSH_KEY_PATH": _NO_TUNNEL,
    "LIBRARIAN_DEEP_THINKING": "no thinking mode; LIBRARIAN_MAX_TOKENS bounds the reply",
    "BRIEF_MAX_CHARS": "the brief is budgeted by SHORT_TERM_TOKEN_LIMIT and each client's"
    " injection limit",
    "JEV_ENABLED": "seed A's JEV check has no counterpart here",
    "JEV_THRESHOLD": "seed A's JEV check has no counterpart here",
    "AGENT_KEY": "legacy in seed A too",
    "BUZZ_*": "no Buzz chat ingest here",
    "TRIAGE_*": _V0,
    "EXTRACT_*": _V0,
    "AUDIT_*": _V0,
    "PROMOTION_ENABLED": _V0,
    "FORGETTING_*": _V0 + "; see ARCHIVE_AFTER_DAYS",
}
"""The JS original settings this product reads nowhere, each with why (``doctor`` names the ones
set).
A ``*`` stands for any run of characters (``BUZZ_*`` is every Buzz setting)."""


def ignored_seed_settings(env_file: Path | None = None) -> list[tuple[str, str]]:
    """The :data:`SEED_A_IGNORED` settings set in the environment or the ``.env`` file, as
    ``(name, why)`` sorted by name, read without validating anything."""
    import fnmatch

    path = env_file if env_file is not None else default_env_file()
    names = {name.upper() for name in os.environ}
    try:
        lines = path.read_text(encoding="utf-8", errors="replace").splitlines()
    except OSError:
        lines = []
    for line in lines:
        key, sep, _value = line.strip().removeprefix("export ").partition("=")
        if sep and key.strip() and not key.strip().startswith("#"):
            names.add(key.strip().upper())
    found = []
    for name in sorted(names):
        for pattern, why in SEED_A_IGNORED.items():
            if fnmatch.fnmatchcase(name, pattern):
                found.append((name, why))
                break
    return found


def _url_passwords(value: str) -> list[str]:
    """The password of a URL or ``password=`` of a key=value string, found leniently."""
    import re

    found = re.findall(r"://[^:/@\s]*:([^@\s]+)@", value)
    found += re.findall(r"\bpassword\s*=\s*'?([^'\s]+)", value)
    return found


def _describe(exc: ValidationError, env_file: Path) -> str:
    first = exc.errors()[0]
    name = str(first["loc"][0]).upper() if first["loc"] else "?"
    got = first.get("input")
    secret = name.lower() in SECRET_SETTINGS
    shown = f" (got {got!r})" if isinstance(got, str | int | float) and not secret else ""
    more = f"; {exc.error_count() - 1} more" if exc.error_count() > 1 else ""
    return (
        f"invalid setting {name}: {str(first['msg']).removeprefix('Value error, ')}{shown}{more} "
        f"— fix it in the environment or in {env_file}"
    )
