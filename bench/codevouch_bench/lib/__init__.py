"""Shared helpers of the benchmark scripts (codevouch_bench/*.py): data, timing, baselines, report."""
