"""What may stay on `sys.path` while codevouch answers for a repository.

codevouch imports much of its stack lazily (grammar wheels, tiktoken, chromadb, tantivy, ...), and
the resident engine serves each call from inside the caller's repository. Python resolves an empty
or relative `sys.path` entry against the working directory *at import time* (`python -c` puts `''`
first), and `python -m` puts the starting directory itself first: either way a repository's own
`tiktoken.py` or `tree_sitter_go.py` would be imported, and run, by the next lazy import. The CLI
(script, `python -m` and the engine it starts) and the engine drop those entries before doing any
work (issue 45, item 1).

Pure standard library: `codevouch.cli.main` calls `secure()` before anything else.
"""
from __future__ import annotations

import os
import sys
from collections.abc import Sequence
from pathlib import Path

# The directory the codevouch package was imported from: a checkout run as `python -m codevouch`
# from its own root has it as the working directory, and keeps it.
OWN = str(Path(__file__).resolve().parent.parent)


def trusted(entries: Sequence[str], cwd: str, own: str = OWN) -> list[str]:
    """`entries` less those a working directory decides: empty and relative ones (resolved
    against whatever the working directory is when an import runs) and the starting working
    directory itself, unless it is where codevouch lives (`own`)."""
    here = os.path.normpath(cwd)
    kept = []
    for entry in entries:
        if not entry or not os.path.isabs(entry):
            continue
        if os.path.normpath(entry) == here and here != os.path.normpath(own):
            continue
        kept.append(entry)
    return kept


def secure() -> None:
    """Drop from this process's `sys.path` every entry `trusted` refuses."""
    try:
        cwd = os.getcwd()
    except OSError:         # the working directory was removed: only relative entries can name it
        cwd = ""
    sys.path[:] = trusted(sys.path, cwd)
