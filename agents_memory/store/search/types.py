"""What a search takes and returns: filters, tuning knobs, hits and why they matched."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from datetime import datetime
from typing import Any, Literal

from agents_memory.clipping import clip
from agents_memory.daterange import DateRange
from agents_memory.store.search.action_text import ACTION_KINDS, FoundAction

Used = Literal["hybrid", "fulltext", "vector", "ilike", "recency", "none"]
Arm = Literal["fulltext", "vector", "context", "ilike", "recency", "action"]
MAX_LIMIT = 50
HIT_MAX_CHARS = 4_000
"""A hit's message leaves a search (MCP, the command line, the daemon's socket) clipped to this
many characters (:func:`agents_memory.clipping.clip`); its id reads the rest (``read_memory``)."""


@dataclass(frozen=True, slots=True)
class SearchFilters:
    """What the caller asked for. ``agent_platform`` ``None`` or ``"*"`` = every platform;
    ``device_scope="local"`` keeps rows of ``device_name`` plus every pinned row."""

    p_tag: str | None = None
    date_range: DateRange | None = None
    role: Literal["user", "assistant"] | None = None
    agent_platform: str | None = None
    device_scope: Literal["global", "local"] = "global"
    device_name: str | None = None
    include_archived: bool = False
    limit: int = 10
    shared: tuple[tuple[int, tuple[int, ...]], ...] = ()
    """A team member's view beyond their own rows: each teammate's user id with the project
    tags (aliases included) that teammate shares (:mod:`agents_memory.store.team`); the
    database's policies enforce the same."""
    as_of: datetime | None = None
    """The pool as it was at this moment (:func:`~agents_memory.store.search.scope.filter_sql`)."""
    git_root: str | None = None
    """Only turns of the repository at this root (the project a per-prompt recall scopes to
    first, as the brief resolves it from a working directory)."""
    action_kind: str | None = None
    """Only turns that made an action of this kind (:data:`ACTION_KINDS`)."""
    action_file: str | None = None
    """Only turns that made an action on this path (a part of it, or a glob with ``*``)."""
    only_ids: tuple[int, ...] | None = None
    """Set by the search itself, not its callers: only these turns (those a ``kind`` /
    ``file`` filter kept, :func:`~agents_memory.store.search.actions.filtered_turns`)."""

    @property
    def by_action(self) -> bool:
        """Whether a ``kind`` or ``file`` filter narrows the search to turns that acted."""
        return bool(self.action_kind or self.action_file)

    def __post_init__(self) -> None:
        if self.action_kind is not None and self.action_kind not in ACTION_KINDS:
            raise ValueError(
                f"kind must be one of {', '.join(ACTION_KINDS)}, got {self.action_kind!r}"
            )
        if not 1 <= self.limit <= MAX_LIMIT:
            raise ValueError(f"limit must be between 1 and {MAX_LIMIT}, got {self.limit}")
        if self.role not in (None, "user", "assistant"):
            raise ValueError(f"role must be 'user' or 'assistant', got {self.role!r}")
        if self.device_scope not in ("global", "local"):
            raise ValueError(f"device_scope must be 'global' or 'local', got {self.device_scope!r}")
        if self.device_scope == "local" and not self.device_name:
            raise ValueError("device_scope='local' needs this device's name")


