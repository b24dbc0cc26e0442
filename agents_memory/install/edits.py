"""Render one :class:`~agents_memory.adapters.base.FileEdit` against a file's current text.

Pure functions: text in, text out (``None`` = delete the file), plus what the edit created so a
later uninstall can take exactly that away again. Nothing here touches the disk; the installer
reads, backs up and writes.

* JSON is edited in place (:mod:`agents_memory.install.jsontext`): every byte outside the
  keys we write is kept, and what we write takes the file's own indent (2 for a new file; a
  one-line file stays on one line), so uninstall gives back the original bytes.
* TOML goes through ``tomlkit`` (imported lazily), which keeps comments and formatting.
* ``text-block`` files hold one block between the begin/end markers; ``file`` is wholly ours.

When an edit changes nothing the original text is returned untouched, byte for byte.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator, MutableMapping, MutableSequence
from dataclasses import dataclass, field
from typing import Any

from agents_memory.adapters.base import (
    BLOCK_BEGIN,
    BLOCK_END,
    EnsureSetting,
    FileEdit,
    HookGroup,
    OwnedEntry,
    TextBlock,
    WholeFile,
    is_our_hook_command,
)
from agents_memory.errors import ConfigFileError
from agents_memory.install import jsontext

__all__ = [
    "Record",
    "Rendered",
    "present_entries",
    "refresh_block",
    "render_install",
    "render_uninstall",
]

KeyPath = tuple[str, ...]


@dataclass(slots=True)
class Record:
    """What this installer created in one file (kept in the install manifest)."""

    created_file: bool = False
    created_keys: set[KeyPath] = field(default_factory=set)
    """Containers and settings that did not exist before we added them."""
    owned_keys: set[KeyPath] = field(default_factory=set)
    """Entries we own beyond those the plan names (written by an adapter's post-install step,
    e.g. hook trust keyed by hook position)."""

    def merge(self, other: Record) -> None:
        self.created_file = self.created_file or other.created_file
        self.created_keys |= other.created_keys
        self.owned_keys |= other.owned_keys

    def as_json(self) -> dict[str, Any]:
        return {
            "created_file": self.created_file,
            "created_keys": sorted(list(k) for k in self.created_keys),
            "owned_keys": sorted(list(k) for k in self.owned_keys),
        }

    @classmethod
    def from_json(cls, data: Any) -> Record:
        if not isinstance(data, dict):
            return cls()
        return cls(
            bool(data.get("created_file")),
            {tuple(map(str, k)) for k in data.get("created_keys", []) if isinstance(k, list)},
            {tuple(map(str, k)) for k in data.get("owned_keys", []) if isinstance(k, list)},
        )


@dataclass(slots=True)
class Rendered:
    text: str | None
    """The new text, or ``None`` when the file should be deleted."""
    record: Record

    def parts(self) -> tuple[str | None, Record]:
        return self.text, self.record


# --- entry points ------------------------------------------------------------------------


def render_install(edit: FileEdit, original: str | None) -> Rendered:
    """The file's text with our entries in place. ``original`` is ``None`` for a missing file."""
    record = Record(created_file=original is None)
    if edit.format == "file":
        content = _whole(edit).content
        return Rendered(original if original == content else content, record)
    if edit.format == "text-block":
        return Rendered(_block_install(original or "", _block(edit)), record)
    doc = _Doc.load(edit, original)
    for entry in edit.entries:
        if isinstance(entry, OwnedEntry):
            doc.set_owned(entry, record)
        elif isinstance(entry, EnsureSetting):
            doc.ensure(entry, record)
        elif isinstance(entry, HookGroup):
            doc.put_hook_group(entry, record)
    return Rendered(doc.dump(original), record)


