"""Real code for the benchmarks: PyPI source distributions, the local stdlib, temp git repos.

Everything is fetched once into .bench-cache/ (git-ignored) and read offline afterwards.
"""
from __future__ import annotations

import os
import shutil
import subprocess
import sysconfig
import tarfile
import zipfile
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

from codevouch_bench.lib.common import CACHE, PY, log

SDISTS = CACHE / "sdist"
EXTRACTED = CACHE / "src"
# Fixed identity and dates: commits (and so chunk ids) are reproducible run to run.
GIT_ENV = {"GIT_AUTHOR_NAME": "bench", "GIT_AUTHOR_EMAIL": "bench@example.invalid",
           "GIT_COMMITTER_NAME": "bench", "GIT_COMMITTER_EMAIL": "bench@example.invalid",
           "GIT_AUTHOR_DATE": "2024-01-01T00:00:00Z", "GIT_COMMITTER_DATE": "2024-01-01T00:00:00Z",
           "GIT_CONFIG_NOSYSTEM": "1", "GIT_CONFIG_GLOBAL": os.devnull}


@dataclass(frozen=True)
class Source:
    """A body of real code: `name==version` from PyPI, `stdlib:json,email` from this Python, or
    `git:URL@COMMIT`, a public repository pinned at a commit (see `git_checkout`)."""
    spec: str
    subdirs: tuple[str, ...] = ()   # keep only these (relative to the sdist root); () keeps all

    @property
    def label(self) -> str:
        return self.spec


def _archive_for(spec: str) -> Path | None:
    name, _, version = spec.partition("==")
    norm = name.lower().replace("-", "_")
    for path in SDISTS.glob("*"):
        stem = path.name.lower().replace("-", "_")
        if stem.startswith(f"{norm}_{version}.") or stem.startswith(f"{norm}-{version}."):
            return path
    return None


def fetch(specs: Iterable[str]) -> None:
    """pip download the missing sdists, as few pip calls as possible (pip's start-up costs
    seconds), but one version of a name per call: pip refuses two versions of one package."""
    missing = [s for s in dict.fromkeys(specs)
               if not s.startswith(("stdlib:", "git:")) and _archive_for(s) is None]
    rounds: list[list[str]] = []
    for spec in missing:
        name = spec.split("==")[0].lower()
        slot = next((r for r in rounds if all(x.split("==")[0].lower() != name for x in r)), None)
        if slot is None:
            rounds.append(slot := [])
        slot.append(spec)
    SDISTS.mkdir(parents=True, exist_ok=True)
    for batch in rounds:
        log(f"downloading {len(batch)} source distribution(s) into {SDISTS}: {', '.join(batch)}")
        subprocess.run([PY, "-m", "pip", "download", "--no-deps", "--no-binary", ":all:", "-q",
                        "-d", str(SDISTS), *batch], check=True)


def extract(spec: str) -> Path:
    """The unpacked sdist root (cached), or a copy of the stdlib packages for `stdlib:a,b`."""
    if spec.startswith("stdlib:"):
        return _stdlib_copy(spec.split(":", 1)[1].split(","))
    if spec.startswith("git:"):
        return git_checkout(spec)
    dest = EXTRACTED / spec.replace("==", "-")
    if dest.exists():
        return dest
    archive = _archive_for(spec)
    if archive is None:
        fetch([spec])
        archive = _archive_for(spec)
        assert archive is not None, f"pip did not leave an sdist for {spec} in {SDISTS}"
    tmp = dest.with_name(dest.name + ".tmp")
    shutil.rmtree(tmp, ignore_errors=True)
    tmp.mkdir(parents=True)
    if archive.name.endswith(".zip"):
        with zipfile.ZipFile(archive) as zf:
            zf.extractall(tmp)
    else:
        with tarfile.open(archive) as tf:
            tf.extractall(tmp, filter="data")
    (top,) = list(tmp.iterdir())  # sdists hold one top directory, name-version/
    top.rename(dest)
    tmp.rmdir()
    return dest


GIT_MIRRORS_ENV = "CODEVOUCH_BENCH_GIT_MIRRORS"


def git_checkout(spec: str) -> Path:
    """The files of `git:URL@COMMIT` at that commit (cached under .bench-cache/src).

    The commit comes from a local mirror when $CODEVOUCH_BENCH_GIT_MIRRORS names a directory
    holding `owner+name/repo` (a bare clone), else from `git clone --bare URL` into
    .bench-cache/git. Either way the commit is the one pinned in the spec, or nothing.
    """
    url, _, commit = spec[len("git:"):].rpartition("@")
    owner_name = "+".join(url.rstrip("/").removesuffix(".git").split("/")[-2:])
    dest = EXTRACTED / f"{owner_name}-{commit[:12]}"
    if dest.exists():
        return dest
    mirrors = os.environ.get(GIT_MIRRORS_ENV)
    bare = Path(mirrors) / owner_name / "repo" if mirrors else CACHE / "git" / owner_name
    if (bare / ".git").is_dir():     # a mirror fetched with its git directory inside `repo/`
        bare = bare / ".git"
    if not bare.exists():
        log(f"cloning {url} into {bare}")
        bare.parent.mkdir(parents=True, exist_ok=True)
        subprocess.run(["git", "clone", "-q", "--bare", url, str(bare)], check=True)
    tmp = dest.with_name(dest.name + ".tmp")
    shutil.rmtree(tmp, ignore_errors=True)
    tmp.mkdir(parents=True)
    for path, data in blobs_at(bare, commit, GIT_MAX_BLOB).items():
        out = tmp / path
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_bytes(data)
    tmp.rename(dest)
    return dest


