"""The index directory and the names of what it holds: the one place they are spelled.

    state.sqlite   the ledger: branches, files, chunks, the embedding cache, pending vector ids
                   (its format changes only by the ordered steps of store/migrations.py)
    usage.sqlite   local usage records (store/usage.py), only beside a ledger
    chroma/        embedded Chroma (absent with CODEVOUCH_CHROMA_URL: the vectors are on the server)
    lexical/       the tantivy copies of each branch's live lexical documents, by space (store/lexindex.py)
    team/          team snapshots fetched from a Chroma server (store/team.py)
    hooks.log      what the git hooks' background builds did (indexer/hooks.py)
    write.lock     one writer at a time (store/locks.py)
    vectors.lock   a build's write batches to chroma/ versus readers (store/locks.py)
"""
from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from codevouch.errors import BadIndex

LEDGER = "state.sqlite"
USAGE = "usage.sqlite"


@dataclass(frozen=True)
class IndexDir:
    """An index directory: `IndexDir(path).ledger` is its state.sqlite, and so on."""
    root: Path

    @property
    def ledger(self) -> Path:
        return self.root / LEDGER

    @property
    def usage(self) -> Path:
        return self.root / USAGE

    @property
    def chroma(self) -> Path:
        return self.root / "chroma"

    @property
    def chroma_file(self) -> Path:
        """The embedded Chroma store's own file: absent until a build wrote a vector."""
        return self.chroma / "chroma.sqlite3"

    @property
    def lexical(self) -> Path:
        return self.root / "lexical"

    def lexical_space(self, space: str) -> Path:
        """The tantivy generations of one space (or of an older release's collection)."""
        return self.lexical / space

    def team_repository(self, repo_id: str) -> Path:
        """Where the team snapshots of one repository are cached."""
        return self.root / "team" / repo_id[:20]

    @property
    def hooks_log(self) -> Path:
        return self.root / "hooks.log"

    @property
    def write_lock(self) -> Path:
        return self.root / "write.lock"

    @property
    def vectors_lock(self) -> Path:
        return self.root / "vectors.lock"

    def has_ledger(self) -> bool:
        """Whether something is indexed here (a ledger file exists); creates nothing."""
        return self.ledger.is_file()

    def ensure(self) -> None:
        """Create the index directory for a writer, or say plainly why it cannot be one."""
        index_dir = self.root
        try:
            index_dir.mkdir(parents=True, exist_ok=True)
        except FileExistsError as exc:
            raise BadIndex(f"--index {index_dir} is a file, not a directory; pass a directory for the index.") from exc
        except NotADirectoryError as exc:
            raise BadIndex(f"--index {index_dir} lies under a file, not a directory; pass a directory path.") from exc
        except OSError as exc:
            raise BadIndex(f"cannot create the index directory {index_dir}: {exc.strerror or exc}; "
                           "pass --index with a writable directory.") from exc
        if not index_dir.is_dir():
            raise BadIndex(f"--index {index_dir} is not a directory; pass a directory for the index.")
        if not os.access(index_dir, os.W_OK | os.X_OK):
            raise BadIndex(f"the index directory {index_dir} is not writable; pass --index with a writable "
                           "directory (reads such as search work on a read-only index).")

