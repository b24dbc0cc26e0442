"""Benchmarks for the quality bars of SPEC §12: one module per figure, run with ``python -m``."""
