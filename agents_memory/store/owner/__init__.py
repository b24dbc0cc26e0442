"""The owner's own operations on the store: archive, forget, rewrite, export and import
bundles, and what the console reads."""
