"""Index health from usage records: how stale recent calls were, why, where, and whether to rebuild (pure).

stale ratio = (historical-only hits + hits found only by searching live the files committed
since the build) / (all hits that were not excluded), over the most recent search and context
calls: what an index behind the code costs its user, code that is no longer there and changed
code read live on every call. A stale-but-ok hit (an older version whose text is identical in
the working tree) costs nothing: the text handed out is current; it is shown beside the ratio,
never counted in it (one unrelated commit makes every unchanged file's hits stale-but-ok). Hits
from uncommitted edits, found live, are what the overlay is for and no rebuild changes: shown,
not counted. validate's snippets are the caller's (a review's previous versions, a made-up path),
so they are listed, never counted.

Each stale hit has one cause, read against the repository as it is now (a live hit from a
committed file is index-behind while the index is behind HEAD, else since-fixed):
- index-behind: its file is as HEAD has it, but the index is at an older commit: a rebuild
  makes such hits current;
- worktree: its file differs from HEAD in the working tree (uncommitted edits): the index is
  built from commits, so a rebuild cannot change these;
- since-fixed: its file is as HEAD has it and the index is at HEAD (rebuilt since, or the edit
  undone): nothing to do.
A rebuild is recommended only for what it would change: the index-behind share, commits behind,
or (with the index behind HEAD at all) an index-behind share that rises between the older and the
newer half of the calls. Every recommendation says why on the same line, and a rebuild says what
it would cost (`rebuild_seconds`).
"""
from __future__ import annotations

from collections import Counter
from collections.abc import Collection, Sequence
from dataclasses import dataclass
from pathlib import PurePosixPath
from typing import Any

from codevouch.errors import ConfigError
from codevouch.printable import plural
from codevouch.store.usage import UsageRecord
from codevouch.vocabulary import Verdict
from codevouch.worktree.config import RepoConfig

STALE = (Verdict.HISTORICAL_ONLY,)       # the verdicts that cost (stale-but-ok's text is current)
COUNTED_OPS = ("search", "context")      # hits from the index; validate's snippets are the caller's
CAUSES = ("index-behind", "worktree", "since-fixed")
TREND_STEP = 0.05        # a change of the ratio between halves below this is "steady"
MIN_TREND_CALLS = 4
TOP = 10
_HEALTH_KEYS = {"recent", "stale_ratio", "commits_behind"}
# What an incremental build costs, for the estimate a rebuild recommendation quotes: starting the
# process and opening the store, then embedding the changed files' chunks with the packaged model
# (measured on 2 cores: about 1 s to start and 30-40 chunks/s; docs/BENCHMARKS.md, the build figure).
BUILD_START_S = 1.0
EMBED_CHUNKS_PER_S = 35.0


@dataclass(frozen=True)
class Thresholds:
    """When to recommend a rebuild, and how many recent calls to look at (`[health]` config)."""
    recent: int = 200
    stale_ratio: float = 0.20
    commits_behind: int = 50


@dataclass(frozen=True)
class Standing:
    """Where the branch's index stands against the repository now, fetched by gather.py: its
    indexed commit (None: never built), HEAD and the commits between, the paths that differ from
    HEAD in the working tree (`dirty`: changed and untracked files), and what a rebuild would
    read (`changed_files` between the indexed commit and HEAD, at the index's chunks per file).
    The records say how stale hits were; this says why, and what a rebuild would change."""
    index_commit: str | None
    head: str | None
    commits_behind: int | None
    dirty: Collection[str] = frozenset()
    changed_files: int | None = None
    chunks_per_file: float = 8.0


