from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.gitrepo import Repo

# The CLIs tests start run in-process, module-scoped fixtures' included (they copy os.environ
# before any function fixture runs): a test opts in to the resident engine (tests/enginehelp.py).
os.environ["CODEVOUCH_SERVER"] = "off"


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Markers the inner loop can skip by (CONTRIBUTING.md): `engine` for a test that starts the
    resident engine (tests/engine/, a module that imports `engines_on`, or a test that uses the `engine` fixture), `bench` for the
    benchmark project's smoke tests. `model` is set by the tests themselves."""
    for item in items:
        module = getattr(item, "module", None)
        rel = item.nodeid.split("::", 1)[0]
        if rel.startswith("tests/engine/") or (module is not None and hasattr(module, "engines_on")) \
                or "engine" in getattr(item, "fixturenames", ()):
            item.add_marker(pytest.mark.engine)
        if rel.startswith("tests/test_bench_"):
            item.add_marker(pytest.mark.bench)


@pytest.fixture(autouse=True)
def _isolated_home(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch,
                   request: pytest.FixtureRequest) -> Iterator[None]:
    """No test may write to the home directory or the user's default index: HOME points at an
    empty directory, and a test that leaves anything in it fails, naming what it wrote (as
    pre-commit's suite does). A test that means to use the default index location asks for
    `writable_home`."""
    home = tmp_path_factory.mktemp("home")
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("XDG_DATA_HOME", str(home / ".local" / "share"))
    monkeypatch.delenv("CODEVOUCH_INDEX", raising=False)
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    # Every CLI a test starts runs in-process unless the test opts in to the resident engine
    # (tests/enginehelp.py), which it then stops: no engine outlives its test.
    monkeypatch.setenv("CODEVOUCH_SERVER", "off")
    monkeypatch.setenv("TRANSFORMERS_OFFLINE", "1")
    yield
    # A library Index's background embedding (retriever/resident.py) ends with its test: it writes
    # the process's overlay caches, which the next test starts without.
    from codevouch.retriever import resident

    for warm in resident._LIBRARY:
        if warm._thread is not None:
            warm._thread.join(60)
    written = sorted(str(p.relative_to(home)) for p in home.rglob("*"))
    if written and "writable_home" not in request.fixturenames:
        pytest.fail(f"the test wrote into the home directory: {written[:10]}; a command wrote outside "
                    "its index directory (or the test must ask for `writable_home`)", pytrace=False)


@pytest.fixture
def writable_home() -> None:
    """For a test that uses the default index location under $HOME on purpose."""


@pytest.fixture
def repo(tmp_path: Path) -> Repo:
    return Repo(tmp_path / "repo")


@pytest.fixture
def index_dir(tmp_path: Path) -> Path:
    return tmp_path / "index"
