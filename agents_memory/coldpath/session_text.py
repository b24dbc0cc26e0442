"""Pure text helpers of a session's summary: which turns are noise, how a request, a decision
or an outcome is trimmed to a line a person reads.

No database, no model. :mod:`agents_memory.coldpath.session_digest` builds the summary from
them; the Cold Path's session summariser, ``forget`` and the tests call that.
"""

# ruff: noqa: RUF001  (CJK punctuation)
from __future__ import annotations

import re
from typing import Final

from agents_memory.coldpath.text import tokens


def _split(words: str) -> list[str]:
    return words.split()


_MARKER = re.compile(r"^\s*\[[^\]\n]{1,40}\]\s*$")
"""A line that is only a bracketed marker: ``[image]``, ``[trimmed for fixture]``,
``[Request interrupted by user]``."""
_INLINE_MARKER = re.compile(r"\[(?:image|Image #?\d*|file|attachment)[^\]\n]{0,30}\]", re.I)
_FENCE = re.compile(r"```.*?(?:```|\Z)", re.S)
_ENVELOPE = re.compile(r"^\s*<([a-z][\w-]{2,40})[^>]*>.*?</\1>\s*", re.S)
_LOG_LINE = re.compile(
    r"^\s*(?:\d{4}-\d\d-\d\d[T ]\d\d:\d\d|\d\d:\d\d:\d\d|at [\w.$<>]+\(|File \"|Traceback"
    r"|[A-Z]{3,8}[:\]] |\[(?:INFO|WARN|WARNING|ERROR|DEBUG)\]|#\d+ |\$ |> |npm (?:ERR|WARN)"
    r"|\s{4,}\S)"
)
_SENTENCE = re.compile(r"(?<=[.!?。！？])\s+|\n+")
_MARKDOWN = re.compile(r"^\s*(?:#{1,6}\s+|[-*+]\s+|\d+[.)]\s+|>\s*|\|)|\*\*|__|(?<!\w)`|`(?!\w)")
_TABLE_RULE = re.compile(r"^\s*\|?\s*:?-{2,}[-:| ]*\s*$")
_BACKTICKED = re.compile(r"`([^`\n]{2,120})`")
_PATHLIKE = re.compile(r"^[\w@~.\-/]*[\w\-]\.[A-Za-z0-9]{1,8}$|^[\w.\-]+/[\w.\-/]+$")
_RAN = re.compile(
    r"(?:\bran|\brun|\brunning|\bexecuted|\bexecute|\bvia|\bwith)\s+`([^`\n]{2,100})`", re.I
)
_CHANGED = re.compile(
    r"\b(?:edit(?:ed)?|updat(?:e|ed)|creat(?:e|ed)|wr(?:ote|ite)|add(?:ed)?\s+to|chang(?:e|ed)"
    r"|modif(?:y|ied)|renam(?:e|ed)|remov(?:e|ed)|delet(?:e|ed)|fix(?:ed)?\s+in|patch(?:ed)?"
    r"|new file|saved)\b|已|修改|更新|建立|创建|保存|изменил|обновил|создал|수정|생성",
    re.I,
)
_ACKS: Final = frozenset(
    _split(
        """ok okay k kk yes yep yeah y no nope sure thanks thank thx ty great good nice cool
    perfect done continue go proceed fine lgtm agreed right correct exactly please yes,
    好 好的 嗯 对 是 谢谢 继续 可以 行 да нет ок спасибо хорошо продолжай давай 네 예 응 좋아
    고마워 계속"""
    )
)
_GREETINGS: Final = frozenset(_split("hi hello hey hola привет 你好 안녕 안녕하세요"))
_DECISION_CUES: Final = (
    "decision:",
    "decided",
    "we decided",
    "we'll go with",
    "we will go with",
    "went with",
    "going with",
    "settled on",
    "chose ",
    "we chose",
    "switch to",
    "switched to",
    "instead of",
    "let's use",
    "we'll use",
    "from now on",
    "决定",
    "決定",
    "решили",
    "вместо",
    "결정",
    "하기로",
)
_OPEN_TODO = re.compile(r"\btodo\b(?![.\w])", re.I)
_OPEN_CUES: Final = (
    "to do:",
    "remaining:",
    "still need",
    "still to",
    "not yet",
    "next step",
    "next, ",
    "follow-up",
    "left to do",
    "open question",
    "want me to",
    "should i ",
    "shall i ",
    "待办",
    "還需要",
    "还需要",
    "осталось",
    "남은",
)
_PROGRESS_OPENERS: Final = (
    "let me ",
    "i'll ",
    "i will ",
    "now let me",
    "now i'll",
    "first, let me",
    "okay, let me",
    "让我",
    "讓我",
    "我來",
    "我来",
)


