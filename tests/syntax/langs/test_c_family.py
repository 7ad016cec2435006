"""C, C++, C#, Kotlin and Swift read as Python is: one small file per language in a real git
repository, built with the fake embedder (the name tier is what is asserted). Each definition gets
its qualified symbol and is the first hit for its name; a method whose body changed is
historical-only with the current method re-read; check-refs flags an invented method; a C++
header's declaration ranks after the definition in its source file.

Real git, real tree-sitter grammars (the wheels), real Chroma and tantivy.
"""
from __future__ import annotations

from pathlib import Path

import pytest

from codevouch import Index, clear_caches
from codevouch.embedding import FakeEmbedder
from codevouch.indexer.chunker import chunk_text
from codevouch.syntax import registry
from codevouch.syntax.definitions import find_definitions
from codevouch.syntax.spec import Language
from tests.gitrepo import Repo

C_SOURCE = """\
#include <stdio.h>
#include "ledger.h"

/* One invoice of the ledger. */
struct ledger_invoice {
    int id;
    int (*on_paid)(int id);
};

typedef struct {
    int cents;
} ledger_amount;

static int ledger_round_cents(int cents);

/* Settle every open invoice of the batch. */
int ledger_settle_batch(struct ledger_invoice *batch, int count)
{
    int settled = 0;
    for (int i = 0; i < count; i++) {
        settled += ledger_round_cents(batch[i].id);
    }
    return settled;
}

static int ledger_round_cents(int cents)
{
    return cents - cents % 5;
}
"""

CPP_HEADER = """\
#pragma once
#include <vector>

namespace billing {

class InvoiceBook {
 public:
  InvoiceBook();
  // Settles the queued invoices in one batch.
  int settle_invoice_batch(int limit);

 private:
  std::vector<int> queued_;
};

}  // namespace billing
"""

CPP_SOURCE = """\
#include "billing/invoice_book.h"

namespace billing {
namespace {

int clamp_limit(int limit) { return limit < 0 ? 0 : limit; }

}  // namespace

InvoiceBook::InvoiceBook() : queued_() {}

int InvoiceBook::settle_invoice_batch(int limit) {
  int settled = 0;
  for (int id : queued_) {
    if (settled >= clamp_limit(limit)) break;
    settled += id > 0;
  }
  return settled;
}

}  // namespace billing
"""

CSHARP_SOURCE = """\
using System;
using System.Collections.Generic;

namespace Billing
{
    public class InvoiceLedger
    {
        private readonly List<int> queued = new List<int>();

        public InvoiceLedger() { }

        // Settles the queued invoices in one batch.
        public int SettleQueuedInvoices(int limit)
        {
            var settled = 0;
            foreach (var id in queued) { settled += id > limit ? 0 : 1; }
            return settled;
        }

        public int QueuedCount => queued.Count;
    }

    public enum InvoiceState { Open, Paid }
}
"""

KOTLIN_SOURCE = """\
package billing

import kotlin.math.max

class PaymentBook(private val queued: MutableList<Int>) {
    fun collectPayments(limit: Int): Int {
        var settled = 0
        for (id in queued) {
            settled += max(0, limit - id)
        }
        return settled
    }

    companion object {
        fun emptyPaymentBook(): PaymentBook = PaymentBook(mutableListOf())
    }
}

object PaymentRegistry {
    fun registerPaymentBook(book: PaymentBook) {
        println(book)
    }
}

fun formatPaymentCents(cents: Long): String = "$cents cents"
"""

SWIFT_SOURCE = """\
import Foundation

struct ReceiptQueue {
    var pending: [Int] = []

    func drainReceipts(limit: Int) -> Int {
        var drained = 0
        for id in pending where id < limit {
            drained += 1
        }
        return drained
    }
}

extension ReceiptQueue {
    func receiptSummary() -> String {
        return "\\(pending.count) receipts"
    }
}

protocol ReceiptPrinter {
    func printReceipt(id: Int)
}

func makeReceiptQueue() -> ReceiptQueue {
    return ReceiptQueue()
}
"""

FILES = {
    "src/ledger.c": C_SOURCE,
    "include/billing/invoice_book.h": CPP_HEADER,
    "src/invoice_book.cc": CPP_SOURCE,
    "src/Billing/InvoiceLedger.cs": CSHARP_SOURCE,
    "app/src/main/kotlin/billing/PaymentBook.kt": KOTLIN_SOURCE,
    "Sources/Receipts/ReceiptQueue.swift": SWIFT_SOURCE,
}

