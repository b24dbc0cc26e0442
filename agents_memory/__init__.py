"""mcp-agents-memory: long-term, shared, time-ordered memory for AI coding agents."""

__version__ = "0.1.0"