def render_uninstall(edit: FileEdit, original: str | None, record: Record) -> Rendered:
    """The file's text with our entries (and what we created for them) gone."""
    done = Record()
    if original is None:
        return Rendered(None, done)
    if edit.format == "file":
        return Rendered(None, done)
    if edit.format == "text-block":
        text = _block_remove(original)
        return Rendered(None if record.created_file and not text.strip() else text, done)
    doc = _Doc.load(edit, original)
    for entry in edit.entries:
        if isinstance(entry, OwnedEntry):
            doc.delete(entry.path)
        elif isinstance(entry, HookGroup):
            doc.remove_our_hooks(entry)
    for key in record.owned_keys:
        doc.delete(key)
    ensured = {e.path: e.value for e in edit.entries if isinstance(e, EnsureSetting)}
    for key in sorted(record.created_keys, key=len, reverse=True):
        doc.remove_if_ours(key, ensured)
    if record.created_file and doc.is_empty():
        return Rendered(None, done)
    return Rendered(doc.dump(original), done)


def refresh_block(original: str, content: str) -> str:
    """``original`` with the content between our markers replaced (unchanged if no block)."""
    span = _block_span(original)
    if span is None:
        return original
    begin, end = span
    body = _clean_block_content(content)
    return original[: begin + len(BLOCK_BEGIN)] + "\n" + body + "\n" + original[end:]


def present_entries(edit: FileEdit, original: str) -> list[str]:
    """Human names of our entries present in ``original`` (for ``status``)."""
    if edit.format == "file":
        return [edit.summary or "unit file"]
    if edit.format == "text-block":
        return ["managed block"] if _block_span(original) is not None else []
    doc = _Doc.load(edit, original)
    found = []
    for entry in edit.entries:
        if isinstance(entry, OwnedEntry) and doc.get(entry.path) is not None:
            found.append(".".join(entry.path))
        elif isinstance(entry, HookGroup) and any(True for _ in doc.our_handlers(entry)):
            found.append(f"{entry.event} hook")
    return found


# --- text blocks -------------------------------------------------------------------------


def _block(edit: FileEdit) -> TextBlock:
    blocks = [e for e in edit.entries if isinstance(e, TextBlock)]
    return blocks[0] if blocks else TextBlock()


def _whole(edit: FileEdit) -> WholeFile:
    files = [e for e in edit.entries if isinstance(e, WholeFile)]
    if not files:
        raise ConfigFileError(f"{edit.path}: plan has no content for this file")
    return files[0]


def _block_span(text: str) -> tuple[int, int] | None:
    """(index of the begin marker, index of the end marker) or ``None``."""
    begin = text.find(BLOCK_BEGIN)
    if begin < 0:
        return None
    end = text.find(BLOCK_END, begin + len(BLOCK_BEGIN))
    return None if end < 0 else (begin, end)


def _clean_block_content(content: str) -> str:
    body = content.replace(BLOCK_BEGIN, "").replace(BLOCK_END, "")
    return body.strip("\n")


def _block_install(original: str, block: TextBlock) -> str:
    if _block_span(original) is not None:
        return original  # the daemon owns the content of an existing block
    sep = "" if not original else ("\n" if original.endswith("\n") else "\n\n")
    body = _clean_block_content(block.content)
    return f"{original}{sep}{BLOCK_BEGIN}\n{body}\n{BLOCK_END}\n"


def _block_remove(original: str) -> str:
    span = _block_span(original)
    if span is None:
        return original
    begin, end = span
    end += len(BLOCK_END)
    if original[end : end + 1] == "\n":
        end += 1
    before, after = original[:begin], original[end:]
    if not after and before.endswith("\n\n"):
        before = before[:-1]  # the blank line install put before the block
    return before + after


# --- JSON and TOML documents -------------------------------------------------------------

_JSON_INDENT = re.compile(r"\A\s*[\[{][ \t]*\r?\n([ \t]+)\S")


