"""check-refs: references extracted from an answer (pure) and checked on real git repositories."""
from __future__ import annotations

from pathlib import Path

import pytest

from codevouch.refs.check import check_refs
from codevouch.refs.extract import extract
from tests.gitrepo import Repo

SERVICE = (
    "class OrderService:\n"
    "    def cancel_order(self, order):\n"
    "        return order.cancel()\n"
    "\n"
    "    def refund_order(self, order):\n"
    "        return order.refund()\n"
)
HELPERS = "import json\n\n\ndef to_json(x):\n    return json.dumps(x)\n\n\ndef legacy_total(items):\n    return sum(items)\n"


def shop(repo: Repo) -> None:
    repo.commit_files({"shop/__init__.py": "", "shop/service.py": SERVICE, "shop/helpers.py": HELPERS,
                       "shop/notes.md": "# notes\n"}, "shop")


def by_text(report, fragment: str):
    [found] = [r for r in report.results if fragment in r.ref.text]
    return found


def test_extract_paths_symbols_imports() -> None:
    refs = extract(
        "Edit shop/service.py#L2-L3 and `shop/helpers.py:5`; call `OrderService.cancel_order()` or "
        "`to_json`. Not refs: `search`, `JSON`, e.g. https://example.com/a/b.py and v1.2.3.\n"
        "```python\nfrom shop.helpers import to_json, legacy_total as t\nimport shop.service, os\n```\n"
        'Traceback: File "shop/service.py", line 3\n').refs
    got = {(r.kind, r.path, r.start, r.end, r.symbol, r.module) for r in refs}
    assert got == {
        ("path", "shop/service.py", 2, 3, None, None), ("path", "shop/helpers.py", 5, 5, None, None),
        ("symbol", None, None, None, "OrderService.cancel_order", None), ("symbol", None, None, None, "to_json", None),
        ("import", None, None, None, "to_json", "shop.helpers"), ("import", None, None, None, "legacy_total", "shop.helpers"),
        ("import", None, None, None, None, "shop.service"), ("import", None, None, None, None, "os"),
        ("path", "shop/service.py", 3, 3, None, None),
    }


def test_extract_patch_headers_hunks_and_added_files() -> None:
    ex = extract("diff --git a/shop/service.py b/shop/service.py\n--- a/shop/service.py\n+++ b/shop/service.py\n"
                 "@@ -4,3 +4,4 @@ class OrderService:\n context\n+from .helpers import to_json\n-gone\n"
                 "--- /dev/null\n+++ b/shop/new.py\n@@ -0,0 +1 @@\n+x = 1\n")
    assert ex.added_paths == {"shop/new.py"}
    hunks = [(r.path, r.start, r.end) for r in ex.refs if r.source == "hunk"]
    assert hunks == [("shop/service.py", 4, 6)]
    [imp] = [r for r in ex.refs if r.kind == "import"]
    assert (imp.module, imp.symbol, imp.base) == (".helpers", "to_json", "shop/service.py")


def test_catches_deleted_function_renamed_file_and_lines_past_end(repo: Repo) -> None:
    shop(repo)
    # Committed history: legacy_total deleted, service.py renamed to orders.py.
    repo.write("shop/helpers.py", HELPERS.split("\n\ndef legacy_total")[0])
    repo.git("mv", "shop/service.py", "shop/orders.py")
    repo.commit("delete legacy_total; rename service.py")
    answer = ("Totals come from `legacy_total()` in shop/helpers.py#L8-L9; orders are cancelled by "
              "`OrderService.cancel_order` in shop/service.py#L2-L3. Serialise with `to_json` "
              "(shop/helpers.py:5), or `OrderService.refund_everything`.\n")
    report = check_refs(repo.root, answer)
    deleted = by_text(report, "legacy_total")
    assert (deleted.status, deleted.reason) == ("missing", "symbol-missing")
    assert "shop/helpers.py" in deleted.detail
    past_end = by_text(report, "shop/helpers.py#L8-L9")
    assert (past_end.status, past_end.reason) == ("missing", "lines-past-end")
    assert "has 5 lines" in past_end.detail
    renamed = by_text(report, "shop/service.py#L2-L3")
    assert (renamed.status, renamed.reason) == ("missing", "path-renamed")
    assert renamed.suggestion == "renamed to shop/orders.py; now at shop/orders.py#L2-L3"
    member = by_text(report, "refund_everything")
    assert (member.status, member.reason) == ("missing", "member-missing")
    assert member.suggestion == "did you mean OrderService.refund_order?"
    for fine in ("OrderService.cancel_order", "`to_json`", "shop/helpers.py:5"):
        assert by_text(report, fine).status == "ok", fine
    assert by_text(report, "OrderService.cancel_order").found == "shop/orders.py#L2-L3"
    assert not report.passed()


