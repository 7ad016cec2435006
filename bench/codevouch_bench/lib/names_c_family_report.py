"""The "Names in C, C++, C#, Kotlin and Swift" section of docs/BENCHMARKS.md, from
bench/results/bench-names-c-family.json (what codevouch_bench.names_c_family writes)."""
from __future__ import annotations

from pathlib import Path

from codevouch_bench.lib.common import RESULTS as RESULTS_DIR
from codevouch_bench.lib.common import read_json_if_exists
from codevouch_bench.lib.names_scripting_report import misses, rows

RESULTS = RESULTS_DIR / "bench-names-c-family.json"

# What the recorded misses share, read from them by hand (rewrite it when a rerun changes them).
NOTE = (
    'What the misses share. A declaration ranked above its definition in the same file or beside it: a C '
    'prototype list (`static cJSON_bool parse_value(...);` at cJSON.c#L1070 before the function at '
    "#L1363), a C++ method declared in its class and defined below it (leveldb's `SkipList::FindLast`), "
    "and a type in a header behind the .cc file that implements its class's members (leveldb's `Cache`, "
    '`Status::Code`, `EnvPosixTestHelper`): the stub rule asks for a name defined in a header and a '
    'source file as its implementation, which is right for a function and wrong for the class itself. '
    'Swift: an `extension` of a protocol (a bigger chunk named by the protocol) before the one-line '
    'protocol. Kotlin: members of anonymous objects (`object : SimpleJavaFileObject(...) { override fun '
    'getCharContent ... }`), which codevouch names on purpose by nothing (they have no qualified name), a'
    " function declared inside an `if` of build.gradle.kts, a bodyless `inner class`, a `fun interface`'s"
    ' member, and a test named with spaces in backticks. The C walk reads a file as the grammar does: '
    'macro calls it takes for a function with no syntax error (`UNITY_FLOAT_TRAIT`) stay targets. Files '
    "the project's .gitignore names though upstream tracks them (cJSON's `test` directories under "
    "tests/unity/: 68 of the 229 files the table counts) hold no target: the benchmark's repository is "
    'made with `git add`, which skips them.'
)


def section(path: Path = RESULTS) -> str:
    data = read_json_if_exists(path)
    if data is None:
        return ""
    reached = [r["corpus"] for r in data["corpora"] if r["rank1"] is not None and r["rank1"] >= 0.99]
    return "\n".join([
        "\n## Names in C, C++, C#, Kotlin and Swift\n",
        f"Rerun: `{data['command']}` (writes bench/results/bench-names-c-family.json).\n",
        "Each target is a function, method, class, struct, interface, protocol, object, property or type "
        "alias whose short name the repository's files define exactly once (4 characters or more, outside "
        "vendored and fixture directories; a C or C++ function at its definition, with a body; a Swift "
        "extension never), found by the benchmark's own tree-sitter walk (codevouch_bench/names_c_family.py), "
        f"never codevouch's; at most {data['sample']} a corpus, sampled with a fixed seed. Each is asked for "
        "by its name as written, and a hit is right when it is the target's file and overlaps its lines. The "
        "fake embedder: the name tier and the lexical list decide. Nothing was tuned on these repositories: "
        "every pair is held out.\n",
        f"**Held out, all corpora: {data['rank1']:.3f} at rank 1 over {data['targets']} names; at 0.99 or "
        f"more: {', '.join(reached) if reached else 'none'}.**\n",
        *rows(data),
        "\nThe misses (at most 8 a corpus):\n", *misses(data),
        *(["", NOTE] if NOTE else []), ""])