class _Doc:
    """A parsed JSON or TOML document with the few operations plans need."""

    def __init__(self, edit: FileEdit, root: MutableMapping[str, Any]) -> None:
        self.edit = edit
        self.root = root
        self.changed = False

    @classmethod
    def load(cls, edit: FileEdit, text: str | None) -> _Doc:
        if edit.format == "toml":
            import tomlkit
            from tomlkit.exceptions import TOMLKitError

            try:
                return cls(edit, tomlkit.parse(text or ""))
            except TOMLKitError as exc:
                raise ConfigFileError(f"{edit.path}: not valid TOML ({exc})") from exc
        if text is None or not text.strip():
            return cls(edit, {})
        try:
            data = json.loads(text)
        except ValueError as exc:
            raise ConfigFileError(f"{edit.path}: not valid JSON ({exc})") from exc
        if not isinstance(data, dict):
            raise ConfigFileError(f"{edit.path}: expected a JSON object at the top level")
        return cls(edit, data)

    def dump(self, original: str | None) -> str:
        if not self.changed and original is not None:
            return original
        if self.edit.format == "toml":
            import tomlkit

            text = tomlkit.dumps(self.root)
            return text.rstrip("\n") + "\n" if text.strip() else ""
        return _dump_json(self.root, original)

    def is_empty(self) -> bool:
        return len(self.root) == 0

    # navigation

    def get(self, path: KeyPath) -> Any:
        node: Any = self.root
        for part in path:
            if not isinstance(node, MutableMapping) or part not in node:
                return None
            node = node[part]
        return node

    def _parent(self, path: KeyPath, record: Record) -> MutableMapping[str, Any]:
        """The mapping that holds ``path[-1]``, creating (and recording) missing containers."""
        node: MutableMapping[str, Any] = self.root
        for depth, part in enumerate(path[:-1], start=1):
            if part not in node:
                node[part] = self._new_container(leaf=False)
                record.created_keys.add(path[:depth])
                self.changed = True
            child = node[part]
            if not isinstance(child, MutableMapping):
                where = ".".join(path[:depth])
                raise ConfigFileError(f"{self.edit.path}: `{where}` is not a table/object")
            node = child
        return node

    def _new_container(self, *, leaf: bool) -> MutableMapping[str, Any]:
        if self.edit.format != "toml":
            return {}
        import tomlkit

        return tomlkit.table() if leaf else tomlkit.table(is_super_table=True)

    def _convert(self, value: Any, *, top: bool = False) -> Any:
        """A plain value as this document stores it (TOML: tables and inline tables)."""
        if self.edit.format != "toml" or not isinstance(value, dict):
            return value
        import tomlkit

        if top:
            table = tomlkit.table()
            for key, item in value.items():
                table[key] = self._convert(item)
            table.add(tomlkit.nl())
            return table
        inline = tomlkit.inline_table()
        inline.update(value)
        return inline

    # operations

    def set_owned(self, entry: OwnedEntry, record: Record) -> None:
        parent = self._parent(entry.path, record)
        name = entry.path[-1]
        current = parent.get(name)
        if current is None:
            parent[name] = self._convert(dict(entry.value), top=True)
            self.changed = True
            return
        if not isinstance(current, MutableMapping):
            raise ConfigFileError(f"{self.edit.path}: `{'.'.join(entry.path)}` is not a table")
        for key, value in entry.value.items():
            if key in entry.preserve and key in current:
                continue
            if _plain(current.get(key)) != value:
                current[key] = self._convert(value)
                self.changed = True

    def ensure(self, entry: EnsureSetting, record: Record) -> None:
        parent = self._parent(entry.path, record)
        if entry.path[-1] not in parent:
            parent[entry.path[-1]] = entry.value
            record.created_keys.add(entry.path)
            self.changed = True

    def delete(self, path: KeyPath) -> None:
        parent = self.get(path[:-1]) if len(path) > 1 else self.root
        if isinstance(parent, MutableMapping) and path[-1] in parent:
            del parent[path[-1]]
            self.changed = True

    def remove_if_ours(self, path: KeyPath, ensured: dict[KeyPath, Any]) -> None:
        """Delete a key we created if it is now an empty container or still our setting."""
        value = self.get(path)
        if value is None:
            return
        empty = isinstance(value, MutableMapping | MutableSequence) and len(value) == 0
        if empty or (path in ensured and _plain(value) == ensured[path]):
            self.delete(path)

    def _groups(self, entry: HookGroup, record: Record | None) -> MutableSequence[Any] | None:
        path = (*entry.container, entry.event)
        if record is None:
            groups = self.get(path)
        else:
            parent = self._parent(path, record)
            if entry.event not in parent:
                parent[entry.event] = []
                record.created_keys.add(path)
                self.changed = True
            groups = parent[entry.event]
        if groups is None:
            return None
        if not isinstance(groups, MutableSequence):
            raise ConfigFileError(f"{self.edit.path}: `{'.'.join(path)}` is not a list")
        return groups

    def our_handlers(self, entry: HookGroup) -> Iterator[tuple[int, int]]:
        """(group index, handler index) of each of our handlers for ``entry.event``."""
        groups = self._groups(entry, None) or []
        for gi, group in enumerate(groups):
            for hi, handler in enumerate(_handlers(group)):
                if isinstance(handler, dict) and is_our_hook_command(handler.get("command")):
                    yield gi, hi

    def put_hook_group(self, entry: HookGroup, record: Record) -> None:
        groups = self._groups(entry, record)
        assert groups is not None
        want = dict(entry.group)
        if want in list(groups):
            keep = list(groups).index(want)
        else:
            ours_only = [
                gi
                for gi, group in enumerate(groups)
                if _handlers(group) and all(_is_ours(h) for h in _handlers(group))
            ]
            keep = ours_only[0] if ours_only else len(groups)
            if keep == len(groups):
                groups.append(want)
            else:
                groups[keep] = want
            self.changed = True
        self._strip_ours(groups, skip=keep)

    def remove_our_hooks(self, entry: HookGroup) -> None:
        groups = self._groups(entry, None)
        if groups is not None:
            self._strip_ours(groups, skip=None)

    def _strip_ours(self, groups: MutableSequence[Any], skip: int | None) -> None:
        """Remove our handlers from every group but ``skip``; drop groups they leave empty."""
        for gi in reversed(range(len(groups))):
            if gi == skip:
                continue
            handlers = _handlers(groups[gi])
            kept = [h for h in handlers if not _is_ours(h)]
            if len(kept) == len(handlers):
                continue
            self.changed = True
            if kept:
                groups[gi]["hooks"] = kept
            else:
                del groups[gi]


def _handlers(group: Any) -> list[Any]:
    hooks = group.get("hooks") if isinstance(group, dict) else None
    return list(hooks) if isinstance(hooks, list) else []


def _is_ours(handler: Any) -> bool:
    return isinstance(handler, dict) and is_our_hook_command(handler.get("command"))


def _plain(value: Any) -> Any:
    unwrap = getattr(value, "unwrap", None)
    return unwrap() if callable(unwrap) else value


def _dump_json(data: Any, original: str | None) -> str:
    """``data`` as the text of ``original`` edited in place (:mod:`.jsontext`): only what
    changed is written; a new or empty file is written afresh with an indent of 2."""
    if original is not None and original.strip():
        patched = jsontext.patch(original, data)
        if patched is not None:
            return patched
    if original is None or not original.strip():
        indent: str | int | None = 2
    elif "\n" not in original.strip():
        indent = None
    else:
        match = _JSON_INDENT.match(original)
        indent = match.group(1) if match else 2
    tight = indent is None and original is not None and '": ' not in original
    separators = (",", ":") if tight else None
    text = json.dumps(data, indent=indent, ensure_ascii=False, separators=separators)
    newline = original is None or original.endswith("\n") or not original.strip()
    return text + "\n" if newline else text