def test_uncommitted_edits_count(repo: Repo) -> None:
    shop(repo)
    repo.write("shop/service.py", SERVICE.replace("refund_order", "refund"))
    report = check_refs(repo.root, "Use `OrderService.refund_order` (shop/service.py#L5-L6).\n")
    gone = by_text(report, "refund_order")
    assert (gone.status, gone.reason) == ("missing", "symbol-missing")
    assert "uncommitted" in gone.detail and gone.suggestion and "OrderService.refund" in gone.suggestion
    assert by_text(report, "shop/service.py#L5-L6").status == "ok"
    repo.remove("shop/notes.md")
    deleted = check_refs(repo.root, "See shop/notes.md.\n").results[0]
    assert (deleted.reason, deleted.status) == ("path-deleted", "missing")
    assert "uncommitted" in deleted.detail


def test_imports_resolve_against_the_repository(repo: Repo) -> None:
    shop(repo)
    answer = ("```python\nfrom shop.helpers import to_json, from_json\nimport shop.payments\n"
              "import json\nfrom shop import service\n```\n")
    report = check_refs(repo.root, answer)
    reasons = {(r.ref.module, r.ref.symbol): (r.status, r.reason) for r in report.results}
    assert reasons == {
        ("shop.helpers", "to_json"): ("ok", "symbol-defined"),
        ("shop.helpers", "from_json"): ("missing", "name-missing"),
        ("shop.payments", None): ("missing", "module-missing"),
        ("json", None): ("ok", "module-external"),
        ("shop", "service"): ("ok", "module-found"),
    }


def test_library_names_and_invented_names_are_not_missing(repo: Repo) -> None:
    shop(repo)
    report = check_refs(repo.root, "It calls `json.dumps` and `numpy.einsum_path`.\n")
    assert by_text(report, "json.dumps").reason == "symbol-mentioned"
    assert by_text(report, "einsum_path").reason == "symbol-unknown"
    assert report.passed() and not report.passed(strict=True)


def test_paths_outside_the_repository_are_refused_unread(repo: Repo, tmp_path: Path) -> None:
    shop(repo)
    secret = tmp_path / "secret.py"
    secret.write_text("x = 1\n")
    (repo.root / "link").symlink_to(tmp_path)
    report = check_refs(repo.root, f"See ../secret.py, {secret}:1, link/secret.py#L1 and .git/config.json.\n")
    assert [r.status for r in report.results] == ["refused"] * 4
    assert all(r.found is None for r in report.results)


def test_patch_hunks_and_added_files(repo: Repo) -> None:
    shop(repo)
    patch = ("--- a/shop/service.py\n+++ b/shop/service.py\n@@ -5,2 +5,3 @@\n ctx\n+from .helpers import to_json\n"
             "@@ -40,2 +41,2 @@\n-x\n+y\n--- /dev/null\n+++ b/shop/new.py\n@@ -0,0 +1 @@\n+from .new_dep import z\n")
    report = check_refs(repo.root, patch)
    hunks = [(r.ref.start, r.status) for r in report.results if r.ref.source == "hunk"]
    assert hunks == [(5, "ok"), (40, "missing")]
    imports = {(r.ref.module, r.ref.base): r.reason for r in report.results if r.ref.kind == "import"}
    assert imports == {(".helpers", "shop/service.py"): "symbol-defined", (".new_dep", "shop/new.py"): "module-missing"}


@pytest.mark.parametrize("text", ["", "no references at all\n", "```\nunterminated fence `x_y`"])
def test_nothing_to_check(repo: Repo, text: str) -> None:
    shop(repo)
    report = check_refs(repo.root, text)
    assert report.passed(strict=True) and report.to_json()["references"] == []


def test_committed_rename_of_a_function_and_a_deleted_module(repo: Repo) -> None:
    shop(repo)
    repo.commit_files({"shop/compat.py": "text_type = str\n"}, "compat")
    repo.write("shop/helpers.py", HELPERS.replace("legacy_total", "legacy_sum"))
    repo.remove("shop/compat.py")
    repo.commit("rename legacy_total, drop compat")
    report = check_refs(repo.root, "Use `shop.helpers.legacy_total` or `legacy_total()`, and `shop.compat.text_type`.\n")
    qualified = by_text(report, "shop.helpers.legacy_total")
    assert (qualified.status, qualified.reason) == ("missing", "member-missing")
    assert qualified.suggestion == "did you mean legacy_sum?"
    bare = by_text(report, "`legacy_total()`")
    assert (bare.status, bare.reason) == ("missing", "symbol-missing")
    assert "until commit" in bare.detail
    assert bare.suggestion == "renamed to legacy_sum? now at shop/helpers.py#L8-L9"
    compat = by_text(report, "shop.compat.text_type")
    assert (compat.status, compat.reason) == ("missing", "module-missing")
    assert "shop/compat.py" in compat.detail and "deleted in commit" in compat.detail


