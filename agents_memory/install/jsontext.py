"""Editing JSON text in place: :func:`patch` rewrites only the parts of a document whose value
changed and keeps every other byte (key order, spacing, one-line blocks, the trailing newline).

The original text is scanned once into a tree of spans (:class:`_Node`). Comparing it with the
wanted value, key by key and item by item, yields text edits: a changed scalar is replaced where
it stands; a new key or item is appended after the last one, with the separator that one has; a
removed key or item is cut together with the separator before it, so an uninstall takes away
exactly what an install appended. What is written fresh takes the file's own indentation
(detected from its first member) at the depth where it lands, or the file's one-line style. A
container whose change is more than appends, removals or edits of its items (a reordering) is
written fresh at its place; the rest of the file is still kept.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from difflib import SequenceMatcher
from typing import Any

__all__ = ["patch"]

_SCALAR = re.compile(r"-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][-+]?\d+)?|true|false|null|NaN|-?Infinity")
_WS = " \t\r\n"
scanstring: Callable[[str, int, bool], tuple[str, int]] = json.decoder.scanstring  # type: ignore[attr-defined]
"""The stdlib's string scanner: the decoded string, and where it ends."""
_FIRST_INDENT = re.compile(r"\A\s*[\[{][ \t]*\r?\n([ \t]+)\S")


@dataclass(slots=True)
class _Node:
    start: int
    end: int
    value: Any
    keys: list[tuple[str, int, int]] | None = None
    """For an object: each member's key, where its key starts and where the key ends."""
    children: list[_Node] = field(default_factory=list)
    """An object's member values or an array's items, in text order."""


class _Scanner:
    """Spans of a JSON text that ``json.loads`` accepts."""

    def __init__(self, text: str) -> None:
        self.text = text

    def skip(self, pos: int) -> int:
        while pos < len(self.text) and self.text[pos] in _WS:
            pos += 1
        return pos

    def value(self, pos: int) -> _Node:
        pos = self.skip(pos)
        char = self.text[pos]
        if char == "{":
            return self.container(pos, "}")
        if char == "[":
            return self.container(pos, "]")
        if char == '"':
            string, end = scanstring(self.text, pos + 1, True)
            return _Node(pos, end, string)
        match = _SCALAR.match(self.text, pos)
        if match is None:
            raise ValueError(f"unexpected {char!r} at {pos}")
        return _Node(pos, match.end(), json.loads(match.group()))

    def container(self, start: int, close: str) -> _Node:
        is_object = close == "}"
        node = _Node(start, start, {} if is_object else [], [] if is_object else None)
        pos = self.skip(start + 1)
        while self.text[pos] != close:
            if node.keys is not None:
                key, key_end = scanstring(self.text, pos + 1, True)
                node.keys.append((key, pos, key_end))
                pos = self.skip(key_end) + 1  # past ":"
            child = self.value(pos)
            node.children.append(child)
            if node.keys is not None:
                node.value[node.keys[-1][0]] = child.value
            else:
                node.value.append(child.value)
            pos = self.skip(child.end)
            if self.text[pos] == ",":
                pos = self.skip(pos + 1)
        node.end = pos + 1
        return node


@dataclass(slots=True)
class _Style:
    unit: str | None
    """One level of indentation, or ``None`` for a one-line document."""
    colon: str
    """What stands between a key and its value in this file (``": "`` or ``":"``)."""
    newline: str

    @classmethod
    def of(cls, text: str) -> _Style:
        one_line = "\n" not in text.strip()
        match = _FIRST_INDENT.match(text)
        unit = None if one_line else (match.group(1) if match else "  ")
        colon = ": " if '": ' in text or not one_line else ":"
        return cls(unit, colon, "\r\n" if "\r\n" in text else "\n")

    def render(self, value: Any, indent: str | None) -> str:
        """``value`` as fresh JSON whose lines after the first start at ``indent``."""
        if self.unit is None or indent is None:
            separators = (",", self.colon) if self.colon == ":" else (", ", ": ")
            return json.dumps(value, ensure_ascii=False, separators=separators)
        text = json.dumps(value, ensure_ascii=False, indent=self.unit)
        return text.replace("\n", self.newline + indent)


Edit = tuple[int, int, str]


def patch(original: str, wanted: dict[str, Any]) -> str | None:
    """``original`` (a JSON object's text) edited to hold ``wanted``, or ``None`` when the text
    cannot be scanned (the caller then writes the document afresh)."""
    try:
        root = _Scanner(original).value(0)
    except (ValueError, IndexError):
        return None
    if not isinstance(root.value, dict):
        return None
    edits: list[Edit] = []
    _Differ(original, _Style.of(original), edits).node(root, wanted)
    text = original
    for start, end, replacement in sorted(edits, key=lambda e: (e[0], e[1]), reverse=True):
        text = text[:start] + replacement + text[end:]
    return text


def _same(a: Any, b: Any) -> bool:
    return json.dumps(a, sort_keys=True) == json.dumps(b, sort_keys=True)