@dataclass(frozen=True, slots=True)
class SearchTuning:
    """Ranking knobs. Callers fill the first two from ``SEARCH_RECENCY_HALFLIFE_DAYS`` and
    ``SEARCH_FALLBACK_THRESHOLD``. The defaults are the best measured on LoCoMo (bench/)."""

    recency_halflife_days: float = 30.0
    fallback_threshold: float = 0.3
    pinned_boost: float = 1.25
    candidate_factor: int = 4
    min_candidates: int = 40
    hnsw_max_scan_tuples: int = 20_000
    bm25_k1: float = 0.9
    bm25_b: float = 0.4
    """Term-frequency saturation and length normalisation, both milder than the textbook 1.2
    and 0.75: on LoCoMo a longer turn is more often the one that answers, and a repeated word
    adds little."""
    stats_rows: int = 1_000
    """Term rarity (BM25's document frequencies) and the mean document length are counted over
    the newest this many rows in scope: exact for a small pool, a sample for a big one (2,000
    until the common words were looked up: 1,000 is 3 ms faster at 10k-1M rows and finds as
    much, bench/RESULTS.md)."""
    rare_rows: int = 300
    """In a scope bigger than the sample, full-text candidates are the sampled rows that match
    plus the newest matches of the words about this many rows or fewer hold, and the newest
    rows holding two of those words (GIN index)."""
    rare_rows_lexical: int = 1_000
    """``rare_rows`` for a search without the vector arm (no query vector, or no pgvector):
    then the full-text arm alone has to reach old rows. At 1M rows, recall of the original
    turns without vectors is 0.41 with 1,000 and 0.17 with 300; with vectors 300 is best."""
    fts_scan_rows: int = 1_000
    """The full-text arm scores at most this many newest rows matching a rare word (and as many
    holding two rare words, and as many matching every word), so a common word costs a bounded
    scan; 0 turns the arm off."""
    conjunction_rows: int = 5_000
    """The rows holding every word of the query are read through the GIN index (as many as
    ``fts_scan_rows``, newest first) when its rarest word is estimated to hold at most this many
    rows in the table; common words together are left to the sampled rows."""
    lexical_weight: float = 0.45
    """Fusion: ``w * bm25 / max(max bm25, floor) + (1 - w) * min-max normalised cosine`` over
    the rows in play (both arms' candidates and their neighbours; the floor is
    ``lexical_floor``'s). A little below one half since a row's vector carries the end of the
    turn before it (:mod:`agents_memory.store.passages`)."""
    lexical_floor: float = 0.5
    """The BM25 scores are divided by the greater of the best row's and this share of the BM25
    an average-length row would get for holding once each query word found in scope, so when
    the best full-text match holds only a minor part of the query (one common word of a long
    question), full text counts less against the vector arm; 0 divides by the best row's alone.
    LoCoMo EvRec@10: 0.7791 with 0, 0.7795 / 0.7808 / 0.7797 / 0.7755 with 0.4 / 0.5 / 0.6 /
    0.7 (chosen there, bench/RESULTS.md); searches at 100k and 1M rows find the same."""
    neighbour_weight: float = 0.5
    """A turn gains this share of the best fused score among its session neighbours (an answer
    is often found through the question before it)."""
    neighbour_span: int = 2
    neighbour_decay: float = 0.8
    """Neighbours further than one turn away count this much less."""
    session_weight: float = 0.4
    """A turn gains this share of the mean of its session's best three scores."""
    date_weight: float = 0.6
    """Added for turns whose time falls on a date the query names (about the fused score of a
    good match: a question that names a day is mostly about that day)."""
    date_slack_days: float = 3.0
    slack_date_share: float = 1.0
    """The share of ``date_weight`` a turn gets on a day of the slack around a named day (not
    the day itself). Coding set, date questions: 0.5 puts the named day's turn first (MRR 1.00
    against 0.79 on the tuning half, Hit@10 1.00 both); LoCoMo's temporal questions, whose days
    are often a few days off the turn's, lose with it (EvRec@10 0.835 against 0.842,
    bench/RESULTS.md): 1, the slack days as the day."""
    date_candidates: int = 200
    """The newest this many rows of each day the query names are in play (through the time
    index), so an old turn of that day is ranked even when neither arm reached it."""
    dated_recency_off: bool = True
    """A query that names a day is not about the newest rows: no recency prior for it."""
    project_weight: float = 0.6
    """Added for turns of a project the query names (a directory of the turn's working
    directory, or its project tag, is a word of the query)."""
    confidence_weights: tuple[float, float, float, float] = (-5.78, 5.94, 11.98, 0.82)
    """(bias, weight of the query coverage, weight of the cosine, cosine centre) of a hit's
    confidence (:mod:`agents_memory.store.search.confidence`): a logistic regression of "this
    hit is the gold turn" fitted on the coding set's tuning half (``bench/coding_recall.py
    --dump``, its ``real-tuning`` hits, ``bench/fit_confidence.py``; refitted 2026-12-05 with
    the coverage prior and the stop words at 0: it was (-6.29, 5.54, 7.09), before that
    (-5.47, 4.74, 4.66)). With near-duplicates in the pool a right answer often reads 0.1-0.3.
    The hit's cosine against its query's candidates' spread (``MatchWhy.similarity_z``) and
    the words its session holds were tried as more inputs and left out: no gain on the tuning
    halves (bench/RESULTS.md, per-prompt recall)."""
    weak_below: float = 0.012
    """A search whose best hit's confidence is below this says its matches are weak. On the
    coding set's tuning half: every nonsense and off-topic query is at 0.0074 or below, every
    real question's best hit at 0.018 or more (with the weights refitted 2026-12-05; 0.02
    between 0.006 and 0.030 before)."""
    identifier_weight: float = 3.0
    """In a hit's coverage of the query (:mod:`.confidence`), a word written like code
    (``loadTaxRates``, ``E4821``, ``orders_ref_key``) counts this many times: it names one
    thing. Per-prompt recall, tuning half (``bench/prompt_recall.py``), at the same silence:
    the related prompts given their memory 0.63 with 1, 0.78 with 3."""
    rarity_weighting: bool = False
    """In a hit's coverage of the query (:mod:`.confidence`), each word counts as rare as the
    full-text arm found it (BM25's idf, relative to the query's other words): a hit holding the
    query's rare words is strong evidence, one holding only its common words weak. Measured
    and left off (bench/RESULTS.md, per-prompt recall): the words a prompt adds around its
    subject ("hit", "bug", "settle", "size") are the rarest in a memory, so they weigh most
    and no hit holds them; per-prompt recall, tuning half, 0.61 of the related prompts given
    their memory against 0.77 with every word alike (weights refitted each way)."""
    coverage_prior: float = 2.0
    """A hit's coverage counts this many more words of the query, which no hit holds
    (:func:`~.confidence.coverage`): a share rests on the number of words it was counted on,
    so one word of a two-word prompt ("happy friday!") is weaker evidence than six of a
    ten-word question. Per-prompt recall, tuning half (weights refitted, bar chosen each
    time): the related prompts given their memory 0.77 / 0.81 / 0.83 / 0.82 with 0 / 1 / 2 /
    3 (bench/RESULTS.md)."""
    speak_above: float = 0.04
    """Memory offered unasked (a per-prompt recall, :mod:`agents_memory.recall.prompt_recall`)
    needs a hit of at least this confidence: the same calibrated confidence as ``weak_below``,
    a stricter bar, since a wrong memory added to a prompt costs more than a weak search the
    agent asked for. The lowest bar keeping 97 % of the unrelated prompts of
    ``bench/prompt_recall.py``'s tuning half silent (0.03 keeps 92 %, 0.04 98 %; the related
    prompts given their memory: 0.85 / 0.83 / 0.76 at 0.03 / 0.04 / 0.05; bench/RESULTS.md)."""
    weak_shown: int = 3
    """How many hits a search with no good match still shows, each with its (low) confidence:
    a few nearest, never a full page of unrelated rows under a note."""
    rare_share: float = 0.01
    """A query word at most this share of the rows hold is rare: a turn holding every rare
    word is never outranked by a turn lifted only by its context."""
    arm_top: int = 3
    """The full-text arm's confidence is the best coverage of the query's rare vocabulary among
    its first this many hits (:mod:`agents_memory.store.search.arms`)."""
    arm_weighting: bool = True
    """Fuse with each arm's weight scaled down when it is not sure on this query (the two then
    scaled to sum to one; :mod:`agents_memory.store.search.arms`); off: the fixed weights
    (``lexical_weight`` and the rest)."""
    arm_confidence_floor: float = 0.5
    """The share of its base weight an arm keeps when it is not sure at all (confidence 0).
    Coding set, tuning half, date questions: fused Hit@10 0.83 with 0.1, 0.75 with 0.5 (as
    with fixed weights); LoCoMo EvRec@10: 0.771 with 0.1, 0.782 with 0.5, 0.781 fixed
    (bench/RESULTS.md): 0.5, so that LoCoMo does not drop."""
    arm_confidence_neutral: float = 0.5
    """From this confidence on (0-1), or with no opinion, an arm keeps its whole base
    weight."""
    vector_z: tuple[float, float] = (2.0, 6.0)
    """The vector arm's confidence is 0 when its best cosine is this many standard deviations
    of its candidates' cosines above their mean or fewer, 1 at the second or more, linear
    between."""
    dated_vector_confidence: float = 0.0
    """The vector arm's confidence is multiplied by this on a query that names a day (its
    vector does not hold the calendar)."""
    rrf_k: float = 0.0
    """0: the arms' scores are fused (normalised BM25 and cosine); more: their ranks among the
    rows in play are (reciprocal rank fusion with this ``k``, each arm's first row scoring 1),
    weighted alike. Measured as a variant (bench/RESULTS.md)."""
    kept_slots: tuple[int, int] = (5, 3)
    """How many of each sure arm's first hits (full text, vector) keep a place in the page
    (at most half the page each; :mod:`agents_memory.store.search.arms`); (0, 0): none."""
    vector_sure: float = 0.5
    """The vector arm's confidence from which its first hits keep their place."""
    ilike_scan_rows: int = 20_000
    """The ILIKE fallback looks at most at this many newest rows (it cannot use an index)."""
    action_pool: int = 40
    """The actions arm (:mod:`agents_memory.store.search.actions`) ranks at most this many
    actions, the best by their full text, and fuses the turns they belong to."""
    action_fusion: Literal["rrf", "off"] = "rrf"
    """How the actions arm joins the turns' ranking: reciprocal-rank fusion of the two lists
    (``rrf``), or not at all (``off``: the turns' search alone, for comparison)."""
    action_rrf_k: int = 10
    """The rank constant of that fusion: a list's first place counts 1/(k+1)."""
    action_weight: float = 1.5
    """The actions list's weight in the fusion, times its sureness on the query (the share of
    the query's content words its best action holds). Action set, tuning half, shown@5/@10:
    0.96/0.97 with 1.5 (and ``action_session_weight`` 3), 0.96/0.97 with 2, 0.95/0.96 with 1
    (bench/RESULTS.md)."""
    action_session_weight: float = 3.0
    """A turn of the actions list also gains this share of that weight at the place of its
    session's best turn among the turns' hits. Action set, tuning half: the error questions
    ("what error did the deploy hit while fixing the search index bug") shown@5 0.00 without
    (1 is the same), 0.88 with 3."""
    plan_once: bool = True
    """Plan the hybrid statement once per connection for every query of the same shape (a
    prepared statement with a generic plan) instead of once per query: planning is about a
    fifth of a search. The filters and row counts are in the statement's text, so each user
    and filter set gets a plan made for its own row counts. A search with a date-range filter
    is still planned per query (its bounds change with the clock)."""
    fulltext_ahead: bool = True
    """Run the hybrid statement's full-text arm in the search's first round trip, while the
    query is embedded (:mod:`~agents_memory.store.search.fulltext_ahead`); off: in the one
    statement after the vector, as before. The same ranking either way; off is kept as the
    benchmark's baseline (``bench/coding_latency.py``)."""

    mmr_lambda: float = 1.0
    """Diversity of the page (:mod:`agents_memory.store.search.rerank`): below 1, maximal
    marginal relevance with this weight on relevance and the rest on not repeating a hit
    already picked (word overlap); 1: off. Off since it costs held-out recall: 0.7 gives an
    error pasted in 5 sessions 3.6 places of 10 instead of 5 (``bench/diversity.py``) but drops
    the coding set's held-out Hit@10 to 0.712 (0.727 off); 0.9 keeps that and loses LoCoMo
    EvRec@10 (0.780 against 0.781) without freeing a place (bench/RESULTS.md)."""
    importance_weight: float = 0.2
    """Seed B's importance prior (:mod:`~agents_memory.store.search.rerank`): a hit's
    relevance times ``1 + w * importance`` (pinned, remembered on purpose, recalled before);
    0: off. Held out, the same Hit@10 on the coding set (0.727) and EvRec@10 on LoCoMo
    (0.781) with 0.2 as without; a turn remembered on purpose and given to sessions before
    ranks higher among near-duplicates (``bench/diversity.py``: MRR 0.080 against 0.051)."""

    def pool(self, limit: int) -> int:
        return max(self.min_candidates, limit * self.candidate_factor)

    def ef_search(self, limit: int) -> int:
        return min(1000, max(100, 2 * self.pool(limit)))