GIT_MAX_BLOB = 1_000_000  # larger blobs (bundles, data) are left out; snapshots may lack them anyway


def blobs_at(bare: Path, commit: str, max_bytes: int) -> dict[str, bytes]:
    """Path -> bytes of the regular files at `commit` up to max_bytes (one cat-file batch)."""
    listing = subprocess.run(["git", "--git-dir", str(bare), "ls-tree", "-r", "-l", "-z", commit],
                             check=True, capture_output=True).stdout.decode("utf-8", "surrogateescape")
    wanted: dict[str, str] = {}
    for entry in filter(None, listing.split("\0")):
        meta, path = entry.split("\t", 1)
        mode, kind, sha, size = meta.split()
        if kind == "blob" and mode in ("100644", "100755") and size.isdigit() and int(size) <= max_bytes:
            wanted[path] = sha
    proc = subprocess.run(["git", "--git-dir", str(bare), "cat-file", "--batch"], check=True,
                          input="".join(f"{sha}\n" for sha in wanted.values()).encode(), capture_output=True)
    out, pos, data = {}, 0, proc.stdout
    for path in wanted:
        end = data.index(b"\n", pos)
        header = data[pos:end].split()
        pos = end + 1
        if len(header) < 3 or header[1] != b"blob":  # "<sha> missing": absent from the snapshot
            continue
        size = int(header[2])
        out[path] = data[pos:pos + size]
        pos += size + 1
    return out


def _stdlib_copy(packages: Sequence[str]) -> Path:
    dest = EXTRACTED / ("stdlib-" + "-".join(packages))
    if not dest.exists():
        stdlib = Path(sysconfig.get_paths()["stdlib"])
        for pkg in packages:
            src = stdlib / pkg
            if src.is_dir():
                shutil.copytree(src, dest / pkg, ignore=shutil.ignore_patterns("__pycache__", "test*"))
            else:
                (dest).mkdir(parents=True, exist_ok=True)
                shutil.copy2(stdlib / f"{pkg}.py", dest / f"{pkg}.py")
    return dest


def files_of(root: Path, subdirs: Sequence[str] = (), suffixes: Sequence[str] = ()) -> list[Path]:
    """Regular files under root (or under its subdirs), repo-relative order, optionally by suffix."""
    bases = [root / d for d in subdirs] if subdirs else [root]
    out: list[Path] = []
    for base in bases:
        candidates = [base] if base.is_file() else sorted(p for p in base.rglob("*") if p.is_file())
        out += [p for p in candidates if "__pycache__" not in p.parts
                and (not suffixes or p.suffix in suffixes)]
    return out


# -- git ------------------------------------------------------------------------------------

def git(repo: Path, *args: str) -> str:
    proc = subprocess.run(["git", "-C", str(repo), *args], env={**os.environ, **GIT_ENV},
                          capture_output=True, text=True)
    if proc.returncode != 0:
        raise RuntimeError(f"git {' '.join(args)} in {repo}: {proc.stderr.strip()}")
    return proc.stdout


def init_repo(repo: Path) -> None:
    shutil.rmtree(repo, ignore_errors=True)
    repo.mkdir(parents=True)
    git(repo, "init", "-q", "-b", "main")


def replace_tree(repo: Path, files: dict[str, bytes]) -> None:
    """Make the working tree exactly `files` (path -> bytes), .git aside."""
    for child in repo.iterdir():
        if child.name != ".git":
            shutil.rmtree(child) if child.is_dir() else child.unlink()
    for rel, data in files.items():
        path = repo / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)


def commit_all(repo: Path, message: str) -> str:
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "--allow-empty", "-m", message)
    return git(repo, "rev-parse", "HEAD").strip()


def tree_files(root: Path, subdirs: Sequence[str] = (), suffixes: Sequence[str] = ()) -> dict[str, bytes]:
    """Files of an unpacked source, keyed by their path relative to root."""
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in files_of(root, subdirs, suffixes)}


def repo_from_files(repo: Path, files: dict[str, bytes], message: str = "snapshot") -> str:
    init_repo(repo)
    replace_tree(repo, files)
    return commit_all(repo, message)


def evolution_repo(repo: Path, old_spec: str, new_spec: str,
                   subdirs: Sequence[str] = ()) -> tuple[str, str]:
    """Release N committed on branch `release-N` (and main), release N+1 on main after it (only
    `subdirs` of each, when given).

    The working tree is left at main (release N+1). Returns (old branch name, new commit).
    """
    old_root, new_root = extract(old_spec), extract(new_spec)
    init_repo(repo)
    replace_tree(repo, tree_files(old_root, subdirs))
    commit_all(repo, f"release {old_spec}")
    old_branch = "release-" + (old_spec.split("==")[1] if "==" in old_spec else old_spec.rpartition("@")[2][:12])
    git(repo, "branch", old_branch)
    replace_tree(repo, tree_files(new_root, subdirs))
    new_commit = commit_all(repo, f"release {new_spec}")
    return old_branch, new_commit
