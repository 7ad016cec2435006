"""retriever/resident.py's `serve`: the one way the engine and the MCP server run a call, one at
a time and inside the caller's Call. (Its work between calls is tested through both servers:
tests/test_mcp_wire.py, tests/engine/test_execute.py.) And a library user's `Index`, whose calls
run alongside each other and whose searches leave the rest of an overlay to a background thread."""
from __future__ import annotations

import threading
import time
from pathlib import Path

from codevouch import Index, environment
from codevouch.call import Call
from codevouch.retriever.resident import Resident, library
from tests.gitrepo import Repo


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


def _behind(repo: Repo, index_dir: Path, name: str) -> None:
    """A branch built with the fake, then five new functions in the working tree (named apart per
    test: the process's overlay vectors are kept by text)."""
    repo.commit_files({"shop/orders.py": "def place_order(item):\n    return item\n"})
    Index(repo.root, index_dir, embedder="fake-bow-64").build()
    for n in range(5):
        repo.write(f"shop/extra{n}.py", f"def {name}_{n}(x):\n    return x + {n}\n")


def test_a_library_index_embeds_what_its_search_left_before_the_next_call(repo: Repo, index_dir: Path) -> None:
    _behind(repo, index_dir, "embedded_later")
    idx = Index(repo.root, index_dir, embedder="fake-bow-64", overlay_limit=1)
    before = library()._thread
    first = idx.search("embedded_later_4", k=10)
    assert first.overlay is not None and (first.overlay.embedded, first.overlay.unembedded) == (1, 4)
    started = library()._thread
    assert started is not None and started is not before
    started.join(30)
    assert not started.is_alive()
    again = idx.search("embedded_later_4", k=10)
    assert again.overlay is not None and (again.overlay.embedded, again.overlay.unembedded) == (0, 0)


def test_background_false_starts_no_thread(repo: Repo, index_dir: Path) -> None:
    _behind(repo, index_dir, "left_alone")
    idx = Index(repo.root, index_dir, embedder="fake-bow-64", overlay_limit=1, background=False)
    before = library()._thread
    first = idx.search("left_alone_4", k=10)
    assert first.overlay is not None and first.overlay.unembedded == 4
    assert library()._thread is before
    again = idx.search("left_alone_4", k=10)
    assert again.overlay is not None and (again.overlay.embedded, again.overlay.unembedded) == (1, 3)


def test_library_calls_run_alongside_each_other() -> None:
    """Unlike `serve`, a library's calls from two threads overlap (both reach the barrier)."""
    resident = Resident(lambda line: None)
    met = threading.Barrier(2, timeout=10)
    errors: list[BaseException] = []

    def call() -> None:
        try:
            with resident.alongside():
                met.wait()
        except BaseException as exc:  # noqa: BLE001  (reported below)
            errors.append(exc)

    threads = [threading.Thread(target=call) for _ in range(2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert errors == [] and not resident.wanted()
