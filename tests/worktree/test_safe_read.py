"""codevouch/worktree/safe_read.py: the one reader of files codevouch reads on its own account.
Real FIFOs, a real link to /dev/zero, a real 2 GB sparse file: none blocks, none is read past
the cap."""
from __future__ import annotations

import os
from pathlib import Path

import pytest

from codevouch.worktree.safe_read import NotRegular, TooLarge, check_file, read_file, read_head


@pytest.fixture
def odd(tmp_path: Path) -> Path:
    os.mkfifo(tmp_path / "fifo")
    os.symlink("/dev/zero", tmp_path / "zero")
    with open(tmp_path / "sparse", "wb") as handle:
        handle.truncate(2 << 30)
    (tmp_path / "plain").write_bytes(b"x = 1\n")
    os.symlink("plain", tmp_path / "link")
    os.symlink("nowhere", tmp_path / "dangling")
    (tmp_path / "dir").mkdir()
    return tmp_path


def test_a_regular_file_is_read_whole(odd: Path) -> None:
    assert read_file(odd / "plain", 100) == b"x = 1\n"
    assert read_file(odd / "link", 100, follow=True) == b"x = 1\n"


@pytest.mark.parametrize("name, follow, what", [
    ("fifo", False, "a FIFO"), ("fifo", True, "a FIFO"),          # the open returns at once: O_NONBLOCK
    ("zero", True, "a character device"), ("zero", False, "a symlink"),
    ("link", False, "a symlink"), ("dir", True, "a directory"), ("missing", True, "missing"),
])
def test_anything_else_is_not_read(odd: Path, name: str, follow: bool, what: str) -> None:
    assert read_file(odd / name, 1 << 20, follow=follow) == NotRegular(what)


def test_a_file_over_the_cap_is_not_read(odd: Path) -> None:
    assert read_file(odd / "sparse", 1 << 20) == TooLarge(2 << 30, 1 << 20)
    assert read_file(odd / "plain", 5) == TooLarge(6, 5)
    assert read_file(odd / "plain", 6) == b"x = 1\n"



def test_the_head_of_a_file_is_read_whatever_its_length(odd: Path) -> None:
    assert read_head(odd / "sparse", 12) == bytes(12)          # 2 GB: 12 bytes read, no cap refused
    assert read_head(odd / "plain", 12) == b"x = 1\n"            # shorter: all of it
    assert read_head(odd / "link", 3, follow=True) == b"x ="
    for name, what in (("fifo", "a FIFO"), ("link", "a symlink"), ("dir", "a directory"), ("missing", "missing")):
        assert read_head(odd / name, 12) == NotRegular(what)

@pytest.mark.parametrize("name, expected", [
    ("plain", None), ("link", None), ("missing", None), ("dangling", None),
    ("fifo", NotRegular("a FIFO")), ("zero", NotRegular("a character device")), ("dir", NotRegular("a directory")),
    ("sparse", TooLarge(2 << 30, 1 << 20)),
])
def test_check_file_says_what_a_reader_would_meet(odd: Path, name: str, expected: object) -> None:
    assert check_file(odd / name, 1 << 20) == expected
