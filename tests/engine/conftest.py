from __future__ import annotations

import pytest

from tests.enginehelp import (
    FAKE,
    Engines,
    engine,  # noqa: F401  (the fixture, for every test here)
)
from tests.gitrepo import Repo

ORDERS = "def cancel_order(order):\n    order.cancel()\n    return order\n"


@pytest.fixture
def indexed(engine: Engines, repo: Repo) -> Repo:  # noqa: F811
    """A small repository, built into the engine fixture's index (in-process), with an edit since."""
    repo.commit_files({"src/orders.py": ORDERS, "src/refund.py": "def refund_order(order):\n    return order.refund()\n"})
    done = engine.cv("index", "build", *FAKE, cwd=repo.root)
    assert done.returncode == 0, done.stderr
    repo.write("src/orders.py", ORDERS + "\n\ndef cancel_all(orders):\n    return [cancel_order(o) for o in orders]\n")
    # One search embeds the edit's chunks into the overlay's cache: every later call, here or in
    # the engine, finds them there and says the same ("0 embedded").
    assert engine.cv("search", "cancel order", cwd=repo.root, server="off").returncode == 0
    return repo


def same(a: object, b: object) -> bool:
    """Two CompletedProcess answers are one: exit code, stdout and stderr."""
    return (a.returncode, a.stdout, a.stderr) == (b.returncode, b.stdout, b.stderr)  # type: ignore[attr-defined]


def snippet_lines(repo: Repo) -> str:
    import json

    head = repo.git("rev-parse", "HEAD").strip()
    return json.dumps({"path": "src/orders.py", "commit": head, "start_line": 1, "end_line": 3, "text": ORDERS}) + "\n" \
        + json.dumps({"path": "src/gone.py", "commit": head, "start_line": 1, "end_line": 2}) + "\n"

