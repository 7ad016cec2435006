"""Ruby, PHP, Scala, shell and Lua, each as Python is read: every definition named with its
qualified symbol (none taken from a comment, a string or a call), found first by its name, a
changed method validated as history with the current one re-read, an invented method flagged by
check-refs.

One small file per language in a real git repository; real tree-sitter grammars, a real index with
the fake embedder (the name tier is what is asserted)."""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import pytest

from codevouch import Index
from codevouch.embedding import FakeEmbedder
from codevouch.indexer.chunker import chunk_text
from codevouch.syntax.definitions import find_definitions
from tests.gitrepo import Repo

DEF = "definition-name"


@dataclass(frozen=True)
class Sample:
    path: str
    text: str
    symbols: tuple[str, ...]        # every qualified symbol the file defines, in file order
    method: str                     # a method whose body the test changes
    old: str                        # a line of its body, and what it becomes
    new: str
    real: str                       # how an answer cites a real method, and an invented one
    invented: str


RUBY = Sample("lib/billing/invoice.rb", '''\
require "json"
require_relative "money"

module Billing
  # An invoice. def not_a_method is a comment.
  class Invoice < Base
    def settle_invoice(amount)
      amount * RATE
    end

    def settled?
      @settled
    end

    def self.build_invoice(rows)
      new(rows)
    end

    class << self
      def parse_invoice(text) = text.strip
    end
  end

  class Ledger::Entry
    def post_entry
      log("def fake_method; end")
    end
  end
end

def render_totals
  Billing::Invoice.build_invoice([])
end
''', ("Billing", "Billing.Invoice", "Billing.Invoice.settle_invoice", "Billing.Invoice.settled?",
      "Billing.Invoice.build_invoice",
      "Billing.Invoice.parse_invoice", "Billing.Ledger.Entry", "Billing.Ledger.Entry.post_entry", "render_totals"),
    "Billing.Invoice.settle_invoice", "amount * RATE", "amount * RATE - discount",
    "Billing::Invoice#settle_invoice", "Billing::Invoice#refund_invoice")

PHP = Sample("src/Billing/Receipt.php", '''\
<?php
namespace App\\Billing;

use App\\Models\\Customer;

/** An invoice. function notAMethod() is a comment. */
class Receipt extends Base implements Refundable
{
    private int $total = 0;

    public function settleReceipt(int $amount): int
    {
        return $amount * self::RATE;
    }

    public static function buildReceipt(array $rows): self
    {
        return new self();
    }
}

interface Refundable
{
    public function refundNow(): void;
}

trait Stamped
{
    public function stampTrail(): string { return "function fakeMethod() {}"; }
}

function render_receipt(Receipt $invoice): string
{
    return Receipt::buildReceipt([])->settleReceipt(1);
}
''', ("Receipt", "Receipt.settleReceipt", "Receipt.buildReceipt", "Refundable", "Refundable.refundNow", "Stamped",
      "Stamped.stampTrail", "render_receipt"),
    "Receipt.settleReceipt", "return $amount * self::RATE;", "return $amount * self::RATE - 1;",
    "Receipt::settleReceipt", "Receipt::refundReceipt")

SCALA = Sample("src/main/scala/billing/Voucher.scala", '''\
package com.acme.billing

import scala.util.Try

/** An invoice. def notAMethod is a comment. */
class Voucher(val total: Int) extends Base {
  def settleVoucher(amount: Int): Int =
    amount * 2

  val label = "def fakeMethod = 1"
}

object Voucher {
  def buildVoucher(rows: Seq[Int]): Voucher = new Voucher(rows.sum)
}

trait Redeemable {
  def redeemNow(): Unit
}

def renderVoucher(): String = Voucher.buildVoucher(Nil).settleVoucher(1).toString
''', ("Voucher", "Voucher.settleVoucher", "Voucher.buildVoucher", "Redeemable", "Redeemable.redeemNow", "renderVoucher"),
    "Voucher.settleVoucher", "amount * 2", "amount * 3",
    "Voucher.settleVoucher", "Voucher.refundVoucher")