def test_javascript_relative_imports_in_a_patch(repo: Repo) -> None:
    repo.commit_files({"web/src/api.ts": "export function load() {}\n", "web/src/util/index.js": "module.exports = {}\n",
                       "web/src/app.ts": "import { load } from './api';\n"}, "web")
    patch = ("--- a/web/src/app.ts\n+++ b/web/src/app.ts\n@@ -1 +1,5 @@\n import { load } from './api';\n"
             "+import { load as l2 } from './api.js';\n+const util = require('./util');\n"
             "+import { gone } from '../lib/gone';\n+export * from './fresh';\n"
             "--- /dev/null\n+++ b/web/src/fresh.ts\n@@ -0,0 +1 @@\n+export const x = 1;\n")
    report = check_refs(repo.root, patch)
    imports = {r.ref.module: (r.reason, r.found) for r in report.results if r.ref.kind == "import"}
    assert imports == {"./api.js": ("module-found", "web/src/api.ts"),
                       "./util": ("module-found", "web/src/util/index.js"),
                       "../lib/gone": ("module-missing", None),
                       "./fresh": ("added-by-patch", "web/src/fresh.ts")}


def test_bare_file_names_resolve_or_are_ambiguous(repo: Repo) -> None:
    shop(repo)
    repo.commit_files({"admin/service.py": "x = 1\n"}, "second service.py")
    report = check_refs(repo.root, "See helpers.py:5, helpers.py:50, service.py and __init__.py.\n")
    got = {r.ref.text: (r.status, r.reason, r.found) for r in report.results}
    assert got == {"helpers.py:5": ("ok", "path-resolved", "shop/helpers.py#L5-L5"),
                   "helpers.py:50": ("missing", "lines-past-end", "shop/helpers.py"),
                   "service.py": ("ok", "path-ambiguous", "admin/service.py"),
                   "__init__.py": ("ok", "path-resolved", "shop/__init__.py")}


def test_where_the_answer_says_a_symbol_is_is_checked_too(repo: Repo) -> None:
    shop(repo)
    repo.commit_files({"shop/orders.py": "def ship_order(order):\n    return order.ship()\n"}, "orders")
    answer = ("`ship_order` in shop/service.py handles shipping; `OrderService.refund_order` "
              "(shop/service.py#L1-L2) refunds; `to_json` is defined in shop/helpers.py#L4-L5, "
              "`OrderService.cancel_order` at shop/service.py:2.\n")
    report = check_refs(repo.root, answer)
    got = {r.ref.symbol: (r.status, r.reason, r.suggestion) for r in report.results if r.ref.kind == "symbol"}
    assert got == {
        "ship_order": ("missing", "symbol-moved", "now at shop/orders.py#L1-L2"),
        "OrderService.refund_order": ("missing", "symbol-moved", "now at shop/service.py#L5-L6"),
        "to_json": ("ok", "symbol-defined", None),
        "OrderService.cancel_order": ("ok", "symbol-defined", None),
    }


TRANSPORT = ("import json\n\n\nclass HTTPTransport:\n    def handle_request(self, request):\n"
             "        return json.dumps(request)\n\n\nclass Client:\n    def send(self, request):\n"
             "        conn = HTTPTransport()\n        return conn.handle_request(request)\n")
CLIENT_TS = ("export class Client {\n  send(req: string): string {\n    return req;\n  }\n}\n\n"
             "export function makeClient(): Client {\n  return new Client();\n}\n")
SERVER_GO = ("package srv\n\ntype Server struct{}\n\nfunc (s *Server) Start() error {\n\treturn nil\n}\n\n"
             "func NewServer() *Server {\n\treturn &Server{}\n}\n")