@dataclass(frozen=True, slots=True)
class MatchWhy:
    """Why a row is in the result: arm ranks (1 = best), arm scores, the context it gained and
    the final score."""

    arms: tuple[Arm, ...]
    fts_rank: int | None = None
    fts_score: float | None = None
    """BM25 of the row for the query's words (also for rows found another way)."""
    vector_rank: int | None = None
    similarity: float | None = None
    """1 - cosine distance to the query vector (also for full-text-only hits with a vector)."""
    similarity_z: float | None = None
    """How many standard deviations of the vector arm's candidates' cosines ``similarity``
    stands above their mean (``None`` without a vector or with too few candidates to judge,
    :data:`~agents_memory.store.search.arms.MIN_SPREAD_ROWS`): a cosine read against this
    query's own spread."""
    fused_score: float | None = None
    """The two arms' normalised scores, weighted (see ``SearchTuning.lexical_weight``)."""
    context_boost: float | None = None
    """What the row's session neighbours and its session added."""
    date_boost: float | None = None
    """What a date named in the query added."""
    project_boost: float | None = None
    """What a project named in the query added."""
    all_rare: bool | None = None
    """Whether the row holds every rare word of the query."""
    recency_factor: float | None = None
    pinned_factor: float | None = None
    score: float | None = None
    """``(fused_score + context_boost + date_boost) * recency_factor * pinned_factor``."""
    words_matched: int | None = None
    """ILIKE fallback: how many of the query's words the message contains."""
    action_rank: int | None = None
    """The turn's place in the actions arm (by its best action's full-text score)."""
    coverage: float | None = None
    """The share of the query's words the hit holds, each weighed by its rarity (its
    confidence's input, :func:`~agents_memory.store.search.confidence.coverage`)."""


