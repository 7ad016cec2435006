#!/usr/bin/env python
"""Splitter windows per splitter: are the windows other pipelines cut judged right after an edit?

A retrieval pipeline built on LangChain or LlamaIndex sends codevouch the windows its splitter cut,
wherever their first and last characters fall. Each splitter of codevouch_bench/lib/windows.py
(SPLITTERS: LangChain's language and plain RecursiveCharacterTextSplitter, LlamaIndex's
SentenceSplitter and CodeSplitter) cuts every file of release N, and each window is validated in
three working trees:

  insert-above  release N with two comment lines added at the top of every file (not committed):
                every window is still current, at other lines and offsets;
  rename        release N with every file moved to a new name by `git mv` (staged, not committed):
                every window is current at its file's rename target;
  release       release N+1 checked out (a real history, renames as `git diff -M` finds them).

Truth is windows.py's plain string search (never codevouch's matcher). Pairs: the held-out window
pairs of the full profile (lib/config.py: releases 2-3 years apart, never tuned on); --quick takes
the first release pair of the quick profile's freshness figure.
"""
from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

from codevouch_bench.lib import cli, corpus, windows
from codevouch_bench.lib.common import log, machine, write_json
from codevouch_bench.lib.config import WindowPair

SCENES = ("insert-above", "rename", "release")
COMMENT = {".py": "#"}   # the line comment of the other splitter languages is //


def moved_name(path: str) -> str:
    p = Path(path)
    return str(p.with_name(f"{p.stem}_moved{p.suffix}"))


def scene_tree(repo: Path, old: str, scene: str, work: Path) -> tuple[Path, windows.Scene]:
    """A clone of `repo` with the working tree of `scene` made from release `old` (or the repo
    itself, at release N+1, for `release`)."""
    if scene == "release":
        return repo, windows.release_scene(repo, old)
    clone = work / f"{repo.name}-{scene}"
    shutil.rmtree(clone, ignore_errors=True)
    corpus.git(repo.parent, "clone", "-q", "--no-checkout", str(repo), str(clone))
    corpus.git(clone, "checkout", "-q", "--detach", old)
    files = windows.files_at(clone, old)
    if scene == "insert-above":
        for path, text in files.items():
            mark = COMMENT.get(Path(path).suffix, "//")
            added = f"{mark} a line added above\n{mark} and another\n" + text
            (clone / path).write_bytes(added.encode())
            files[path] = added
        return clone, windows.Scene(scene, files, {})
    moved = {path: moved_name(path) for path in files}
    for path, target in moved.items():
        corpus.git(clone, "mv", path, target)
    return clone, windows.Scene(scene, {moved[p]: t for p, t in files.items()}, moved)


def evaluate(name: str, old_spec: str, new_spec: str, subdirs: tuple[str, ...], work: Path) -> dict[str, Any]:
    repo = work / cli.safe_name(f"splitters-{name}").replace(" ", "").replace("→", "-to-")
    branch, _ = corpus.evolution_repo(repo, old_spec, new_spec, subdirs)
    old = corpus.git(repo, "rev-parse", branch).strip()
    old_files = windows.files_at(repo, old)
    out: dict[str, Any] = {"name": name, "old": old_spec, "new": new_spec, "files": len(old_files), "scenes": {}}
    cuts = {splitter: windows.cut(repo, old, old_files, splitter) for splitter in windows.SPLITTERS}
    for scene in SCENES:
        tree, made = scene_tree(repo, old, scene, work)
        out["scenes"][scene] = {}
        for splitter, items in cuts.items():
            r = windows.judge(tree, old_files, items, made)
            out["scenes"][scene][splitter] = r
            log(f"splitters {name} [{scene}, {splitter}]: {r['windows']} windows ({r['unplaced']} unplaced), "
                f"accuracy {r['accuracy']}, false-fresh {r['false_fresh']}, false-stale {r['false_stale']}")
    return out


def totals(pairs: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    """Per scene and splitter, over every pair: windows, right, accuracy, false-fresh, false-stale."""
    out: dict[str, dict[str, Any]] = {}
    for scene in SCENES:
        out[scene] = {}
        for splitter in windows.SPLITTERS:
            rows = [p["scenes"][scene][splitter] for p in pairs]
            n = sum(r["windows"] for r in rows)
            right = sum(r["right"] for r in rows)
            out[scene][splitter] = {"windows": n, "right": right, "accuracy": round(right / n, 4) if n else None,
                                    "false_fresh": sum(r["false_fresh"] for r in rows),
                                    "false_stale": sum(r["false_stale"] for r in rows),
                                    "unplaced": sum(r["unplaced"] for r in rows)}
    return out


def main() -> None:
    args = cli.parser(__doc__ or "").parse_args()
    prof = cli.profile(args)
    held: tuple[WindowPair, ...] = prof.window_held_out
    chosen = [(w.name, w.old, w.new, w.subdirs) for w in held] or \
             [(f"{old} → {new}", old, new, ()) for old, new in prof.evolutions[:1]]
    corpus.fetch(v for _, old, new, _ in chosen for v in (old, new))
    work = cli.workdir(prof, "splitters")
    pairs = [evaluate(name, old, new, subdirs, work) for name, old, new, subdirs in chosen]
    result = {"figure": "splitters", "profile": prof.name, "machine": machine(), "splitters": windows.SPLITTERS,
              "scenes": {"insert-above": "two comment lines added at the top of every file, not committed",
                         "rename": "every file moved to <stem>_moved<suffix> by git mv, staged, not committed",
                         "release": "the later release checked out; renames as git diff -M finds them"},
              "truth": windows.TRUTH, "split": "held-out" if held else "tuning (quick profile)",
              "pairs": pairs, "overall": totals(pairs)}
    if args.out:
        write_json(args.out, result)
    for scene, by in result["overall"].items():
        for splitter, t in by.items():
            log(f"splitters overall [{scene}, {splitter}]: {t['windows']} windows, accuracy {t['accuracy']}, "
                f"false-fresh {t['false_fresh']}")


if __name__ == "__main__":
    main()