@dataclass(frozen=True)
class Health:
    repo: str
    branch: str | None
    calls: int
    hits: int
    excluded: int                        # hits excluded by a rule (not counted in the ratio)
    stale_ratio: float | None            # None when the calls returned no countable hits
    causes: dict[str, int]               # stale hits by cause (CAUSES), of the listed paths
    older_ratio: float | None
    newer_ratio: float | None
    trend: str                           # rising | falling | steady | not enough calls
    by_op: dict[str, int]                # counted calls by operation
    not_counted: dict[str, int]          # calls by operation whose hits are not the index's (validate)
    stale_paths: list[tuple[str, int]]   # most often stale first
    stale_dirs: list[tuple[str, int]]
    index_commit: str | None
    head: str | None
    commits_behind: int | None
    rebuild: bool
    because: list[str]
    thresholds: Thresholds
    changed_files: int | None = None     # files changed between the indexed commit and HEAD
    chunks_per_file: float = 8.0         # the index's own average, for the cost estimate
    identical: int = 0                   # stale-but-ok hits: older versions, text current (not counted)
    live_committed: int = 0              # hits found only live, in files committed since the build (counted)
    live_uncommitted: int = 0            # hits found live in uncommitted edits (not counted)
    live_files: float | None = None      # files committed since the build searched live, per call

    def share(self, cause: str) -> float | None:
        """Stale hits of one cause as a fraction of the counted hits."""
        counted = self.hits - self.excluded
        return self.causes.get(cause, 0) / counted if counted else None

    @property
    def recommendation(self) -> str:
        if self.rebuild:
            where = f" --branch {self.branch}" if self.branch else ""
            cost = rebuild_cost(self.changed_files, self.chunks_per_file)
            return (f"rebuild the index ({'; '.join(self.because)}{'; ' + cost if cost else ''}): "
                    f"codevouch index build --repo {self.repo}{where}")
        worktree = self.share("worktree") or 0.0
        if worktree >= self.thresholds.stale_ratio:
            return (f"no rebuild needed: {worktree:.0%} of hits were stale because their files differ from "
                    "HEAD in the working tree (uncommitted edits); the index is built from commits, so a "
                    "rebuild cannot change that (once the edits are committed, a rebuild brings those files up "
                    "to date)")
        return f"no rebuild needed: {self._calm_reason()}"

    def _calm_reason(self) -> str:
        """Why no rebuild would help, for the recommendation's line."""
        if self.index_commit is None:
            return "the branch is not indexed"
        if self.commits_behind == 0:
            return "the index is at HEAD"
        behind = ("an unknown number of commits behind" if self.commits_behind is None
                  else f"{plural(self.commits_behind, 'commit')} behind HEAD "
                       f"(under {self.thresholds.commits_behind})")
        share = self.share("index-behind")
        if share is None:
            return f"no search or context hits recorded yet, and the index is {behind}"
        return (f"{share:.0%} of hits were stale from the index behind HEAD (under "
                f"{self.thresholds.stale_ratio:.0%}, not rising), and the index is {behind}")

    def to_json(self) -> dict[str, Any]:
        return {"repo": self.repo, "branch": self.branch, "calls": self.calls, "hits": self.hits,
                "stale_ratio": self.stale_ratio,
                "stale_causes": {c: {"hits": self.causes.get(c, 0), "ratio": self.share(c)} for c in CAUSES},
                "not_counted_hits": {"stale_but_ok": self.identical, "live_uncommitted": self.live_uncommitted},
                "live": {"committed_hits": self.live_committed, "files_per_call": self.live_files},
                "trend": {"direction": self.trend, "older_half": self.older_ratio,
                                                           "newer_half": self.newer_ratio},
                "calls_by_op": self.by_op, "calls_not_counted": self.not_counted,
                "stale_paths": [{"path": p, "count": n} for p, n in self.stale_paths],
                "stale_dirs": [{"dir": d, "count": n} for d, n in self.stale_dirs],
                "index_commit": self.index_commit, "head": self.head, "commits_behind": self.commits_behind,
                "rebuild": self.rebuild, "because": self.because, "recommendation": self.recommendation,
                "changed_files": self.changed_files,
                "rebuild_seconds": rebuild_seconds(self.changed_files, self.chunks_per_file),
                "thresholds": {"recent": self.thresholds.recent, "stale_ratio": self.thresholds.stale_ratio,
                               "commits_behind": self.thresholds.commits_behind}}


