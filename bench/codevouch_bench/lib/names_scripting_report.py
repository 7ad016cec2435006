"""The "Names in Ruby, PHP, Scala, shell and Lua" section of docs/BENCHMARKS.md, from
bench/results/bench-names-scripting.json (what codevouch_bench.names_scripting writes)."""
from __future__ import annotations

from pathlib import Path
from typing import Any

from codevouch_bench.lib.common import RESULTS as RESULTS_DIR
from codevouch_bench.lib.common import read_json_if_exists

RESULTS = RESULTS_DIR / "bench-names-scripting.json"


def rows(data: dict[str, Any]) -> list[str]:
    """The per-corpus table of a names figure (this one's, or names_c_family's), header included."""
    return ["| corpus | language | files | names | rank 1 | MRR@10 | in top 10 |", "|---|---|---|---|---|---|---|",
            *(f"| {r['corpus']}@{r['commit']} | {r['language']} | {r['files']} | {r['targets']} | "
              f"{r['rank1']:.3f} ({r['at_1']}) | {r['mrr10']:.3f} | {r['in_10']} |" for r in data["corpora"])]


def misses(data: dict[str, Any]) -> list[str]:
    """One line per recorded miss of a names figure."""
    return [f"- {r['corpus']}: `{m['name']}` ({m['at']}) at rank {m['rank'] or '>10'}, first "
            f"{m['first']}" for r in data["corpora"] for m in r["misses"]]


def section(path: Path = RESULTS) -> str:
    data = read_json_if_exists(path)
    if data is None:
        return ""
    return "\n".join([
        "\n## Names in Ruby, PHP, Scala, shell and Lua\n",
        f"Rerun: `{data['command']}` (writes bench/results/bench-names-scripting.json).\n",
        "Each target is a function, method, class, module, trait or object whose short name the "
        "repository's files define exactly once (4 characters or more, outside vendored and fixture "
        "directories), found by the benchmark's own tree-sitter walk (codevouch_bench/names_scripting.py), "
        "never codevouch's; it is asked for by its name as written, and a hit is right when it is the "
        "target's file and overlaps its lines. The fake embedder: the name tier and the lexical list "
        "decide. Nothing was tuned on these repositories: every pair is held out.\n",
        f"**Held out, all corpora: {data['rank1']:.3f} at rank 1 over {data['targets']} names.**\n",
        *rows(data),
        "\nThe misses (at most 8 a corpus):\n", *misses(data),
        "\nPenlight's `asserteq` and `assert` are first at k=30 and k=20, not at k=10: in 55 places its tests "
        "pass `function()` a body that opens with `asserteq(` or `assert(`, and the lexical documents, which "
        "keep no punctuation, read `function asserteq` as a definition after a keyword, so chunks that only "
        "call the name crowd the name list (JavaScript's `function () {` reads the same way). The run before "
        "(0.991) also missed names that differ from another definition only in case or a leading underscore "
        "(`Logger` and `logger`, a case class `DisplayToErr` and a method `displayToErr`, `_parse` and "
        "`parse`), where the definition was merged into a chunk whose symbol does not name it: the own-case "
        "preference now reads the definitions inside a chunk too. And Penlight's `raise_deprecation`, a "
        "function inside a `do ... end` block, was cut into `<module>` windows: a top-level `do` block's "
        "functions are now the file's own definitions.\n"])
