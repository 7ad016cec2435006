"""Splitter windows judged by their text: LangChain's Python splitter (1,000 / 100, its default
whitespace stripping, `add_start_index`) over every `.py` file of a package's release N, each
window given its path, commit, blob, lines and offset, validated against the working tree of
release N+1. Not yet a figure of its own (the freshness figure is to gain it as a third source).

    python -m codevouch_bench.lib.splitter_windows requests==2.25.1:requests==2.31.0 click==7.1.2:click==8.0.0

Truth: a window is current when its text occurs verbatim in the new file at its path (or at
git's rename target). right: the verdict agrees; false-fresh: usable / stale-but-ok but not
current; false-stale: current but historical-only. Windows whose text is only in another file
are counted by verdict.
"""
from __future__ import annotations

import sys
import tempfile
import time
from collections import Counter
from pathlib import Path
from typing import Any

from codevouch_bench.lib import cli, corpus

FRESH = ("usable", "stale-but-ok")


def _package_files(root: Path, name: str) -> dict[str, bytes]:
    base = root / "src" / name if (root / "src" / name).is_dir() else root / name
    return {f"{name}/{p.relative_to(base).as_posix()}": p.read_bytes() for p in sorted(base.rglob("*.py"))}


def _windows(repo: Path, commit: str, paths: list[str]) -> list[dict[str, Any]]:
    from langchain_text_splitters import Language, RecursiveCharacterTextSplitter
    splitter = RecursiveCharacterTextSplitter.from_language(Language.PYTHON, chunk_size=1000, chunk_overlap=100,
                                                            add_start_index=True)
    items = []
    for rel in paths:
        content = corpus.git(repo, "show", f"{commit}:{rel}")
        blob = corpus.git(repo, "rev-parse", f"{commit}:{rel}").strip()
        for doc in splitter.create_documents([content]):
            at = doc.metadata["start_index"]
            start = content.count("\n", 0, at) + 1
            items.append({"path": rel, "commit": commit, "blob_sha": blob, "text": doc.page_content,
                          "start_index": at, "start_line": start, "end_line": start + doc.page_content.count("\n")})
    return items


def evaluate(old_spec: str, new_spec: str, work: Path) -> dict[str, Any]:
    from codevouch.validator import validate
    name = old_spec.split("==")[0]
    repo = work / cli.safe_name(f"{old_spec}-to-{new_spec}")
    corpus.init_repo(repo)
    old_files = _package_files(corpus.extract(old_spec), name)
    corpus.replace_tree(repo, old_files)
    old = corpus.commit_all(repo, old_spec)
    corpus.replace_tree(repo, _package_files(corpus.extract(new_spec), name))
    corpus.commit_all(repo, new_spec)
    renames = {}
    for line in corpus.git(repo, "diff", "--name-status", "-M", old, "HEAD").splitlines():
        parts = line.split("\t")
        if parts[0].startswith("R"):
            renames[parts[1]] = parts[2]
    items = _windows(repo, old, sorted(old_files))
    began = time.perf_counter()
    results = validate(repo, items)
    seconds = time.perf_counter() - began
    texts = {p.relative_to(repo).as_posix(): p.read_text(encoding="utf-8", errors="replace")
             for p in repo.rglob("*.py") if ".git" not in p.parts}
    right = false_fresh = false_stale = 0
    stale_reasons: Counter[str] = Counter()
    elsewhere: Counter[str] = Counter()
    for item, v in zip(items, results):
        target = item["path"] if item["path"] in texts else renames.get(item["path"])
        current = item["text"] in texts.get(target or "", "")
        fresh = v.verdict in FRESH
        right += current == fresh
        false_fresh += fresh and not current
        false_stale += current and not fresh
        if current and not fresh:
            stale_reasons[v.reason] += 1
        if not current and any(item["text"] in t for t in texts.values()):
            elsewhere[v.verdict] += 1
    return {"pair": f"{old_spec} -> {new_spec}", "windows": len(items), "right": right,
            "accuracy": round(right / len(items), 4) if items else None, "false_fresh": false_fresh,
            "false_stale": false_stale, "false_stale_reasons": dict(stale_reasons),
            "text_only_in_another_file": dict(elsewhere), "validate_s": round(seconds, 3)}


def main(argv: list[str]) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        for arg in argv:
            old, new = arg.split(":")
            print(evaluate(old, new, Path(tmp)))


if __name__ == "__main__":
    main(sys.argv[1:])
