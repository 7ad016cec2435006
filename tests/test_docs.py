"""The README, SECURITY.md, CONTRIBUTING.md and docs/ held to the repository: links that land, exit
codes and check-refs reasons that exist, a short README, no internal issue numbers.
(docs/VALIDATION.md's reason table: tests/validator/test_validator.py.)"""
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
TOP_PAGES = [ROOT / "SECURITY.md", ROOT / "CONTRIBUTING.md"]
DOC_PAGES = sorted((ROOT / "docs").glob("*.md"))
PAGES = [README, *TOP_PAGES, *DOC_PAGES]


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
    for page in DOC_PAGES:
        assert f"(docs/{page.name})" in text, page.name
    for page in TOP_PAGES:
        assert f"({page.name})" in text, page.name


def test_the_readme_keeps_a_summary_of_security_and_links_the_page() -> None:
    text = README.read_text(encoding="utf-8")
    section = text.split("\n## Security\n", 1)[1].split("\n## ", 1)[0]
    assert "(SECURITY.md)" in section
    assert len(section.strip().split("\n")) <= 6, "the details belong in SECURITY.md"
    security = (ROOT / "SECURITY.md").read_text(encoding="utf-8")
    for point in ("never runs a program a repository configures", "never writes into a repository",
                  "never prints repository text raw", "bounded work on hostile input"):
        assert point in security, point


# A tracker's number means nothing to a reader: "issue 22.1", "(issue 18)", "issues 3 and 4",
# "PR 7", "#12". Not a link's anchor ("BENCHMARKS.md#3-retrieval", "](#12-foo)") or a word.
ISSUE_NUMBER = re.compile(
    r"\b(?:issues?|tickets?|pull requests?)\s*(?:no\.\s*)?#?\d+(?:\.\d+)*"
    r"|\bPRs?\s*#?\d+"
    r"|(?<![\w/#])(?<!\]\()#\d+(?![\w-]|\.\d)",
    re.IGNORECASE,
)


def test_the_pattern_for_issue_numbers_hits_them_and_nothing_else() -> None:
    for text in ("issue 22.1", "(issue 18)", "Issues 3 and 4", "see #12.", "(#12)", "issue #5",
                 "ticket 9", "PR 7", "pull request 40"):
        assert ISSUE_NUMBER.search(text), text
    for text in ("[x](BENCHMARKS.md#3-retrieval-quality)", "[x](#12-notes)", "# 1. Heading",
                 "the issues with it", "p95 #", "a #fff colour", "C# 12", "PRs", "issue tracker"):
        assert not ISSUE_NUMBER.search(text), text


def test_no_page_names_an_internal_issue_number() -> None:
    found = []
    for page in PAGES:
        for number, line in enumerate(page.read_text(encoding="utf-8").split("\n"), 1):
            for hit in ISSUE_NUMBER.finditer(line):
                around = line[max(0, hit.start() - 40):hit.end() + 40].strip()
                found.append(f"{page.relative_to(ROOT)}:{number}: {hit.group(0)!r} in ...{around}...")
    assert found == [], "say what the issue was about instead of its number:\n" + "\n".join(found)


def test_the_check_refs_page_gives_every_reason_its_status() -> None:
    page = (ROOT / "docs" / "CHECK_REFS.md").read_text(encoding="utf-8")
    table = page.split("| status | reason | meaning |\n|---|---|---|\n", 1)[1].split("\n\n", 1)[0]
    documented = {}
    for row in table.split("\n"):
        status, codes, _meaning = (cell.strip() for cell in row.strip().strip("|").split(" | ", 2))
        for code in re.findall(r"`([a-z-]+)`", codes):
            documented[code] = status
    assert documented == {code: status for code, (status, _) in REF_REASONS.items()}


def _setup_section() -> str:
    return README.read_text(encoding="utf-8").split("\n## Set up\n", 1)[1].split("\n## ", 1)[0]


def test_the_readme_says_how_to_get_torchs_cpu_build_beside_the_commands_that_run_here() -> None:
    # pypi.org's torch==2.13.0 on Linux is the CUDA build; the commands stay as they run here.
    section = _setup_section()
    assert "pip install torch==2.13.0 -e . && codevouch index build --repo ." in section
    assert "pip install torch==2.13.0 -e '.[test]' -e bench/ && python -m pytest -q" in section
    assert "pip install torch==2.13.0 --index-url https://download.pytorch.org/whl/cpu" in section
    assert "--extra-index-url https://download.pytorch.org/whl/cpu" in section


def test_the_readme_says_codevouch_mcp_needs_the_mcp_extra() -> None:
    assert "pip install -e '.[mcp]'" in _setup_section()


def test_no_page_or_message_names_an_extra_as_codevouch_bracket() -> None:
    # codevouch is installed from a checkout: `pip install 'codevouch[mcp]'` finds no such package.
    files = [*PAGES, *sorted((ROOT / "codevouch").rglob("*.py"))]
    found = [f"{f.relative_to(ROOT)}: {m.group(0)}" for f in files
             for m in re.finditer(r"codevouch\[\w+\]", f.read_text(encoding="utf-8"))]
    assert found == [], "say `pip install -e '.[EXTRA]'` in a checkout, or name the extra"


# A figure that goes stale (chunks, tests, minutes, a rate) is a link to what measures it, or it is
# not in the README.
FIGURE = re.compile(r"\d[\d,.]*\s*(?:chunks/s|chunks|tests|min\b|minutes)")


def test_every_figure_in_the_readme_is_a_link_to_what_keeps_it_true() -> None:
    text = re.sub(r"```.*?```", "", README.read_text(encoding="utf-8"), flags=re.S)
    linked = " ".join(re.findall(r"\[([^\]]*)\]\(docs/BENCHMARKS\.md#[^)]+\)", text))
    bare = [m.group(0) for m in FIGURE.finditer(text) if m.group(0) not in linked]
    assert bare == []


def test_the_readmes_build_rate_is_the_build_benchmarks() -> None:
    import json
    figures = json.loads((ROOT / "bench" / "results" / "benchmarks.json").read_text(encoding="utf-8"))["figures"]
    rate = figures["build"]["full_build"]["chunks_per_second"]
    [shown] = re.findall(r"\[(\d+) chunks/s on two idle cores\]\(docs/BENCHMARKS\.md#1-index-build\)",
                         README.read_text(encoding="utf-8"))
    assert int(shown) == round(rate), f"the build benchmark says {rate} chunks/s: say {round(rate)} in the README"
