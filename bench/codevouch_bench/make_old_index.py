"""Build an index with an older release of codevouch, to test that this release upgrades it.

    python -m codevouch_bench.make_old_index REV REPO INDEX_DIR [--codevouch-git DIR | --archive FILE]

REV is a commit of the codevouch repository (the release whose index format is wanted);
its `codevouch/` package is exported with `git archive` into a temporary directory and run
there, with the deterministic fake embedder, on the git repository REPO, writing INDEX_DIR.
With --archive the package comes from FILE instead, a tarball of it as `git archive` writes it:
the tests use the ones in tests/store/releases/ (see tests/store/test_migrations.py), so they
need no git history (a shallow clone in CI has none). Nothing about the old format is re-typed
by hand. To add a release there:

    git archive --format=tar REV codevouch | xz -9e > tests/store/releases/REV.tar.xz
"""
from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tarfile
import tempfile
from io import BytesIO
from pathlib import Path

BUILD = (
    "import sys; from pathlib import Path; "
    "from codevouch.embedding import FakeEmbedder; from codevouch.indexer.build import build_index; "
    "build_index(Path(sys.argv[1]), Path(sys.argv[2]), FakeEmbedder())"
)


def export_release(codevouch_git: Path, rev: str, dest: Path, archive: Path | None = None) -> None:
    """The `codevouch/` package as it was at `rev`, written under `dest` (from `archive`, a tarball
    of it, when given; else from the codevouch git repository)."""
    if archive is not None:
        data = archive.read_bytes()
    else:
        data = subprocess.run(["git", "-C", str(codevouch_git), "archive", "--format=tar", rev, "codevouch"],
                              check=True, capture_output=True).stdout
    with tarfile.open(fileobj=BytesIO(data)) as tar:  # plain or compressed, as found
        tar.extractall(dest, filter="data") if hasattr(tarfile, "data_filter") else tar.extractall(dest)


def build_with_release(codevouch_git: Path, rev: str, repo: Path, index_dir: Path,
                       archive: Path | None = None) -> None:
    with tempfile.TemporaryDirectory(prefix="codevouch-old-") as tmp:
        export_release(codevouch_git, rev, Path(tmp), archive)
        env = {**os.environ, "PYTHONPATH": tmp, "HF_HUB_OFFLINE": "1"}
        proc = subprocess.run([sys.executable, "-c", BUILD, str(repo), str(index_dir)], cwd=tmp, env=env,
                              capture_output=True, text=True)
        if proc.returncode != 0:
            raise SystemExit(f"the build of release {rev} failed:\n{proc.stderr}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("rev")
    parser.add_argument("repo", type=Path)
    parser.add_argument("index_dir", type=Path)
    parser.add_argument("--codevouch-git", type=Path, default=Path(__file__).resolve().parents[2])
    parser.add_argument("--archive", type=Path, help="the release's codevouch/ package as a tarball")
    args = parser.parse_args()
    build_with_release(args.codevouch_git, args.rev, args.repo, args.index_dir, args.archive)


if __name__ == "__main__":
    main()
