"""check-refs reads Java, Kotlin and Scala `import`, C# `using`, Swift `import` and PHP `use` against
the namespaces the repository's own files declare: a real one is found, an invented one under the
repository's namespace is missing, a library's (java., kotlin., System., Foundation) is external.
Real git repositories, real grammars."""
from __future__ import annotations

import pytest

from codevouch.refs.check import check_refs
from codevouch.refs.extract import extract
from tests.gitrepo import Repo

FILES = {
    "src/main/java/com/acme/billing/InvoiceBook.java": (
        "package com.acme.billing;\n\npublic class InvoiceBook {\n"
        "    public static final int LIMIT = 3;\n    public static int settle(int n) { return n; }\n"
        "    public static class Line {}\n}\n"),
    "src/main/kotlin/com/acme/orders/Orders.kt": (
        "package com.acme.orders\n\nclass OrderBook {\n    fun cancel() {}\n}\n\nfun placeOrder() = 1\n"),
    "src/main/scala/com/acme/vouchers/Voucher.scala": (
        "package com.acme\npackage vouchers\n\nclass Voucher {\n  def redeem(): Int = 1\n}\n"),
    "Billing/Invoices/InvoiceBook.cs": (
        "namespace Billing.Invoices;\n\npublic class InvoiceBook\n{\n    public void Settle() {}\n}\n"),
    # A polyfill adds to the platform's namespace: System is still not the repository's.
    "Billing/Polyfills/TimeProvider.cs": "namespace System;\n\npublic class TimeProvider\n{\n}\n",
    "Package.swift": 'let package = Package(\n    name: "Tally",\n    targets: [.target(name: "Tally")]\n)\n',
    "Sources/Tally/Counter.swift": "public struct Counter {\n    public func tick() {}\n}\n",
    # PHP: `namespace Acme\\Billing;` declares Acme.Billing; a braced block declares its own.
    "src/Kernel.php": "<?php\nnamespace Acme;\n\nfinal class Kernel\n{\n}\n",
    "src/Billing/Ledger.php": (
        "<?php\n\nnamespace Acme\\Billing;\n\nuse Psr\\Log\\LoggerInterface;\n\nconst ROUNDING = 2;\n\n"
        "class Ledger\n{\n    public function settleLedger(): int { return 1; }\n}\n"),
    "src/Util/helpers.php": "<?php\nnamespace Acme\\Util;\n\nfunction format_money(int $cents): string { return ''; }\n",
    "legacy/books.php": "<?php\nnamespace Acme\\Legacy {\n    class OldBook {}\n}\n",
}


@pytest.fixture
def repo(tmp_path) -> Repo:
    repo = Repo(tmp_path / "repo")
    repo.commit_files(FILES)
    return repo


def test_the_import_lines_of_each_language_are_read_whole() -> None:
    answer = ("```java\nimport static com.acme.billing.InvoiceBook.settle;\nimport java.util.*;\n```\n"
              "```kotlin\nimport com.acme.orders.OrderBook as Book\n```\n"
              "```csharp\nglobal using static Billing.Invoices.InvoiceBook;\nusing (var f = Open()) { }\n```\n"
              "```swift\n@testable import Tally\nimport struct Tally.Counter\n```\n"
              "```scala\nimport scala.util._\n```\n")
    got = [(r.kind, r.module, r.language) for r in extract(answer).refs if r.language]
    assert got == [("import", "com.acme.billing.InvoiceBook.settle", "java"), ("import", "java.util.*", "java"),
                   ("import", "com.acme.orders.OrderBook", "kotlin"),
                   ("import", "Billing.Invoices.InvoiceBook", "csharp"),
                   ("import", "Tally", "swift"), ("import", "Tally.Counter", "swift"),
                   ("import", "scala.util.*", "scala")]


