"""A damaged chroma/chroma.sqlite3 (issue 19, part 5): the build named it "up to date" while every
search failed. Now the build says the store is damaged and what to run, and `index build
--repair` rebuilds the vectors from the embedding cache without embedding anything. Real git,
the real embedded Chroma store, the real CLI."""
from __future__ import annotations

import json
import os
from pathlib import Path

from tests.clihelp import FAKE, cv
from tests.gitrepo import Repo


def test_a_damaged_vector_store_is_named_and_repaired_without_embedding(tmp_path: Path) -> None:
    repo = Repo(tmp_path / "repo")
    repo.commit_files({"shop/cancel.py": "def cancel_order(order):\n    return order.cancel()\n",
                       "shop/refund.py": "def refund_order(order):\n    return order.refund()\n"})
    index = tmp_path / "index"
    assert cv("index", "build", *FAKE, cwd=repo.root, index=index).returncode == 0
    (index / "chroma" / "chroma.sqlite3").write_bytes(os.urandom(300))

    built = cv("index", "build", *FAKE, cwd=repo.root, index=index)
    assert built.returncode == 1, (built.returncode, built.stdout, built.stderr)     # was 0, "up to date"
    assert "is damaged" in built.stderr and "codevouch index build --repair" in built.stderr
    broken = cv("search", "cancel_order", "--mode", "dense", cwd=repo.root, index=index)
    assert broken.returncode != 0 and "--repair" in broken.stderr and "Traceback" not in broken.stderr

    fixed = cv("index", "build", "--repair", "--json", cwd=repo.root, index=index)
    assert fixed.returncode == 0, fixed.stderr
    done = json.loads(fixed.stdout)
    assert (done["spaces"], done["vectors"], done["missing"]) == (1, 2, 0), done
    assert done["aside"] and Path(done["aside"]).name.startswith("chroma.damaged-")
    hits = cv("search", "cancel_order", "--mode", "dense", "--json", cwd=repo.root, index=index)
    assert hits.returncode == 0 and json.loads(hits.stdout)[0]["path"] == "shop/cancel.py", hits.stderr
    again = cv("index", "build", *FAKE, "--json", cwd=repo.root, index=index)
    assert again.returncode == 0, again.stderr
    [summary] = json.loads(again.stdout)["branches"]
    assert summary["embedded"] == 0, summary
