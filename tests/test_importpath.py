"""What may stay on sys.path (codevouch/importpath.py): nothing a working directory decides."""
from __future__ import annotations

import importlib
import sys
from pathlib import Path

import pytest

from codevouch.importpath import secure, trusted


def test_empty_relative_and_starting_directory_entries_go() -> None:
    entries = ["", "/repo", ".", "lib", "/usr/lib/python3.11", "/repo/", "/venv/site-packages"]
    assert trusted(entries, "/repo", own="/opt/codevouch") == ["/usr/lib/python3.11", "/venv/site-packages"]


def test_the_directory_codevouch_lives_in_stays_when_it_is_the_working_directory() -> None:
    assert trusted(["/opt/checkout", "/usr/lib"], "/opt/checkout", own="/opt/checkout") == ["/opt/checkout", "/usr/lib"]
    assert trusted(["/opt/checkout"], "/elsewhere", own="/opt/checkout") == ["/opt/checkout"]


def test_after_secure_a_module_in_the_working_directory_is_not_importable(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """`python -c` puts '' first and `python -m` the starting directory: after secure(), as
    main() calls it, neither is on sys.path and a module planted there is not found."""
    (tmp_path / "planted_here.py").write_text("raise AssertionError('PLANTED imported')\n")
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(sys, "path", ["", str(tmp_path), *sys.path])
    secure()
    assert "" not in sys.path and str(tmp_path) not in sys.path
    with pytest.raises(ModuleNotFoundError):
        importlib.import_module("planted_here")
