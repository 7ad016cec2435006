"""A command as a function of (arguments, Call, streams): everything it says goes to the call's
streams, paths are the caller's, and click's own errors too."""
from __future__ import annotations

import io
import json
from pathlib import Path

import pytest
import typer.main

from codevouch.call import Call
from codevouch.commands import runner
from codevouch.commands.app import build_app
from tests.gitrepo import Repo


def _run(argv: list[str], cwd: Path, env: dict[str, str], stdin: str = "") -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    streams = runner.Streams(io.TextIOWrapper(io.BytesIO(stdin.encode())), out, err)
    code = runner.run(typer.main.get_command(build_app()), argv, Call.of(env, cwd), streams)
    return code, out.getvalue(), err.getvalue()


def test_a_usage_error_goes_to_the_calls_stderr(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = _run(["search", "x", "--no-such-option"], tmp_path, {})
    assert code == 2 and out == "" and "No such option: --no-such-option" in err
    code, out, err = _run(["search", "x", "--format", "yaml"], tmp_path, {})
    assert code == 2 and "--format must be" in err
    assert capsys.readouterr() == ("", "")          # nothing on the process's own streams


def test_a_file_argument_is_read_from_the_callers_directory(repo: Repo, tmp_path: Path) -> None:
    head = repo.commit_files({"m.py": "def alpha():\n    return 1\n"})
    (repo.root / "sub").mkdir()
    (repo.root / "sub" / "in.json").write_text(json.dumps(
        [{"path": "m.py", "commit": head, "start_line": 1, "end_line": 2, "text": "def alpha():\n    return 1\n"}]))
    env = {"CODEVOUCH_INDEX": str(tmp_path / "index"), "CODEVOUCH_NO_RECORD": "1", "PATH": "/usr/bin:/bin"}
    assert Path.cwd() != repo.root / "sub"
    code, out, err = _run(["validate", "--json", "in.json"], repo.root / "sub", env)
    assert code == 0, err
    assert [r["verdict"] for r in json.loads(out)] == ["usable"]
    # stdin is the call's own stream too
    code, out, err = _run(["validate", "--json", "-"], repo.root, env, stdin=(repo.root / "sub" / "in.json").read_text())
    assert code == 0 and [r["verdict"] for r in json.loads(out)] == ["usable"], err
