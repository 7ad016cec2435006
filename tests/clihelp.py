"""The CLI as a user runs it: a real `python -m codevouch` process with its own index directory."""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

FAKE = ["--embedder", "fake-bow-64"]


def cv(*args: str, cwd: Path | None = None, index: Path | None = None, stdin: str | None = None
       ) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ)
    if index is not None:
        env["CODEVOUCH_INDEX"] = str(index)
    return subprocess.run([sys.executable, "-m", "codevouch", *args], cwd=cwd, env=env, input=stdin,
                          capture_output=True, text=True, timeout=300)
