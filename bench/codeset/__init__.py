"""A deterministic coding-agent memory evaluation set (issue 24): sessions of dozens of projects
in Claude Code and Codex transcript formats, confusable distractors, and questions of five kinds
with their gold turns. ``generate(seed)`` builds it; ``write(home, codeset)`` writes the files."""

from bench.codeset.generate import CodeSet, Question, generate, write
from bench.codeset.model import Session, Turn

__all__ = ["CodeSet", "Question", "Session", "Turn", "generate", "write"]
