"""The suite's home-directory guard fails a test that writes into $HOME, and only such a test."""
from __future__ import annotations

from pathlib import Path

import pytest

pytest_plugins = ["pytester"]

CONFTEST = (Path(__file__).parent / "conftest.py").read_text(encoding="utf-8")


def test_a_write_into_home_fails_loudly_and_a_clean_test_passes(pytester: pytest.Pytester) -> None:
    pytester.makeconftest(CONFTEST)
    pytester.makepyfile(test_inner='''
import os
from pathlib import Path

def test_writes_home():
    (Path(os.environ["HOME"]) / ".codevouch-was-here").write_text("x")

def test_clean(tmp_path):
    (tmp_path / "fine").write_text("x")

def test_allowed(writable_home):
    (Path(os.environ["HOME"]) / "index").mkdir()
''')
    result = pytester.runpytest_inprocess("-q", "-p", "no:cacheprovider")
    result.assert_outcomes(passed=3, errors=1)     # the writer errors at teardown, the others pass
    result.stdout.fnmatch_lines(["*ERROR at teardown of test_writes_home*",
                                 "*wrote into the home directory*.codevouch-was-here*"])
