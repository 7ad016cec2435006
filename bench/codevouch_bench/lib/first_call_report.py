"""The "first call answered in-process" part of docs/BENCHMARKS.md's engine section, from
bench/results/bench-engine-large-first-call-ab.json (`codevouch_bench.engine_large --before DIR
--compare-only`: first calls paired with the code before the change, the floor beside each pair)
and bench/results/bench-engine-large-first-call.json (the same code, unpaired)."""
from __future__ import annotations

from pathlib import Path
from typing import Any

from codevouch_bench.lib.common import RESULTS as RESULTS_DIR
from codevouch_bench.lib.common import read_json_if_exists

PAIRED = RESULTS_DIR / "bench-engine-large-first-call-ab.json"
CUTS = RESULTS_DIR / "bench-engine-large-first-call-cuts.json"   # the two cuts named in WHY, paired
UNPAIRED = RESULTS_DIR / "bench-engine-large-first-call.json"

# How the first call works since the change, and what it still does beyond the floor: measured
# apart from the runs below (cProfile, -X importtime, strace), so kept as text.
HOW = (
    'A call that finds no engine now answers in-process and starts the engine once its answer is flushed '
    '([ENGINE.md](ENGINE.md#the-first-call)); an in-process read command ends with `os._exit` after its '
    "threads, atexit handlers and stream flushes (the interpreter's teardown after a search was 183-246 "
    "ms of the call, a bare `import chromadb`'s 93-117 ms, measured from the answer's last write to the "
    "process's exit at a load average of 3-4). These runs also imported chromadb on a thread while the "
    'search waited on git; that was taken out after them, as it raced the main thread\'s numpy import '
    '(a cold search failed; ENGINE.md, "The first call"), and the figures below were not rerun without it. '
    'The bench waits for each engine to listen after a first call before it goes '
    'on (it starts after the answer, so a half-started one would otherwise compete with the next call or '
    'outlive the stop).'
)
WHY = (
    'By CPU (user + system of the whole process and its git children, 6 rounds alternated, load average '
    '6.1): an in-process search (what a first call now is) 952 ms against 1100 ms before, a bare `import '
    'chromadb` 670 ms: 1.42×. What the first call still does beyond the floor, measured apart (load '
    'average 3-7): the git children, about 100 ms of CPU (the first-parent walk to the root commit that '
    "names the repository, 70 ms of CPU and 170 ms of wall on SQLAlchemy's 18,224 commits; rev-parse, "
    "config, the private index's refresh (60 ms more when the clone's index is racy, as in a fresh "
    'clone), status, ls-tree, cat-file, check-ignore); the imports that `import chromadb` does not do, '
    "about 230 ms by `-X importtime` (typer and the commands app about 60-70 ms, codevouch's api, "
    "validator, worktree, store and indexer modules the rest; chromadb's Rust bindings, loaded when a "
    'client opens, 20-57 ms more); opening the store and its first query (the HNSW graph of 45k vectors).'
    ' On a loaded machine every one of them is CPU on the same core as the call; on an idle one the git '
    'children run beside the chromadb import. 1.3× would need about 150-250 ms of CPU fewer (by the pairs'
    " above): the root-commit walk could be cached by HEAD (a shallow clone's deepening or a replace ref "
    'changes the answer for the same HEAD, so the cache must see those), and the commands not called need'
    " not be imported (typer's app is built from all of them)."
)


# The two cuts WHY names, built after it (measured apart in their own commits; the pairs below
# hold them together with the engine's warm-up and the lexical tie cut of the same days).
CUTS_HOW = (
    "Since the figures above, a first call no longer walks the history to the root commit that names the "
    "repository: it is kept in the index directory by HEAD (and the bytes of `shallow` and `info/grafts`; "
    "not kept where replace refs, grafts or shallow files may be moved by the environment) and checked by one "
    "`git rev-list --no-walk --max-parents=0`; and a call that names one command builds the CLI's app with that "
    "command alone ([ENGINE.md](ENGINE.md#the-first-call)). The code under test also holds the engine's "
    "warm-up after it starts (the pairs wait for it before the next call) and the lexical copy's fast-field "
    "tie cut."
)


def _ms(s: dict[str, Any]) -> str:
    return f"{s['p50']:.0f} / {s['p95']:.0f} ms"


def _pair(p: dict[str, Any]) -> str:
    return f"{p['ratio_median']} ({p['ratio_min']}-{p['ratio_max']})"


