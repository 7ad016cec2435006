"""check-refs reads the imports of Ruby, PHP, Scala, shell and Lua by each language's own pattern
(spec.Imports): a file a line requires or sources is found, missing or a library's; a PHP `use`
or a Scala `import` is checked against the namespaces the repository declares (refs/namespaces.py).
Real git repositories, real grammars."""
from __future__ import annotations

import pytest

from codevouch.refs.check import check_refs
from codevouch.refs.extract import extract
from tests.gitrepo import Repo

FILES = {
    "lib/billing/invoice.rb": "module Billing\n  class Invoice\n    def settle_invoice; end\n  end\nend\n",
    "lib/billing/money.rb": "module Billing\n  class Money; end\nend\n",
    "lua/billing/ledger.lua": "local Ledger = {}\nfunction Ledger.settle_ledger() end\nreturn Ledger\n",
    "lib/common.sh": "log_line() {\n  echo \"$1\"\n}\n",
    "src/Billing/Receipt.php": "<?php\nnamespace App\\Billing;\n\nclass Receipt\n{\n    public function settleReceipt() {}\n}\n",
    "src/main/scala/billing/Voucher.scala": "package com.acme.billing\n\nclass Voucher {\n  def settleVoucher(): Int = 1\n}\n",
}


def test_each_language_s_import_lines_are_read() -> None:
    answer = ("```ruby\nrequire \"json\"\nrequire_relative \"money\"\n```\n"
              "```php\nuse App\\Billing\\{Receipt, Refund as R};\nuse function App\\Util\\helper;\n```\n"
              "```scala\nimport com.acme.billing.{Voucher, Coupon => C}\nimport scala.util._\n```\n"
              "```bash\nsource ./lib/common.sh\nsource \"$HOME/.profile\"\n```\n"
              "```lua\nlocal ledger = require(\"billing.ledger\")\n```\n")
    got = [(r.kind, r.module or r.symbol, r.language) for r in extract(answer).refs if r.language]
    assert got == [("import", "json", "ruby"), ("import", "./money", "ruby"),
                   ("import", "App.Billing.Receipt", "php"), ("import", "App.Billing.Refund", "php"),
                   ("import", "App.Util.helper", "php"),
                   ("import", "com.acme.billing.Voucher", "scala"), ("import", "com.acme.billing.Coupon", "scala"),
                   ("import", "scala.util.*", "scala"),
                   ("import", "./lib/common.sh", "bash"), ("import", "billing.ledger", "lua")]


@pytest.mark.parametrize(("line", "fence", "status", "reason"), [
    ('require "json"', "ruby", "ok", "module-external"),
    ('require "billing/invoice"', "ruby", "ok", "module-found"),
    ('require "billing/refunds"', "ruby", "missing", "module-missing"),
    ('require_relative "money"', "ruby", "ok", "module-found"),
    ('local l = require("billing.ledger")', "lua", "ok", "module-found"),
    ('local g = require "billing.ghost"', "lua", "missing", "module-missing"),
    ('local j = require "cjson"', "lua", "ok", "module-external"),
    ("source ./lib/common.sh", "bash", "ok", "module-found"),
    (". ./lib/ghost.sh", "bash", "missing", "module-missing"),
    ("use App\\Billing\\Receipt;", "php", "ok", "symbol-defined"),
    # PHP's namespace App\\Billing (src/Billing/Receipt.php) defines no Ghost.
    ("use App\\Billing\\Ghost;", "php", "missing", "name-missing"),
    # A file beside the importing one is a file, not a namespace.
    ("require_once __DIR__ . '/Ghost.php';", "php", "missing", "module-missing"),
    # Scala's imports are checked against the packages the repository declares (refs/namespaces.py).
    ("import com.acme.billing.Voucher", "scala", "ok", "symbol-defined"),
    ("import com.acme.billing.Ghost", "scala", "missing", "name-missing"),
])
def test_an_import_is_found_missing_or_a_library_s(repo: Repo, line: str, fence: str, status: str,
                                                     reason: str) -> None:
    repo.commit_files(FILES)
    report = check_refs(repo.root, f"```{fence}\n{line}\n```\n")
    [result] = [r for r in report.results if r.ref.language]
    assert (result.status, result.reason) == (status, reason), result


def test_a_patch_s_relative_require_is_read_from_the_file_it_changes(repo: Repo) -> None:
    repo.commit_files(FILES)
    patch = ("--- a/lib/billing/invoice.rb\n+++ b/lib/billing/invoice.rb\n@@ -1,1 +1,3 @@\n"
             "+require_relative \"money\"\n+require_relative \"../ghost\"\n module Billing\n")
    results = {r.ref.module: r for r in check_refs(repo.root, patch).results if r.ref.kind == "import"}
    assert (results["./money"].reason, results["./money"].found) == ("module-found", "lib/billing/money.rb")
    assert results["../ghost"].reason == "module-missing", results["../ghost"]
