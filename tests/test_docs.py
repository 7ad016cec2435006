"""The README and docs/ held to the repository: links that land, exit codes and check-refs reasons
that exist, a short README. (docs/VALIDATION.md's reason table: tests/validator/test_validator.py.)"""
from __future__ import annotations

import enum
import importlib
import pkgutil
import re
from pathlib import Path

import codevouch.commands
from codevouch.refs.model import REASONS as REF_REASONS

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "README.md"
PAGES = [README, *sorted((ROOT / "docs").glob("*.md"))]


def _slug(heading: str) -> str:
    # GitHub's anchor for a heading: lower case, punctuation dropped, spaces to hyphens.
    return re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-")


def _anchors(page: Path) -> set[str]:
    found, fenced = set(), False
    for line in page.read_text(encoding="utf-8").split("\n"):
        if line.startswith("```"):
            fenced = not fenced
        elif not fenced and re.match(r"#{1,6} ", line):
            found.add(_slug(line.lstrip("#")))
    return found


def test_every_link_between_the_pages_lands_on_a_file_and_heading() -> None:
    broken = []
    for page in PAGES:
        for target in re.findall(r"\]\(([^)\s]+)\)", page.read_text(encoding="utf-8")):
            if target.startswith(("http://", "https://")):
                continue
            name, _, anchor = target.partition("#")
            file = (page.parent / name).resolve() if name else page
            if not file.exists():
                broken.append(f"{page.name}: {target} (no such file)")
            elif anchor and file.suffix == ".md" and anchor not in _anchors(file):
                broken.append(f"{page.name}: {target} (no such heading)")
    assert broken == []


def test_the_slug_is_githubs() -> None:
    # The only way the link test could pass a broken link: a slug unlike GitHub's.
    assert _slug(" 3. Retrieval quality: docstring → function") == "3-retrieval-quality-docstring--function"
    assert _slug(" `codevouch validate` and `search`") == "codevouch-validate-and-search"


def _exit_codes_in_the_code() -> set[int]:
    codes: set[int] = set()
    for info in pkgutil.iter_modules(codevouch.commands.__path__):
        module = importlib.import_module(f"codevouch.commands.{info.name}")
        for name, value in vars(module).items():
            if name.startswith("EXIT_") and isinstance(value, int):
                codes.add(value)
            elif isinstance(value, type) and issubclass(value, enum.IntEnum) and value.__module__ == module.__name__:
                codes.update(int(member) for member in value)
    return codes


def test_the_readme_lists_every_exit_code_the_cli_has_and_no_other() -> None:
    text = README.read_text(encoding="utf-8")
    table = text.split("| code | meaning |\n|---|---|\n", 1)[1].split("\n\n", 1)[0]
    documented = {int(row.split("|")[1]) for row in table.split("\n")}
    assert documented == _exit_codes_in_the_code()


def test_the_readme_stays_short_and_links_every_page() -> None:
    text = README.read_text(encoding="utf-8")
    assert len(text.split("\n")) < 250
    for page in PAGES[1:]:
        assert f"(docs/{page.name})" in text, page.name


def test_the_check_refs_page_gives_every_reason_its_status() -> None:
    page = (ROOT / "docs" / "CHECK_REFS.md").read_text(encoding="utf-8")
    table = page.split("| status | reason | meaning |\n|---|---|---|\n", 1)[1].split("\n\n", 1)[0]
    documented = {}
    for row in table.split("\n"):
        status, codes, _meaning = (cell.strip() for cell in row.strip().strip("|").split(" | ", 2))
        for code in re.findall(r"`([a-z-]+)`", codes):
            documented[code] = status
    assert documented == {code: status for code, (status, _) in REF_REASONS.items()}