def _paired_table(ab: dict[str, Any], kept: str, before: str, machine_note: str) -> list[str]:
    """The paired run `ab` (kept as `kept`, against the code `before`) as a paragraph and table."""
    cmp, m = ab["against_before"], ab["machine"]
    first, inproc, warm = cmp["first_call"], cmp["in_process"], cmp["engine_warm"]
    phases = ", ".join(f"{k.replace('_', ' ')} {v}" for k, v in cmp.get("load_avg_1m_by_phase", {}).items())
    ratio = first["this_to_floor_median"]
    before_ratio = first["before_ms"]["p50"] / first["floor_import_chromadb_ms"]["p50"]
    return [f"`{ab['command']}` (kept as {kept}; --before: `codevouch/` of main at {before}, the code before "
            f"this change) at {m.get('date')}, load average {m.get('load_avg_1m_at_start')} at its start (by phase: "
            f"{phases}; {ab.get('load_avg_1m_at_end')} at its end), {machine_note}; pairs alternated, this ÷ "
            "before per pair (median, min-max). The clone's git index was refreshed (not racy): each status hashes "
            "nothing, on both sides.\n",
            "| call | this p50 / p95 | before p50 / p95 | ratio |", "|---|---|---|---|",
            f"| `codevouch search`, engine not running (n={first['this_ms']['n']} pairs) | {_ms(first['this_ms'])} | "
            f"{_ms(first['before_ms'])} | {_pair(first)} |",
            f"| the floor, `python -c 'import chromadb'`, run beside each pair | "
            f"{_ms(first['floor_import_chromadb_ms'])} | | |",
            f"| first call ÷ the floor, per pair (median) | {ratio}× | {before_ratio:.2f}× (p50 ÷ p50) | target ≤ "
            f"1.3×: {'met' if ratio <= 1.3 else 'not met'} |",
            f"| `codevouch search`, in-process (n={inproc['this_ms']['n']} pairs) | {_ms(inproc['this_ms'])} | "
            f"{_ms(inproc['before_ms'])} | {_pair(inproc)} |",
            f"| `codevouch search`, engine warm (n={warm['this_ms']['n']} pairs) | {_ms(warm['this_ms'])} | "
            f"{_ms(warm['before_ms'])} | {_pair(warm)} |"]


def section(paired: Path = PAIRED, unpaired: Path = UNPAIRED, cuts: Path = CUTS) -> str:
    ab = read_json_if_exists(paired)
    if ab is None or "first_call" not in ab.get("against_before", {}):
        return ""
    out = ["\n#### The first call answered in-process (after this change)\n", HOW + "\n",
           *_paired_table(ab, "bench/results/bench-engine-large-first-call-ab.json", "53471fe",
                          "on 2 cores shared with a 1M-chunk benchmark and other engineers' tests")]
    one = read_json_if_exists(unpaired)
    if one is not None:
        fl, ip, fc, wm, mx = (one["floor_ms"]["import_chromadb"], one["search_in_process_ms"],
                              one["search_first_call_no_engine_ms"], one["search_engine_warm_ms"], one["mixed_calls"])
        out.append(f"\nThe same code unpaired (`{one['command']}` at {one['machine'].get('date')}, kept as "
                   f"bench/results/bench-engine-large-first-call.json, load average "
                   f"{one['machine'].get('load_avg_1m_at_start')} at its start, {one.get('load_avg_1m_at_end')} at its "
                   f"end): floor {_ms(fl)}, in-process {_ms(ip)} ({ip['p50'] / fl['p50']:.2f}×), first call {_ms(fc)} "
                   f"(n={fc['n']}, {fc['p50'] / fl['p50']:.2f}×), warm {_ms(wm)}, {mx['calls']} mixed calls "
                   f"{mx['in_process_s']} s in-process against {mx['engine_s']} s through the engine.")
    out.append("\n" + WHY + "\n")
    later = read_json_if_exists(cuts)
    if later is not None and "first_call" in later.get("against_before", {}):
        out += ["\n#### The first call with the root commit kept and one command's app\n", CUTS_HOW + "\n",
                *_paired_table(later, "bench/results/bench-engine-large-first-call-cuts.json", "fe102a2",
                               "on 2 cores, nothing else running")]
        out.append("\n" + str(later.get("note", "")) + "\n" if later.get("note") else "")
    return "\n".join(out) + "\n"
