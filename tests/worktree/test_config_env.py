"""worktree.config.seconds_from_env: the one reader of duration variables (busy timeout,
lease TTL, progress interval)."""
from __future__ import annotations

import pytest

from codevouch.errors import ConfigError
from codevouch.worktree.config import seconds_from_env


def test_unset_or_empty_gives_the_default_and_a_number_is_read(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("CV_T", raising=False)
    assert seconds_from_env("CV_T", 7.0, "7 s") == 7.0
    monkeypatch.setenv("CV_T", "")
    assert seconds_from_env("CV_T", 7.0, "7 s") == 7.0
    monkeypatch.setenv("CV_T", "0.25")
    assert seconds_from_env("CV_T", 7.0, "7 s") == 0.25


@pytest.mark.parametrize("text", ["abc", "-1", "nan", "inf"])
def test_anything_else_names_the_variable(monkeypatch: pytest.MonkeyPatch, text: str) -> None:
    monkeypatch.setenv("CV_T", text)
    with pytest.raises(ConfigError, match=r"CV_T=.* is not a number of seconds .*unset it for 7 s"):
        seconds_from_env("CV_T", 7.0, "7 s")


def test_infinity_only_where_it_means_never(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CV_T", "inf")
    assert seconds_from_env("CV_T", 7.0, "7 s", finite=False) == float("inf")
    monkeypatch.setenv("CV_T", "nan")
    with pytest.raises(ConfigError):
        seconds_from_env("CV_T", 7.0, "7 s", finite=False)
