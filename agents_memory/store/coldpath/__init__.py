"""The Cold Path's tables: its queue and job runs, the librarian, tag signals and suggestions,
LLM usage."""