@dataclass(frozen=True, slots=True)
class SearchHit:
    id: int
    role: str
    message: str
    agent_platform: str
    agent_model: str | None
    session_id: str | None
    p_tag: str | None
    """The canonical project tag's name (aliases resolved)."""
    d_tag: tuple[str, ...]
    is_pinned: bool
    message_at: datetime
    device_name: str | None
    cwd: str | None
    why: MatchWhy
    archived: bool = False
    """Archived (``manage_knowledge remove``, or by age): found only with ``include_archived``;
    ``mcp-agents-memory restore --id`` brings it back."""
    confidence: float | None = None
    """Roughly the chance that this is the turn asked for (:mod:`.confidence`)."""
    by: str | None = None
    """A teammate's name when the hit is theirs (a project they share), else ``None``."""
    chars: int | None = None
    """The whole message's length (``message`` holds at most its first
    :data:`~agents_memory.store.search.rows.HIT_READ_CHARS` characters)."""
    kind: str = "turn"
    """What the hit is: a conversation ``turn`` (other kinds, such as an action or a session,
    name themselves here)."""
    actions: tuple[FoundAction, ...] = ()
    """The actions of this turn the search found (by their paths, commands, errors or the
    ``kind`` / ``file`` filters), best first."""


@dataclass(frozen=True, slots=True)
class SessionHit:
    """A session the query names (its summary, :mod:`~agents_memory.store.search.sessions`)."""

    agent_platform: str
    session_id: str
    title: str
    summary: str
    project: str | None
    git_root: str | None
    started_at: datetime
    last_at: datetime
    turns: int
    score: float
    text_rank: int | None = None
    """Its summary's place in the full-text ranking of summaries (``None``: not there)."""
    turn_rank: int | None = None
    """The place of its best turn's session among the turn hits' sessions."""

    def as_dict(self) -> dict[str, Any]:
        return {
            "agent_platform": self.agent_platform,
            "session_id": self.session_id,
            "title": self.title,
            "summary": clip(self.summary, SESSION_SUMMARY_MAX_CHARS)[0],
            "project": self.project,
            "git_root": self.git_root,
            "started_at": self.started_at.isoformat(),
            "last_at": self.last_at.isoformat(),
            "turns": self.turns,
            "score": self.score,
        }