def rebuild_seconds(changed_files: int | None, chunks_per_file: float) -> float | None:
    """About how long an incremental build of `changed_files` files takes (None: not known)."""
    if changed_files is None:
        return None
    return round(BUILD_START_S + changed_files * chunks_per_file / EMBED_CHUNKS_PER_S, 1)


def rebuild_cost(changed_files: int | None, chunks_per_file: float) -> str:
    """`about 1 s: 3 files changed`, or "" when the changed files are not known."""
    seconds = rebuild_seconds(changed_files, chunks_per_file)
    if seconds is None or changed_files is None:
        return ""
    shown = f"{seconds:.0f} s" if seconds >= 1.5 else "1 s"
    return f"about {shown}: {plural(changed_files, 'file')} changed"


# The largest values a repository's [health] may give: a number past SQLite's 64-bit integers
# (a LIMIT) raised OverflowError, a crash.
MAX_RECENT = 1_000_000
MAX_COMMITS_BEHIND = 1_000_000_000


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
    if not isinstance(recent, int) or isinstance(recent, bool) or not 1 <= recent <= MAX_RECENT:
        raise ConfigError(f"{where} recent must be a number of calls from 1 to {MAX_RECENT:,}.")
    if not isinstance(ratio, (int, float)) or isinstance(ratio, bool) or not 0 < ratio <= 1:
        raise ConfigError(f"{where} stale_ratio must be a fraction from 0 to 1 (e.g. 0.2).")
    if not isinstance(behind, int) or isinstance(behind, bool) or not 1 <= behind <= MAX_COMMITS_BEHIND:
        raise ConfigError(f"{where} commits_behind must be a number of commits from 1 to {MAX_COMMITS_BEHIND:,}.")
    return Thresholds(recent, float(ratio), behind)


def _counted(records: Sequence[UsageRecord]) -> int:
    return sum(r.hits - r.verdicts.get(Verdict.EXCLUDED, 0) for r in records)


def _ratio(records: Sequence[UsageRecord]) -> float | None:
    """The share of `records`' counted hits that cost: historical-only, or found only live in a
    file committed since the build."""
    stale = sum(r.verdicts.get(v, 0) for r in records for v in STALE) + sum(r.live_count("committed") for r in records)
    counted = _counted(records)
    return stale / counted if counted else None


def _trend(records: Sequence[UsageRecord]) -> tuple[float | None, float | None, str]:
    """(older half's ratio, newer half's, the direction between them) of `records`, oldest first."""
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
    return older, newer, trend


def _cause(path: str, dirty: Collection[str], at_head: bool) -> str:
    """Why a stale hit of `path` was stale, read against the repository now (CAUSES)."""
    return "worktree" if path in dirty else "since-fixed" if at_head else "index-behind"


def _behind_share(records: Sequence[UsageRecord], at_head: bool, dirty: Collection[str]) -> float | None:
    """The share of `records`' countable hits that were stale because the index is behind HEAD."""
    stale = sum(1 for r in records for p, verdict, _ in r.non_usable
                if verdict in STALE and _cause(p, dirty, at_head) == "index-behind")
    if not at_head:
        stale += sum(r.live_count("committed") for r in records)
    counted = _counted(records)
    return stale / counted if counted else None


def _behind_rising(records: Sequence[UsageRecord], at_head: bool, dirty: Collection[str]) -> tuple[float, float] | None:
    """(older half's, newer half's) index-behind share when it rises by TREND_STEP or more."""
    if len(records) < MIN_TREND_CALLS:
        return None
    half = len(records) // 2
    older, newer = _behind_share(records[:half], at_head, dirty), _behind_share(records[half:], at_head, dirty)
    if older is None or newer is None or newer - older < TREND_STEP:
        return None
    return older, newer


