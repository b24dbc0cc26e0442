"""Pure text helpers the Cold Path jobs share: tokens, keyword tags, tag slugs, name
similarity, the dominant script of a text and extractive summaries.

Everything here is deterministic and needs no model: it is what the jobs fall back to when no
LLM is configured, is over budget, or gives no valid answer. Language-aware enough for
English, Russian and Korean (stopwords per language; Korean particles stripped from word ends).
"""

# ruff: noqa: RUF001  (Russian and Korean word lists, and CJK punctuation)
from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

MAX_TAG_CHARS = 50


def _words(text: str) -> list[str]:
    return text.split()


MAX_D_TAGS = 5

_WORD = re.compile(r"[^\W_][\w.\-/]*[^\W_]|[^\W_]", re.UNICODE)
_CAMEL = re.compile(r"[a-z][A-Z]")
_HANGUL = re.compile(r"[\uac00-\ud7a3]")
_CYRILLIC = re.compile(r"[\u0400-\u04ff]")
_LATIN = re.compile(r"[A-Za-z]")
_URLISH = re.compile(r"^(https?|ftp|file)[:/]|^www\.|@")
_SENTENCE_END = re.compile(r"(?<=[.!?。！？])\s+|\n+")

_EN_STOP = frozenset(
    _words("""a about above after again against all also am an and any are aren't as at be because
    been before being below between both but by can can't cannot could did didn't do does
    doesn't doing don't down during each few for from further get gets got had has have
    having he her here hers herself him himself his how i if in into is isn't it it's its
    itself just let let's like make made me more most my myself need needs no nor not now of
    off ok okay on once only or other our ours ourselves out over own please same she should
    so some such than thank thanks that that's the their theirs them themselves then there
    these they this those through to too under until up us use used using very want was
    wasn't we well were what when where which while who whom why will with would yes yet you
    your yours yourself yourselves also maybe really still sure thing things way one two
    new see look know think try going go went done here's there's what's i'm i've i'll
    you're we're they're it'll etc via per vs""")
)
# Words too generic to describe a topic in a coding conversation.
_GENERIC = frozenset(
    _words("""code file files function functions change changes changed fix fixed fixes issue
    issues problem problems error errors work works working test tests run running line
    lines add added update updated now time first last next right good great help check
    value values case cases part step steps version same different something anything
    everything nothing lot bit kind example above below following""")
)
_RU_STOP = frozenset(
    _words("""и в во не что он на я с со как а то все всё она так его но да ты к у же вы за бы по
    только ее её мне было вот от меня еще ещё нет о из ему теперь когда даже ну вдруг ли если
    уже или ни быть был него до вас нибудь опять уж вам ведь там потом себя ничего ей может
    они тут где есть надо ней для мы тебя их чем была сам чтоб без будто чего раз тоже себе
    под будет ж тогда кто этот того потому этого какой совсем ним здесь этом один почти мой
    тем чтобы нее неё сейчас были куда зачем всех никогда можно при наконец два об другой
    хоть после над больше тот через эти нас про всего них какая много разве три эту моя
    впрочем хорошо свою этой перед иногда лучше чуть том нельзя такой им более всегда конечно
    всю между это эта эти давай пожалуйста спасибо нужно надо сделать""")
)
_KO_STOP = frozenset(
    _words("""그리고 그러나 하지만 그런데 그래서 또는 및 이 그 저 것 수 등 들 좀 잘 더 안 못 또 너무
    아주 매우 정말 진짜 그냥 이제 지금 여기 거기 저기 우리 저희 나 너 제 내 네 이것 그것 저것
    있다 없다 하다 되다 있어 없어 해줘 해 주세요 합니다 했다 한다 하는 하고 해서 하면 했어요
    입니다 있습니다 같아요 같은 위해 때문에 대한 대해 통해 경우 부분 감사합니다 네 예 아니""")
)
_STOPWORDS = _EN_STOP | _GENERIC | _RU_STOP | _KO_STOP
# Korean particles and endings, longest first, stripped from the end of a Hangul word.
_KO_PARTICLES = tuple(
    sorted(
        _words("""
        은 는 이 가 을 를 에 에서 에게 께 으로 로 와 과 의 도 만 까지 부터 하고 이랑 랑 처럼
        보다 에는 에서는 으로는 로는 이나 나 요 이에요 예요 입니다 이다 다 하고 해서 하는 하기
        하면 했어 해요 해 고"""),
        key=len,
        reverse=True,
    )
)
_DECISION_CUES = (
    "decided",
    "decision",
    "we will",
    "we'll",
    "let's",
    "switch to",
    "chose",
    "going with",
    "instead of",
    "must ",
    "should ",
    "решили",
    "будем",
    "решение",
    "вместо",
    "결정",
    "하기로",
    "대신",
    "바꾸",
)


