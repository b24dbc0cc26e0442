"""Prompts that ask nothing of memory: acknowledgements ("ok", "go ahead", "merci", "继续"),
a client's commands ("/clear", "/compact keep the tests"), a menu choice ("2"), bare
punctuation or emoji, and prompts with no content word at all; and the words of a prompt that
talk about remembering rather than about the thing remembered ("again", "last time", "remind
me", "did we"), left out of its search (:func:`search_words`).

Pure (no SQL)."""

from __future__ import annotations

import re

from agents_memory.store.search.words import WORD, content_words

MAX_ACK_CHARS = 60
"""A longer prompt is never an acknowledgement."""

_COMMAND = re.compile(r"^\s*/[^\W\d][\w:.-]*(?:\s|$)")
"""A slash command: ``/`` and a name, then a space or the end (``/home/x`` is a path)."""

_PHRASES = (
    # English
    "ok", "okay", "k", "kk", "yes", "yeah", "yep", "yup", "y", "no", "nope", "n", "sure",
    "thanks", "thank you", "thx", "ty", "go", "go on", "go ahead", "continue", "proceed",
    "next", "done", "great", "nice", "cool", "perfect", "lgtm", "ship it", "do it",
    "sounds good", "looks good", "good", "fine", "agreed", "right", "correct", "keep going",
    "carry on", "retry", "try again", "again", "stop", "wait", "hmm", "hi", "hello", "hey",
    "got it", "makes sense", "awesome", "alright", "all right", "yes please", "no thanks",
    "commit", "commit it", "commit this", "push", "push it", "let's go", "lets go",
    # French, German, Spanish, Italian, Portuguese
    "oui", "non", "merci", "d'accord", "vas-y", "vas y", "parfait", "continue stp",
    "ja", "nein", "danke", "weiter", "mach weiter", "passt", "gut", "genau",
    "sí", "si", "gracias", "vale", "dale", "sigue", "continúa", "continua", "perfecto",
    "sì", "grazie", "vai", "perfetto", "sim", "não", "obrigado", "obrigada", "beleza",
    # Russian
    "да", "нет", "ок", "спасибо", "продолжай", "давай", "хорошо", "отлично", "ага",  # noqa: RUF001
    # Chinese, Japanese, Korean
    "好", "好的", "是", "继续", "谢谢", "可以", "行", "对", "嗯",
    "はい", "いいえ", "続けて", "ありがとう", "了解", "お願いします", "うん",
    "네", "예", "아니요", "계속", "감사합니다", "좋아요", "응",
)  # fmt: skip
_FILLERS = ("please", "pls", "plz", "then", "now", "and", "bitte", "por favor", "s'il te plaît")
_PHRASE = re.compile(
    "|".join(
        rf"(?<!\w){re.escape(p)}(?!\w)"
        for p in sorted({*_PHRASES, *_FILLERS}, key=len, reverse=True)
    )
)
_RESIDUE = re.compile(r"[\W_\d]*")


def is_acknowledgement(prompt: str) -> bool:
    """Whether ``prompt`` asks nothing of memory (see the module's doc)."""
    if _COMMAND.match(prompt):
        return True
    text = " ".join(prompt.lower().split())
    if not WORD.search(text):  # punctuation or emoji only
        return True
    if len(text) <= MAX_ACK_CHARS and _RESIDUE.fullmatch(_PHRASE.sub(" ", text)):
        return True
    return not content_words(text)


_RECALL_TALK = frozenset(
    """again last time times before previously earlier remind reminder recall remember
    remembered discussed discuss discussion did do does we us our getting get got seeing see
    saw seen back idea any behind happened happen thinking think thought still once ago week
    yesterday tell know wondering question help look looking issue problem thing things stuff
    want need needed trying try what which how why where when who should could would can is was
    were are this that these those here there it its me my you your i""".split()  # noqa: SIM905
)
"""English words a prompt uses to ask memory, not to name what it asks about (measured on the
tuning half of ``bench/prompt_recall.py``: without them a hit's coverage of the prompt reads
its subject, "E4821" in "getting E4821 again, what was behind it last time?")."""


_TALK = re.compile(
    r"(?<![\w'`-])(?:" + "|".join(sorted(_RECALL_TALK, key=len, reverse=True)) + r")(?![\w'`-])",
    re.IGNORECASE,
)


def search_words(prompt: str) -> str:
    """``prompt`` without the words that talk about remembering (whole words, any case); the
    prompt itself when no content word is left."""
    kept = " ".join(_TALK.sub(" ", prompt).split())
    return kept if content_words(kept) else prompt
