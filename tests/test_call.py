"""A Call: the caller's environment as a snapshot, its working directory, its cancel event."""
from __future__ import annotations

import os
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from codevouch import call, environment
from codevouch.call import Call, Cancelled


def test_a_call_is_a_snapshot_of_the_callers_environment() -> None:
    given = {"CODEVOUCH_BUSY_TIMEOUT": "7", "HOME": "/home/caller"}
    made = Call.of(given, "/work")
    given["CODEVOUCH_BUSY_TIMEOUT"] = "9"          # the caller's later change is not the call's
    assert made.env.busy_timeout == 7.0 and made.env.get("HOME") == "/home/caller"
    assert made.env.expanduser("~/x") == "/home/caller/x" and made.env.expanduser("~") == "/home/caller"
    assert made.env.expanduser("a/~b") == "a/~b"


def test_paths_are_the_callers_relative_to_its_directory(tmp_path: Path) -> None:
    made = Call.of({}, tmp_path)
    assert made.path("src/../x") == tmp_path / "src/../x"      # kept as written
    assert made.path("/abs") == Path("/abs")
    assert Call.of_process().cwd == Path(os.getcwd())


def test_entered_makes_the_calls_environment_current_here_and_in_carried_threads() -> None:
    made = Call.of({"CODEVOUCH_BUSY_TIMEOUT": "3"}, "/")
    outside = environment.current()
    with made.entered():
        assert environment.current() is made.env
        with ThreadPoolExecutor(1) as pool:
            assert pool.submit(call.carried(lambda: environment.current())).result() is made.env
            # A worker without the call's context sees the process's environment instead.
            assert pool.submit(lambda: environment.current()).result() is not made.env
    assert environment.current() is outside


def test_check_raises_only_for_a_cancelled_running_call() -> None:
    call.check()                                   # no call running: nothing to cancel
    made = Call.of({}, "/")
    with made.entered():
        call.check()
        made.cancel.set()
        with pytest.raises(Cancelled):
            call.check()
    call.check()                                   # left the call: its cancel is not asked
    assert not issubclass(Cancelled, Exception)    # no `except Exception` swallows it


def test_in_call_runs_a_method_inside_its_objects_call() -> None:
    class Holder:
        def __init__(self, held: Call) -> None:
            self.call = held

        @call.in_call
        def seen(self) -> environment.Environment:
            return environment.current()

    made = Call.of({"X": "1"}, "/")
    assert Holder(made).seen() is made.env