def _because(behind: float | None, calls: int, commits_behind: int | None, limits: Thresholds,
             rising: tuple[float, float] | None = None, live_files: float | None = None) -> list[str]:
    """Why a rebuild would help: the index-behind share (`behind`) over `calls` calls, or the
    commits behind, at or over their thresholds, or (the index behind HEAD) the index-behind share
    rising between the halves of the calls (`rising`); [] when none is. With a reason, the files
    each call searched live (`live_files`, committed since the build) are named too: a rebuild
    indexes them."""
    because = _because_of(behind, calls, commits_behind, limits, rising)
    if because and commits_behind and live_files is not None and live_files >= 0.5:
        because.append(f"each call searches {live_files:.0f} committed file{'s' if round(live_files) != 1 else ''} "
                       "live that a rebuild would index")
    return because


def _because_of(behind: float | None, calls: int, commits_behind: int | None, limits: Thresholds,
                rising: tuple[float, float] | None) -> list[str]:
    because = []
    if behind is not None and behind >= limits.stale_ratio:
        because.append(f"stale ratio {behind:.0%} from the index behind HEAD, over the last {calls} calls "
                       f">= {limits.stale_ratio:.0%}")
    elif rising is not None and commits_behind:
        because.append(f"hits stale from the index behind HEAD rising from {rising[0]:.0%} to {rising[1]:.0%} "
                       f"of the older and newer half of the last {calls} calls, with the index "
                       f"{plural(commits_behind, 'commit')} behind")
    if commits_behind is not None and commits_behind >= limits.commits_behind:
        because.append(f"{plural(commits_behind, 'commit')} behind HEAD >= {limits.commits_behind}")
    return because


@dataclass(frozen=True)
class _Live:
    """What the calls found only by searching the working tree live (UsageRecord.live), summed."""
    committed: int
    uncommitted: int
    files: float | None          # files committed since the build searched live, per call

    @classmethod
    def of(cls, records: Sequence[UsageRecord]) -> _Live:
        files = sum(r.live_count("files") for r in records) / len(records) if records else None
        return cls(sum(r.live_count("committed") for r in records), sum(r.live_count("uncommitted") for r in records),
                   files)


def assess(repo: str, branch: str | None, records: Sequence[UsageRecord], standing: Standing,
           limits: Thresholds) -> Health:
    """Health over `records` (oldest first), judged against where the index stands now
    (`standing`: its distance from HEAD, the dirty paths, a rebuild's cost)."""
    not_counted = dict(Counter(r.op for r in records if r.op not in COUNTED_OPS))
    records = [r for r in records if r.op in COUNTED_OPS]
    ratio = _ratio(records)
    older, newer, trend = _trend(records)
    stale = [p for r in records for p, verdict, _ in r.non_usable if verdict in STALE]
    paths = Counter(stale)
    dirs = Counter(str(PurePosixPath(p).parent) + "/" if "/" in p else "./" for p in paths.elements())
    at_head = standing.index_commit is not None and standing.index_commit == standing.head
    dirty = standing.dirty
    causes = Counter(_cause(p, dirty, at_head) for p in stale)
    live = _Live.of(records)
    causes["since-fixed" if at_head else "index-behind"] += live.committed
    excluded = sum(r.verdicts.get(Verdict.EXCLUDED, 0) for r in records)
    because = _because(_behind_share(records, at_head, dirty), len(records), standing.commits_behind, limits,
                       _behind_rising(records, at_head, dirty), live.files)
    return Health(repo, branch, len(records), sum(r.hits for r in records), excluded, ratio,
                  {c: causes[c] for c in CAUSES}, older, newer, trend,
                  dict(Counter(r.op for r in records)), not_counted, paths.most_common(TOP), dirs.most_common(TOP),
                  standing.index_commit, standing.head, standing.commits_behind, bool(because), because, limits,
                  standing.changed_files, standing.chunks_per_file,
                  identical=sum(r.verdicts.get(Verdict.STALE_BUT_OK, 0) for r in records),
                  live_committed=live.committed, live_uncommitted=live.uncommitted, live_files=live.files)
