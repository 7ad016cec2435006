"""The hook's text, the install record's reads, and telling a user's lines from codevouch's."""
from __future__ import annotations

import os
import shlex
import subprocess
from pathlib import Path

from codevouch.indexer import hookfiles

WROTE = "#!/bin/sh\n# codevouch-hook v2: post-commit\nrun it &\nexit 0\n"


def test_lines_added_anywhere_are_theirs_and_a_changed_line_is_unknown() -> None:
    assert hookfiles.their_lines(WROTE, WROTE) == []
    assert hookfiles.their_lines(WROTE, WROTE + "echo mine\n") == ["echo mine\n"]
    assert hookfiles.their_lines(WROTE, WROTE.replace("run it &\n", "run it &\necho a\necho b\n")) == [
        "echo a\n", "echo b\n"]
    assert hookfiles.their_lines(WROTE, WROTE.replace("run it &", "run it")) is None
    assert hookfiles.their_lines(WROTE, WROTE.replace("exit 0\n", "")) is None
    assert hookfiles.without_ours(WROTE, ["echo mine\n"]) == "#!/bin/sh\necho mine\n"
    assert hookfiles.without_ours(WROTE, ["#!/bin/bash\n", "echo mine"]) == "#!/bin/bash\necho mine"


def test_reads_refuse_links_fifos_and_oversized_files(tmp_path: Path) -> None:
    (tmp_path / "hook").write_text(WROTE)
    os.symlink(tmp_path / "hook", tmp_path / "link")
    os.mkfifo(tmp_path / "fifo")
    (tmp_path / "big").write_bytes(b"#" * (hookfiles.MAX_HOOK_BYTES + 1))
    assert hookfiles.read_regular(tmp_path / "hook") == WROTE.encode() and hookfiles.is_ours(tmp_path / "hook")
    for name in ("link", "fifo", "big", "missing"):
        assert hookfiles.read_regular(tmp_path / name) is None, name
    assert hookfiles.fingerprint(tmp_path / "link") == hookfiles.Fingerprint(
        "link", hookfiles.fingerprint_text(str(tmp_path / "hook")))
    assert hookfiles.fingerprint(tmp_path / "fifo") is None
    assert hookfiles.fingerprint(tmp_path / "hook").kind == "file"


def test_every_value_in_the_script_is_quoted(tmp_path: Path) -> None:
    odd = tmp_path / "idx'$(touch x)'\ntouch y\n#"
    text = hookfiles.script("post-commit", tmp_path / "g\nit", odd, odd / "hooks.log", "fake; rm", 5, True, "py thon")
    hook = tmp_path / "post-commit"
    hook.write_text(text)
    assert subprocess.run(["sh", "-n", str(hook)], check=False).returncode == 0
    start = text.index("'py thon'")
    words = shlex.split(text[start:text.index(" </dev/null", start)])
    assert words[:4] == ["py thon", "-m", "codevouch", "hooks"]
    assert words[words.index("--index") + 1] == str(odd) and words[words.index("--for") + 1] == str(tmp_path / "g\nit")
    assert words[words.index("--embedder") + 1] == "fake; rm"
    assert hookfiles.installed_for(hook) == str(tmp_path / "g\nit")
