"""Names in Ruby, PHP, Scala, shell and Lua: a definition found first by its exact name.

For each real repository (a pinned commit of a public project, from a local bare mirror:
$CODEVOUCH_BENCH_GIT_MIRRORS/owner+name/repo), the targets are the functions, methods, classes,
modules, traits and objects whose short name the repository's files define exactly once, at any
depth, 4 characters or longer, outside vendored and fixture directories. Ground truth is this
module's own tree-sitter walk (the grammars' node types, listed below), never codevouch's chunker
or definition finder. Each target is asked for by its name as written (`settle_invoice`,
`renderTotals`); a hit is right when it is the target's file and its lines overlap the definition's.
The index is built with the fake embedder: the name tier and the lexical list decide, which is what
a search by an exact name leans on. No setting was tuned on these repositories: every pair is held out.

    CODEVOUCH_BENCH_GIT_MIRRORS=/path/to/mirrors python -m codevouch_bench.names_scripting --out X.json
"""
from __future__ import annotations

import importlib
import os
import random
import tempfile
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import tree_sitter

from codevouch import Index
from codevouch.embedding import FakeEmbedder
from codevouch_bench.lib import corpus
from codevouch_bench.lib.cli import parser
from codevouch_bench.lib.common import RESULTS, write_figure

OUT = RESULTS / "bench-names-scripting.json"


@dataclass(frozen=True)
class Corpus:
    label: str
    mirror: str         # owner+name under the mirrors directory
    commit: str
    language: str


CORPORA = (
    Corpus("sinatra", "sinatra+sinatra", "cb22afd7902b566b6eaba6c4ea89739494a65d12", "ruby"),
    Corpus("Slim", "slimphp+Slim", "038fd5713d5a41636fdff0e8dcceedecdd17fc17", "php"),
    Corpus("scopt", "scopt+scopt", "75cd14c9e1f517e9d1beb8de9e3427e40630f1cb", "scala"),
    Corpus("bats-core", "bats-core+bats-core", "d22e41faad59f5fd942a88c992b4913a27a460c4", "bash"),
    Corpus("Penlight", "lunarmodules+Penlight", "c317508c90cb384da22e79f6bd405eb4e406fc79", "lua"),
)

# language -> (grammar module, function), suffixes, node types that define a name.
GRAMMARS = {
    "ruby": (("tree_sitter_ruby", "language"), (".rb", ".rake"), {"method", "singleton_method", "class", "module"}),
    "php": (("tree_sitter_php", "language_php"), (".php",),
            {"function_definition", "method_declaration", "class_declaration", "interface_declaration",
             "trait_declaration", "enum_declaration"}),
    "scala": (("tree_sitter_scala", "language"), (".scala", ".sc"),
              {"function_definition", "class_definition", "object_definition", "trait_definition",
               "enum_definition"}),
    "bash": (("tree_sitter_bash", "language"), (".sh", ".bash"), {"function_definition"}),
    "lua": (("tree_sitter_lua", "language"), (".lua",), {"function_declaration"}),
}
_SKIP_DIRS = {"vendor", "vendored", "third_party", "node_modules", "fixtures", "fixture", "testdata"}
MIN_NAME = 4


def _parser(language: str) -> tree_sitter.Parser:
    (module, func), _, _ = GRAMMARS[language]
    return tree_sitter.Parser(tree_sitter.Language(getattr(importlib.import_module(module), func)()))


def _short(node: tree_sitter.Node) -> str:
    """The last plain name of a definition's `name` field: `Deep` of `A::B::Deep`, `f` of `M:f`."""
    name = node.child_by_field_name("name")
    while name is not None and name.named_child_count and name.type not in ("name", "word", "constant"):
        name = name.named_children[-1]
    return (name.text or b"").decode("utf-8", "replace") if name is not None else ""


def walk(parser: tree_sitter.Parser, kinds: set[str], text: bytes) -> list[tuple[str, int, int]]:
    """(short name, first line, last line) of every definition, at any depth."""
    out: list[tuple[str, int, int]] = []
    stack = [parser.parse(text).root_node]
    while stack:
        node = stack.pop()
        if node.type in kinds and (name := _short(node)):
            out.append((name, node.start_point[0] + 1, node.end_point[0] + 1))
        stack.extend(node.named_children)
    return out