@pytest.mark.parametrize(("fence", "line", "status", "reason"), [
    # Real ones: a type, a static member, a constant, a nested class, a package, a wildcard.
    ("java", "import com.acme.billing.InvoiceBook;", "ok", "symbol-defined"),
    ("java", "import static com.acme.billing.InvoiceBook.settle;", "ok", "symbol-defined"),
    ("java", "import static com.acme.billing.InvoiceBook.LIMIT;", "ok", "symbol-mentioned"),
    ("java", "import com.acme.billing.InvoiceBook.Line;", "ok", "symbol-defined"),
    ("java", "import com.acme.billing.*;", "ok", "module-found"),
    ("kotlin", "import com.acme.orders.OrderBook", "ok", "symbol-defined"),
    ("kotlin", "import com.acme.orders.placeOrder", "ok", "symbol-defined"),
    # Java and Kotlin import each other's classes.
    ("kotlin", "import com.acme.billing.InvoiceBook", "ok", "symbol-defined"),
    ("scala", "import com.acme.vouchers.Voucher", "ok", "symbol-defined"),
    # Scala 3's import of a package's given instances names no member called `given`.
    ("scala", "import com.acme.vouchers.given", "ok", "module-found"),
    ("scala", "import com.acme.vouchers.{Voucher, given}", "ok", "module-found"),
    ("csharp", "using Billing.Invoices;", "ok", "module-found"),
    ("csharp", "using static Billing.Invoices.InvoiceBook;", "ok", "symbol-defined"),
    ("swift", "import Tally", "ok", "module-found"),
    ("swift", "import struct Tally.Counter", "ok", "symbol-defined"),
    # Invented: a type no file of the package defines, a package under the repository's own.
    ("java", "import com.acme.billing.InvoiceLedger;", "missing", "name-missing"),
    ("java", "import com.acme.billing.ghost.Refunds;", "missing", "name-missing"),
    ("kotlin", "import com.acme.orders.OrderArchive", "missing", "name-missing"),
    ("kotlin", "import com.acme.shipping.Parcel", "missing", "module-missing"),
    ("scala", "import com.acme.vouchers.{Voucher, Coupon}", "missing", "name-missing"),
    ("csharp", "using Billing.Invoices.Refunds;", "missing", "name-missing"),
    ("swift", "import struct Tally.Abacus", "missing", "name-missing"),
    # A library's: the standard library, a third party.
    ("java", "import java.util.List;", "ok", "module-external"),
    ("kotlin", "import kotlinx.coroutines.flow.Flow", "ok", "module-external"),
    ("kotlin", "import android.os.Bundle", "ok", "module-external"),
    ("scala", "import scala.util._", "ok", "module-external"),
    ("csharp", "using System.Text;", "ok", "module-external"),
    ("swift", "import Foundation", "ok", "module-external"),
    ("swift", "import UIKit", "ok", "module-external"),
    ("csharp", "using static System.TimeProvider;", "ok", "symbol-defined"),
    # PHP: a class, a group, a function, a namespace's constant, a braced namespace's class;
    # an invented class and namespace; PHP's own classes and a library's (PSR) are external.
    ("php", "use Acme\\Billing\\Ledger;", "ok", "symbol-defined"),
    ("php", "use \\Acme\\Billing\\Ledger as Book;", "ok", "symbol-defined"),
    ("php", "use function Acme\\Util\\format_money;", "ok", "symbol-defined"),
    ("php", "use const Acme\\Billing\\ROUNDING;", "ok", "symbol-mentioned"),
    ("php", "use Acme\\Legacy\\OldBook;", "ok", "symbol-defined"),
    ("php", "use Acme\\Billing;", "ok", "module-found"),
    ("php", "use Acme\\Billing\\{Ledger, Receipt};", "missing", "name-missing"),
    ("php", "use Acme\\Billing\\LedgerArchive;", "missing", "name-missing"),
    ("php", "use function Acme\\Util\\format_moneys;", "missing", "name-missing"),
    # A namespace no file declares under the repository's own: another package of the vendor's
    # (Slim's slim/psr7 is Slim\\Psr7), not the repository's code.
    ("php", "use Acme\\Shipping\\Parcel;", "ok", "module-external"),
    ("php", "use Acme\\Billing\\Ghost\\Refund;", "ok", "module-external"),
    ("php", "use Psr\\Log\\LoggerInterface;", "ok", "module-external"),
    ("php", "use Exception;", "ok", "module-external"),
    # Android's classes made at build time.
    ("java", "import com.acme.billing.R;", "ok", "module-external"),
    ("kotlin", "import com.acme.orders.databinding.OrdersBinding", "ok", "module-external"),
])
def test_an_import_is_found_missing_or_a_library_s(repo: Repo, fence: str, line: str, status: str,
                                                     reason: str) -> None:
    results = [r for r in check_refs(repo.root, f"```{fence}\n{line}\n```\n").results if r.ref.language]
    assert (results[-1].status, results[-1].reason) == (status, reason), results[-1]


