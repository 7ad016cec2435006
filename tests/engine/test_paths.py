"""Where an engine's socket lives: private, short enough, never a directory another user made."""
from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from codevouch.engine import paths


@pytest.fixture
def short() -> Iterator[Path]:
    """A directory with a short path: an engine's socket beside an index in pytest's tmp_path
    (longer under xdist: .../popen-gw0/...) can pass AF_UNIX's 107 bytes, and then no place fits."""
    base = Path(tempfile.mkdtemp(prefix="cvp-", dir="/tmp"))
    yield base
    shutil.rmtree(base, ignore_errors=True)


def test_the_runtime_directory_comes_first(short: Path) -> None:
    # In `short`: under pytest's tmp_path the socket path passed 107 bytes once pytest's run
    # number reached three digits (pytest-117/popen-gw0/...), and the test failed.
    runtime = short / "run"
    runtime.mkdir(mode=0o700)
    place = paths.find(Path("/x/index"), {"XDG_RUNTIME_DIR": str(runtime)}, create=True)
    assert place is not None and place.directory.parent == runtime / "codevouch"
    assert paths.private_problem(place.directory) is None and paths.private_problem(runtime / "codevouch") is None
    assert paths.find(Path("/x/index"), {"XDG_RUNTIME_DIR": str(runtime)}) == place


def test_without_a_runtime_directory_it_is_beside_the_index(short: Path) -> None:
    tmp_path = short
    index = tmp_path / "index"
    place = paths.find(index, {"TMPDIR": "/nonexistent"}, create=True)
    assert place is not None and place.directory.parent == tmp_path / f".codevouch-engine-{os.getuid()}"


def test_a_directory_open_to_others_is_never_used(short: Path) -> None:
    tmp_path = short
    runtime = tmp_path / "run"
    runtime.mkdir(mode=0o700)
    (runtime / "codevouch").mkdir(mode=0o755)
    os.chmod(runtime / "codevouch", 0o755)
    assert "mode 0755" in (paths.private_problem(runtime / "codevouch") or "")
    place = paths.find(tmp_path / "index", {"XDG_RUNTIME_DIR": str(runtime), "TMPDIR": "/nonexistent"}, create=True)
    assert place is not None and place.directory.parent == tmp_path / f".codevouch-engine-{os.getuid()}"
    # A link is not a directory, wherever it points.
    os.symlink(tmp_path, tmp_path / "link")
    assert "not a directory" in (paths.private_problem(tmp_path / "link") or "")


def test_a_world_writable_runtime_directory_is_not_the_users(tmp_path: Path) -> None:
    runtime = tmp_path / "run"
    runtime.mkdir()
    os.chmod(runtime, 0o777)
    place = paths.find(tmp_path / "index", {"XDG_RUNTIME_DIR": str(runtime)}, create=True)
    assert place is not None and not str(place.directory).startswith(str(runtime))


def test_one_engine_per_index_directory() -> None:
    assert paths.key(Path("/a/index")) != paths.key(Path("/b/index"))
    assert paths.key(Path("/a/index")) == paths.key(Path("/a/index"))


def test_the_index_directory_is_read_as_the_store_reads_it(tmp_path: Path) -> None:
    env = {"XDG_DATA_HOME": str(tmp_path / "data")}
    assert paths.index_dir_of([], env, None) == (tmp_path / "data" / "codevouch").resolve()
    assert paths.index_dir_of([], env, str(tmp_path / "env")) == (tmp_path / "env").resolve()
    assert paths.index_dir_of(["search", "--index", str(tmp_path / "i")], env, "x") == (tmp_path / "i").resolve()
    assert paths.index_dir_of(["search", f"--index={tmp_path}/j"], env, None) == (tmp_path / "j").resolve()
    assert paths.index_dir_of(["search", "--", "--index", "q"], env, None) == (tmp_path / "data" / "codevouch").resolve()
    home = Path(os.path.expanduser("~"))
    assert paths.index_dir_of([], {"XDG_DATA_HOME": "relative"}, None) == (home / ".local/share/codevouch").resolve()


def test_the_identity_follows_the_sources() -> None:
    first = paths.identity()
    assert first.startswith("0.1.0 ") and str(Path(paths.__file__).parents[1]) in first
    assert paths.identity() == first