def clean(text: str) -> str:
    """``text`` without what no person wrote for a person: bracketed markers (``[image]``),
    leading system envelopes (``<command-name>…</command-name>``), empty lines."""
    body = text
    while True:
        stripped = _ENVELOPE.sub("", body, count=1)
        if stripped == body:
            break
        body = stripped
    body = _INLINE_MARKER.sub(" ", body)
    lines = [line.rstrip() for line in body.splitlines()]
    return "\n".join(line for line in lines if line.strip() and not _MARKER.match(line)).strip()


def flat(text: str) -> str:
    """One line: Markdown emphasis, list marks, headings and table rules dropped, table cells
    joined with commas, spaces folded."""
    lines = [
        _MARKDOWN.sub("", line).replace(" | ", ", ").strip(" |")
        for line in text.splitlines()
        if not _TABLE_RULE.match(line)
    ]
    return " ".join(" ".join(lines).split())


def clip_line(text: str, limit: int) -> str:
    """``text`` at most ``limit`` characters, cut at a word boundary with ``…``."""
    if len(text) <= limit:
        return text
    cut = text[: limit - 1]
    space = cut.rfind(" ")
    if space > limit * 0.6:
        cut = cut[:space]
    return cut.rstrip(" ,;:-") + "…"


def is_log(text: str) -> bool:
    """Pasted output rather than words: most of its (several) lines look like a log, a stack
    trace or a shell transcript."""
    lines = [line for line in text.splitlines() if line.strip()]
    if len(lines) < 4:
        return False
    logged = sum(1 for line in lines if _LOG_LINE.match(line))
    return logged / len(lines) >= 0.6


def is_acknowledgement(text: str) -> bool:
    """A short reply that asks nothing: "ok", "thanks, go on", "继续", "да"."""
    words = [w.strip(".,!?;:。！？~") for w in text.lower().split()]
    words = [w for w in words if w]
    return 0 < len(words) <= 4 and all(w in _ACKS or w in _GREETINGS for w in words)


def is_noise_request(text: str) -> bool:
    """A user turn that is not a request: empty once cleaned, a slash command, a system
    envelope or caveat, an acknowledgement, a pasted log."""
    body = clean(text)
    if not body:
        return True
    first = body.lstrip()
    if first.startswith(("/", "<", "Caveat:", "[Request interrupted")):
        return True
    return is_acknowledgement(body) or is_log(body)


def request_line(text: str, limit: int) -> str:
    """The request in a user turn, one line: its first paragraph(s) of words, without code
    blocks or a pasted log under it."""
    body = _FENCE.sub(" ", clean(text))
    kept: list[str] = []
    for paragraph in re.split(r"\n\s*\n", body):
        if kept and (is_log(paragraph) or sum(len(k) for k in kept) > limit):
            break
        if not is_log(paragraph):
            kept.append(paragraph)
    return clip_line(flat("\n".join(kept)), limit)


def sentences(text: str) -> list[str]:
    """The sentences of the words of ``text`` (code blocks and envelopes left out), flat."""
    body = _FENCE.sub("\n", clean(text))
    out = []
    for piece in _SENTENCE.split(body):
        line = flat(piece)
        if len(line) >= 3 and not line.startswith("$ "):
            out.append(line)
    return out


def is_question(sentence: str) -> bool:
    return sentence.rstrip().endswith(("?", "？", "吗", "嗎"))


def is_decision(sentence: str) -> bool:
    lowered = sentence.lower()
    return not is_question(sentence) and any(c in lowered for c in _DECISION_CUES)


def is_open_end(sentence: str) -> bool:
    lowered = sentence.lower()
    return bool(_OPEN_TODO.search(sentence)) or any(c in lowered for c in _OPEN_CUES)


def is_progress(sentence: str) -> bool:
    """A line an agent says while working ("Let me check…"), not the state it reached."""
    return sentence.lower().startswith(_PROGRESS_OPENERS)


def changed_paths(text: str) -> list[str]:
    """Paths the text says were changed: backticked path-like words in a sentence that names
    an edit (for clients that record no tool calls)."""
    found: list[str] = []
    for sentence in _SENTENCE.split(_FENCE.sub("\n", text)):
        if not _CHANGED.search(sentence):
            continue
        for match in _BACKTICKED.findall(sentence):
            word = match.strip().split(":", 1)[0]
            if _PATHLIKE.match(word) and word not in found:
                found.append(word)
    return found


def ran_commands(text: str) -> list[str]:
    """Commands the text says were run (```ran `pytest -q` ```)."""
    found: list[str] = []
    for match in _RAN.findall(_FENCE.sub("\n", text)):
        command = " ".join(match.split())
        if command and not _PATHLIKE.match(command) and command not in found:
            found.append(command)
    return found


def content_tokens(text: str) -> list[str]:
    """The content words of ``text`` (stopwords out), for the searchable terms."""
    return tokens(text)
