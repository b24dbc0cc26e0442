"""Reading the source systems (the JS original's PostgreSQL, unified-memory-mcp's SQLite) and
writing what they bring."""