_RU_ENDINGS = tuple(
    sorted(
        _words("""
        ами ями ого его ому ему ыми ими ых их ой ей ая яя ое ее ые ие ов ев ах ях ам ям ом ем
        ую юю а я у ю ы и е о ь"""),
        key=len,
        reverse=True,
    )
)


def stem(word: str) -> str:
    """A crude grouping key: Russian case endings cut off (``базу``/``базы`` -> ``баз``)."""
    if len(word) >= 4 and _CYRILLIC.search(word):
        for ending in _RU_ENDINGS:
            if word.endswith(ending) and len(word) - len(ending) >= 3:
                return word[: -len(ending)]
    return word


def _strip_particle(word: str) -> str:
    if not _HANGUL.search(word):
        return word
    for particle in _KO_PARTICLES:
        if word.endswith(particle) and len(word) - len(particle) >= 2:
            return word[: -len(particle)]
    return word


def normalize_tag(raw: str) -> str | None:
    """A d_tag as stored: lowercase, trimmed, spaces/underscores to hyphens, 1-50 chars."""
    tag = re.sub(r"[\s_]+", "-", raw.strip().lower()).strip("-.,;:/")
    if not tag or len(tag) > MAX_TAG_CHARS:
        return None
    return tag


def normalize_tags(raw: Iterable[object], limit: int = MAX_D_TAGS) -> list[str]:
    """Strings only, normalised, deduplicated in order, at most ``limit``."""
    out: list[str] = []
    for item in raw:
        if not isinstance(item, str):
            continue
        tag = normalize_tag(item)
        if tag and tag not in out:
            out.append(tag)
        if len(out) == limit:
            break
    return out


def slugify(name: str) -> str:
    """A project tag name: lowercase words joined by hyphens (Unicode letters kept)."""
    slug = re.sub(r"[^\w]+|_+", "-", name.strip().lower(), flags=re.UNICODE).strip("-")
    return slug[:MAX_TAG_CHARS].strip("-")


def tokens(text: str) -> list[str]:
    """Content words: lowercased, stopwords dropped, Korean particles stripped."""
    out: list[str] = []
    for match in _WORD.finditer(text):
        word = match.group(0)
        if _URLISH.search(word) or word.isdigit():
            continue
        lowered = _strip_particle(word.lower())
        if lowered in _STOPWORDS:
            continue
        min_len = 2 if _HANGUL.search(lowered) else 3
        if len(lowered) < min_len or len(lowered) > MAX_TAG_CHARS:
            continue
        out.append(lowered)
    return out


def _looks_like_identifier(word: str) -> bool:
    return bool(
        _CAMEL.search(word) or any(c in word for c in "._-/") or any(c.isdigit() for c in word)
    )


def keyword_tags(text: str, limit: int = MAX_D_TAGS) -> list[str]:
    """Up to ``limit`` distinctive keywords of ``text`` (the tagger's fallback d_tags).

    A word qualifies by repetition or by looking like an identifier (``snake_case``,
    ``camelCase``, ``file.py``, ``v2``); a short message yields few or none.
    """
    raw_words = [m.group(0) for m in _WORD.finditer(text)]
    identifiers = {_strip_particle(w.lower()) for w in raw_words if _looks_like_identifier(w)}
    surface = tokens(text)
    if not surface:
        return []
    # Count by stem, show each stem's most frequent surface form.
    forms: dict[str, Counter[str]] = {}
    words: list[str] = []
    for word in surface:
        key = stem(word)
        forms.setdefault(key, Counter())[word] += 1
        words.append(key)
    shown = {key: c.most_common(1)[0][0] for key, c in forms.items()}
    identifiers = {stem(w) for w in identifiers}
    counts = Counter(words)
    first_seen: dict[str, int] = {}
    for index, word in enumerate(words):
        first_seen.setdefault(word, index)
    long_enough = len(words) >= 6

    def score(word: str) -> float:
        value = float(counts[word])
        if word in identifiers:
            value += 1.5
        if len(word) >= 7:
            value += 0.25
        return value

    chosen = [
        w
        for w in counts
        if w in identifiers or counts[w] >= 2 or (long_enough and len(counts) <= 12)
    ]
    chosen.sort(key=lambda w: (-score(w), first_seen[w]))
    chosen = [shown[w] for w in chosen]
    return normalize_tags(chosen, limit)