def _is_shell_script(path: str, data: bytes) -> bool:
    first = data[:120].split(b"\n", 1)[0]
    return "." not in path.rsplit("/", 1)[-1] and first.startswith(b"#!") and (
        first.rstrip().endswith((b"/sh", b"/bash", b" bash", b" sh")))


def targets(files: dict[str, bytes], language: str) -> list[tuple[str, str, int, int]]:
    """(name, path, first line, last line) of each name defined exactly once."""
    parser = _parser(language)
    _, suffixes, kinds = GRAMMARS[language]
    found: list[tuple[str, str, int, int]] = []
    for path, data in sorted(files.items()):
        if _SKIP_DIRS & set(path.split("/")[:-1]):
            continue
        if path.endswith(suffixes) or (language == "bash" and _is_shell_script(path, data)):
            found += [(name, path, a, b) for name, a, b in walk(parser, kinds, data)]
    counts = Counter(name for name, *_ in found)
    return [t for t in found if counts[t[0]] == 1 and len(t[0]) >= MIN_NAME]


def _mirror(name: str) -> Path:
    root = Path(os.environ.get(corpus.GIT_MIRRORS_ENV, "/work/.mirror")) / name / "repo"
    return root / ".git" if (root / ".git").is_dir() else root


Targets = Callable[[dict[str, bytes], str], list[tuple[str, str, int, int]]]


def measure(c: Corpus, work: Path, most: int | None, find: Targets = targets) -> dict[str, Any]:
    """One corpus: its targets (`find`: this module's walk, or a sibling figure's), the index built
    with the fake embedder, each name asked for once."""
    files = corpus.blobs_at(_mirror(c.mirror), c.commit, corpus.GIT_MAX_BLOB)
    repo = work / c.label
    corpus.repo_from_files(repo, files)
    # The repository is made with `git add`, which skips what the project's own .gitignore names even
    # where upstream tracks it (cJSON's tests/unity/test/testunity.c): no index could find those.
    tracked = set(corpus.git(repo, "ls-files", "-z").split("\0"))
    wanted = [t for t in find(files, c.language) if t[1] in tracked]
    if most is not None and len(wanted) > most:
        wanted = sorted(random.Random(7).sample(wanted, most))
    idx = Index(repo, work / f"{c.label}-index", embedder=FakeEmbedder())
    started = time.perf_counter()
    idx.build()
    built = time.perf_counter() - started
    ranks: list[int | None] = []
    misses: list[dict[str, Any]] = []
    for name, path, first, last in wanted:
        hits = idx.search(name, k=10, validate=False, overlay=False)
        rank = next((i for i, h in enumerate(hits, 1)
                     if h.path == path and h.record.start_line <= last and first <= h.record.end_line), None)
        ranks.append(rank)
        if rank != 1 and len(misses) < 8:
            top = hits[0] if hits else None
            misses.append({"name": name, "at": f"{path}#L{first}-L{last}", "rank": rank,
                           "first": f"{top.path}#L{top.record.start_line} ({top.record.symbol})" if top else None})
    n = len(ranks)
    return {"corpus": c.label, "language": c.language, "commit": c.commit[:12], "files": len(files),
            "targets": n, "at_1": sum(r == 1 for r in ranks), "in_10": sum(r is not None for r in ranks),
            "rank1": round(sum(r == 1 for r in ranks) / n, 4) if n else None,
            "mrr10": round(sum(1 / r for r in ranks if r) / n, 4) if n else None,
            "build_seconds": round(built, 1), "misses": misses}


def main() -> None:
    p = parser(__doc__.splitlines()[0])
    args = p.parse_args()
    most = 60 if args.quick else None
    with tempfile.TemporaryDirectory(prefix="cv-names-") as tmp:
        rows = [measure(c, Path(tmp), most) for c in CORPORA]
    write_names("names_scripting", rows, args.out, OUT)


def write_names(figure: str, rows: list[dict[str, Any]], out: Path | None, kept: Path, **extra: Any) -> None:
    """A names figure's JSON: its corpora's rows, and rank 1 over all their targets."""
    total = sum(r["targets"] for r in rows)
    write_figure(out, kept, {"figure": figure, "embedder": "fake", **extra, "corpora": rows, "targets": total,
                             "rank1": round(sum(r["at_1"] for r in rows) / total, 4) if total else None,
                             "command": f"CODEVOUCH_BENCH_GIT_MIRRORS=<mirrors> python -m codevouch_bench.{figure}"})


if __name__ == "__main__":
    main()
