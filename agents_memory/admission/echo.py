"""Fixed markers shared by the brief builder and the capture pipeline.

The brief starts with :data:`BRIEF_MARKER`. Clients record the injected brief in their
transcripts (Claude as an attachment, Gemini as a ``<hook_context>`` user turn, Codex as a
developer message); the capture pipeline drops any turn that contains the marker so the brief
never feeds back into memory.
"""

BRIEF_MARKER = "<!-- mcp-agents-memory:brief v1 -->"
