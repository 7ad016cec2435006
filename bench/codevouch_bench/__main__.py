"""`python -m codevouch_bench [--quick] [--only FIGURE ...] [--fake] [--render]`: the runner (runner.py)."""
from codevouch_bench.runner import main

if __name__ == "__main__":
    main()