def test_a_missing_package_suggests_a_near_one(repo: Repo) -> None:
    [result] = [r for r in check_refs(repo.root, "```kotlin\nimport com.acme.order.OrderBook\n```\n").results]
    assert result.reason == "module-missing"
    assert result.suggestion is not None and "com.acme.orders" in result.suggestion


def test_a_patch_s_added_import_is_read_as_its_file_s_language(repo: Repo) -> None:
    patch = ("--- a/src/main/kotlin/com/acme/orders/Orders.kt\n+++ b/src/main/kotlin/com/acme/orders/Orders.kt\n"
             "@@ -1,1 +1,3 @@\n package com.acme.orders\n+import com.acme.billing.InvoiceBook\n"
             "+import com.acme.billing.InvoiceArchive\n")
    got = {r.ref.module: r.reason for r in check_refs(repo.root, patch).results if r.ref.kind == "import"}
    assert got == {"com.acme.billing.InvoiceBook": "symbol-defined", "com.acme.billing.InvoiceArchive": "name-missing"}


def test_java_imports_the_class_kotlin_makes_of_a_file_s_top_level_functions(tmp_path) -> None:
    repo = Repo(tmp_path / "repo")
    repo.commit_files({**FILES, "src/main/kotlin/com/acme/orders/money.kt": (
                           "package com.acme.orders\n\nfun formatMoney(n: Int) = n.toString()\n"),
                       "src/main/kotlin/com/acme/orders/Tax.kt": (
                           '@file:JvmName("Taxes")\npackage com.acme.orders\n\nfun vat(n: Int) = n / 5\n')})
    answer = ("```java\nimport com.acme.orders.MoneyKt;\nimport com.acme.orders.Taxes;\n"
              "import com.acme.orders.TaxKt;\n```\n")
    got = [(r.ref.module, r.reason, r.found) for r in check_refs(repo.root, answer).results if r.ref.language]
    assert got == [("com.acme.orders.MoneyKt", "symbol-defined", "src/main/kotlin/com/acme/orders/money.kt"),
                   ("com.acme.orders.Taxes", "symbol-defined", "src/main/kotlin/com/acme/orders/Tax.kt"),
                   ("com.acme.orders.TaxKt", "name-missing", "src/main/kotlin/com/acme/orders/Orders.kt")]


def test_a_scala_package_object_s_members_are_its_package_s(tmp_path) -> None:
    repo = Repo(tmp_path / "repo")
    repo.commit_files({**FILES, "src/main/scala/com/acme/vouchers/package.scala": (
        "package com.acme\n\npackage object vouchers extends Helpers {\n  def redeemAll(): Int = 1\n}\n")})
    answer = "```scala\nimport com.acme.vouchers.redeemAll\nimport com.acme.vouchers.Voucher\n```\n"
    got = [(r.ref.module, r.reason) for r in check_refs(repo.root, answer).results if r.ref.language]
    assert got == [("com.acme.vouchers.redeemAll", "symbol-defined"), ("com.acme.vouchers.Voucher", "symbol-defined")]
