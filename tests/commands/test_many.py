"""`search` and `context` over several repositories: --repo repeated, --repos FILE, --all-repos
(codevouch/commands/many.py), in-process through `cv`."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from codevouch.commands.exits import EXIT_NOT_INDEXED, EXIT_REPOS_FAILED, EXIT_USAGE
from tests.clihelp import FAKE, cv
from tests.gitrepo import Repo

CONFIG = {"conf/load.py": "def parse_config(path):\n    with open(path) as f:\n        return f.read()\n"}
LIBRARY = {
    "lib/fees.py": "def overdue_fee(loan, days):\n    # the overdue fee for days past due\n    return days * loan.rate\n",
    "lib/members.py": "def add_member(name):\n    return {'name': name}\n",
}


@pytest.fixture
def three(tmp_path: Path) -> tuple[list[Repo], Path]:
    index_dir = tmp_path / "index"
    repos = []
    for name, files in (("config", CONFIG), ("library", LIBRARY),
                        ("shop", {"shop/cart.py": "def add_to_cart(cart, item):\n    cart.append(item)\n"})):
        repo = Repo.create(tmp_path / name)
        repo.commit_files(files)
        assert cv("index", "build", *FAKE, cwd=repo.root, index=index_dir).returncode == 0
        repos.append(repo)
    return repos, index_dir


def test_all_repos_answers_one_ranking_each_hit_naming_its_repository(three: tuple[list[Repo], Path],
                                                                      tmp_path: Path) -> None:
    (config, library, shop), index_dir = three
    out = cv("search", "overdue fee days past due", "--all-repos", "--json", "-k", "3", cwd=tmp_path, index=index_dir)
    assert out.returncode == 0, out.stderr
    hits = json.loads(out.stdout)
    assert hits[0]["path"] == "lib/fees.py" and hits[0]["verdict"] == "usable"
    assert hits[0]["repository"] == {"path": str(library.root), "remote": None}
    assert {h["repository"]["path"] for h in hits} <= {str(r.root) for r in (config, library, shop)}
    across = json.loads(out.stderr.strip().splitlines()[-1])["across"]
    assert across["fusion"] == "similarity" and across["skipped"] == []
    assert {r["path"] for r in across["repositories"]} == {str(r.root) for r in (config, library, shop)}
    # An uncommitted edit in one repository is found live there, and turns a saved hit from it historical-only.
    saved = tmp_path / "hit.json"
    [cart] = [h for h in json.loads(cv("search", "add to cart item", "--all-repos", "--json", cwd=tmp_path,
                                       index=index_dir).stdout) if h["path"] == "shop/cart.py"]
    saved.write_text(json.dumps([cart]))
    shop.write("shop/cart.py", "def add_to_cart(cart, item, count):\n    cart.extend([item] * count)\n")
    live = json.loads(cv("search", "add to cart item count", "--repo", str(shop.root), "--repo", str(library.root),
                         "--json", cwd=tmp_path, index=index_dir).stdout)
    assert live[0]["repository"]["path"] == str(shop.root) and live[0]["origin"] == "uncommitted"
    checked = cv("validate", str(saved), "--json", cwd=shop.root, index=index_dir)
    assert json.loads(checked.stdout)[0]["verdict"] == "historical-only"


def test_text_and_brief_name_the_repository(three: tuple[list[Repo], Path], tmp_path: Path) -> None:
    (config, library, _), index_dir = three
    text = cv("search", "overdue fee", "--repo", str(config.root), "--repo", str(library.root), "--all", cwd=tmp_path,
              index=index_dir)
    assert text.returncode == 0, text.stderr
    assert f"repository: {library.root}\nsource: lib/fees.py#L1-L3" in text.stdout
    brief = cv("search", "overdue fee", "--repo", str(config.root), "--repo", str(library.root), "--format", "brief",
               "--all", cwd=tmp_path, index=index_dir)
    assert brief.stdout.splitlines()[0].startswith(f"{library.root}  usable  lib/fees.py:1-3")


def test_repos_file_is_the_nightlys_list(three: tuple[list[Repo], Path], tmp_path: Path) -> None:
    (config, library, _), index_dir = three
    listed = tmp_path / "repos.toml"
    listed.write_text(f'[[repo]]\npath = "{config.root}"\n\n[[repo]]\npath = "library"\n')
    out = cv("search", "overdue fee", "--repos", str(listed), "--json", cwd=tmp_path, index=index_dir)
    assert out.returncode == 0, out.stderr
    assert {h["repository"]["path"] for h in json.loads(out.stdout)} <= {str(config.root), str(library.root)}
    assert json.loads(out.stdout)[0]["repository"]["path"] == str(library.root)


def test_a_repository_not_indexed_is_named_and_the_others_answer(three: tuple[list[Repo], Path],
                                                                 tmp_path: Path) -> None:
    (_, library, _), index_dir = three
    unbuilt = Repo.create(tmp_path / "unbuilt")
    unbuilt.commit_files({"a.py": "def a():\n    return 1\n"})
    out = cv("search", "overdue fee", "--repo", str(unbuilt.root), "--repo", str(library.root), "--all",
             cwd=tmp_path, index=index_dir)
    assert out.returncode == EXIT_REPOS_FAILED
    assert f"skipped {unbuilt.root}" in out.stderr and "lib/fees.py" in out.stdout
    alone = cv("search", "overdue fee", "--repo", str(unbuilt.root), "--repo", str(tmp_path / "gone"),
               cwd=tmp_path, index=index_dir)
    assert alone.returncode != 0 and "not on this machine" in alone.stderr
    none = cv("search", "x", "--all-repos", cwd=tmp_path, index=tmp_path / "empty")
    assert none.returncode == EXIT_NOT_INDEXED and "holds no repository" in none.stderr


def test_one_repo_flag_at_a_time(three: tuple[list[Repo], Path], tmp_path: Path) -> None:
    (config, _, _), index_dir = three
    out = cv("search", "x", "--repo", str(config.root), "--all-repos", cwd=tmp_path, index=index_dir)
    assert out.returncode == EXIT_USAGE and "pass one of them" in out.stderr
    for extra in (["--format", "context"], ["--no-validate"]):
        refused = cv("search", "x", "--all-repos", *extra, cwd=tmp_path, index=index_dir)
        assert refused.returncode == EXIT_USAGE and "one repository" in refused.stderr and not refused.stdout


def test_context_packs_several_repositories_each_piece_naming_its_own(three: tuple[list[Repo], Path],
                                                                       tmp_path: Path) -> None:
    (config, library, shop), index_dir = three
    # The same path in two repositories: two pieces, not two slices of one file.
    for repo in (config, shop):
        repo.commit_files({"util.py": f"def helper_{repo.root.name}(fee):\n    return fee\n"})
        assert cv("index", "build", *FAKE, cwd=repo.root, index=index_dir).returncode == 0
    out = cv("context", "overdue fee helper", "--all-repos", "--json", "-k", "5", cwd=tmp_path, index=index_dir)
    assert out.returncode == 0, out.stderr
    pack = json.loads(out.stdout)
    md = pack["markdown"]
    assert f"repository: {library.root}\nsource: lib/fees.py#L1-L3" in md
    # The report names each piece led by its repository's name: config/util.py and shop/util.py both.
    included = {e["citation"].split("#")[0] for e in pack["included"]["items"]}
    assert {"library/lib/fees.py", "config/util.py", "shop/util.py"} <= included, included
    one = cv("context", "overdue fee", "--repo", str(library.root), "--json", cwd=tmp_path, index=index_dir)
    assert "repository:" not in json.loads(one.stdout)["markdown"]   # one repository: as it was


def test_show_references_and_outline_across_repositories(three: tuple[list[Repo], Path], tmp_path: Path) -> None:
    (config, library, shop), index_dir = three
    shown = cv("show", "overdue_fee", "--all-repos", "--json", cwd=tmp_path, index=index_dir)
    assert shown.returncode == 0, shown.stderr
    answer = json.loads(shown.stdout)
    [hit] = answer["hits"]
    assert hit["path"] == "lib/fees.py" and hit["repository"]["path"] == str(library.root)
    assert {r["path"] for r in answer["repositories"]} == {str(r.root) for r in (config, library, shop)}
    text = cv("show", "overdue_fee", "--repo", str(config.root), "--repo", str(library.root), cwd=tmp_path,
              index=index_dir)
    assert f"repository: {library.root}\nsource: lib/fees.py#L1-L3" in text.stdout
    assert cv("show", "no_such_name", "--all-repos", cwd=tmp_path, index=index_dir).returncode == 3
    # Uses in two working trees, uncommitted: each named by its repository.
    shop.write("shop/late.py", "from lib.fees import overdue_fee\n\ndef late(loan):\n    return overdue_fee(loan, 3)\n")
    library.write("lib/report.py", "from lib.fees import overdue_fee\n\nprint(overdue_fee(None, 1))\n")
    uses = json.loads(cv("references", "overdue_fee", "--all-repos", "--json", cwd=tmp_path, index=index_dir).stdout)
    assert {(u["repository"]["path"], u["path"]) for u in uses["references"]} == {
        (str(shop.root), "shop/late.py"), (str(library.root), "lib/report.py")}
    lines = cv("references", "overdue_fee", "--repo", str(shop.root), "--repo", str(library.root), cwd=tmp_path,
               index=index_dir).stdout
    assert f"{shop.root}/shop/late.py:4: call" in lines
    # outline: PATH from each repository's top; a repository without it says so, the others answer.
    got = cv("outline", "lib/fees.py", "--repo", str(config.root), "--repo", str(library.root), "--json",
             cwd=tmp_path, index=index_dir)
    assert got.returncode == 0, got.stderr
    listed = json.loads(got.stdout)
    assert [(e["repository"]["path"], e["name"]) for e in listed["entries"]] == [(str(library.root), "overdue_fee")]
    assert [r["repository"]["path"] for r in listed["refused"]] == [str(config.root)]
    plain = cv("outline", "lib/fees.py", "--repo", str(config.root), "--repo", str(library.root), cwd=tmp_path,
               index=index_dir)
    assert plain.stdout.splitlines()[0] == f"{library.root}/lib/fees.py" and str(config.root) in plain.stderr
    nowhere = cv("outline", "no/such.py", "--all-repos", cwd=tmp_path, index=index_dir)
    assert nowhere.returncode == EXIT_USAGE and "no/such.py" in nowhere.stderr


def test_navigation_skips_a_repository_that_cannot_answer(three: tuple[list[Repo], Path], tmp_path: Path) -> None:
    (_, library, _), index_dir = three
    out = cv("show", "overdue_fee", "--repo", str(library.root), "--repo", str(tmp_path / "gone"), "--json",
             cwd=tmp_path, index=index_dir)
    assert out.returncode == EXIT_REPOS_FAILED
    answer = json.loads(out.stdout)
    assert answer["hits"][0]["repository"]["path"] == str(library.root)
    assert answer["skipped"][0]["path"] == str(tmp_path / "gone")
