"""Snippets as another tool hands them over: every definition of every file, nested ones
included, named the way that tool names them (Python's `__qualname__`: `outer.<locals>.inner`;
Rust paths: `Type::method`), with commit, blob id, lines and text. Made with the benchmark's
own parsers (tooldefs.py), never codevouch's."""
from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import Any

from codevouch_bench.lib.corpus import git
from codevouch_bench.lib.tooldefs import Def, definitions, may_define


def tool_snippets(repo: Path, commit: str, branch: str, paths: Iterable[str]) -> list[tuple[Def, dict[str, Any]]]:
    out: list[tuple[Def, dict[str, Any]]] = []
    for path in sorted(set(paths)):
        if not may_define(path):
            continue
        text = git(repo, "show", f"{commit}:{path}")
        blob = git(repo, "rev-parse", f"{commit}:{path}").strip()
        lines = text.split("\n")
        for d in definitions(path, text):
            out.append((d, {"path": path, "commit": commit, "branch": branch, "blob_sha": blob,
                            "start_line": d.start, "end_line": d.end, "symbol": d.spelled,
                            "text": "\n".join(lines[d.start - 1:d.end])}))
    return out
