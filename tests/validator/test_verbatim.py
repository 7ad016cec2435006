"""The window rule: another tool's window of text is judged by its text (validator/verbatim.py),
pure cases first, then real LangChain windows over a real git history."""
from __future__ import annotations

import os
from typing import Any

import pytest

from codevouch.validator import to_json, validate
from codevouch.validator.verbatim import Window, locate
from tests.gitrepo import Repo

FILE = "class A:\n    def send(self, r):\n        return r\n\n    pass\n    pass\n"


def test_a_stripped_window_is_found_at_its_lines() -> None:
    place = locate(Window.of("def send(self, r):\n        return r"), FILE)
    assert place is not None and (place.start_line, place.end_line, place.offset) == (2, 3, FILE.index("def send"))


def test_crlf_either_way_with_offsets_in_the_file_as_given() -> None:
    crlf = FILE.replace("\n", "\r\n")
    place = locate(Window.of("def send(self, r):\n        return r"), crlf)
    assert place is not None and (place.start_line, place.offset) == (2, crlf.index("def send"))
    assert locate(Window.of("def send(self, r):\r\n        return r"), FILE) is not None


def test_whole_crlf_lines_are_found_in_their_file_changed_further_down() -> None:
    # Lines 1-3 of a CRLF file as the indexer cuts them (split at "\n"): the last keeps its "\r".
    old = FILE.replace("\n", "\r\n")
    window = Window.of("\n".join(old.split("\n")[:3]), 1)
    assert locate(window, old.replace("pass\r\n    pass", "pass\r\n    return"), old) is not None


def test_a_byte_order_mark_on_one_side_only_is_no_change() -> None:
    # Judged with its own version (old) too, as a call that read the old blob judges it.
    marked = "\ufeff" + FILE
    first, bare = marked[:marked.index("\n    ", 20)], FILE[:FILE.index("\n    ", 20)]     # lines 1-2
    for window, hay, old in ((first, FILE, marked), (bare, marked, FILE), (first, FILE, None)):
        place = locate(Window.of(window, 1), hay, old)
        assert place is not None and (place.start_line, place.offset) == (1, hay.index("class")), (window, hay[:3])


def test_one_changed_character_is_a_changed_window() -> None:
    assert locate(Window.of("def send(self, r):\n        return  r"), FILE) is None
    assert locate(Window.of("def send(self, r):\n       return r"), FILE) is None


def test_blanks_the_window_kept_must_be_the_lines_own() -> None:
    # "  def send" sits inside "    def send", but the window began at a line with 2 blanks.
    assert locate(Window.of("  def send(self, r):"), FILE) is None
    assert locate(Window.of("    def send(self, r):"), FILE) is not None


def test_not_inside_a_longer_word_nor_a_grown_line() -> None:
    assert locate(Window.of("end(self, r):"), FILE) is None
    assert locate(Window.of("# demo", 1), "# demo, edited\n", old="# demo\n") is None
    assert locate(Window.of("# demo", 1), "# demo, edited\n") is None


def test_a_window_cut_mid_line_may_sit_mid_line_when_its_version_shows_it() -> None:
    old = "x = compute(alpha, beta)\n"
    now = "y = 0\nx = compute(alpha, beta)\n"
    place = locate(Window.of("compute(alpha, beta)", 1, 4), now, old=old)
    assert place is not None and (place.start_line, place.own) == (2, False)


def test_a_reindented_line_is_changed_where_the_version_shows_it() -> None:
    old = "class A:\n  def send(self, r):\n        return r\n"
    assert locate(Window.of("def send(self, r):", 2), FILE, old=old) is None
    same = "class A:\n    def send(self, r):\n"
    assert locate(Window.of("def send(self, r):", 2), FILE, old=same) is not None


def test_a_short_window_is_placed_only_where_its_lines_or_offset_point() -> None:
    assert locate(Window.of("pass"), FILE) is None                     # in two places: not fresh
    assert locate(Window.of("pass", 9), FILE) is None                   # at neither of them
    by_line = locate(Window.of("pass", 6), FILE)
    by_offset = locate(Window.of("pass", None, FILE.rindex("pass")), FILE)
    assert by_line == by_offset and by_line is not None
    assert (by_line.start_line, by_line.own, by_line.count) == (6, True, 2)


