"""The "Whole repositories: stubs, names and acronyms" section of docs/BENCHMARKS.md, from
bench/results/bench-quality-stubs.json: {"runs": [codevouch_bench.quality --whole --out JSON, with
"commit"], "notes": [...]}. Per repository: the docstring MRR@10 of the default against
`--kind source` and the best baseline, the misses lost to a stub of their target, names and words
at rank 1, `definition-name` tags on non-definitions, and the acronym queries with and without
their acronyms."""
from __future__ import annotations

from pathlib import Path
from typing import Any

from codevouch_bench.lib.common import RESULTS as RESULTS_DIR
from codevouch_bench.lib.common import read_json_if_exists
from codevouch_bench.lib.config import BASELINES
from codevouch_bench.lib.testqueries import BASELINE, KIND_TEST, NEIGHBOURS_BEFORE, RULE_OFF

RESULTS = RESULTS_DIR / "bench-quality-stubs.json"
SOURCE = "codevouch-source-only"


def _table(headers: list[str], rows: list[list[Any]]) -> str:
    lines = ["| " + " | ".join(headers) + " |", "|" + "---|" * len(headers)]
    lines += ["| " + " | ".join("–" if v is None else str(v) for v in row) + " |" for row in rows]
    return "\n".join(lines)


def _mrr(scores: dict[str, Any], method: str) -> Any:
    return scores.get(method, {}).get("mrr@10")


def _docstring_row(p: dict[str, Any]) -> list[Any]:
    o = p["scores"]["overlap"]
    present = [m for m in BASELINES if _mrr(o, m) is not None]
    best = max(present, key=lambda m: o[m]["mrr@10"]) if present else None
    default = o["codevouch"]["mrr@10"]
    times = round(default / o[best]["mrr@10"], 2) if best and o[best]["mrr@10"] else None
    miss = p.get("docstring_misses", {})
    lost, misses = miss.get("lost_to_a_stub"), miss.get("misses")
    return [p["corpus"], p["language"], p["chunks"]["codevouch"], p["queries"], f"**{default}**", _mrr(o, SOURCE),
            _paired(p.get("default_vs_source_only")), f"{o[best]['mrr@10']} ({best})" if best else None,
            f"x{times}" if times else None, _share(lost, misses), _share(miss.get("lost_to_own_file"), misses)]


def _share(lost: int | None, misses: int | None) -> str | None:
    if lost is None:
        return None
    return f"{lost} of {misses} ({round(100 * lost / misses)}%)" if misses else f"{lost} of {misses}"


def _paired(d: dict[str, Any] | None) -> str | None:
    """default - `--kind source`, its 95% interval, and how many queries each ranks better."""
    if not d or not d.get("queries"):
        return None
    low, high = d["interval_95"]
    return f"{d['mrr@10_difference']:+.3f} [{low:+.3f}, {high:+.3f}]; {d['better']} / {d['worse']}"


def _names_row(p: dict[str, Any]) -> list[Any]:
    ids, tags = p["identifiers"], p.get("definition_name_tags", {})
    return [p["corpus"], ids["name"]["codevouch"].get("queries"), ids["name"]["codevouch"].get("recall@1"),
            ids["words"]["codevouch"].get("queries"), ids["words"]["codevouch"].get("recall@1"),
            *(f"{tags[f]['not_a_definition']} of {tags[f]['tagged']}" if f in tags else None
              for f in ("name", "words"))]


def _acronym_row(p: dict[str, Any]) -> list[Any]:
    a = p.get("acronyms", {})
    s = a.get("scores", {})
    pair = [f"{_mrr(s.get('with', {}), m)} / {_mrr(s.get('without', {}), m)}" if a.get("queries") else None
            for m in ("codevouch", SOURCE)]
    found = ", ".join(f"{k} {n}" for k, n in sorted(a.get("found", {}).items(), key=lambda kv: -kv[1])[:6])
    return [p["corpus"], a.get("queries"), *pair, _paired(a.get("with_vs_without", {}).get("codevouch")), found or None]


