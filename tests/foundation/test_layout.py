"""The tree keeps its shape: all SQL in ``store/``, small modules, short functions.

The conventions are written down in ARCHITECTURE.md ("Rules the tests keep"); these tests are how
they stay true. Each test lists every offender with its path and line.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator
from pathlib import Path

import agents_memory

PACKAGE = Path(agents_memory.__file__).parent
REPO = PACKAGE.parent
MAX_MODULE_LINES = 500
MAX_FUNCTION_LINES = 60
LONG_REASON = "Long because"

# SQL is written with its keywords in capitals; a string literal that opens with one of these
# statements is SQL. Bare transaction words (BEGIN, COMMIT) are left out: PEM headers use them.
SQL_OPENING = re.compile(
    r"""\A\s*(
        SELECT\s
      | INSERT\s+INTO\s
      | UPDATE\s+\S+\s+SET\s
      | DELETE\s+FROM\s
      | CREATE\s+(OR\s+REPLACE\s+|UNIQUE\s+|TEMP(ORARY)?\s+)?
            (TABLE|INDEX|EXTENSION|VIEW|FUNCTION|TRIGGER|SCHEMA|ROLE|DATABASE|MATERIALIZED)\b
      | ALTER\s+(TABLE|INDEX|ROLE|DATABASE|SYSTEM)\s
      | DROP\s+(TABLE|INDEX|VIEW|FUNCTION|EXTENSION|SCHEMA|DATABASE|ROLE)\s
      | WITH\s+(RECURSIVE\s+)?\w+\s+AS\s*\(
      | TRUNCATE\s
      | LISTEN(\s|\Z)
      | UNLISTEN(\s|\Z)
      | NOTIFY\s
      | VACUUM\b
      | COPY\s+\S+.*\b(FROM|TO)\b
      | SET\s+(LOCAL\s+|SESSION\s+)?\w+\s*(=|TO\s)
    )""",
    re.VERBOSE | re.DOTALL,
)


def _modules() -> Iterator[tuple[Path, ast.Module]]:
    for path in sorted(PACKAGE.rglob("*.py")):
        yield path, ast.parse(path.read_text(encoding="utf-8"), filename=str(path))


def _where(path: Path, line: int) -> str:
    return f"{path.relative_to(REPO)}:{line}"


def _docstring_node(node: ast.AST) -> ast.Constant | None:
    body = getattr(node, "body", None)
    if (
        isinstance(body, list)
        and body
        and isinstance(body[0], ast.Expr)
        and isinstance(body[0].value, ast.Constant)
        and isinstance(body[0].value.value, str)
    ):
        return body[0].value
    return None


def _string_literals(tree: ast.Module) -> Iterator[ast.Constant]:
    """Every string constant that is not a docstring; an f-string counts by its first piece."""
    docstrings = {id(doc) for node in ast.walk(tree) if (doc := _docstring_node(node)) is not None}
    inside_fstrings: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.JoinedStr):
            inside_fstrings.update(id(part) for part in node.values[1:])
    for node in ast.walk(tree):
        if (
            isinstance(node, ast.Constant)
            and isinstance(node.value, str)
            and id(node) not in docstrings
            and id(node) not in inside_fstrings
        ):
            yield node


# The SQL rule is about OUR database (PostgreSQL). A client that keeps its sessions in its own
# SQLite file is read by its adapter, and the queries on that file belong to the adapter: they
# describe the client's schema, not ours. These modules may hold SQLite query text; each must read
# the client's store only through ``adapters/_sqlite.py`` (a read-only ``sqlite3`` connection).
CLIENT_SQLITE_READERS = frozenset({"adapters/opencode.py", "adapters/hermes.py"})
SQLITE_READER_IMPORT = "from agents_memory.adapters import _sqlite"


def _reads_a_client_sqlite_store(path: Path) -> bool:
    relative = path.relative_to(PACKAGE).as_posix()
    return relative in CLIENT_SQLITE_READERS and SQLITE_READER_IMPORT in path.read_text(
        encoding="utf-8"
    )


def _sql_outside_store() -> list[str]:
    found = []
    for path, tree in _modules():
        if path.relative_to(PACKAGE).parts[0] == "store" or _reads_a_client_sqlite_store(path):
            continue
        for literal in _string_literals(tree):
            if SQL_OPENING.match(literal.value):
                found.append(f"{_where(path, literal.lineno)}: {literal.value.strip()[:60]!r}")
    return found


def test_sql_text_lives_only_in_the_store_package() -> None:
    offenders = _sql_outside_store()
    assert not offenders, "SQL outside agents_memory/store/ (move it into a store function):\n" + (
        "\n".join(offenders)
    )


def test_the_client_sqlite_readers_go_through_the_read_only_helper_and_never_psycopg() -> None:
    for relative in sorted(CLIENT_SQLITE_READERS):
        text = (PACKAGE / relative).read_text(encoding="utf-8")
        assert SQLITE_READER_IMPORT in text, f"{relative} must read through adapters/_sqlite.py"
        assert "psycopg" not in text, f"{relative} is a client-store reader: no PostgreSQL here"


def test_the_sql_detector_sees_statements_and_not_prose() -> None:
    sql = [
        "SELECT 1",
        "\n    SELECT id FROM memory WHERE x = %s",
        "INSERT INTO memory (a) VALUES (%s)",
        "UPDATE memory SET tags = %s",
        "DELETE FROM memory WHERE id = %s",
        "CREATE INDEX IF NOT EXISTS i ON memory (a)",
        "WITH recent AS (SELECT 1) SELECT * FROM recent",
        "LISTEN ",
        "NOTIFY memory_new",
        "SET LOCAL statement_timeout = 0",
    ]
    prose = [
        "select a client with --platform",
        "Update the settings and run again",
        "-----BEGIN PRIVATE KEY-----",
        "BEGIN",
        "With --dry-run nothing is written",
        "Create the database first",
        "SELECTED",
    ]
    assert [s for s in sql if not SQL_OPENING.match(s)] == []
    assert [s for s in prose if SQL_OPENING.match(s)] == []


def test_no_module_is_longer_than_500_lines() -> None:
    offenders = []
    for path in sorted(PACKAGE.rglob("*.py")):
        lines = len(path.read_text(encoding="utf-8").splitlines())
        if lines > MAX_MODULE_LINES:
            offenders.append(f"{path.relative_to(REPO)}: {lines} lines")
    assert not offenders, "split these modules by noun:\n" + "\n".join(offenders)


def _body_lines(node: ast.FunctionDef | ast.AsyncFunctionDef) -> int:
    """Lines of the function's body after its docstring (a long signature does not count)."""
    body = node.body[1:] if _docstring_node(node) is not None else node.body
    if not body:
        return 0
    assert node.end_lineno is not None
    return node.end_lineno - body[0].lineno + 1


def _long_functions_without_a_reason() -> list[str]:
    found = []
    for path, tree in _modules():
        for node in ast.walk(tree):
            if not isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                continue
            lines = _body_lines(node)
            if lines > MAX_FUNCTION_LINES and LONG_REASON not in (ast.get_docstring(node) or ""):
                found.append(f"{_where(path, node.lineno)}: {node.name}() has {lines} body lines")
    return found


def test_a_function_over_60_lines_says_in_its_docstring_why_it_is_long() -> None:
    offenders = _long_functions_without_a_reason()
    assert not offenders, (
        f"split these functions into named parts, or add a '{LONG_REASON} …' sentence to the "
        "docstring:\n" + "\n".join(offenders)
    )