# Every definition of each file, with its qualified symbol (the chunker's and the name tier's).
SYMBOLS = {
    "src/ledger.c": {"ledger_invoice", "ledger_amount", "ledger_round_cents", "ledger_settle_batch"},
    "include/billing/invoice_book.h": {"billing", "billing.InvoiceBook", "billing.InvoiceBook.InvoiceBook",
                                       "billing.InvoiceBook.settle_invoice_batch"},
    "src/invoice_book.cc": {"billing", "billing.clamp_limit", "billing.InvoiceBook.InvoiceBook",
                            "billing.InvoiceBook.settle_invoice_batch"},
    "src/Billing/InvoiceLedger.cs": {"InvoiceLedger", "InvoiceLedger.InvoiceLedger",
                                     "InvoiceLedger.SettleQueuedInvoices", "InvoiceLedger.QueuedCount",
                                     "InvoiceState"},
    "app/src/main/kotlin/billing/PaymentBook.kt": {"PaymentBook", "PaymentBook.collectPayments",
                                                   "PaymentBook.emptyPaymentBook", "PaymentRegistry",
                                                   "PaymentRegistry.registerPaymentBook", "formatPaymentCents"},
    "Sources/Receipts/ReceiptQueue.swift": {"ReceiptQueue", "ReceiptQueue.drainReceipts",
                                            "ReceiptQueue.receiptSummary", "ReceiptPrinter",
                                            "ReceiptPrinter.printReceipt", "makeReceiptQueue"},
}

LANGUAGE = {"src/ledger.c": "c", "include/billing/invoice_book.h": "cpp", "src/invoice_book.cc": "cpp",
            "src/Billing/InvoiceLedger.cs": "csharp", "app/src/main/kotlin/billing/PaymentBook.kt": "kotlin",
            "Sources/Receipts/ReceiptQueue.swift": "swift"}

# name -> the file whose definition must be the first hit (the header's declaration follows it)
HOMES = {
    "ledger_settle_batch": "src/ledger.c", "ledger_round_cents": "src/ledger.c", "ledger_invoice": "src/ledger.c",
    "settle_invoice_batch": "src/invoice_book.cc", "InvoiceBook::settle_invoice_batch": "src/invoice_book.cc",
    "billing::InvoiceBook::settle_invoice_batch": "src/invoice_book.cc", "clamp_limit": "src/invoice_book.cc",
    # a class defined only in its header is found there, not at its constructor in the source file,
    # unless the query names the constructor
    "InvoiceBook": "include/billing/invoice_book.h", "billing::InvoiceBook": "include/billing/invoice_book.h",
    "InvoiceBook::InvoiceBook": "src/invoice_book.cc",
    "SettleQueuedInvoices": "src/Billing/InvoiceLedger.cs", "InvoiceLedger": "src/Billing/InvoiceLedger.cs",
    "collectPayments": "app/src/main/kotlin/billing/PaymentBook.kt",
    "emptyPaymentBook": "app/src/main/kotlin/billing/PaymentBook.kt",
    "PaymentBook.emptyPaymentBook": "app/src/main/kotlin/billing/PaymentBook.kt",
    "registerPaymentBook": "app/src/main/kotlin/billing/PaymentBook.kt",
    "drainReceipts": "Sources/Receipts/ReceiptQueue.swift",
    "ReceiptQueue.receiptSummary": "Sources/Receipts/ReceiptQueue.swift",
    "makeReceiptQueue": "Sources/Receipts/ReceiptQueue.swift",
}


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> tuple[Repo, Index]:
    base = tmp_path_factory.mktemp("c_family")
    repo = Repo(base / "repo")
    repo.commit_files(FILES)
    idx = Index(repo.root, base / "index", embedder=FakeEmbedder())
    idx.build()
    return repo, idx


@pytest.mark.parametrize("path", sorted(FILES))
def test_each_definition_gets_its_qualified_symbol(path: str) -> None:
    assert set(find_definitions(FILES[path], path)) == SYMBOLS[path]
    chunks, language = chunk_text(FILES[path], path, lambda text: len(text.split()), budget=6)
    assert language == LANGUAGE[path]
    named = {name.strip() for c in chunks for name in c.symbol.split(",")} | {
        name for c in chunks for name in c.defines}
    assert SYMBOLS[path] - {"billing"} <= named, path


