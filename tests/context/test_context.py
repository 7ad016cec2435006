"""`Index.context` and `codevouch context` with budgets: a real repository, a real Chroma
store, and the real offline tokenizer (the deterministic fake embedder only ranks)."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from codevouch import Index
from codevouch.context.windows import resolve_budget, token_counter
from codevouch.errors import InputError
from tests.clihelp import cv
from tests.gitrepo import Repo


def module(n: int) -> str:
    """Six functions of ~30 lines each: one module is ~2.7k tokens of code."""
    return "\n\n".join(
        f"@register('orders', {i})\ndef cancel_step_{n}_{i}(order, reason=None):\n"
        f'    """Cancel an order: step {i} of module {n}."""\n'
        + "".join(f"    amount_{j} = order.total * {j} - order.refunded  # cancel order {j}\n" for j in range(28))
        + "    return order\n" for i in range(6)) + "\n"


@pytest.fixture()
def big(repo: Repo, index_dir: Path) -> Index:
    repo.commit_files({f"shop/orders_{n}.py": module(n) for n in range(12)})
    idx = Index(repo.root, index_dir, embedder="fake-bow-64")
    idx.build()
    return idx


def test_context_with_a_model_never_exceeds_its_safe_budget(big: Index, repo: Repo) -> None:
    # qwen2.5-coder-32b: 32768 - 8192 - 10% = 21299 tokens; 72 hits of ~400 tokens do not fit.
    pack = big.context("cancel an order", k=72, model="qwen2.5-coder-32b")
    safe = resolve_budget(None, "qwen2.5-coder-32b", repo.root, env={})
    assert pack.budget == safe and safe.tokens == 32768 - 8192 - 3277
    assert pack.tokens == token_counter("qwen2.5-coder-32b")(pack.markdown) <= safe.tokens
    assert pack.tokens > 0.8 * safe.tokens             # and it is used, not wasted
    left = pack.pack.left_out
    assert pack.pack.included and any(e.left_out == "budget" for e in left)
    # Every hit is accounted for: in the pack (itself or inside a whole definition) or left out.
    ranks = {e.rank for e in (*pack.pack.included, *left)}
    assert ranks == set(range(1, 73))
    report = pack.markdown.partition("## Pack report")[2]
    assert f"index: main@{repo.head()[:12]}" in report
    assert "budget: 21299 tokens for qwen2.5-coder-32b (window 32768 - output 8192 - reserve 3277 = 21299; from --model)" \
        in report
    manifest = pack.manifest()
    assert manifest["budget"]["model"] == "qwen2.5-coder-32b" and manifest["index"] == f"main@{repo.head()[:12]}"
    assert manifest["left_out"]["count"] == len(left)


def test_cli_model_from_repo_config_env_and_flag(big: Index, repo: Repo, index_dir: Path,
                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    repo.write(".codevouch.toml", '[models."house-llm"]\nwindow = 4000\noutput = 1000\nfamily = "anthropic"\n'
                                  '\n[budget]\nmodel = "house-llm"\n')
    out = cv("context", "cancel an order", "-k", "40", "--json", cwd=repo.root, index=index_dir)
    assert out.returncode == 0, out.stderr
    data = json.loads(out.stdout)
    assert data["budget"]["source"] == ".codevouch.toml [budget]" and data["budget"]["tokens"] == 2600
    # Counted as the model's family is: cl100k x 1.35, rounded up.
    assert data["tokens"] == token_counter("claude-sonnet-4-5")(data["markdown"]) <= 2600
    assert data["left_out"]["by_reason"].get("budget", 0) > 0
    assert {i["left_out"] for i in data["left_out"]["items"]} <= {"budget", "duplicate"}
    monkeypatch.setenv("CODEVOUCH_BUDGET", "1500")
    env_first = cv("context", "cancel an order", "-k", "40", "--json", cwd=repo.root, index=index_dir)
    assert json.loads(env_first.stdout)["budget"]["source"] == "CODEVOUCH_BUDGET"
    flag = cv("context", "cancel an order", "-k", "40", "--budget", "900", cwd=repo.root, index=index_dir)
    assert flag.returncode == 0 and "budget: 900 tokens (from --budget)" in flag.stdout
    unknown = cv("context", "x", "--model", "gpt-17", cwd=repo.root, index=index_dir)
    assert unknown.returncode == 2 and "unknown model 'gpt-17'" in unknown.stderr


def test_budget_too_small_is_a_clear_error(big: Index) -> None:
    with pytest.raises(InputError, match="raise --budget"):
        big.context("cancel an order", budget=30)


def test_every_budget_too_small_gets_one_wording_in_the_cli(big: Index, repo: Repo, index_dir: Path) -> None:
    # `--budget 0` got typer's range message, `--budget 50` codevouch's: one wording, with the figure.
    for budget in ("0", "-3", "50"):
        out = cv("context", "cancel an order", "--budget", budget, cwd=repo.root, index=index_dir)
        assert out.returncode == 2, (budget, out.stderr)
        assert f"codevouch: a budget of {budget} tokens cannot hold even an empty context pack (" in out.stderr
        assert "raise --budget" in out.stderr and "Invalid value" not in out.stderr
    huge = cv("context", "cancel an order", "--budget", "20000000", cwd=repo.root, index=index_dir)
    assert huge.returncode == 2 and "give at most 10000000" in huge.stderr
