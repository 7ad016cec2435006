"""The splitter-window part of docs/BENCHMARKS.md's freshness section and its headline row, from the
freshness figure's JSON (codevouch_bench.freshness; windows scored by codevouch_bench/lib/windows.py)."""
from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

WINDOWS = "splitter-windows"
Table = Callable[[Sequence[str], Sequence[Sequence[Any]]], str]


def pairs(f: dict[str, Any]) -> list[dict[str, Any]]:
    """Held-out pairs first (the headline), then the tuning pairs (the figure's own release pairs)."""
    return list(f.get("windows", {}).get("held_out", [])) + [p[WINDOWS] for p in f.get("pairs", []) if WINDOWS in p]


def _pct(v: float | None) -> str:
    return "–" if v is None else f"{v * 100:.1f}%"


def _counts(d: dict[str, int]) -> str:
    return "; ".join(f"{k} {n}" for k, n in sorted(d.items(), key=lambda kv: -kv[1])) or "–"


def headline(f: dict[str, Any]) -> list[list[Any]]:
    held = f.get("windows", {}).get("held_out", [])
    if not held:
        return []
    ab = [w for w in held if w["apart"][:2] in ("A:", "B:")] or held[:2]
    rest = [w for w in held if w not in ab]
    tuning = [p[WINDOWS] for p in f["pairs"] if p.get(WINDOWS, {}).get("windows")]   # a pair with none: no accuracy
    every = held + tuning
    return [["splitter windows judged by their text (LangChain, 1,000/100, stripped), held-out releases "
             "2-3 years apart: accuracy / false-fresh",
             "; ".join(f"{w['apart'][0]} ({w['name']}) {_pct(w['accuracy'])} / {w['false_fresh']} of "
                       f"{w['windows']:,}" for w in ab),
             ", ".join(f"{w['name']} ({w['language']}) {_pct(w['accuracy'])} / {w['false_fresh']}" for w in rest)
             + f"; all {len(every)} pairs (tuning: {len(tuning)} close releases) at least "
               f"{_pct(min(w['accuracy'] for w in every))}, false-fresh {sum(w['false_fresh'] for w in every)} "
               f"of {sum(w['windows'] for w in every):,} windows"]]


def section(f: dict[str, Any], table: Table) -> str:
    rows = pairs(f)
    if not rows:
        return ""
    meta = f["windows"]
    body = [[w["split"], w["name"], w.get("apart") or "release N → N+1",
             ", ".join(f"{k.lower()} {n}" for k, n in w["languages"].items()), w["windows"], w["current"],
             _pct(w["accuracy"]), w["false_fresh"],
             f"{w['false_stale']} ({w['false_stale_text_repeated']} repeated)" if w["false_stale"] else 0,
             _counts(w["false_stale_reasons"]), _counts(w["text_only_in_another_file"]),
             f"{w['validate_seconds']} s"] for w in rows]
    wrong = [(w["name"], d) for w in rows for d in w["disagreements_sample"]]
    loose = {w["name"]: _counts(w["loose_truth_differs"]) for w in rows if w["loose_truth_differs"]}
    out = (f"\n**Third source, splitter windows**: {meta['splitter']}, over every file of these languages "
           f"({', '.join(f'`{s}`' for s in meta['languages'])}) at release N, each window sent with its path, "
           f"commit, blob id, `start_index` and lines. Ground truth: {meta['truth']}. Held-out pairs (releases "
           "2-3 years apart, fixed in codevouch_bench/lib/config.py before their figures were looked at, never "
           "tuned on) first; then the pairs above, on which the window rule was built. *current*: windows whose "
           "text is still there by that truth; *repeated*: false-stale windows whose text the new file holds "
           "bare text the new file holds in several places (a window under three lines at none of its own lines "
           "is refused on purpose, and without the window's old version at hand, the validator cannot tell "
           "them apart by indentation); *text only in "
           "another file*: windows not current at their path whose text the new release has in another file, "
           "by verdict and reason.\n\n"
           + table(["split", "pair", "apart", "windows by language", "windows", "current", "accuracy", "false-fresh",
                    "false-stale", "false-stale reasons", "text only in another file", "validate time"], body))
    out += "".join(f"\n{w['name']}: {w['note']}\n" for w in rows if w.get("note"))
    out += ("\nA loose truth (the bare window text anywhere in the file, line edges ignored) would call current "
            "the windows whose line was re-indented or grew since; by verdict: "
            + ("; ".join(f"{name}: {c}" for name, c in loose.items()) if loose else "none") + ".\n")
    if wrong:
        out += ("\nSplitter windows where verdict and truth disagree:\n\n"
                + table(["pair", "path", "lines", "truth", "verdict", "reason", "text (start)"],
                        [[name, d["path"], d["lines"], d["truth"], d["verdict"], d["reason"],
                          "`" + d["text"][:60].replace("\n", "⏎").replace("`", "'") + "`"] for name, d in wrong[:12]]))
    return out