def test_no_definition_from_a_comment_a_string_a_call_or_a_local() -> None:
    # `Foo bar(n);` in a function body parses as a prototype; a function pointer field, a call and
    # a name in a comment or a string define nothing.
    source = ("// int commented_out(void);\nvoid run(int n) {\n  Widget local_widget(n);\n"
              "  const char *s = \"int in_string(void);\";\n  launch(n);\n}\n")
    assert set(find_definitions(source, "src/run.cc")) == {"run"}
    assert set(find_definitions(C_SOURCE, "src/ledger.c")).isdisjoint({"on_paid", "printf", "id"})


def test_an_export_macro_in_a_class_head_is_no_function() -> None:
    # tree-sitter-cpp reads `class LEVELDB_EXPORT DB {` as a function `DB` returning a class
    # `LEVELDB_EXPORT`; the macro is blanked before the parse, lines and columns unchanged.
    header = ("namespace leveldb {\nclass LEVELDB_EXPORT DB {\n public:\n  virtual ~DB();\n"
              "  virtual int Put(int key) = 0;\n};\nstruct GTEST_API_ Options : Base {\n  int x;\n};\n"
              "class Final final {\n  void f();\n};\n}  // namespace leveldb\n")
    assert find_definitions(header, "include/leveldb/db.h") == {
        "leveldb": [(1, 13)], "leveldb.DB": [(2, 6)], "leveldb.DB.~DB": [(4, 4)], "leveldb.DB.Put": [(5, 5)],
        "leveldb.Options": [(7, 9)], "leveldb.Final": [(10, 12)], "leveldb.Final.f": [(11, 11)]}


@pytest.mark.parametrize(("name", "home"), sorted(HOMES.items()))
def test_a_definition_is_found_first_by_its_name(built: tuple[Repo, Index], name: str, home: str) -> None:
    _, idx = built
    hits = idx.search(name, k=5, validate=False)
    assert hits and hits[0].path == home, (name, [(h.path, h.symbol) for h in hits])
    assert hits[0].matched[0] == "definition-name", hits[0].matched


def test_a_header_declaration_ranks_after_its_definition(built: tuple[Repo, Index]) -> None:
    _, idx = built
    paths = [h.path for h in idx.search("settle_invoice_batch", k=5, validate=False)]
    assert paths.index("src/invoice_book.cc") < paths.index("include/billing/invoice_book.h"), paths


# (path, symbol, old text in the method's body, new text)
CHANGES = [
    ("src/ledger.c", "ledger_settle_batch", "settled += ledger_round_cents", "settled -= ledger_round_cents"),
    ("src/invoice_book.cc", "billing.InvoiceBook.settle_invoice_batch", "settled += id > 0", "settled += 2"),
    ("src/Billing/InvoiceLedger.cs", "InvoiceLedger.SettleQueuedInvoices", "? 0 : 1", "? 1 : 0"),
    ("app/src/main/kotlin/billing/PaymentBook.kt", "PaymentBook.collectPayments", "limit - id", "id - limit"),
    ("Sources/Receipts/ReceiptQueue.swift", "ReceiptQueue.drainReceipts", "drained += 1", "drained += 2"),
]


@pytest.mark.parametrize(("path", "symbol", "old", "new"), CHANGES)
def test_a_changed_method_is_historical_with_the_current_one_reread(
        repo: Repo, index_dir: Path, path: str, symbol: str, old: str, new: str) -> None:
    commit = repo.commit_files({path: FILES[path]})
    [(start, end)] = find_definitions(FILES[path], path)[symbol]
    text = "\n".join(FILES[path].split("\n")[start - 1:end])
    assert old in text
    repo.commit_files({path: FILES[path].replace(old, new)}, "change the method's body")
    snippet = {"path": path, "commit": commit, "start_line": start, "end_line": end, "symbol": symbol, "text": text}
    out = Index(repo.root, index_dir, embedder=FakeEmbedder()).validate([snippet])[0]
    assert (out.verdict, out.reason) == ("historical-only", "content-changed")
    assert out.current is not None and out.current.symbol == symbol
    assert new in out.current.text and old not in out.current.text
    assert out.current.start_line == start


