"""The memory console: a local web UI (``mcp-agents-memory ui``) on the same services the
command line calls (:mod:`agents_memory.ops`, :mod:`agents_memory.recall.search`,
:mod:`agents_memory.recall.knowledge`)."""
