"""Every module in codevouch/ has a test file named after it, or an entry in tests/twins.toml
that names the test files covering it (the rule: CONTRIBUTING.md, "A test file for every module").

    codevouch/store/ledger.py      ->  tests/store/test_ledger.py
    codevouch/review/__init__.py   ->  tests/review/test_review.py   (a package: its name)
    codevouch/__init__.py          ->  tests/test_codevouch.py
"""
from __future__ import annotations

import re
import sys
from pathlib import Path

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "codevouch"
TWINS = ROOT / "tests" / "twins.toml"


def twin(module: Path) -> Path:
    """The test file named after a module (both relative to the repository root)."""
    parts = module.relative_to("codevouch").parts
    if parts[-1] == "__init__.py":
        folders = parts[:-1]
        return Path("tests", *folders, f"test_{folders[-1] if folders else 'codevouch'}.py")
    # a private module (`_process.py`) is tested under its plain name (`test_process.py`)
    return Path("tests", *parts[:-1], f"test_{parts[-1].lstrip('_')}")


def modules() -> list[Path]:
    return sorted(path.relative_to(ROOT) for path in PACKAGE.rglob("*.py"))


def listed() -> dict[str, dict]:
    return tomllib.loads(TWINS.read_text(encoding="utf-8")).get("modules", {})


def _dotted(module: Path) -> str:
    parts = module.with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def importers(module: Path) -> list[str]:
    """Test files that import the module: where to look for the ones that cover it."""
    dotted = _dotted(module)
    parent, _, leaf = dotted.rpartition(".")
    patterns = [re.compile(rf"\b(?:from|import)\s+{re.escape(dotted)}\b(?!\.)")]
    if parent:
        patterns.append(re.compile(rf"from\s+{re.escape(parent)}\s+import\s+\(?[^)]*?\b{re.escape(leaf)}\b"))
    found = []
    for test in sorted((ROOT / "tests").rglob("test_*.py")):
        text = test.read_text(encoding="utf-8")
        if any(pattern.search(text) for pattern in patterns):
            found.append(test.relative_to(ROOT).as_posix())
    return found


def test_the_twin_rule() -> None:
    assert twin(Path("codevouch/store/ledger.py")) == Path("tests/store/test_ledger.py")
    assert twin(Path("codevouch/review/__init__.py")) == Path("tests/review/test_review.py")
    assert twin(Path("codevouch/__init__.py")) == Path("tests/test_codevouch.py")
    assert twin(Path("codevouch/api.py")) == Path("tests/test_api.py")


def test_every_module_has_a_test_file_or_an_entry() -> None:
    entries = listed()
    missing = []
    for module in modules():
        name = module.as_posix()
        if name in entries or (ROOT / twin(module)).exists():
            continue
        candidates = importers(module)
        hint = "the test files that import it" if candidates else "no test imports it: name the ones that run it"
        tests = ", ".join(f'"{test}"' for test in candidates or ["tests/..."])
        missing.append(f"{name}: no {twin(module).as_posix()}; write it, or add this line to tests/twins.toml "
                       f'[modules] ({hint}):\n    "{name}" = {{ tests = [{tests}], why = "..." }}')
    assert missing == [], "modules without a test file:\n" + "\n".join(missing)


def test_every_entry_names_a_module_without_a_twin_and_test_files_that_exist() -> None:
    problems = []
    for name, entry in listed().items():
        module = Path(name)
        if not (ROOT / module).is_file():
            problems.append(f"{name}: no such module; remove its entry from tests/twins.toml "
                            "(or rename it to where the module moved)")
            continue
        if (ROOT / twin(module)).exists():
            problems.append(f"{name}: has its own {twin(module).as_posix()} now; remove its entry from tests/twins.toml")
        tests = entry.get("tests") or []
        if not tests:
            problems.append(f"{name}: the entry names no test file")
        for test in tests:
            if not (ROOT / test).is_file():
                problems.append(f"{name}: {test} does not exist; name the test files that cover it now")
        if not str(entry.get("why", "")).strip():
            problems.append(f'{name}: say why in a few words (why = "...")')
    assert problems == [], "tests/twins.toml:\n" + "\n".join(problems)
