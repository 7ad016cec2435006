"""What one call handed out, as a usage record: its validated results counted per verdict and
reason, and the paths that were not usable (pure). The records are written and read by the
store (codevouch/store/usage.py); health/assess.py reads them back."""
from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from datetime import datetime, timezone

from codevouch.store.usage import MAX_PATHS, UsageRecord
from codevouch.vocabulary import Verdict


def record_of(op: str, repo: str, branch: str | None, index_commit: str | None, head: str | None,
              outcomes: Sequence[tuple[str, str, str]], now: datetime | None = None,
              live: Mapping[str, int] | None = None) -> UsageRecord:
    """The record of one call's validated results, each as (path, verdict, reason) (pure).
    live: what it found only by searching the working tree live (UsageRecord.live; live_of)."""
    moment = (now or datetime.now(timezone.utc)).astimezone(timezone.utc)
    non_usable = tuple(o for o in outcomes if o[1] != Verdict.USABLE)
    return UsageRecord(moment.isoformat(timespec="seconds").replace("+00:00", "Z"), op, repo, branch,
                       index_commit, head, dict(Counter(o[1] for o in outcomes)),
                       dict(Counter(o[2] for o in outcomes)), non_usable[:MAX_PATHS],
                       {k: v for k, v in (live or {}).items() if v})


def live_of(origins: Iterable[str | None], files_committed: int) -> dict[str, int]:
    """UsageRecord.live of a call whose hits came from `origins` (a hit's record's origin: index,
    committed, uncommitted) and that searched `files_committed` files committed since the build live."""
    found = Counter(o for o in origins if o in ("committed", "uncommitted"))
    return {"committed": found["committed"], "uncommitted": found["uncommitted"], "files": files_committed}
