"""Hybrid search over memories: a BM25 full-text arm and a vector arm, fused by score.

The ranking (:mod:`~agents_memory.store.search.statement`, its full-text arm in
:mod:`~agents_memory.store.search.fulltext`) scores the candidates of both arms and their
session neighbours with BM25 (term rarity sampled over the newest rows in scope) and the cosine
to the query vector, fuses the normalised scores with each arm weighted by how sure it is on
this query and a sure arm's first hits kept on the page
(:mod:`~agents_memory.store.search.arms`), lets a turn borrow from its neighbours and its
session, favours turns on a date the query names, and multiplies a gentle recency prior on
``message_at`` and a boost for pinned rows. It is one statement, planned once per connection
and shape (:mod:`~agents_memory.store.search.hybrid`). The statements that need no query
vector (the transaction's settings, the ranking's full-text arm, the actions arm, the sessions'
summary text) go to the server together before the rest of it, in one round trip, while the
caller may still be embedding the query (:mod:`~agents_memory.store.search.memories`,
:mod:`~agents_memory.store.search.fulltext_ahead`). The page then passes a last step of its own
(:mod:`~agents_memory.store.search.rerank`): seed B's importance prior, and the page's
diversity when asked for.

The agents' actions (tool calls) are a third, full-text arm
(:mod:`~agents_memory.store.search.actions`: BM25 over their paths, commands and error text,
each action given to its turn) fused with the turns' ranking by rank, a turn lifted by its
session's place among the turns' hits (:mod:`~agents_memory.store.search.fuse_actions`); the
``kind`` / ``file`` filters keep only the turns that made such an action. The vector arm does
not see actions.

When both arms are weak (no full-text hit and the best cosine below the fallback threshold) a
word-level ILIKE scan over the newest rows runs instead. Without a query the newest rows come
first (:mod:`~agents_memory.store.search.fallback`). Without the vector column (no pgvector) or
without a query vector only the full-text arm runs. Every hit says why it matched
(:class:`MatchWhy`) and how sure the search is of it
(:mod:`~agents_memory.store.search.confidence`). The user's words are read once
(:class:`~agents_memory.store.search.terms.ParsedQuery`);
the common words a big scope looks up are kept by :mod:`~agents_memory.store.search.lexemes`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from agents_memory.store.search.types import (
    HIT_MAX_CHARS,
    MAX_LIMIT,
    MatchWhy,
    SearchFilters,
    SearchHit,
    SearchResult,
    SearchTuning,
    SessionHit,
)

if TYPE_CHECKING:
    from agents_memory.store.search.memories import search_memories
    from agents_memory.store.search.scope import find_user_id


def __getattr__(name: str) -> Any:
    """The search itself is imported when first used: the types (and ``MAX_LIMIT``) alone
    cost no database driver, so ``mcp-agents-memory search`` can ask the daemon without it."""
    if name == "search_memories":
        from agents_memory.store.search.memories import search_memories

        return search_memories
    if name == "find_user_id":
        from agents_memory.store.search.scope import find_user_id

        return find_user_id
    raise AttributeError(name)


__all__ = [
    "HIT_MAX_CHARS",
    "MAX_LIMIT",
    "MatchWhy",
    "SearchFilters",
    "SearchHit",
    "SearchResult",
    "SearchTuning",
    "SessionHit",
    "find_user_id",
    "search_memories",
]
