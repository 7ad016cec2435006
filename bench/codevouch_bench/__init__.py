"""codevouch's benchmarks: one module per figure (`python -m codevouch_bench.<figure>`), the runner
that runs them side by side and renders docs/BENCHMARKS.md (`python -m codevouch_bench`), and their
shared helpers (codevouch_bench.lib). Results JSON lives in bench/results/."""