def test_a_window_cut_inside_a_word_may_sit_inside_one_when_its_version_shows_it() -> None:
    # A splitter cuts a token longer than its window at a character: 120 digits, cut at 60.
    digits = "".join(str(i % 10) for i in range(120))
    old = f"N = {digits}\n"
    tail = Window.of(digits[60:], 1, 4 + 60)
    place = locate(tail, old, old=old)
    assert place is not None and (place.start_line, place.own) == (1, True)
    assert locate(tail, "# moved\n" + old, old=old) is not None      # lines moved, text intact
    assert locate(tail, old) is None                                   # no version to show the cut
    assert locate(tail, old.replace(digits[100], "x"), old=old) is None
    # A window its version shows at a word's edge is still not found inside a longer word.
    assert locate(Window.of("x = f()", 1), "max = f()\n", old="x = f()\n") is None


def test_blank_text_proves_nothing() -> None:
    assert locate(Window.of("  \n "), FILE) is None


# --- real windows from a real LangChain splitter over a real history ---------------------------

def _module(name: str, methods: int) -> str:
    parts = [f'"""The {name} module."""\nimport os\n\n']
    for c in range(2):
        parts.append(f"\nclass {name.title()}{c}:\n    \"\"\"A class.\"\"\"\n\n")
        for m in range(methods):
            parts.append(f"    def method_{m}(self, value):\n"
                         f"        total = value * {m + 1} + {c}\n"
                         f"        if total > {m * 10}:\n"
                         f"            return os.path.join(str(total), '{name}')\n"
                         f"        return None\n\n")
    return "".join(parts)


def _windows(repo: Repo, commit: str, paths: list[str]) -> list[dict[str, Any]]:
    splitters = pytest.importorskip("langchain_text_splitters")
    splitter = splitters.RecursiveCharacterTextSplitter.from_language(
        splitters.Language.PYTHON, chunk_size=1000, chunk_overlap=100, add_start_index=True)
    items = []
    for path in paths:
        content = repo.show(commit, path)
        for doc in splitter.create_documents([content]):
            at = doc.metadata["start_index"]
            start = content.count("\n", 0, at) + 1
            items.append({"path": path, "commit": commit, "blob_sha": repo.blob(commit, path),
                          "text": doc.page_content, "start_index": at, "start_line": start,
                          "end_line": start + doc.page_content.count("\n")})
    return items


def test_langchain_windows_are_judged_by_their_text(repo: Repo) -> None:
    paths = ["shop/orders.py", "shop/billing.py", "shop/util.py", "shop/same.py"]
    old = repo.commit(**{p: _module(p.split("/")[1][:-3], 12) for p in paths})
    windows = _windows(repo, old, paths)
    # The splitter stripped the indentation off some windows' first line (the case at stake).
    assert len(windows) >= 12 and any(repo.show(old, w["path"]).split("\n")[w["start_line"] - 1]
                                      .startswith(" ") for w in windows)
    orders = repo.read("shop/orders.py")
    # Lines pushed down, one method changed, a file renamed and changed elsewhere, CRLF.
    repo.write("shop/orders.py", "# a new header line\n\n" + orders.replace("value * 3 + 1", "value * 33 + 1"))
    repo.git("mv", "shop/billing.py", "shop/payments.py")
    repo.write("shop/payments.py", repo.read("shop/payments.py") + "\n\ndef extra():\n    return 1\n")
    repo.write("shop/util.py", repo.read("shop/util.py").replace("\n", "\r\n").replace("value * 5 + 0", "value * 5 + 9"))
    repo.commit("later")
    current = {"shop/orders.py": repo.read("shop/orders.py"), "shop/billing.py": repo.read("shop/payments.py"),
               "shop/util.py": repo.read("shop/util.py").replace("\r\n", "\n"), "shop/same.py": repo.read("shop/same.py")}
    results = [to_json(v) for v in validate(repo.root, windows)]
    kept = changed = 0
    for w, out in zip(windows, results):
        if w["text"] in current[w["path"]]:
            kept += 1
            assert out["verdict"] not in ("historical-only", "excluded"), (w["path"], out["reason"], out["detail"])
            cur = out["current"]
            assert w["text"] in "\n".join(current[w["path"]].split("\n")[cur["start_line"] - 1:cur["end_line"]])
        else:
            changed += 1
            assert out["verdict"] not in ("usable", "stale-but-ok"), (w["path"], out["reason"])
    assert kept > 8 and changed >= 2