SHELL = Sample("bin/deploy_release", '''\
#!/usr/bin/env bash
set -eu
source ./lib/common.sh

# Deploy a release. deploy_fake() { :; } is a comment.
deploy_release() {
  echo "rollback_fake() { :; }"
  upload_assets "$1"
}

function upload_assets {
  rsync -a "$1" /srv/www/
}

check-health() {
  curl -fsS http://localhost/health
}

release-lock::wait() {
  flock /tmp/release.lock true
}

deploy_release "$@"
''', ("deploy_release", "upload_assets", "check-health", "release-lock::wait"),
    "upload_assets", "rsync -a \"$1\" /srv/www/", "rsync -az \"$1\" /srv/www/",
    "upload_assets()", "rollback_release()")

LUA = Sample("lua/billing/ledger.lua", '''\
local json = require("json")

local Ledger = {}

-- An ledger. function not_a_method() is a comment.
function Ledger.settle_ledger(amount)
  return amount * 2
end

function Ledger:build_ledger(rows)
  local label = "function fake_method() end"
  return setmetatable({ rows = rows }, self)
end

local function render_ledger(ledger)
  return ledger:build_ledger({})
end

return Ledger
''', ("Ledger.settle_ledger", "Ledger.build_ledger", "render_ledger"),
    "Ledger.settle_ledger", "return amount * 2", "return amount * 3",
    "Ledger.settle_ledger", "Ledger.refund_ledger")

SAMPLES = {"ruby": RUBY, "php": PHP, "scala": SCALA, "bash": SHELL, "lua": LUA}


@pytest.mark.parametrize("language", SAMPLES)
def test_each_definition_has_its_qualified_symbol_and_nothing_else_is_one(language: str) -> None:
    sample = SAMPLES[language]
    assert tuple(find_definitions(sample.text, sample.path)) == sample.symbols
    chunks, found = chunk_text(sample.text, sample.path, lambda text: len(text.split()), budget=12,
                                merge_target=1)
    assert found == language
    named = {name.strip() for c in chunks for name in c.symbol.split(",")} - {"<module>"}
    assert named <= set(sample.symbols) and sample.method in named, named


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> tuple[Repo, Index]:
    root = tmp_path_factory.mktemp("scripting")
    repo = Repo(root / "repo")
    repo.commit_files({s.path: s.text for s in SAMPLES.values()} | {"README.md": "# Billing\n"})
    idx = Index(repo.root, root / "index", embedder=FakeEmbedder())
    idx.build()
    return repo, idx


@pytest.mark.parametrize("language", SAMPLES)
def test_each_definition_is_found_first_by_its_name(built: tuple[Repo, Index], language: str) -> None:
    _, idx = built
    sample = SAMPLES[language]
    spans = find_definitions(sample.text, sample.path)
    for symbol in sample.symbols:
        for query in dict.fromkeys((symbol.rsplit(".", 1)[-1], symbol)):
            hits = idx.search(query, k=5, validate=False)
            assert hits and hits[0].path == sample.path and DEF in hits[0].matched, (
                query, [(h.path, h.record.symbol, h.matched) for h in hits])
            # The hit holds the definition's own first line (a method's chunk, or its class's
            # header chunk for the class).
            first = spans[symbol][0][0]
            assert any(hits[0].record.start_line <= line <= hits[0].record.end_line for line in (first, first + 1)), (
                query, symbol, hits[0].record.symbol, hits[0].record.start_line, spans[symbol])


@pytest.mark.parametrize("language", SAMPLES)
def test_an_invented_method_is_flagged_and_a_real_one_found(built: tuple[Repo, Index], language: str) -> None:
    _, idx = built
    sample = SAMPLES[language]
    report = idx.check_refs(f"Call `{sample.real}` here, then `{sample.invented}`.")
    by_text = {r.ref.text.strip("`"): r for r in report.results if r.ref.kind == "symbol"}
    real, invented = by_text[sample.real], by_text[sample.invented]
    assert (real.status, real.found and real.found.split("#")[0]) == ("ok", sample.path), real
    assert invented.status != "ok", invented


