"""docs/examples/ are real files: the repositories file loads with the loader `--repos` uses, the
crontab's, units' and workflow's codevouch commands use options `index build` has, the systemd
units pass `systemd-analyze verify` (where it exists; they are parsed as INI in any case), and the
workflow parses as YAML with the jobs a GitHub scheduled workflow needs."""
from __future__ import annotations

import configparser
import functools
import json
import os
import re
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from codevouch.indexer.manyrepos import load_repos_file, parse_repos
from tests.clihelp import FAKE, cv, cv_process

EXAMPLES = Path(__file__).resolve().parent.parent / "docs" / "examples"
NIGHTLY = EXAMPLES.parent / "NIGHTLY.md"
REAL_BUILDER = "/opt/codevouch/venv/bin/codevouch"


@functools.cache
def _build_flags() -> set[str]:
    # A real process (its tests are marked `process`): click prints --help to sys.stdout, not
    # to the call's stdout.
    out = cv_process("index", "build", "--help")
    assert out.returncode == 0, out.stderr
    return set(re.findall(r"--[a-z][a-z-]+", out.stdout))


def _codevouch_args(line: str) -> list[str]:
    """The arguments of the `codevouch index build` in a command line (up to a redirection)."""
    words = shlex.split(line, posix=True)
    start = next(i for i, w in enumerate(words) if w.endswith("codevouch") and words[i + 1:i + 3] == ["index", "build"])
    args = []
    for word in words[start + 1:]:
        if word[:1] in "<>|&" or word[:2] in ("2>", "1>"):
            break
        args.append(word)
    return args


def _check_command(line: str, flags: set[str]) -> list[str]:
    args = _codevouch_args(line)
    assert args[:3] == ["index", "build", "--repos"], line
    unknown = {a.split("=")[0] for a in args if a.startswith("--")} - flags
    assert not unknown, f"{line}: `index build` has no {unknown}"
    return args


def test_every_example_is_on_the_nightly_page() -> None:
    page = NIGHTLY.read_text()
    for example in EXAMPLES.iterdir():
        assert f"(examples/{example.name})" in page, example.name


def test_the_repositories_file_loads_and_the_cli_accepts_it(tmp_path: Path) -> None:
    specs = load_repos_file(EXAMPLES / "repos.toml")
    assert [s.path.name for s in specs] == ["shop", "billing", "docs-site"]
    assert specs[0].branches == ("main", "release/2.4") and not specs[0].all_branches
    assert specs[1].all_branches and specs[1].include_branches == ("main", "release/*")
    assert specs[2].all_branches and specs[2].include_branches == ()
    # The CLI reads it with the same loader: the repositories do not exist here, so each one fails
    # on its own (exit 23, not a usage error) and the run lists all three.
    out = cv("index", "build", "--repos", str(EXAMPLES / "repos.toml"), "--json", *FAKE, index=tmp_path / "index")
    assert out.returncode == 23, out.stderr
    report = json.loads(out.stdout)
    assert [r["error"]["type"] for r in report["repos"]] == ["NotARepository"] * 3


@pytest.mark.process
def test_the_crontab_runs_a_valid_build_every_night() -> None:
    flags = _build_flags()
    jobs = []
    for line in (EXAMPLES / "crontab").read_text().splitlines():
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        if re.fullmatch(r"[A-Z_]+=\S*", line):
            continue   # an environment line
        fields = line.split(None, 5)
        assert len(fields) == 6, line
        for value, (low, high) in zip(fields[:5], [(0, 59), (0, 23), (1, 31), (1, 12), (0, 7)]):
            assert value == "*" or low <= int(value) <= high, line
        assert "%" not in fields[5], "cron turns % into a newline"
        _check_command(fields[5], flags)
        jobs.append(fields)
    assert len(jobs) == 1


def _units() -> dict[str, configparser.ConfigParser]:
    units = {}
    for name in ("codevouch-index.service", "codevouch-index.timer"):
        parser = configparser.ConfigParser(strict=True, interpolation=None, delimiters=("=",))
        parser.optionxform = str  # type: ignore[assignment,method-assign]  # systemd keys keep their case
        parser.read_string((EXAMPLES / name).read_text(), source=name)
        units[name] = parser
    return units


@pytest.mark.process
def test_the_systemd_units_have_what_a_nightly_oneshot_needs() -> None:
    units = _units()
    service, timer = units["codevouch-index.service"], units["codevouch-index.timer"]
    assert service["Service"]["Type"] == "oneshot"
    args = _check_command(service["Service"]["ExecStart"], _build_flags())
    assert "--wait" in args
    assert timer["Timer"]["OnCalendar"] and timer["Timer"]["Persistent"] == "true"
    assert timer["Install"]["WantedBy"] == "timers.target"
    assert "Install" not in service   # started by the timer, not enabled itself