class _Differ:
    def __init__(self, text: str, style: _Style, edits: list[Edit]) -> None:
        self.text = text
        self.style = style
        self.edits = edits

    def line_indent(self, pos: int) -> str:
        """The whitespace that starts the line holding ``pos``."""
        line_start = self.text.rfind("\n", 0, pos) + 1
        line = self.text[line_start:pos]
        return line[: len(line) - len(line.lstrip(" \t"))]

    def node(self, node: _Node, wanted: Any) -> None:
        if _same(node.value, wanted):
            return
        if isinstance(node.value, dict) and isinstance(wanted, dict):
            done = self.object(node, wanted)
        elif isinstance(node.value, list) and isinstance(wanted, list):
            done = self.array(node, wanted)
        else:
            done = False
        if done:
            return
        indent = self.line_indent(node.start)
        self.edits.append((node.start, node.end, self.style.render(wanted, indent)))

    def object(self, node: _Node, wanted: dict[str, Any]) -> bool:
        assert node.keys is not None
        last = {key: i for i, (key, _s, _e) in enumerate(node.keys)}
        removed = {i for key, i in last.items() if key not in wanted}
        removed |= {i for i in range(len(node.keys)) if last[node.keys[i][0]] != i}
        added = [(key, value) for key, value in wanted.items() if key not in last]
        if removed and added:
            return False
        for key, i in last.items():
            if key in wanted:
                self.node(node.children[i], wanted[key])
        starts = [start for _key, start, _end in node.keys]
        self.remove(node, starts, removed)
        if added:
            members = [(json.dumps(key, ensure_ascii=False), value) for key, value in added]
            self.append(node, starts, list[tuple[str | None, Any]](members))
        return True

    def array(self, node: _Node, wanted: list[Any]) -> bool:
        old = [json.dumps(v, sort_keys=True) for v in node.value]
        new = [json.dumps(v, sort_keys=True) for v in wanted]
        if len(old) == len(new):
            for child, value in zip(node.children, wanted, strict=True):
                self.node(child, value)
            return True
        starts = [child.start for child in node.children]
        if len(new) > len(old) and old == new[: len(old)]:
            self.append(node, starts, [(None, v) for v in wanted[len(old) :]])
            return True
        ops = SequenceMatcher(a=old, b=new, autojunk=False).get_opcodes()
        if any(tag not in ("equal", "delete") for tag, *_ in ops):
            return False
        gone = {i for tag, i1, i2, _j1, _j2 in ops if tag == "delete" for i in range(i1, i2)}
        self.remove(node, starts, gone)
        return True

    def remove(self, node: _Node, starts: list[int], removed: set[int]) -> None:
        """Cut the members/items ``removed`` with the separator before each (or, before the
        first one kept, the separator after)."""
        if not removed:
            return
        count = len(node.children)
        kept = [i for i in range(count) if i not in removed]
        if not kept:
            self.edits.append((node.start + 1, node.end - 1, ""))
            return
        first = kept[0]
        if first > 0:
            self.edits.append((starts[0], starts[first], ""))
        for i in sorted(removed):
            if i > first:
                self.edits.append((node.children[i - 1].end, node.children[i].end, ""))

    def append(self, node: _Node, starts: list[int], members: list[tuple[str | None, Any]]) -> None:
        """Add ``members`` (``(key JSON, value)``; key ``None`` in an array) after the last
        one, spaced as it is; in an empty container, one level deeper than its line."""
        if node.children:
            before = node.children[-2].end if len(node.children) > 1 else node.start + 1
            gap = self.text[before : starts[-1]]
            gap = gap[gap.rfind(",") + 1 :]
            if len(node.children) == 1 and "\n" not in gap:
                gap = " " if self.style.colon == ": " else ""  # as after a comma elsewhere
            indent = gap[gap.rfind("\n") + 1 :] if "\n" in gap else None
            colon = self._colon(node)
            text = "".join(
                "," + gap + self._member(key, value, colon, indent) for key, value in members
            )
            self.edits.append((node.children[-1].end, node.children[-1].end, text))
            return
        outer = self.line_indent(node.start)
        if self.style.unit is None:
            inner = ", ".join(self._member(k, v, self.style.colon, None) for k, v in members)
        else:
            indent = outer + self.style.unit
            lead = self.style.newline + indent
            inner = lead + ("," + lead).join(
                self._member(k, v, self.style.colon, indent) for k, v in members
            )
            inner += self.style.newline + outer
        self.edits.append((node.start + 1, node.end - 1, inner))

    def _colon(self, node: _Node) -> str:
        if not node.keys:
            return self.style.colon
        _key, _start, key_end = node.keys[-1]
        return self.text[key_end : node.children[-1].start]

    def _member(self, key: str | None, value: Any, colon: str, indent: str | None) -> str:
        rendered = self.style.render(value, indent)
        return rendered if key is None else key + colon + rendered