def dominant_script(texts: Iterable[str]) -> str | None:
    """``"Korean"``, ``"Russian"`` or ``"English"`` by letters seen; ``None`` if no letters."""
    counts = Counter[str]()
    for text in texts:
        counts["Korean"] += len(_HANGUL.findall(text))
        counts["Russian"] += len(_CYRILLIC.findall(text))
        counts["English"] += len(_LATIN.findall(text))
    if not counts or max(counts.values()) == 0:
        return None
    # Hangul syllables carry ~2-3 Latin letters' worth of text each.
    counts["Korean"] *= 3
    return counts.most_common(1)[0][0]


def name_similarity(left: str, right: str) -> float:
    """Max of token Jaccard and character-bigram Dice of two tag names (0..1)."""
    a_tokens = set(re.split(r"[-_.\s/]+", left.lower())) - {""}
    b_tokens = set(re.split(r"[-_.\s/]+", right.lower())) - {""}
    jaccard = len(a_tokens & b_tokens) / len(a_tokens | b_tokens) if a_tokens | b_tokens else 0.0
    a_compact = re.sub(r"[-_.\s/]+", "", left.lower())
    b_compact = re.sub(r"[-_.\s/]+", "", right.lower())
    a_bigrams = Counter(a_compact[i : i + 2] for i in range(len(a_compact) - 1))
    b_bigrams = Counter(b_compact[i : i + 2] for i in range(len(b_compact) - 1))
    total = sum(a_bigrams.values()) + sum(b_bigrams.values())
    dice = 2 * sum((a_bigrams & b_bigrams).values()) / total if total else 0.0
    return max(jaccard, dice)


def jaccard(left: Iterable[str], right: Iterable[str]) -> float:
    a, b = set(left), set(right)
    return len(a & b) / len(a | b) if a | b else 0.0


@dataclass(frozen=True, slots=True)
class Turn:
    """One row as the summariser sees it."""

    id: int
    role: str
    message: str


@dataclass(frozen=True, slots=True)
class _Sentence:
    position: int
    role: str
    text: str
    words: frozenset[str]


def _sentences(turns: Sequence[Turn], max_sentences: int) -> list[_Sentence]:
    found: list[_Sentence] = []
    for turn in turns:
        for piece in _SENTENCE_END.split(turn.message):
            text = " ".join(piece.split())
            if len(text) < 20 or text.startswith(("```", "$ ", "> ")):
                continue
            words = frozenset(tokens(text))
            if len(words) < 2:
                continue
            if len(text) > 240:
                text = text[:237].rstrip() + "..."
            found.append(_Sentence(len(found), turn.role, text, words))
            if len(found) >= max_sentences:
                return found
    return found


def extractive_summary(turns: Sequence[Turn], max_chars: int) -> str:
    """The most representative sentences of ``turns``, in their original order.

    A sentence's centrality is how many other sentences share its words (summed document
    frequency of its words over the period, normalised by its length); decisions and the
    user's own words get a boost. Bounded by ``max_chars``.
    """
    sentences = _sentences(turns, max_sentences=2000)
    users = sum(1 for t in turns if t.role == "user")
    header = f"{len(turns)} turns ({users} from the user)."
    if not sentences:
        return header
    frequency = Counter(word for s in sentences for word in s.words)

    def centrality(sentence: _Sentence) -> float:
        shared = sum(frequency[w] - 1 for w in sentence.words)
        value = shared / math.sqrt(len(sentence.words))
        lowered = sentence.text.lower()
        if any(cue in lowered for cue in _DECISION_CUES):
            value = value * 1.5 + 1
        if sentence.role == "user":
            value *= 1.2
        return value

    ranked = sorted(sentences, key=lambda s: (-centrality(s), s.position))
    budget = max_chars - len(header) - 1
    picked: list[_Sentence] = []
    seen_words: list[frozenset[str]] = []
    for sentence in ranked:
        cost = len(sentence.text) + 3
        if cost > budget:
            continue
        if any(jaccard(sentence.words, other) > 0.7 for other in seen_words):
            continue
        picked.append(sentence)
        seen_words.append(sentence.words)
        budget -= cost
        if budget < 40:
            break
    picked.sort(key=lambda s: s.position)
    return "\n".join([header, *(f"- {s.text}" for s in picked)])
