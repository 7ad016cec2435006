"""Usage records: what each search, validate and context call handed out, and how stale it was.

Local only: one SQLite file, `usage.sqlite`, beside the ledger in the index directory. It is
written only into an index that already exists (a directory holding the ledger, state.sqlite):
a read never creates an index or leaves files in an empty directory. It is bounded: after each
write only the newest `max_records` records are kept.

A record is compact: time, operation, repository, branch, index commit, HEAD, counts per
verdict and per reason, the paths of the hits that were not usable (at most
MAX_PATHS per record), and what the call found only by searching the working tree live
(`live`: hits from files committed since the build, hits from uncommitted edits, and the files
committed since the build that it searched live). Turn recording off with `record=False` on `Index`, `--no-record` on the
commands, CODEVOUCH_NO_RECORD=1, or `[usage] record = false` in the repository config.

Schema changes follow codevouch/migrations.py's rule: add a step, never edit a shipped one.
This file's format is version 2 (`PRAGMA user_version`): version 1 had no `live` column, which
the writer adds (a record without it reads as nothing searched live).
"""
from __future__ import annotations

import atexit
import json
import os
import sqlite3
import threading
import warnings
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from codevouch import caches, environment
from codevouch.errors import BadIndex, ConfigError
from codevouch.store.indexdir import IndexDir
from codevouch.worktree.config import RepoConfig

ENV_NO_RECORD = environment.NO_RECORD.name
DEFAULT_MAX_RECORDS = 5000
MAX_PATHS = 50
_USAGE_KEYS = {"record", "max_records"}
_SCHEMA = """
CREATE TABLE IF NOT EXISTS usage (
    id INTEGER PRIMARY KEY AUTOINCREMENT, time TEXT NOT NULL, op TEXT NOT NULL, repo TEXT NOT NULL,
    branch TEXT, index_commit TEXT, head TEXT, hits INTEGER NOT NULL, verdicts TEXT NOT NULL,
    reasons TEXT NOT NULL, non_usable TEXT NOT NULL);
CREATE INDEX IF NOT EXISTS usage_by_repo ON usage (repo, id);
"""
# Version 2: what a call found only by searching the working tree live (UsageRecord.live).
_ADD_LIVE = "ALTER TABLE usage ADD COLUMN live TEXT NOT NULL DEFAULT '{}'"
_VERSION = 2
LIVE_KEYS = ("committed", "uncommitted", "files")


@dataclass(frozen=True)
class UsageRecord:
    """One call: what it returned (verdict and reason counts) and which paths were not usable."""
    time: str                                    # ISO 8601, UTC
    op: str                                      # search | validate | context
    repo: str
    branch: str | None
    index_commit: str | None
    head: str | None
    verdicts: Mapping[str, int]
    reasons: Mapping[str, int]
    non_usable: tuple[tuple[str, str, str], ...]   # (path, verdict, reason), at most MAX_PATHS
    # Found only by searching the working tree live (LIVE_KEYS): hits from files committed since
    # the build ("committed"), from uncommitted edits ("uncommitted"), and the files committed
    # since the build that the call searched live ("files"). Empty: none (or an older record).
    live: Mapping[str, int] = field(default_factory=dict)

    @property
    def hits(self) -> int:
        return sum(self.verdicts.values())

    def live_count(self, key: str) -> int:
        value = self.live.get(key, 0)
        return value if isinstance(value, int) and not isinstance(value, bool) and value > 0 else 0

    def to_json(self) -> dict[str, Any]:
        return {"time": self.time, "op": self.op, "repo": self.repo, "branch": self.branch,
                "index_commit": self.index_commit, "head": self.head, "hits": self.hits,
                "verdicts": dict(self.verdicts), "reasons": dict(self.reasons),
                "non_usable": [list(p) for p in self.non_usable], "live": dict(self.live)}


