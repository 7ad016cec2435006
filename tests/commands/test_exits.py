"""The CLI's exit codes live in one table (codevouch/commands/exits.py), with the values the
documentation's table gives."""
from __future__ import annotations

import re
from pathlib import Path

from codevouch.commands import exits

ROOT = Path(__file__).resolve().parents[2]


def documented_codes() -> set[int]:
    """The codes of the first markdown table headed `| code | meaning |` in README.md or docs/."""
    for page in [ROOT / "README.md", *sorted((ROOT / "docs").glob("**/*.md"))]:
        lines = page.read_text("utf-8").splitlines()
        for n, line in enumerate(lines):
            if re.fullmatch(r"\|\s*code\s*\|\s*meaning\s*\|", line.strip()):
                codes = set()
                for row in lines[n + 2:]:     # after the header's |---|---| line
                    found = re.match(r"\|\s*(\d+)\s*\|", row)
                    if found is None:
                        break
                    codes.add(int(found.group(1)))
                assert codes, f"{page.name}: the exit-code table has no rows"
                return codes
    raise AssertionError("no exit-code table (`| code | meaning |`) in README.md or docs/")


def test_the_table_has_the_documented_values() -> None:
    table = {value for name, value in vars(exits).items() if name.startswith("EXIT_")}
    assert documented_codes() == table
    assert exits.EXIT_HISTORICAL == exits.EXIT_MISSING == 3 and exits.EXIT_INTERRUPTED == 130
    # __main__ spells 130 out (see there): it must be the table's.
    assert "SystemExit(130)" in (ROOT / "codevouch" / "__main__.py").read_text("utf-8")
