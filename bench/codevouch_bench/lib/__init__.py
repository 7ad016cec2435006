"""Shared helpers of the figure modules (codevouch_bench/*.py): data, timing, baselines, report."""