def test_short_windows_and_unversioned_windows_on_a_real_repository(repo: Repo) -> None:
    text = "def a():\n    return None\n\n\ndef b():\n    return None\n"
    old = repo.commit(**{"m.py": text})
    repo.write("m.py", "import os\n" + text)        # every line one down
    repo.commit("header")
    item = {"path": "m.py", "commit": old, "text": "return None"}
    own = to_json(validate(repo.root, [{**item, "start_line": 3, "end_line": 3}])[0])
    lost = to_json(validate(repo.root, [{**item, "start_line": 9, "end_line": 9}])[0])
    nowhere = to_json(validate(repo.root, [item])[0])
    assert (own["verdict"], own["current"]["start_line"]) == ("stale-but-ok", 3)
    assert "occurs 2 times" in own["detail"]
    assert lost["verdict"] == nowhere["verdict"] == "historical-only"
    plain = to_json(validate(repo.root, [{"path": "m.py", "start_line": 6, "end_line": 7,
                                           "text": "def b():\n    return None"}])[0])
    stripped = to_json(validate(repo.root, [{"path": "m.py", "start_index": len("import os\n") + 9,
                                             "text": "return None\n\n\ndef b():"}])[0])
    assert (plain["reason"], stripped["reason"]) == ("text-found", "text-found")
    assert (stripped["current"]["start_line"], stripped["current"]["end_line"]) == (3, 6)


def test_windows_cut_inside_a_long_token_are_fresh_in_an_unchanged_file(repo: Repo) -> None:
    # A literal longer than the window is cut at characters, mid-number; the file is unchanged.
    digits = "".join(str(i * 7 % 10) for i in range(2600))
    old = repo.commit(**{"lits.py": f'def big():\n    return int("{digits}")\n'})
    windows = _windows(repo, old, ["lits.py"])
    assert len(windows) >= 3
    results = validate(repo.root, windows)
    assert [(v.verdict, v.reason) for v in results] == [("usable", "same-commit")] * len(windows)


def test_a_repeated_block_is_placed_at_the_one_nearest_its_lines() -> None:
    block = "def f(self):\n    a = 1\n    return a\n"
    hay = "# top\n# more\n" + block + "\n" * 21 + block
    place = locate(Window.of(block.strip(), 1), hay)
    assert place is not None and (place.start_line, place.own, place.count) == (3, False, 2)
    assert locate(Window.of(block.strip()), hay) is None                   # no position: not placed
    second = hay.count("\n", 0, hay.rindex("def f")) + 1
    middle = (3 + second) // 2
    assert middle - 3 == second - middle
    assert locate(Window.of(block.strip(), middle), hay) is None           # as near to both
    assert locate(Window.of("return a", 1), hay) is None                   # short: never by nearness


@pytest.mark.parametrize("fields, message", [
    ({"start_index": -1}, "character offset"), ({"start_char_idx": True}, "character offset"),
    ({"start_index": "3"}, "character offset"), ({"start_index": 3, "start_char_idx": 4}, "disagree")])
def test_bad_offsets_are_input_errors_that_say_what_to_do(fields: dict[str, Any], message: str) -> None:
    import json

    from codevouch.errors import InputError
    from codevouch.validator import parse_snippets
    with pytest.raises(InputError, match=message):
        parse_snippets(json.dumps([{"path": "m.py", "text": "x", **fields}]))