def test_an_invented_qualifier_over_a_real_member_is_missing(repo: Repo) -> None:
    """Issue 21.1: `FooBarBaz.send` passed as symbol-mentioned because `send` occurs somewhere.
    The qualifier must resolve too; the suggestion says where the member is really defined."""
    repo.commit_files({"client/transport.py": TRANSPORT, "web/client.ts": CLIENT_TS, "srv/server.go": SERVER_GO},
                      "three languages")
    answer = ("Retries: `RetryTransport.handle_request` (Python), `FooBarBaz.send` (TypeScript or Python), "
              "`Daemon.Start` (Go). Real: `HTTPTransport.handle_request`, `Client.send`, `Server.Start`, "
              "`srv.NewServer`, `conn.handle_request`, `json.dumps`; `Client.handle_request` is not.\n")
    report = check_refs(repo.root, answer)
    got = {r.ref.symbol: (r.status, r.reason, r.suggestion) for r in report.results}
    assert got["RetryTransport.handle_request"] == (
        "missing", "qualifier-missing", "did you mean HTTPTransport.handle_request (client/transport.py#L5-L6)?")
    assert got["FooBarBaz.send"] == (
        "missing", "qualifier-missing",
        "did you mean Client.send (client/transport.py#L10-L12) or Client.send (web/client.ts#L2-L4)?")
    assert got["Daemon.Start"] == ("missing", "qualifier-missing", "did you mean Server.Start (srv/server.go#L5-L7)?")
    assert "FooBarBaz is defined and mentioned nowhere" in by_text(report, "FooBarBaz").detail
    member = got["Client.handle_request"]
    assert member[:2] == ("missing", "member-missing")
    assert member[2] == "did you mean HTTPTransport.handle_request (client/transport.py#L5-L6)?"
    for real in ("HTTPTransport.handle_request", "Client.send", "Server.Start", "srv.NewServer"):
        assert got[real][:2] == ("ok", "symbol-defined"), real
    # A variable beside the member, and a library's names beside each other, stay fine.
    assert got["conn.handle_request"][:2] == ("ok", "symbol-mentioned")
    assert got["json.dumps"][:2] == ("ok", "symbol-mentioned")
    assert not report.passed()


def test_invented_qualifier_in_the_cli_fails_strict(repo: Repo) -> None:
    from tests.clihelp import cv
    repo.commit_files({"client/transport.py": TRANSPORT}, "transport")
    proc = cv("check-refs", "-", "--strict", cwd=repo.root,
              stdin="See `FooBarBaz.send` and `RetryTransport.handle_request`\n")
    assert proc.returncode == 3, proc.stdout + proc.stderr
    assert proc.stdout.count("missing (qualifier-missing)") == 2
    assert "did you mean Client.send (client/transport.py#L10-L12)?" in proc.stdout


def test_a_binary_file_over_the_cap_needs_no_skipped_line(tmp_path: Path) -> None:
    """check-refs named every image over max_file_bytes as 'skipped: too large' on every call;
    a binary file holds no name a reference cites. A text file over the cap is still named."""
    from tests.clihelp import cv

    repo = Repo(tmp_path / "repo")
    repo.commit_files({".codevouch.toml": "max_file_bytes = 1000\n", "a.py": "def cancel_order():\n    return 1\n",
                       "big.py": "# " + "x" * 2000 + "\n"})
    (repo.root / "docs").mkdir()
    (repo.root / "docs" / "logo.png").write_bytes(b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR" + bytes(3000))
    repo.git("add", "-A")
    repo.git("commit", "-q", "-m", "logo")
    out = cv("check-refs", "-", "--repo", str(repo.root), stdin="Call `cancel_order()` and `refund_order()`.\n",
             index=tmp_path / "index")
    assert "skipped big.py: too large" in out.stdout, out.stdout + out.stderr
    assert "logo.png" not in out.stdout + out.stderr


def test_a_relative_path_is_read_from_the_directory_the_command_runs_in(repo: Repo) -> None:
    """Run from shop/, `../routing.py` was refused as outside the repository: a shell reads it
    from the current directory, and so does check-refs now. Repository-relative paths still work."""
    from tests.clihelp import cv

    shop(repo)
    repo.commit_files({"routing.py": "def route(path):\n    return path\n"}, "routing")
    answer = ("See `../routing.py#L1-L2`, `./service.py:2`, `helpers.py`, `shop/notes.md`, "
              "`../nowhere.py` and `../../outside.py`.\n")
    proc = cv("check-refs", "-", "--all", "--json", cwd=repo.root / "shop", stdin=answer)
    import json
    got = {r["text"]: (r["status"], r["reason"]) for r in json.loads(proc.stdout)["references"]}
    assert got["../routing.py#L1-L2"][0] == "ok", got
    assert got["./service.py:2"][0] == "ok" and got["helpers.py"][0] == "ok"
    assert got["shop/notes.md"][0] == "ok"
    assert got["../nowhere.py"][0] == "missing"
    assert got["../../outside.py"] == ("refused", "outside-repo")
    # From the root, `../routing.py` still leaves the repository.
    top = check_refs(repo.root, "`../routing.py`", cwd=repo.root)
    assert [(r.status, r.reason) for r in top.results] == [("refused", "outside-repo")]
