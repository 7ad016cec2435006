"""A dense or hybrid search imports chromadb on a thread while it waits on git; a lexical one
never imports it. The store then works as if it had imported chromadb itself."""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from tests.clihelp import FAKE, cv
from tests.gitrepo import Repo

_PROBE = """
import sys, threading
from pathlib import Path
from codevouch.store.vectors import VectorStore, import_early
import_early()
import_early()                                  # once: the second is a no-op
names = [t.name for t in threading.enumerate()]
assert names.count("codevouch-import-chromadb") <= 1, names
store = VectorStore(Path(sys.argv[1]))          # its first use waits for the import, or imports
store.upsert("col", ["a", "b"], [[1.0, 0.0], [0.0, 1.0]])
print([cid for cid, _ in store.query("col", [1.0, 0.1], 2)])
store.close()
"""


def test_the_store_works_after_an_early_import(tmp_path: Path) -> None:
    done = subprocess.run([sys.executable, "-c", _PROBE, str(tmp_path / "index")], capture_output=True, text=True,
                          timeout=300)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "['a', 'b']"


_SEARCH = """
import sys
from pathlib import Path
from codevouch.retriever.search import search
hits = search(sys.argv[1], "alpha", Path(sys.argv[2]), mode=sys.argv[3])
print(len(hits), "chromadb" in sys.modules)
"""


def test_a_lexical_search_never_imports_chromadb_and_a_hybrid_one_does(repo: Repo, tmp_path: Path) -> None:
    repo.commit(**{"a.py": "def alpha():\n    return 1\n"})
    index = tmp_path / "index"
    assert cv("index", "build", *FAKE, cwd=repo.root, index=index).returncode == 0
    for mode, imported in (("lexical", "False"), ("hybrid", "True")):
        done = subprocess.run([sys.executable, "-c", _SEARCH, str(repo.root), str(index), mode],
                              capture_output=True, text=True, timeout=300)
        assert done.returncode == 0, done.stderr
        assert done.stdout.split() == ["1", imported], (mode, done.stdout)
