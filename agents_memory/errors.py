"""The package's exceptions, kept shallow.

::

    AgentsMemoryError            base; its message is one line a person can act on
    ├── ConfigError              a setting has a bad value
    ├── DatabaseError            the database cannot be reached or used
    │   └── SchemaError          migrations failed or the schema is newer than this code
    ├── EmbeddingMismatchError   vectors of another model or dimension (stored, or returned by
    │                            the endpoint); run ``reembed`` or fix ``EMBEDDING_DIM``
    ├── EmbeddingUnavailableError  the embedding backend cannot load or answer; search falls
    │   │                        back to full-text only
    │   └── EmbedderUnavailable  the Cold Path's embedder job found the backend failing even
    │                            on a probe text: an outage, not a bad row (the job pauses)
    ├── ReembedError             ``reembed`` cannot run (no pgvector, nothing to rebuild…)
    ├── ColdPathBusy             another Cold Path worker holds the singleton lock
    ├── TagEditError             a tag edit that cannot be done (unknown name, alias cycle…)
    ├── SearchArgumentError      an argument a search cannot take (also a ``ValueError``)
    ├── UnknownProjectError      a project name no tag has (the message names the close ones)
    ├── SearchRefused            a search the daemon's socket does not answer (another
    │                            identity, bad arguments): the caller searches itself
    ├── KnowledgeError           a ``manage_knowledge`` / ``save_message`` request that cannot
    │                            be done (the message says what to send instead)
    ├── OwnerRequestError        a forget, restore or pause request that cannot be done (it
    │                            names no rows, an unknown or not-archived id…)
    ├── BundleError              an export bundle that cannot be imported (bad checksum, newer
    │                            schema, not a bundle) or an export that cannot be written
    ├── TeamError                a team command that cannot be done (not the schema's owner,
    │                            no CREATEROLE, a role already on the team…)
    ├── ConfigFileError          a client's config file cannot be read or has an unexpected
    │                            shape; it is left untouched
    └── AdapterError             an unknown platform name, or an adapter cannot do what was asked
        ├── CodexRpcError        ``codex app-server`` did not answer what the install asked
        └── StoreUnreadable      a client's SQLite store cannot be read now (``issue`` says why)

Parsers never raise for bad input lines: they report them and keep going.
:func:`first_line` turns any exception (ours or a library's) into the one line a log or a
``cold_error`` column shows.
"""

from __future__ import annotations

from typing import Any


class AgentsMemoryError(Exception):
    """Base class; ``str(exc)`` is a single line for the user."""


class ConfigError(AgentsMemoryError):
    pass


class DatabaseError(AgentsMemoryError):
    pass


class SchemaError(DatabaseError):
    pass


class EmbeddingMismatchError(AgentsMemoryError):
    pass


class EmbeddingUnavailableError(AgentsMemoryError):
    pass


class EmbedderUnavailable(EmbeddingUnavailableError):
    pass


class ReembedError(AgentsMemoryError):
    pass


class ColdPathBusy(AgentsMemoryError):
    pass


class TagEditError(AgentsMemoryError):
    """A tag edit that cannot be done (unknown name, alias cycle, decided suggestion)."""


class SearchArgumentError(AgentsMemoryError, ValueError):
    """An argument a search cannot take. ``argument`` names it (``"date_range"``) when the
    fault is one argument's text, ``None`` when the filters do not fit together."""

    def __init__(self, message: str, *, argument: str | None = None, value: str = "") -> None:
        super().__init__(message)
        self.argument = argument
        self.value = value


class UnknownProjectError(AgentsMemoryError, ValueError):
    """A project name that is no project tag nor an alias of one. ``str(exc)`` says which
    projects come close (``did you mean 'quokka-api'?``) and which exist; ``suggestions``
    holds the close ones."""

    def __init__(self, message: str, *, name: str, suggestions: tuple[str, ...] = ()) -> None:
        super().__init__(message)
        self.name = name
        self.suggestions = suggestions


class OwnerRequestError(AgentsMemoryError):
    pass


class TeamError(AgentsMemoryError):
    pass


class BundleError(AgentsMemoryError):
    pass


class ConfigFileError(AgentsMemoryError):
    """A client's config file cannot be read or has an unexpected shape; it is left untouched."""


class AdapterError(AgentsMemoryError):
    pass


class CodexRpcError(AdapterError):
    pass


class StoreUnreadable(AdapterError):
    """A client's SQLite store cannot be read now; ``issue`` (a ``ParseIssue``) says why, and
    the adapter reports it as a counted problem."""

    def __init__(self, issue: Any) -> None:
        super().__init__(issue.reason)
        self.issue = issue


def first_line(exc: BaseException) -> str:
    """The first non-empty line of ``str(exc)``, else the exception's class name: how an error
    is shown in one line (CLI, logs, status)."""
    for line in str(exc).splitlines():
        if line.strip():
            return line.strip()
    return type(exc).__name__


class SearchRefused(AgentsMemoryError):
    """The request is not one this daemon answers (another identity, bad arguments)."""


class KnowledgeError(AgentsMemoryError):
    """A knowledge or save request that cannot be done; the message says what to send instead."""