def _tests_row(p: dict[str, Any]) -> list[Any] | None:
    t = p.get("test_queries")
    if not t or not t.get("queries"):
        return None
    s, rule = t["scores"], t.get("rule", {})
    return [p["corpus"], t["queries"], t["naming_tests"], _mrr(s, "codevouch"), _mrr(s, BASELINE),
            _ratio(t.get("against_baseline")), _mrr(s, RULE_OFF), _mrr(s, KIND_TEST),
            _paired(rule.get("tests_naming")), _paired(rule.get("library")),
            _paired(t.get("prior", {}).get("tests")), _paired(t.get("prior", {}).get("library"))]


def _ratio(r: dict[str, Any] | None) -> str | None:
    """default ÷ baseline on the same queries, its 95% interval, and whether it meets the target
    (runs that set it against another baseline, the splitter over every file, show –)."""
    if not r or r.get("ratio") is None or r.get("baseline") != BASELINE:
        return None
    low, high = r["interval_95"]
    met = "meets" if r["ratio"] >= r["target"] else "below"
    return f"x{r['ratio']} [{low}, {'∞' if high is None else high}] ({met} x{r['target']})"


def _pooled(run: dict[str, Any]) -> str:
    """One line per split: the paired comparisons over all its repositories' queries at once."""
    lines = []
    for split, o in run.get("overall", {}).items():
        pool = o.get("pooled")
        if not pool:
            continue
        parts = [f"default − `--kind source` {_paired(pool.get('default_vs_source_only'))}"] * \
            ("default_vs_source_only" in pool) + [f"acronyms with − without {_paired(pool.get('acronyms_with_vs_without'))}"]
        against = _ratio(pool.get("test_queries", {}).get("against_baseline"))
        if against:
            parts.append(f"test queries, default ÷ {BASELINE} {against}")
        prior = pool.get("test_queries", {}).get("prior")
        if prior:
            parts += [f"default − sentence test prior 0.1 on test queries {_paired(prior.get('tests'))}",
                      f"on library docstring queries {_paired(prior.get('library'))}"]
        rule = pool.get("test_queries", {}).get("rule")
        if rule:
            parts += [f"the names-tests rule on test queries that name tests {_paired(rule.get('tests_naming'))}",
                      f"on library docstring queries {_paired(rule.get('library'))}"]
        miss = pool.get("docstring_misses", {})
        if miss.get("misses") and "lost_to_own_file" in miss:
            parts.append(f"docstring misses at rank 1 lost to another chunk of the target's own file "
                         f"{_share(miss['lost_to_own_file'], miss['misses'])}")
        parts += _neighbours(pool)
        lines.append(f"*All {split} repositories pooled* (difference [95%]; queries better / worse): "
                     + "; ".join(parts) + ".")
    return "\n".join(lines)


def _neighbours(pool: dict[str, Any]) -> list[str]:
    """The default against the fusion before a large module's neighbours were read (quality.py's
    NEIGHBOURS_BEFORE row), where the run asked it."""
    against = pool.get("default_vs_neighbours_before")
    if not against:
        return []
    parts = [f"default − the fusion before (no dense floor, own words of all names together) on library "
             f"docstrings {_paired(against.get('library'))}"]
    if against.get("tests"):
        parts.append(f"on test docstrings {_paired(against['tests'])}")
    before = pool.get("row_misses", {}).get(NEIGHBOURS_BEFORE)
    if before and before.get("misses"):
        parts.append(f"its misses lost to the own file {_share(before['lost_to_own_file'], before['misses'])}")
    return parts