def test_either_offset_spelling_is_read() -> None:
    from codevouch.validator.parse import check_snippet
    assert check_snippet({"path": "m.py", "start_index": 5}, "x").start_char == 5
    assert check_snippet({"path": "m.py", "start_char_idx": 0, "start_index": 0}, "x").start_char == 0


# Property: whatever edits happen, a stripped window is never usable or stale-but-ok unless its
# text is in the current file, and `current` then holds it.
from hypothesis import HealthCheck, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

from tests.validator.test_property import BASE, PATH, apply, edits  # noqa: E402


@pytest.fixture(scope="module")
def windows_repo(tmp_path_factory: pytest.TempPathFactory) -> tuple[Repo, str]:
    repo = Repo.create(tmp_path_factory.mktemp("windows") / "repo")
    repo.write(PATH, BASE)
    return repo, repo.commit("base")


@settings(max_examples=int(os.environ.get("CODEVOUCH_PROP_EXAMPLES", "40")), deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(changes=edits, cut=st.lists(st.tuples(st.integers(0, len(BASE)), st.integers(1, 200)), min_size=1, max_size=6),
       with_version=st.booleans())
def test_a_window_is_never_fresh_unless_its_text_is_there(windows_repo: tuple[Repo, str], changes: list[Any],
                                                         cut: list[tuple[int, int]], with_version: bool) -> None:
    repo, base = windows_repo
    repo.write(PATH, apply(BASE, changes))
    current = repo.read(PATH)
    items = []
    for at, size in cut:
        text = BASE[at:at + size].strip()
        if text:
            item: dict[str, Any] = {"path": PATH, "text": text, "start_index": BASE.index(text, at)}
            items.append({**item, "commit": base} if with_version else item)
    for item, v in zip(items, validate(repo.root, items)):
        if v.verdict in ("usable", "stale-but-ok"):
            assert item["text"] in current
            assert v.current is not None
            assert item["text"] in "\n".join(current.split("\n")[v.current.start_line - 1:v.current.end_line])


def test_windows_cut_mid_line_stay_current_after_a_line_above_and_a_rename(repo: Repo) -> None:
    """A sentence splitter's window starts and ends mid-line. Its own version (read from git at
    its commit) shows where it was cut, so a line added above or a pure rename keeps it current;
    an end that was a line's end must still be one (a grown line is a changed window)."""
    text = "def alpha(x):\n    y = x + 1\n    return y\n\n\ndef beta(total):\n    total = total * 2\n    return total\n"
    old = repo.commit(**{"m.py": text})
    mid = text[text.index("x + 1"):text.index("total *") + len("total *")]
    whole_end = text[text.index("= total * 2"):]          # ends at the file's last line's end
    items = [{"path": "m.py", "commit": old, "start_index": text.index(t), "text": t} for t in (mid, whole_end.strip())]
    assert [v.verdict for v in validate(repo.root, items)] == ["usable", "usable"]

    repo.write("m.py", "# new\n" + text.replace("    return total\n", "    return total * tax\n"))
    above = validate(repo.root, items)
    assert (above[0].verdict, above[0].reason) == ("stale-but-ok", "chunk-moved")
    assert above[0].current is not None and (above[0].current.start_line, above[0].current.end_line) == (3, 8)
    # "return total" is verbatim in "return total * tax", but its line grew: not the same code.
    assert above[1].verdict == "historical-only"

    repo.write("m.py", text)
    repo.git("mv", "m.py", "m2.py")
    renamed = validate(repo.root, items)
    assert [(v.verdict, v.reason) for v in renamed] == [("stale-but-ok", "file-renamed")] * 2
    assert renamed[0].current is not None and renamed[0].current.path == "m2.py"


def test_a_short_repeated_window_is_carried_where_its_own_lines_are_now() -> None:
    """A code splitter's one-line window (`\"\"\"`, `return None`) occurs many times in a file. With
    its own version at hand, a line diff carries it to where its own lines are now; where those
    lines changed it is placed nowhere (never "somewhere")."""
    old = "def a():\n    return None\n\n\ndef b():\n    return None\n"
    window = Window.of("return None", 6, old.rindex("return None"))
    above = "# one\n# two\n" + old
    place = locate(window, above, old=old)
    assert place is not None and (place.start_line, place.own, place.carried, place.count) == (8, False, True, 2)
    assert place.offset == above.rindex("return None")
    # Its own line changed (b's body): the others are a's and c's, not the window's.
    changed = "# one\n" + old[:old.rindex("None")] + "x\n\n\ndef c():\n    return None\n"
    assert locate(window, changed, old=old) is None
    # Only a line near it changed: its own line is where the diff carries it.
    place = locate(window, old.replace("def b():", "def b(x):"), old=old)
    assert place is not None and place.start_line == 6 and place.own
    # Without its own version, a short window at none of its own lines is not placed.
    assert locate(window, above) is None
    # Edits below and in two places around it: the middle is diffed.
    both = "# top\n" + old.replace("def a():", "def a(y):") + "\n\ndef c():\n    return None\n"
    place = locate(window, both, old=old)
    assert place is not None and place.start_line == 7 and place.carried


def test_short_code_splitter_windows_stay_current_after_a_line_above(repo: Repo) -> None:
    """End to end: one-line windows repeated in the file, as LlamaIndex's CodeSplitter cuts them,
    sent with their offsets; a comment line added at the top keeps every one current."""
    text = "".join(f'def f{i}(x):\n    """Doc {i}."""\n    return None\n\n\n' for i in range(4))
    old = repo.commit(**{"r.py": text})
    at = [i for i in range(len(text)) if text.startswith("return None", i)]
    items = [{"path": "r.py", "commit": old, "start_index": i, "text": "return None",
              "start_line": text.count("\n", 0, i) + 1} for i in at]
    repo.write("r.py", "# added\n" + text)
    found = validate(repo.root, items)
    assert [(v.verdict, v.reason) for v in found] == [("stale-but-ok", "chunk-moved")] * 4
    assert [v.current.start_line for v in found if v.current] == [items[k]["start_line"] + 1 for k in range(4)]
    assert "where the lines around it in its own version are now" in found[0].detail
    f2 = text.index("return None", text.index("def f2"))
    repo.write("r.py", "# added\n" + text[:f2] + "return x" + text[f2 + len("return None"):])
    assert [v.verdict for v in validate(repo.root, items)][2] == "historical-only"


def test_a_stripped_window_from_an_indented_line_is_not_the_bare_line_elsewhere(repo: Repo) -> None:
    """A code splitter's window `\"\"\"` cut from an indented line (its indentation stripped) is
    not the module docstring's closing quotes at a line's start: its own version says so."""
    text = '"""Module."""\nx = f(\n    1,\n    """\n    data\n    """,\n)\n'
    old = repo.commit(**{"d.py": text})
    at = text.index('    """,') + 4
    item = {"path": "d.py", "commit": old, "start_index": at, "text": '"""', "start_line": 6}
    assert validate(repo.root, [item])[0].verdict == "usable"
    repo.write("d.py", '"""Module.\n\nMore.\n"""\nx = f(1)\n')
    found = validate(repo.root, [item])[0]
    assert found.verdict == "historical-only", (found.reason, found.detail)
    repo.write("d.py", "# added\n" + text)
    moved = validate(repo.root, [item])[0]
    assert (moved.verdict, moved.current and moved.current.start_line) == ("stale-but-ok", 7)


def test_a_window_past_the_first_places_is_carried_by_its_own_offset() -> None:
    """A one-character window (`{`) in a file that holds it hundreds of times, on a line that
    holds it twice: its own offset, not a search, says which one it is."""
    old = "".join(f"func f{i}() {{ g({{}}) }}\n" for i in range(300))
    at = old.index("{", old.index("func f250"))
    window = Window.of("{", 251, at)
    new = "// added\n" + old
    place = locate(window, new, old=old)
    assert place is not None and place.carried and (place.start_line, place.offset) == (252, at + len("// added\n"))
