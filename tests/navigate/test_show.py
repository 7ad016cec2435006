"""`codevouch show`: a definition's code as the working tree has it now, in Python and Go."""
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
    base = tmp_path_factory.mktemp("show")
    return edited(base / "repo", base / "index"), base / "index"


def _show(scene: tuple[Repo, Path], *args: str) -> tuple[int, dict[str, Any]]:
    repo, index_dir = scene
    out = cv("show", *args, "--json", cwd=repo.root, index=index_dir)
    assert out.returncode in (0, 3), out.stderr
    return out.returncode, json.loads(out.stdout)


def test_a_function_written_since_the_build_is_found_live(scene: tuple[Repo, Path]) -> None:
    code, answer = _show(scene, "brand_new")
    assert code == 0
    [hit] = answer["hits"]
    assert (hit["path"], hit["symbol"], hit["start_line"], hit["end_line"]) == ("shop/new.py", "brand_new", 4, 5)
    assert hit["code"] == "def brand_new(o):\n    return OrderService().cancel_order(o)"
    assert hit["origin"] == "uncommitted" and hit["verdict"] == "usable"
    assert "text" not in hit and json.dumps(hit).count("def brand_new") == 1   # its code once


def test_a_deleted_method_is_gone_with_where_it_was(scene: tuple[Repo, Path]) -> None:
    code, answer = _show(scene, "refund")
    assert code == 3 and answer["hits"] == []
    [was] = answer["gone"]
    assert (was["symbol"], was["path"], was["start_line"], was["end_line"]) == ("OrderService.refund", "shop/orders.py", 6, 7)
    assert was["reference_text"].startswith("    def refund(self, order):") and len(was["commit"]) == 40
    assert answer["note"].startswith("gone: refund was defined at the indexed commit")


def test_a_gone_definition_s_text_is_cut_as_a_hit_s_code_is(scene: tuple[Repo, Path]) -> None:
    code, answer = _show(scene, "refund", "--max-chars", "30")
    [was] = answer["gone"]
    assert was["reference_text"] == "    def refund(self, order):"       # cut at a line's end
    [cut] = was["cut"]
    assert (cut["field"], cut["shown_end_line"], cut["rest"]) == ("reference_text", 6, "shop/orders.py#L7-L7")
    repo, index_dir = scene
    out = cv("show", "refund", "--max-chars", "30", cwd=repo.root, index=index_dir)
    assert out.returncode == 3 and "def refund(self, order):" in out.stdout
    assert "lines 6-6 of 6-7 shown; the rest is shop/orders.py#L7-L7" in out.stdout


def test_a_changed_and_moved_body_is_shown_as_it_is_now(scene: tuple[Repo, Path]) -> None:
    code, answer = _show(scene, "total")
    assert code == 0
    [hit] = answer["hits"]
    assert (hit["path"], hit["start_line"], hit["end_line"]) == ("shop/pricing.py", 4, 6)
    assert hit["code"] == "def total(items):\n    # rounded up now\n    return math.ceil(sum(items))"


def test_a_renamed_file_s_definition_is_found_at_its_new_place(scene: tuple[Repo, Path]) -> None:
    code, answer = _show(scene, "helper")
    assert code == 0
    assert [(h["path"], h["start_line"]) for h in answer["hits"]] == [("shop/helpers.py", 1)]


def test_go_methods_new_changed_and_deleted(scene: tuple[Repo, Path]) -> None:
    code, answer = _show(scene, "Server.Start")
    assert code == 0 and [h["code"] for h in answer["hits"]] == [
        'func (s *Server) Start() error {\n\tprintln("starting")\n\treturn nil\n}']
    code, answer = _show(scene, "Fresh")
    assert code == 0 and answer["hits"][0]["path"] == "srv/extra.go"
    code, answer = _show(scene, "Server.Stop")
    assert code == 3 and [(w["path"], w["symbol"]) for w in answer["gone"]] == [("srv/server.go", "Server.Stop")]


def test_path_name_and_line_range_forms(scene: tuple[Repo, Path]) -> None:
    _, by_path = _show(scene, "shop/orders.py#cancel_order")
    _, by_lines = _show(scene, "shop/orders.py:3-3")
    assert [h["symbol"] for h in by_path["hits"]] == [h["symbol"] for h in by_lines["hits"]] == ["OrderService.cancel_order"]
    code, elsewhere = _show(scene, "shop/api.py#total")
    assert code == 3 and elsewhere["hits"] == []


def test_text_output_and_refusals(scene: tuple[Repo, Path]) -> None:
    repo, index_dir = scene
    out = cv("show", "refund", cwd=repo.root, index=index_dir)
    assert out.returncode == 3 and "reference only, do not implement against it" in out.stdout
    assert "def refund(self, order)" in out.stdout
    for asked in ("../outside.py#x", "secret/hidden.py#cancel_order", "shop/orders.py:9-99"):
        refused = cv("show", asked, cwd=repo.root, index=index_dir)
        assert refused.returncode == 2, (asked, refused.stdout, refused.stderr)
    assert "ignored by git" in cv("show", "secret/hidden.py#cancel_order", cwd=repo.root, index=index_dir).stderr
    # The ignored file defines cancel_order too: never read, never shown.
    _, answer = _show(scene, "cancel_order")
    assert [h["path"] for h in answer["hits"]] == ["shop/orders.py"]


def test_a_path_with_glob_characters_is_one_file(scene: tuple[Repo, Path]) -> None:
    repo, _ = scene
    repo.write("shop/we[ir]d*.py", "def weird_one():\n    return 1\n")
    repo.write("shop/weid.py", "def weird_one():\n    return 2\n")     # what `we[ir]d*.py` matches as a glob
    try:
        code, answer = _show(scene, "shop/we[ir]d*.py#weird_one")
        assert code == 0 and [h["path"] for h in answer["hits"]] == ["shop/we[ir]d*.py"]
    finally:
        repo.remove("shop/we[ir]d*.py")
        repo.remove("shop/weid.py")