SESSION_SUMMARY_MAX_CHARS = 1_500


@dataclass(frozen=True, slots=True)
class SearchResult:
    used: Used
    hits: tuple[SearchHit, ...] = ()
    note: str | None = None
    top_similarity: float | None = None
    threshold: float | None = None
    """The fallback threshold, reported when the ILIKE fallback ran."""
    p_tag: str | None = None
    """The canonical name the ``p_tag`` filter resolved to."""
    vector_used: bool = field(default=False)
    """Whether the vector arm ran (pgvector present and a query vector given)."""
    weak: bool = False
    """Whether the best hit is weak (nothing in memory matches the query well)."""
    sessions: tuple[SessionHit, ...] = ()
    """The sessions the query names, best first (their summaries; none without a query)."""

    @property
    def count(self) -> int:
        return len(self.hits)

    def as_dict(self) -> dict[str, Any]:
        """JSON-ready form (the JS original's field names where they exist; times in ISO 8601)."""
        return {
            "used": self.used,
            "count": self.count,
            "note": self.note,
            "top_similarity": self.top_similarity,
            "threshold": self.threshold,
            "p_tag": self.p_tag,
            "vector_used": self.vector_used,
            "weak": self.weak,
            "results": [_hit_dict(h) for h in self.hits],
            "sessions": [s.as_dict() for s in self.sessions],
        }


def _hit_dict(h: SearchHit) -> dict[str, Any]:
    """A hit's JSON-ready form, its message clipped to :data:`HIT_MAX_CHARS`."""
    message, clipped = clip(h.message, HIT_MAX_CHARS)
    clipped = clipped or (h.chars is not None and h.chars > len(h.message))
    return {
        "id": h.id,
        "kind": h.kind,
        "role": h.role,
        "message": message,
        "clipped": clipped,
        "chars": h.chars if h.chars is not None else len(h.message),
        "agent_platform": h.agent_platform,
        "agent_model": h.agent_model,
        "session_id": h.session_id,
        "p_tag_name": h.p_tag,
        "d_tag": list(h.d_tag),
        "is_pinned": h.is_pinned,
        "archived": h.archived,
        "message_at": h.message_at.isoformat(),
        "device_name": h.device_name,
        "cwd": h.cwd,
        **({"by": h.by} if h.by else {}),
        "similarity": h.why.similarity,
        "confidence": h.confidence,
        "found_by_action": "action" in h.why.arms,
        "actions": [a.as_dict() for a in h.actions],
        "why": {
            k: (list(v) if isinstance(v, tuple) else v)
            for k, v in asdict(h.why).items()
            if v is not None
        },
    }
