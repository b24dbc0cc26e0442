"""The one rule for a project name a person or a model types (``--project``, the MCP tools'
``project``, the console's project fields): a project tag or an alias of one, in any case,
resolves to its canonical project; anything else is refused with the close names (``quokka``
-> ``did you mean 'quokka-api'?``) and the projects that exist, never a silent "no match"."""

from __future__ import annotations

import difflib
from typing import Any, Final

import psycopg

from agents_memory.errors import UnknownProjectError

LISTED: Final = 12
"""At most this many project names are listed when a name matches none."""


def project_names(conn: psycopg.Connection[Any]) -> dict[str, str]:
    """Every project tag's name (aliases included) -> its canonical project's name."""
    rows = conn.execute(
        "SELECT p.name, c.name FROM project_tags p"
        " JOIN project_tags c ON c.id = canonical_project_tag_id(p.id) ORDER BY p.name"
    ).fetchall()
    return {str(name): str(canonical) for name, canonical in rows}


def resolve_project(conn: psycopg.Connection[Any], name: str) -> str:
    """The canonical project ``name`` names (itself, or the project it is an alias of; any
    case). Raises :class:`UnknownProjectError` naming the close projects and the known ones."""
    known = project_names(conn)
    wanted = name.strip()
    if wanted in known:
        return known[wanted]
    folded = {key.lower(): value for key, value in known.items()}
    if wanted.lower() in folded:
        return folded[wanted.lower()]
    raise unknown_project(wanted, known)


def unknown_project(name: str, known: dict[str, str]) -> UnknownProjectError:
    """The refusal of ``name``: the projects whose name holds it or comes close, then the
    canonical projects there are."""
    lowered = name.lower()
    close: list[str] = []
    for key, project in known.items():
        if lowered and (lowered in key.lower() or key.lower() in lowered):
            close.append(project)
    for key in difflib.get_close_matches(lowered, [k.lower() for k in known], n=3, cutoff=0.6):
        close.append(next(v for k, v in known.items() if k.lower() == key))
    suggestions = tuple(dict.fromkeys(close))[:3]
    canonical = sorted(set(known.values()))
    if not canonical:
        message = f"no project {name!r}: no project is known yet (`mcp-agents-memory tags list`)"
    else:
        hint = (
            " (did you mean " + " or ".join(repr(s) for s in suggestions) + "?)"
            if suggestions
            else ""
        )
        shown = ", ".join(canonical[:LISTED])
        more = f" and {len(canonical) - LISTED} more" if len(canonical) > LISTED else ""
        message = f"no project {name!r}{hint}; projects: {shown}{more}"
    return UnknownProjectError(message, name=name, suggestions=suggestions)
