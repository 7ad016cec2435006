"""One call loads the repository's settings once (worktree.files.CallSettings): a validated
search loaded `.codevouch.toml` four times (the config for the model choice and for the usage
record, the rules for the overlay and for the validator), a context pack six."""
from __future__ import annotations

from pathlib import Path

import pytest

from codevouch import Index
from codevouch.embedding import FakeEmbedder
from codevouch.errors import ConfigError
from codevouch.worktree.config import LOADS
from codevouch.worktree.files import CallSettings
from tests.gitrepo import Repo

FILES = {"shop/cancel.py": "def cancel_order(order):\n    \"\"\"Cancel an order.\"\"\"\n    return order.cancel()\n",
         ".codevouch.toml": "vendored = ['third/']\n\n[usage]\nrecord = true\n"}


@pytest.mark.parametrize("call", ["search", "context"])
def test_a_search_or_a_context_pack_loads_the_config_and_the_rules_once(repo: Repo, index_dir: Path,
                                                                         call: str) -> None:
    repo.commit_files(FILES)
    Index(repo.root, index_dir, embedder=FakeEmbedder()).build()
    # An edit, so the overlay reads the rules too; a fresh Index, so the model choice reads the config.
    repo.write("shop/cancel.py", FILES["shop/cancel.py"].replace("cancel()", "cancel(now=True)"))
    index = Index(repo.root, index_dir)
    LOADS.clear()
    getattr(index, call)("cancel an order")
    assert dict(LOADS) == {"config": 1, "rules": 1}


def test_each_is_loaded_when_first_asked_and_a_failure_is_not_kept(tmp_path: Path) -> None:
    (tmp_path / ".codevouch.toml").write_text("[usage\n")
    call = CallSettings()
    LOADS.clear()
    for _ in range(2):
        with pytest.raises(ConfigError, match="not valid TOML"):
            call.config(tmp_path)
    assert LOADS["config"] == 2 and LOADS["rules"] == 0
    (tmp_path / ".codevouch.toml").write_text("[usage]\nrecord = false\n")
    assert call.config(tmp_path) is call.config(tmp_path)
    assert call.rules(tmp_path) is call.rules(tmp_path)
    assert dict(LOADS) == {"config": 3, "rules": 1}