MAX_MAX_RECORDS = 100_000_000     # records kept per index: far past any use, inside SQLite's integers


@dataclass(frozen=True)
class UsageSettings:
    record: bool = True
    max_records: int = DEFAULT_MAX_RECORDS


def settings(config: RepoConfig, env: Mapping[str, str] | environment.Environment) -> UsageSettings:
    """`[usage]` from the repository config; CODEVOUCH_NO_RECORD (any value but "" or 0) wins.
    env: the caller's variables (its Call's)."""
    section = config.section("usage")
    where = f"{config.source} [usage]"
    unknown = set(section) - _USAGE_KEYS
    if unknown:
        raise ConfigError(f"{where}: unknown key(s) {sorted(unknown)}; known: {sorted(_USAGE_KEYS)}.")
    record = section.get("record", True)
    keep = section.get("max_records", DEFAULT_MAX_RECORDS)
    if not isinstance(record, bool):
        raise ConfigError(f"{where} record must be true or false.")
    if not isinstance(keep, int) or isinstance(keep, bool) or not 1 <= keep <= MAX_MAX_RECORDS:
        # A number past SQLite's 64-bit integers raised OverflowError (a crash) at the first record.
        raise ConfigError(f"{where} max_records must be a whole number from 1 to {MAX_MAX_RECORDS:,}.")
    if environment.of(env).no_record:
        record = False
    return UsageSettings(record, keep)


_WRITERS: dict[str, tuple[sqlite3.Connection, tuple[int, int]]] = {}   # usage file -> (connection, its file)
_WRITERS_LOCK = threading.Lock()


def _drop_writer(key: str) -> None:
    found = _WRITERS.pop(key, None)
    if found is not None:
        try:
            found[0].close()
        except sqlite3.Error:
            pass


def _drop_writers() -> None:
    for key in list(_WRITERS):
        _drop_writer(key)


caches.register("codevouch.store.usage.writers", _drop_writers, _WRITERS.__len__)
atexit.register(_drop_writers)


