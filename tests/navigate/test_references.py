"""`codevouch references`: uses of a name in the working tree now, checked by their syntax."""
from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.clihelp import cv
from tests.gitrepo import Repo
from tests.navigate.scenario import edited


@pytest.fixture(scope="module")
def scene(tmp_path_factory: pytest.TempPathFactory) -> tuple[Repo, Path]:
    base = tmp_path_factory.mktemp("refs")
    return edited(base / "repo", base / "index"), base / "index"


def _refs(scene: tuple[Repo, Path], *args: str) -> dict[str, Any]:
    repo, index_dir = scene
    out = cv("references", *args, "--json", cwd=repo.root, index=index_dir)
    assert out.returncode == 0, out.stderr
    answer: dict[str, Any] = json.loads(out.stdout)
    return answer


def _where(answer: dict[str, Any]) -> list[tuple[str, int, str, str]]:
    return [(r["path"], r["line"], r["kind"], r["resolution"]) for r in answer["references"]]


def test_the_new_caller_is_listed_and_the_deleted_file_is_not(scene: tuple[Repo, Path]) -> None:
    answer = _refs(scene, "OrderService.cancel_order")
    # Calls on an object: matched by the name (no type inference). Not the comment in api.py, not
    # the definition, not the deleted old/legacy.py, not the ignored secret/ file.
    assert _where(answer) == [("shop/api.py", 6, "call", "by-name"), ("shop/new.py", 5, "call", "by-name")]
    assert [r["enclosing"] for r in answer["references"]] == ["handle", "brand_new"]
    assert answer["references"][1]["context"] == "return OrderService().cancel_order(o)" and answer["note"] is None


def test_imports_and_bare_uses_are_exact(scene: tuple[Repo, Path]) -> None:
    assert _where(_refs(scene, "OrderService")) == [
        ("shop/api.py", 1, "import", "exact"), ("shop/api.py", 6, "call", "exact"),
        ("shop/new.py", 1, "import", "exact"), ("shop/new.py", 5, "call", "exact")]


def test_go_calls_and_types(scene: tuple[Repo, Path]) -> None:
    # A Go package is its directory: a bare call beside the definition is exact.
    assert _where(_refs(scene, "NewServer")) == [("srv/extra.go", 4, "call", "exact"), ("srv/main.go", 4, "call", "exact")]
    server = _where(_refs(scene, "Server"))
    assert ("srv/extra.go", 3, "type", "exact") in server and not any(path == "srv/main.go" for path, *_ in server)


def test_the_limit_bounds_the_answer_with_a_note(scene: tuple[Repo, Path]) -> None:
    answer = _refs(scene, "OrderService", "--limit", "1")
    assert len(answer["references"]) == 1 and "3 more references not listed" in answer["note"]
    repo, index_dir = scene
    text = cv("references", "OrderService", "-k", "1", cwd=repo.root, index=index_dir)
    assert text.stdout == "shop/api.py:1: import (exact): from shop.orders import OrderService\n"
    assert "note: 3 more references" in text.stderr


def test_a_name_that_is_not_one_is_refused(scene: tuple[Repo, Path]) -> None:
    repo, index_dir = scene
    out = cv("references", "a b;c", cwd=repo.root, index=index_dir)
    assert out.returncode == 2 and "is not a name" in out.stderr
