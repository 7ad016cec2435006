"""No file in the working directory configures chromadb (codevouch/store/chromaload.py): a
repository's `.env`, a FIFO or one that names a module for chromadb to import, neither hangs nor
steers a one-shot `codevouch search` run in it. Real CLI processes (chromadb is imported once per
process, and reads the file while it is imported), a real index and a real Chroma store."""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from codevouch import Index
from codevouch.store import chromaload
from tests.gitrepo import Repo

FAKE = "fake-bow-64"


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> tuple[Repo, Path]:
    base = tmp_path_factory.mktemp("dotenv")
    repo = Repo.create(base / "repo")
    repo.commit_files({"fees.py": "def overdue_fee(loan, days):\n    return days * loan.rate\n"})
    Index(repo.root, base / "index", embedder=FAKE, record=False).build()
    return repo, base / "index"


def _search(repo: Repo, index_dir: Path) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("CHROMA")}
    env.update({"CODEVOUCH_SERVER": "off", "CODEVOUCH_INDEX": str(index_dir), "CODEVOUCH_NO_RECORD": "1"})
    return subprocess.run([sys.executable, "-m", "codevouch", "search", "overdue fee", "--json"], cwd=repo.root,
                          env=env, capture_output=True, text=True, timeout=120)


def test_a_dotenv_fifo_in_the_repository_does_not_hang_a_search(built: tuple[Repo, Path]) -> None:
    repo, index_dir = built
    os.mkfifo(repo.root / ".env")          # chromadb's settings opened it, and waited for a writer for ever
    try:
        done = _search(repo, index_dir)
    finally:
        os.unlink(repo.root / ".env")
    assert done.returncode == 0, done.stderr
    assert '"path": "fees.py"' in done.stdout


def test_a_dotenv_in_the_repository_names_no_module_for_chromadb(built: tuple[Repo, Path]) -> None:
    repo, index_dir = built
    # `this` prints the Zen of Python when imported: chromadb imported it, by the repository's word.
    repo.write(".env", "CHROMA_PRODUCT_TELEMETRY_IMPL=this.Nothing\nCHROMA_SEGMENT_MANAGER_IMPL=this.Nothing\n")
    try:
        done = _search(repo, index_dir)
    finally:
        os.unlink(repo.root / ".env")
    assert done.returncode == 0, done.stderr
    assert "Zen of Python" not in done.stdout + done.stderr
    assert '"path": "fees.py"' in done.stdout


def test_settings_read_the_environment_and_no_env_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import pydantic_settings

    class Knobs(pydantic_settings.BaseSettings):
        model_config = {"env_file": ".env", "extra": "ignore"}
        colour: str = "grey"
        size: int = 1

    (tmp_path / ".env").write_text("COLOUR=red\nSIZE=9\n")
    monkeypatch.chdir(tmp_path)
    chromaload.no_env_file()
    chromaload.no_env_file()                                     # once is enough; twice changes nothing
    monkeypatch.setenv("SIZE", "4")                              # the user's own variable still counts
    assert (Knobs().colour, Knobs().size) == ("grey", 4)
    assert Knobs(_env_file=".env").colour == "red"               # a file named by its maker is still read
    first, second = chromaload.settings(), chromaload.settings()
    assert first is not second and first.anonymized_telemetry is False and first.allow_reset is False