INVENTED = {
    "src/ledger.c": ("ledger_settle_batch", "ledger_settle_everything"),
    "src/invoice_book.cc": ("billing::InvoiceBook::settle_invoice_batch", "billing::InvoiceBook::settle_all_invoices"),
    "src/Billing/InvoiceLedger.cs": ("InvoiceLedger.SettleQueuedInvoices", "InvoiceLedger.SettleEveryInvoice"),
    "app/src/main/kotlin/billing/PaymentBook.kt": ("PaymentBook.collectPayments", "PaymentBook.collectAllPayments"),
    "Sources/Receipts/ReceiptQueue.swift": ("ReceiptQueue.drainReceipts", "ReceiptQueue.drainEveryReceipt"),
}


@pytest.mark.parametrize("path", sorted(INVENTED))
def test_check_refs_flags_an_invented_method(built: tuple[Repo, Index], path: str) -> None:
    _, idx = built
    real, invented = INVENTED[path]
    # Said to be in the file: a plain C function is checked there (with no file, an unknown
    # plain name is "unknown": a library's, or invented).
    report = idx.check_refs(f"Call `{real}` in {path}, then `{invented}` in {path}.")
    by_symbol = {r.ref.symbol: r for r in report.results if r.ref.kind == "symbol"}
    assert by_symbol[real.replace("::", ".")].status == "ok", by_symbol[real.replace("::", ".")]
    flagged = by_symbol[invented.replace("::", ".")]
    # A method invented on a real class is missing (member-missing); an invented C function,
    # which no class holds, is unknown (symbol-unknown), as an invented Python function is.
    assert (flagged.status, flagged.reason) == (
        ("unknown", "symbol-unknown") if path.endswith(".c") else ("missing", "member-missing")), flagged


BROKEN = Language(name="kotlin-broken", grammar=("tree_sitter_no_such_wheel", "language"),
                  extensions={".ktb": "kotlin"}, syntax=registry.by_name()["kotlin"].syntax)


def test_a_grammar_that_does_not_load_gives_text_windows_and_one_summary_line(
        repo: Repo, index_dir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(registry, "LANGUAGES", (*registry.LANGUAGES, BROKEN))
    clear_caches()
    try:
        repo.commit_files({"app/Book.ktb": KOTLIN_SOURCE, "src/ledger.c": C_SOURCE})
        summary = Index(repo.root, index_dir, embedder=FakeEmbedder()).build()[0]
        assert summary.chunks > 0 and summary.skipped == {}
        assert list(summary.text_only) == ["kotlin-broken"]
        assert "tree_sitter_no_such_wheel" in summary.text_only["kotlin-broken"]
    finally:
        monkeypatch.undo()
        clear_caches()


def test_check_refs_reads_an_include_as_a_file_of_the_repository(built: tuple[Repo, Index]) -> None:
    _, idx = built
    answer = ("```cpp\n#include <vector>\n#include \"billing/invoice_book.h\"\n#include \"billing/refund_book.h\"\n```\n"
              "```diff\n--- a/src/ledger.c\n+++ b/src/ledger.c\n@@ -1,2 +1,3 @@\n #include <stdio.h>\n"
              "+#include \"ledger_rounding.h\"\n #include \"ledger.h\"\n```\n")
    found = {r.ref.path: (r.status, r.reason) for r in idx.check_refs(answer).results if r.ref.source == "include"}
    assert found == {"billing/invoice_book.h": ("ok", "path-resolved"),     # include/billing/invoice_book.h
                     "billing/refund_book.h": ("missing", "path-missing"),
                     "ledger_rounding.h": ("missing", "path-missing")}


def test_a_kotlin_signature_stops_at_its_body() -> None:
    # Kotlin's grammar gives a function's body no `body` field: the signature drift and review
    # compare was the whole function, so every edit of a body read as a changed signature.
    from codevouch.syntax.outline import outline

    found = {d.name: d.signature for d in outline(KOTLIN_SOURCE, "PaymentBook.kt") or []}
    assert found["PaymentBook.collectPayments"] == "fun collectPayments(limit: Int): Int"
    assert found["PaymentRegistry"] == "object PaymentRegistry"
