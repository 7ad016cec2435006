"""What may stay on sys.path (codevouch/importpath.py): nothing a working directory decides."""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from codevouch.importpath import trusted


def test_empty_relative_and_starting_directory_entries_go() -> None:
    entries = ["", "/repo", ".", "lib", "/usr/lib/python3.11", "/repo/", "/venv/site-packages"]
    assert trusted(entries, "/repo", own="/opt/codevouch") == ["/usr/lib/python3.11", "/venv/site-packages"]


def test_the_directory_codevouch_lives_in_stays_when_it_is_the_working_directory() -> None:
    assert trusted(["/opt/checkout", "/usr/lib"], "/opt/checkout", own="/opt/checkout") == ["/opt/checkout", "/usr/lib"]
    assert trusted(["/opt/checkout"], "/elsewhere", own="/opt/checkout") == ["/opt/checkout"]


def test_after_secure_a_module_in_the_working_directory_is_not_importable(tmp_path: Path) -> None:
    """`python -c` puts '' first and `python -m` the starting directory: after secure(), as
    main() calls it, neither is on sys.path and a module planted there is not found."""
    (tmp_path / "planted_here.py").write_text("print('PLANTED')\n")
    code = ("import sys; sys.path.insert(0, sys.argv[1]); "
            "from codevouch import importpath; importpath.secure(); "
            "print('' in sys.path, sys.argv[1] in sys.path)\n"
            "try:\n    import planted_here\nexcept ModuleNotFoundError:\n    print('not found')")
    done = subprocess.run([sys.executable, "-c", code, str(tmp_path)], cwd=tmp_path, capture_output=True, text=True,
                          timeout=60, check=True)
    assert done.stdout.split("\n")[:2] == ["False False", "not found"]
