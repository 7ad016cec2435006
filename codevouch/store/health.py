"""Index health from usage records: how stale recent calls were, where, and whether to rebuild (pure).

stale ratio = (stale-but-ok + historical-only hits) / (all hits that were not excluded), over
the most recent calls. A stale-but-ok hit is still safe to use, but it says the index lags the
working tree; historical-only hits are what an out-of-date index costs.
"""
from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import PurePosixPath
from typing import Any

from codevouch.errors import ConfigError
from codevouch.store.usage import UsageRecord
from codevouch.worktree.config import RepoConfig

STALE = ("stale-but-ok", "historical-only")
TREND_STEP = 0.05        # a change of the ratio between halves below this is "steady"
MIN_TREND_CALLS = 4
TOP = 10
_HEALTH_KEYS = {"recent", "stale_ratio", "commits_behind"}


@dataclass(frozen=True)
class Thresholds:
    """When to recommend a rebuild, and how many recent calls to look at (`[health]` config)."""
    recent: int = 200
    stale_ratio: float = 0.20
    commits_behind: int = 50


@dataclass(frozen=True)
class Health:
    repo: str
    branch: str | None
    calls: int
    hits: int
    stale_ratio: float | None            # None when the calls returned no countable hits
    older_ratio: float | None
    newer_ratio: float | None
    trend: str                           # rising | falling | steady | not enough calls
    by_op: dict[str, int]
    stale_paths: list[tuple[str, int]]   # most often stale first
    stale_dirs: list[tuple[str, int]]
    index_commit: str | None
    head: str | None
    commits_behind: int | None
    rebuild: bool
    because: list[str]
    thresholds: Thresholds

    @property
    def recommendation(self) -> str:
        if not self.rebuild:
            return "no rebuild needed"
        where = f" --branch {self.branch}" if self.branch else ""
        return f"rebuild the index ({'; '.join(self.because)}): codevouch index build --repo {self.repo}{where}"

    def to_json(self) -> dict[str, Any]:
        return {"repo": self.repo, "branch": self.branch, "calls": self.calls, "hits": self.hits,
                "stale_ratio": self.stale_ratio, "trend": {"direction": self.trend, "older_half": self.older_ratio,
                                                           "newer_half": self.newer_ratio},
                "calls_by_op": self.by_op,
                "stale_paths": [{"path": p, "count": n} for p, n in self.stale_paths],
                "stale_dirs": [{"dir": d, "count": n} for d, n in self.stale_dirs],
                "index_commit": self.index_commit, "head": self.head, "commits_behind": self.commits_behind,
                "rebuild": self.rebuild, "because": self.because, "recommendation": self.recommendation,
                "thresholds": {"recent": self.thresholds.recent, "stale_ratio": self.thresholds.stale_ratio,
                               "commits_behind": self.thresholds.commits_behind}}


def thresholds(config: RepoConfig) -> Thresholds:
    section = config.section("health")
    where = f"{config.source} [health]"
    unknown = set(section) - _HEALTH_KEYS
    if unknown:
        raise ConfigError(f"{where}: unknown key(s) {sorted(unknown)}; known: {sorted(_HEALTH_KEYS)}.")
    base = Thresholds()
    recent = section.get("recent", base.recent)
    ratio = section.get("stale_ratio", base.stale_ratio)
    behind = section.get("commits_behind", base.commits_behind)
    if not isinstance(recent, int) or isinstance(recent, bool) or recent < 1:
        raise ConfigError(f"{where} recent must be a positive number of calls.")
    if not isinstance(ratio, (int, float)) or isinstance(ratio, bool) or not 0 < ratio <= 1:
        raise ConfigError(f"{where} stale_ratio must be a fraction from 0 to 1 (e.g. 0.2).")
    if not isinstance(behind, int) or isinstance(behind, bool) or behind < 1:
        raise ConfigError(f"{where} commits_behind must be a positive number of commits.")
    return Thresholds(recent, float(ratio), behind)


def _ratio(records: Sequence[UsageRecord]) -> float | None:
    stale = sum(r.verdicts.get(v, 0) for r in records for v in STALE)
    counted = sum(r.hits - r.verdicts.get("excluded", 0) for r in records)
    return stale / counted if counted else None


def assess(repo: str, branch: str | None, records: Sequence[UsageRecord], index_commit: str | None,
           head: str | None, commits_behind: int | None, limits: Thresholds) -> Health:
    """Health over `records` (oldest first) and the branch's distance from HEAD."""
    ratio = _ratio(records)
    half = len(records) // 2
    older = _ratio(records[:half]) if len(records) >= MIN_TREND_CALLS else None
    newer = _ratio(records[half:]) if len(records) >= MIN_TREND_CALLS else None
    if older is None or newer is None:
        trend = "not enough calls"
    elif newer - older >= TREND_STEP:
        trend = "rising"
    elif older - newer >= TREND_STEP:
        trend = "falling"
    else:
        trend = "steady"
    paths = Counter(p for r in records for p, verdict, _ in r.non_usable if verdict in STALE)
    dirs = Counter(str(PurePosixPath(p).parent) + "/" if "/" in p else "./" for p in paths.elements())
    because = []
    if ratio is not None and ratio >= limits.stale_ratio:
        because.append(f"stale ratio {ratio:.0%} over the last {len(records)} calls >= {limits.stale_ratio:.0%}")
    if commits_behind is not None and commits_behind >= limits.commits_behind:
        because.append(f"{commits_behind} commits behind HEAD >= {limits.commits_behind}")
    return Health(repo, branch, len(records), sum(r.hits for r in records), ratio, older, newer, trend,
                  dict(Counter(r.op for r in records)), paths.most_common(TOP), dirs.most_common(TOP),
                  index_commit, head, commits_behind, bool(because), because, limits)


def render(h: Health) -> str:
    """For a terminal."""
    def pct(x: float | None) -> str:
        return "n/a" if x is None else f"{x:.0%}"

    lines = [f"{h.repo} {h.branch or '(detached)'}: index {h.index_commit[:12] if h.index_commit else 'not built'}"
             f", HEAD {h.head[:12] if h.head else 'unknown'}, "
             f"{'unknown' if h.commits_behind is None else h.commits_behind} commit(s) behind"]
    if not h.calls:
        lines.append("usage: no records yet (search, validate and context calls write them unless "
                     "--no-record, CODEVOUCH_NO_RECORD=1 or [usage] record = false)")
    else:
        ops = ", ".join(f"{op} {n}" for op, n in sorted(h.by_op.items()))
        lines.append(f"usage: {h.calls} recent call(s) ({ops}), {h.hits} hit(s)")
        lines.append(f"stale ratio: {pct(h.stale_ratio)} (older half {pct(h.older_ratio)}, newer half "
                     f"{pct(h.newer_ratio)}: {h.trend})")
        if h.stale_dirs:
            lines.append("most often stale: " + ", ".join(f"{d} ({n})" for d, n in h.stale_dirs[:5]))
            lines += [f"  {p} ({n})" for p, n in h.stale_paths]
    lines.append(f"recommendation: {h.recommendation}")
    return "\n".join(lines) + "\n"
