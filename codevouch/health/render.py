"""`codevouch index health` for a terminal: the Health report (health/assess.py) as lines of text."""
from __future__ import annotations

from codevouch.health.assess import Health
from codevouch.printable import plural


def render(h: Health) -> str:
    """For a terminal."""
    def pct(x: float | None) -> str:
        return "n/a" if x is None else f"{x:.0%}"

    lines = [f"{h.repo} {h.branch or '(detached)'}: index {h.index_commit[:12] if h.index_commit else 'not built'}"
             f", HEAD {h.head[:12] if h.head else 'unknown'}, "
             f"{'unknown commits' if h.commits_behind is None else plural(h.commits_behind, 'commit')} behind"]
    if not h.calls:
        lines.append("usage: no records yet (search, validate and context calls write them unless "
                     "--no-record, CODEVOUCH_NO_RECORD=1 or [usage] record = false)")
    else:
        ops = ", ".join(f"{op} {n}" for op, n in sorted(h.by_op.items()))
        lines.append(f"usage: {plural(h.calls, 'recent search/context call')} ({ops}), {plural(h.hits, 'hit')}")
        if h.not_counted:
            lines.append("not counted: " + ", ".join(f"{op} {n}" for op, n in sorted(h.not_counted.items()))
                         + " (snippets given by the caller, not hits from the index)")
        lines.append(f"stale ratio: {pct(h.stale_ratio)} (older half {pct(h.older_ratio)}, newer half "
                     f"{pct(h.newer_ratio)}: {h.trend}): historical-only hits, and hits found only by "
                     "searching committed files live")
        counted = h.hits - h.excluded
        if h.identical and counted:
            lines.append(f"  not counted: stale-but-ok {h.identical / counted:.0%} (an older version whose text "
                         "is identical in the working tree: current code)")
        if h.live_files:
            lines.append(f"searched live: {h.live_files:.1f} files committed since the build per call "
                         f"({plural(h.live_committed, 'hit')} from them; a rebuild indexes them)")
        if any(h.causes.values()):
            lines.append(f"  index behind HEAD: {pct(h.share('index-behind'))} (a rebuild makes these current)")
            lines.append(f"  working tree differs from HEAD: {pct(h.share('worktree'))} (uncommitted edits: a "
                         "rebuild cannot help)")
            if h.causes.get("since-fixed"):
                lines.append(f"  since fixed: {pct(h.share('since-fixed'))} (the index and the files are at HEAD now)")
        if h.stale_dirs:
            lines.append("most often stale: " + ", ".join(f"{d} ({n})" for d, n in h.stale_dirs[:5]))
            lines += [f"  {p} ({n})" for p, n in h.stale_paths]
    lines.append(f"recommendation: {h.recommendation}")
    return "\n".join(lines) + "\n"
