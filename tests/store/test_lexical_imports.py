"""A lexical search never imports chromadb (the store's heavy half); a hybrid one does.

chromadb is imported on the thread that opens the store, never on a thread of its own beside
other imports: an import on a second thread (tried, to overlap it with git's wait) raced the main
thread's numpy import and failed a cold search with "partially initialized module 'numpy._typing'"."""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from tests.clihelp import FAKE, cv
from tests.gitrepo import Repo

_SEARCH = """
import sys
from pathlib import Path
from codevouch.request import SearchRequest
from codevouch.retriever.search import search
hits = search(sys.argv[1], SearchRequest("alpha", mode=sys.argv[3]), Path(sys.argv[2]))
print(len(hits), "chromadb" in sys.modules)
"""


@pytest.mark.process
def test_a_lexical_search_never_imports_chromadb_and_a_hybrid_one_does(repo: Repo, tmp_path: Path) -> None:
    repo.commit(**{"a.py": "def alpha():\n    return 1\n"})
    index = tmp_path / "index"
    assert cv("index", "build", *FAKE, cwd=repo.root, index=index).returncode == 0
    for mode, imported in (("lexical", "False"), ("hybrid", "True")):
        done = subprocess.run([sys.executable, "-c", _SEARCH, str(repo.root), str(index), mode],
                              capture_output=True, text=True, timeout=300)
        assert done.returncode == 0, done.stderr
        assert done.stdout.split() == ["1", imported], (mode, done.stdout)