def section(path: Path = RESULTS) -> str:
    data = read_json_if_exists(path)
    if data is None:
        return ""
    out = ["\n## Whole repositories: stubs, names and acronyms\n",
           "Rerun: `CODEVOUCH_BENCH_GIT_MIRRORS=DIR python -m codevouch_bench.quality --split held-out --whole "
           "--corpus NAME ... --out FILE` (its JSON, with \"commit\", is one of bench/results/bench-quality-stubs.json's "
           "`runs`).\n",
           "The docstring figure (section 3) on whole repositories, held-out, with what its default row gets wrong "
           "counted by the bench's own parse. *Lost to a stub*: docstring queries that miss rank 1 and whose first "
           "hit is a declaration file (`.pyi`, `.d.ts`, `.d.mts`, `.d.cts`) that spells the target's name. "
           "*default − `--kind source`*: the difference of the two MRR@10 on the same queries, with a 95% interval "
           "from resampling them (a paired bootstrap; runs before it was kept show –). "
           "*Not a definition*: hits tagged `definition-name` that hold no definition line by the bench's parse "
           "(an upper bound: a definition its parser does not model counts too). *Lost to another chunk of its own "
           "file*: docstring queries that miss rank 1 whose first hit is in the target's file but not on its lines "
           "(a large module's neighbours win). *Acronym queries*: first "
           "docstring sentences of library functions that hold a 2-6 letter all-caps word (`HTTP`, `URLs`, "
           "`UTF-8`; not in backticks, not a dotted name, not the whole sentence) and that no other function's "
           "doc shares, each asked as written and with its acronyms cut out (at least three words left); the "
           "answer is the function either way (codevouch_bench/lib/acronyms.py). *Test queries*: the first doc "
           "sentences of documented functions in test files, asked as written; the answer is that test "
           "(codevouch_bench/lib/testqueries.py); the baselines answer them too, and *default ÷ langchain-1000-source* "
           "is the ratio of the two MRR@10 on the same queries with a 95% interval from resampling them (the target: "
           "at least 0.9x; runs before the baselines were asked show –). The default ranks tests after code for a "
           "sentence (at half their score) unless it names tests (`test`, `fixture`, ...); *the names-tests rule* "
           "is that exception, measured here both on the test queries it serves and on the library docstrings it "
           "can cost.\n"]
    for run in data["runs"]:
        per = run["per_corpus"]
        out.append(f"\n**{run.get('sampling')}**, at {run.get('commit', '?')}, {run.get('seconds')} s, load average "
                   f"{run.get('machine', {}).get('load_avg_1m_at_start')} at start: `{run.get('command', '')}`\n")
        out.append(_table(["repository", "language", "chunks", "docstring queries", "MRR@10 default",
                           "`--kind source`", "default − `--kind source` [95%]; queries better / worse",
                           "best baseline", "default ÷ best", "misses at rank 1 lost to a stub",
                           "lost to another chunk of its own file"],
                          [_docstring_row(p) for p in per]))
        out.append("")
        out.append(_table(["repository", "name queries", "name at rank 1", "words queries", "words at rank 1",
                           "`definition-name` not a definition (name)", "(words)"], [_names_row(p) for p in per]))
        out.append("")
        out.append(_table(["repository", "acronym queries", "MRR@10 default: with / without the acronym",
                           "`--kind source`: with / without", "default: with − without [95%]; queries better / worse",
                           "acronyms (most asked)"], [_acronym_row(p) for p in per]))
        tests = [row for row in map(_tests_row, per) if row]
        if tests:
            out.append("")
            out.append(_table(["repository", "test queries", "that name tests", "MRR@10 default",
                               f"{BASELINE}", f"default ÷ {BASELINE} [95%]", "without the names-tests rule", "`--kind test`",
                               "the rule on those that name tests [95%]; better / worse",
                               "the rule on library docstrings [95%]; better / worse",
                               "default − sentence test prior 0.1, test queries [95%]; better / worse",
                               "(library docstrings)"], tests))
        pool = _pooled(run)
        if pool:
            out.append("\n" + pool)
        examples = [f"{p['corpus']}: \"{a}\" / \"{b}\"" for p in per for a, b in p.get("acronyms", {}).get("examples", [])[:2]]
        if examples:
            out.append("\nExamples, as written / without the acronym: " + "; ".join(examples) + ".")
    out += [f"\n{note}" for note in data.get("notes", [])]
    return "\n".join(out) + "\n"