def test_a_changed_method_is_history_and_the_current_one_is_re_read(tmp_path: Path) -> None:
    repo = Repo(tmp_path / "repo")
    head = repo.commit_files({s.path: s.text for s in SAMPLES.values()})
    idx = Index(repo.root, tmp_path / "index", embedder=FakeEmbedder())
    snippets = []
    for sample in SAMPLES.values():
        (start, end), = find_definitions(sample.text, sample.path)[sample.method]
        text = "\n".join(sample.text.split("\n")[start - 1:end]) + "\n"
        snippets.append({"path": sample.path, "symbol": sample.method, "commit": head, "start_line": start,
                         "end_line": end, "text": text})
        assert sample.old in text
        repo.write(sample.path, sample.text.replace(sample.old, sample.new))
    for (language, sample), verdict in zip(SAMPLES.items(), idx.validate(snippets), strict=True):
        assert (verdict.verdict, verdict.reason) == ("historical-only", "content-changed"), (language, verdict.reason)
        current = verdict.current
        assert current is not None and current.symbol == sample.method and sample.new in current.text, (
            language, current)
        assert current.text.count("\n") <= sample.text.count("\n") // 2, (language, current.text)   # the method


def test_a_lua_function_inside_a_do_block_is_cut_and_named_as_the_file_s() -> None:
    # `do ... end` scopes its locals; the functions it declares are the module's, each its own chunk.
    text = ("local Ledger = {}\n\ndo\n  local cache = {}\n\n  function Ledger.audit_ledger(rows)\n"
            "    for _, row in ipairs(rows) do\n      cache[row.id] = row\n    end\n    return cache\n  end\n\n"
            "  function Ledger.clear_audit()\n    cache = {}\n  end\nend\n\nreturn Ledger\n")
    chunks, _ = chunk_text(text, "lua/billing/audit.lua", lambda t: len(t.split()), budget=12, merge_target=1)
    named = [(c.symbol, c.start_line) for c in chunks]
    assert ("Ledger.audit_ledger", 6) in named and ("Ledger.clear_audit", 13) in named, named


BATS = '''\
#!/usr/bin/env bats

load test_helper

setup() {
  export LEDGER_HOME="$BATS_TEST_TMPDIR"
}

@test "settles a ledger with two rows" {
  run settle_ledger 2
  [ "$status" -eq 0 ]
  [ "$output" = "settled 2" ]
}

@test 'refuses a "negative" ledger' {
  run settle_ledger -1
  [ "$status" -eq 1 ]
}

audit_rows() {
  wc -l < "$LEDGER_HOME/rows"
}
'''


@pytest.mark.parametrize("path", ["test/ledger.bats", "test/ledger"])
def test_a_bats_file_is_shell_its_tests_module_code_and_nothing_dropped(path: str) -> None:
    # tree-sitter-bash reads `@test "..." {` as a command and its body as top-level statements,
    # with no error: the helpers are definitions, each test is module code, every line is cut.
    assert find_definitions(BATS, path) == {"setup": [(5, 7)], "audit_rows": [(20, 22)]}
    chunks, language = chunk_text(BATS, path, lambda text: len(text.split()), budget=12, merge_target=1)
    assert language == "bash"
    lines = BATS.split("\n")
    covered = {n for c in chunks for n in range(c.start_line, c.end_line + 1)}
    assert {n for n, line in enumerate(lines, 1) if line.strip()} <= covered
    tests = [c for c in chunks if "@test" in c.text]
    assert tests and all(c.symbol == "<module>" for c in tests)
    assert {c.symbol for c in chunks} == {"<module>", "setup", "audit_rows"}
