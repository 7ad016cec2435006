"""retriever/resident.py's `serve`: the one way the engine and the MCP server run a call, one at
a time and inside the caller's Call. (Its work between calls is tested through both servers:
tests/test_mcp_wire.py, tests/engine/test_execute.py.)"""
from __future__ import annotations

import threading
import time
from pathlib import Path

from codevouch import environment
from codevouch.call import Call
from codevouch.retriever.resident import Resident


def test_a_call_runs_inside_its_own_call_and_leaves_the_process_as_it_was(tmp_path: Path) -> None:
    resident = Resident(lambda line: None)
    call = Call.of({"CODEVOUCH_MAX_SNIPPETS": "7", "HOME": str(tmp_path)}, tmp_path)
    seen = resident.serve(call, lambda: (environment.current().max_snippets, environment.current().get("HOME")))
    assert seen == (7, str(tmp_path))
    assert environment.current().get("CODEVOUCH_MAX_SNIPPETS") is None     # not after the call


def test_calls_from_two_threads_run_one_at_a_time(tmp_path: Path) -> None:
    resident = Resident(lambda line: None)
    inside, overlapped = [0], []

    def work() -> None:
        inside[0] += 1
        overlapped.append(inside[0])
        time.sleep(0.05)
        inside[0] -= 1

    threads = [threading.Thread(target=resident.serve, args=(Call.of({}, tmp_path), work)) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert overlapped == [1, 1, 1, 1]
