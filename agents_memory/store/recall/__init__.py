"""What the brief and the MCP tools read beyond search: brief data, task pins, fact slots."""