# -- the splitters figure (codevouch_bench.splitters): windows of four splitters in three working trees --

def splitters_headline(f: dict[str, Any]) -> list[list[Any]]:
    over = f.get("overall", {})
    if not over:
        return []
    worst = {name: min((over[scene][name] for scene in over), key=lambda t: t["accuracy"] or 0)
             for name in f["splitters"]}
    return [[f"splitter windows of four splitters after a line inserted above, a pure rename and a real release "
             f"({f['split']}, {len(f['pairs'])} pairs): lowest accuracy of the three / false-fresh",
             "; ".join(f"{name} {_pct(t['accuracy'])} / {sum(over[s][name]['false_fresh'] for s in over)}"
                       for name, t in worst.items()),
             f"{sum(over['release'][name]['windows'] for name in f['splitters']):,} windows per scene"]]


def splitters_section(f: dict[str, Any], table: Table) -> str:
    over = f["overall"]
    body = [[scene, name, t["windows"], _pct(t["accuracy"]), t["false_fresh"], t["false_stale"], t["unplaced"]]
            for scene in over for name, t in over[scene].items()]
    per_pair = [[p["name"], scene, name, r["windows"], _pct(r["accuracy"]), r["false_fresh"],
                 f"{r['false_stale']} ({r['false_stale_text_repeated']} repeated)" if r["false_stale"] else 0,
                 _counts(r["false_stale_reasons"])]
                for p in f["pairs"] for scene, by in p["scenes"].items() for name, r in by.items()]
    wrong = [(p["name"], scene, name, d) for p in f["pairs"] for scene, by in p["scenes"].items()
             for name, r in by.items() for d in r["disagreements_sample"]]
    out = ("From `codevouch_bench.splitters`: each splitter cuts every file of release N as its pipeline would; "
           "each window is sent with its path, commit, blob id and offset, and validated in three working trees. "
           "Splitters: " + "; ".join(f"**{k}**: {v}" for k, v in f["splitters"].items()) + ". Scenes: "
           + "; ".join(f"**{k}**: {v}" for k, v in f["scenes"].items()) + f". Pairs: {f['split']}. "
           f"Ground truth: {f['truth']}. *unplaced*: windows the splitter gave no offset for in their file "
           "(not sent). *repeated*: false-stale windows whose bare text the file holds in several places, none "
           "tied to the window's own lines by the lines around it (refused on purpose).\n\n"
           + table(["scene", "splitter", "windows", "accuracy", "false-fresh", "false-stale", "unplaced"], body)
           + "\nPer pair:\n\n"
           + table(["pair", "scene", "splitter", "windows", "accuracy", "false-fresh", "false-stale",
                    "false-stale reasons"], per_pair))
    if wrong:
        out += ("\nWindows where verdict and truth disagree (a sample):\n\n"
                + table(["pair", "scene", "splitter", "path", "lines", "truth", "verdict", "reason", "text (start)"],
                        [[p, s, n, d["path"], d["lines"], d["truth"], d["verdict"], d["reason"],
                          "`" + d["text"][:60].replace("\n", "⏎").replace("`", "'") + "`"]
                         for p, s, n, d in wrong[:15]]))
    return out
