"""Shared helpers of the benchmark scripts (scripts/bench*.py): data, timing, baselines, report."""
