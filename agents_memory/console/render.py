"""How the console shows stored text and times: Markdown rendered with raw HTML escaped (a
transcript's markup is text, never markup), the searched words marked, and times as ``<time>``
elements the browser turns into the viewer's zone (the page without scripts says UTC).

Memory content is hostile by default: the renderer has HTML off, no images (nothing is fetched
because a turn said so), and links only to http(s) and mailto, opened without a referrer."""

from __future__ import annotations

import re
from collections.abc import Sequence
from datetime import UTC, datetime
from functools import lru_cache
from html import escape
from typing import Any

from markdown_it import MarkdownIt
from markdown_it.token import Token
from markupsafe import Markup

from agents_memory.store.search.words import WORD, content_words, stem

_LINK = re.compile(r"^(https?:|mailto:)", re.IGNORECASE)


def when(value: datetime | None) -> Markup:
    """``value`` as ``<time datetime="…Z">YYYY-MM-DD HH:MM UTC</time>``: console.js rewrites it in
    the viewer's zone; without scripts the page says UTC, never a zone the server guessed."""
    if value is None:
        return Markup("never")
    utc = value.astimezone(UTC)
    return Markup('<time datetime="{}">{} UTC</time>').format(
        utc.isoformat(timespec="seconds").replace("+00:00", "Z"), utc.strftime("%Y-%m-%d %H:%M")
    )


def marked(text: str, words: frozenset[str]) -> str:
    """``text`` escaped, each word whose stem is in ``words`` wrapped in ``<mark>``."""
    if not words:
        return escape(text, quote=False)
    out: list[str] = []
    last = 0
    for found in WORD.finditer(text):
        if stem(found.group().lower()) in words:
            out.append(escape(text[last : found.start()], quote=False))
            out.append(f"<mark>{escape(found.group(), quote=False)}</mark>")
            last = found.end()
    out.append(escape(text[last:], quote=False))
    return "".join(out)


def _text(self: Any, tokens: Sequence[Token], idx: int, options: Any, env: Any) -> str:
    return marked(tokens[idx].content, env.get("words", frozenset()))


def _code_inline(self: Any, tokens: Sequence[Token], idx: int, options: Any, env: Any) -> str:
    return f"<code>{marked(tokens[idx].content, env.get('words', frozenset()))}</code>"


def _link_open(self: Any, tokens: Sequence[Token], idx: int, options: Any, env: Any) -> str:
    href = str(tokens[idx].attrGet("href") or "")
    if not _LINK.match(href):
        return '<a class="dead">'
    return f'<a href="{escape(href)}" rel="noopener noreferrer nofollow" target="_blank">'


@lru_cache(maxsize=1)
def _renderer() -> MarkdownIt:
    md = MarkdownIt("commonmark", {"html": False, "linkify": False, "typographer": False})
    md.disable(["image", "html_block", "html_inline"])
    md.add_render_rule("text", _text)
    md.add_render_rule("code_inline", _code_inline)
    md.add_render_rule("link_open", _link_open)
    return md


def markdown(text: str, query: str | None = None) -> Markup:
    """``text`` as safe HTML from its Markdown, the words of ``query`` marked."""
    words = content_words(query) if query else frozenset()
    html = _renderer().render(text, {"words": words})
    return Markup(html)  # noqa: S704 - raw HTML off, every text token escaped by marked()
