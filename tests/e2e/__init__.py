"""End-to-end tests with the real agent CLIs (opt-in: ``pytest -m e2e``)."""