@pytest.mark.skipif(shutil.which("systemd-analyze") is None, reason="systemd-analyze is not installed here")
def test_the_systemd_units_pass_systemd_analyze_verify(tmp_path: Path) -> None:
    # verify checks that ExecStart's program exists: point it at this machine's codevouch.
    here = Path(sys.executable).with_name("codevouch")
    builder = str(here if here.exists() else sys.executable)
    for name in ("codevouch-index.service", "codevouch-index.timer"):
        text = (EXAMPLES / name).read_text()
        (tmp_path / name).write_text(text.replace(REAL_BUILDER, builder))
    assert REAL_BUILDER in (EXAMPLES / "codevouch-index.service").read_text()
    proc = subprocess.run(["systemd-analyze", "verify", str(tmp_path / "codevouch-index.service"),
                           str(tmp_path / "codevouch-index.timer")], capture_output=True, text=True, timeout=60)
    ours = [line for line in (proc.stdout + proc.stderr).splitlines() if "codevouch-index" in line]
    assert proc.returncode == 0 and not ours, proc.stdout + proc.stderr


@pytest.mark.process
def test_the_github_workflow_parses_and_builds_into_the_team_server() -> None:
    yaml = pytest.importorskip("yaml")
    flow = yaml.safe_load((EXAMPLES / "github-workflow.yml").read_text())
    triggers = flow.get("on", flow.get(True))          # YAML 1.1 reads a bare `on` as true
    [schedule] = triggers["schedule"]
    assert len(schedule["cron"].split()) == 5
    [job] = flow["jobs"].values()
    assert {"CODEVOUCH_CHROMA_URL", "CODEVOUCH_INDEX"} <= set(job["env"])
    assert job["env"]["CODEVOUCH_INDEX"].startswith("/")   # persistent: the builder's lease belongs to it
    runs = [step["run"] for step in job["steps"] if "run" in step]
    [build] = [r for r in runs if "codevouch index build" in r]
    _check_command(next(line for line in build.splitlines() if "codevouch index build" in line), _build_flags())
    toml = re.search(r"<<'TOML'\n(.*?)\nTOML\n", build, re.S)
    assert toml, "the repositories file is written in the build step"
    specs = parse_repos(toml.group(1), "github-workflow.yml")
    assert [s.path.name for s in specs] == ["shop", "billing"]
    checked_out = {step["with"]["path"] for step in job["steps"] if step.get("uses", "").startswith("actions/checkout")}
    assert {str(s.path.relative_to(Path.cwd())) for s in specs} == checked_out
    assert all(step["with"].get("fetch-depth") == 0 for step in job["steps"]
               if step.get("uses", "").startswith("actions/checkout"))


@pytest.mark.process
def test_the_crontab_line_logs_each_failed_repository_with_its_list_file_and_line(tmp_path: Path) -> None:
    """The crontab's own command, run as cron runs it (sh; the JSON to one file, stderr appended to
    the log), on three repositories of which one is missing; only the paths and the model differ."""
    from tests.gitrepo import Repo

    [job] = [line for line in (EXAMPLES / "crontab").read_text().splitlines() if line[:1].isdigit()]
    command = job.split(None, 5)[5]
    nightly = tmp_path / "nightly"
    nightly.mkdir()
    for name in ("alpha", "beta"):
        Repo(tmp_path / name).commit(**{f"{name}.py": f"def {name}():\n    return 1\n"})
    listing = nightly / "repos.toml"
    listing.write_text('[[repo]]\npath = "../alpha"\n\n[[repo]]\npath = "../chi"\n\n[[repo]]\npath = "../beta"\n')
    log, summary = tmp_path / "nightly.log", tmp_path / "nightly.json"
    log.write_text("an earlier night\n")
    for real, here in ((REAL_BUILDER + " index build", f"{shlex.quote(sys.executable)} -m codevouch index build "
                        + " ".join(FAKE)), ("/etc/codevouch/repos.toml", str(listing)),
                       ("/var/lib/codevouch/nightly.json", str(summary)), ("/var/log/codevouch/nightly.log", str(log))):
        assert real in command, real
        command = command.replace(real, here)
    proc = subprocess.run(["/bin/sh", "-c", command], env={**os.environ, "CODEVOUCH_INDEX": str(tmp_path / "index")},
                          capture_output=True, text=True, timeout=300, check=False)
    assert proc.returncode == 23, log.read_text()
    assert proc.stdout == proc.stderr == ""         # cron mails nothing
    report = json.loads(summary.read_text())
    chi = str(tmp_path / "chi")
    assert [r["repo"] for r in report["repos"]] == [str(tmp_path / "alpha"), chi, str(tmp_path / "beta")]
    failed = report["repos"][1]
    assert failed["listed_at"] == {"file": str(listing), "line": 4, "entry": 2}
    assert f"{listing} line 4" in failed["error"]["message"] and "--repo" not in failed["error"]["message"]
    lines = log.read_text().splitlines()
    assert lines[0] == "an earlier night"
    [line] = [ln for ln in lines if "failed" in ln]
    assert line.startswith(f"codevouch: {chi}") and "NotARepository" in line and "does not exist" in line
    assert f"{listing} line 4" in line and "fix its path, or remove the entry" in line and "--repo" not in line