class UsageLog:
    """The usage records of one index directory."""

    def __init__(self, index_dir: Path) -> None:
        self.index_dir = index_dir
        self.path = IndexDir(index_dir).usage

    def append(self, rec: UsageRecord, max_records: int = DEFAULT_MAX_RECORDS) -> bool:
        """Add a record and drop the oldest beyond `max_records`. False (nothing written) when
        there is no index in the directory or the file cannot be written: recording must never
        fail the call it records, so a write error is a warning."""
        if not IndexDir(self.index_dir).has_ledger():  # no ledger, no index, no record
            return False
        try:
            with _WRITERS_LOCK:
                db = self._writer()
                try:
                    with db:
                        db.execute("INSERT INTO usage (time, op, repo, branch, index_commit, head, hits, verdicts, "
                                   "reasons, non_usable, live) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                                   (rec.time, rec.op, rec.repo, rec.branch, rec.index_commit, rec.head, rec.hits,
                                    json.dumps(rec.verdicts), json.dumps(rec.reasons),
                                    json.dumps([list(p) for p in rec.non_usable]), json.dumps(dict(rec.live))))
                        db.execute("DELETE FROM usage WHERE id <= (SELECT MAX(id) FROM usage) - ?", (max_records,))
                except BaseException:
                    _drop_writer(str(self.path))
                    raise
        except (sqlite3.Error, OSError) as exc:
            warnings.warn(f"codevouch: usage record not written to {self.path}: {exc}", RuntimeWarning,
                          stacklevel=2)
            return False
        return True

    def recent(self, repo: str, n: int, branch: str | None = None) -> list[UsageRecord]:
        """The newest `n` records of `repo` (and `branch`, when given), oldest first; [] when none."""
        if not self.path.is_file():
            return []
        try:
            db = sqlite3.connect(f"file:{self.path}?mode=ro", uri=True, timeout=30)
            try:
                # A version-1 file (no writer has added the column yet) has no `live`: read as none.
                live = "live" if db.execute("PRAGMA user_version").fetchone()[0] >= _VERSION else "'{}'"
                query = f"SELECT time, op, repo, branch, index_commit, head, verdicts, reasons, non_usable, {live} " \
                        "FROM usage WHERE repo = ?" + (" AND branch = ?" if branch is not None else "") + \
                        " ORDER BY id DESC LIMIT ?"
                rows = db.execute(query, (repo, *((branch,) if branch is not None else ()), n)).fetchall()
            finally:
                db.close()
        except sqlite3.Error as exc:
            if "locked" in str(exc) or "busy" in str(exc):
                raise BadIndex(f"the usage records in {self.path} stayed locked ({exc}); retry.") from exc
            # Usage is advisory: a file a full disk left empty (0 bytes, no table) or damaged has
            # no records; the next recorded call starts it again (`_open`).
            if "no such table" not in str(exc):   # an empty file is no news
                warnings.warn(f"codevouch: the usage records in {self.path} cannot be read ({exc}); counted as "
                              "none, and the next recorded call starts the file again", RuntimeWarning, stacklevel=2)
            return []
        return [UsageRecord(t, op, r, b, ic, h, json.loads(v), json.loads(rs),
                            tuple(tuple(p) for p in json.loads(nu)), _live(lv))
                for t, op, r, b, ic, h, v, rs, nu, lv in reversed(rows)]

    def _writer(self) -> sqlite3.Connection:
        """This process's connection to the file, opened once: closing the last connection
        checkpoints the write-ahead log into the file, ~6 ms a search. Opened again when the file
        is no longer the one it was opened on (removed to start over, replaced)."""
        key = str(self.path)
        st = os.stat(self.path) if self.path.exists() else None
        found = _WRITERS.get(key)
        if found is not None and st is not None and found[1] == (st.st_dev, st.st_ino):
            return found[0]
        _drop_writer(key)
        db = self._open()
        st = os.stat(self.path)
        _WRITERS[key] = (db, (st.st_dev, st.st_ino))
        return db

    def _open(self) -> sqlite3.Connection:
        db = sqlite3.connect(self.path, timeout=30, check_same_thread=False)
        try:
            db.execute("PRAGMA journal_mode=WAL")
        except sqlite3.DatabaseError as exc:
            if isinstance(exc, sqlite3.OperationalError):
                db.close()
                raise
            # Not a database (damaged): the records are advisory, so the file is moved aside
            # (kept for a post-mortem, replacing an earlier one) and started again.
            db.close()
            os.replace(self.path, self.path.with_name(self.path.name + ".damaged"))
            db = sqlite3.connect(self.path, timeout=30, check_same_thread=False)
            db.execute("PRAGMA journal_mode=WAL")
        # A record lost to a power cut costs nothing; an fsync per search cost ~10 ms. In WAL
        # mode NORMAL still never corrupts the file.
        db.execute("PRAGMA synchronous=NORMAL")
        version = db.execute("PRAGMA user_version").fetchone()[0]
        if version == 0:
            db.executescript(_SCHEMA)
        if version < _VERSION:
            # Under the write lock, read again: another process may have added the column meanwhile.
            db.execute("BEGIN IMMEDIATE")
            try:
                if db.execute("PRAGMA user_version").fetchone()[0] < _VERSION:
                    db.execute(_ADD_LIVE)
                    db.execute(f"PRAGMA user_version = {_VERSION}")
                db.execute("COMMIT")
            except BaseException:
                db.execute("ROLLBACK")
                raise
        return db


def _live(text: str) -> dict[str, int]:
    """A record's `live` counts, as far as they can be read (the file is advisory)."""
    try:
        value = json.loads(text)
    except ValueError:
        return {}
    return {k: v for k, v in value.items() if k in LIVE_KEYS and isinstance(v, int)} if isinstance(value, dict) else {}
