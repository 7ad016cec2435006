"""The freshness figure's ground truth (bench/codevouch_bench/lib/truth.py, tooldefs.py) on
hand-made histories in real git repositories: each rule here was found wrong on a real release
history (leveldb, scopt, serilog) and fixed in the truth, never by reading codevouch's verdicts."""
from __future__ import annotations

from pathlib import Path

from codevouch_bench.lib import corpus
from codevouch_bench.lib.tooldefs import definitions
from codevouch_bench.lib.truth import EXPECTED, FRESH_TRUTH, NewRelease, chunk_class, file_fates


def _history(tmp_path: Path, old: dict[str, bytes], new: dict[str, bytes]) -> tuple[Path, str, str]:
    repo = tmp_path / "r"
    corpus.init_repo(repo)
    corpus.replace_tree(repo, old)
    first = corpus.commit_all(repo, "N")
    corpus.replace_tree(repo, new)
    return repo, first, corpus.commit_all(repo, "N+1")


def test_cpp_walk_reads_a_class_whose_head_holds_an_export_macro() -> None:
    """tree-sitter-cpp reads `class LEVELDB_EXPORT TableBuilder {` as a function returning
    `class LEVELDB_EXPORT`: the walk blanks the macro, as the preprocessor would, and finds the
    class and its inline method; a C function returning a struct stays a function."""
    header = ("namespace leveldb {\nclass LEVELDB_EXPORT TableBuilder {\n public:\n"
              "  TableBuilder(const TableBuilder&) = delete;\n private:\n"
              "  bool ok() const { return status().ok(); }\n};\n"
              "struct GTEST_API_ TestInfo : public Base {\n  int f() { return 1; }\n};\n"
              "struct tm now() { struct tm t; return t; }\n}  // namespace leveldb\n")
    assert [(d.name, d.start, d.end, d.function) for d in definitions("include/table_builder.h", header)] == [
        ("leveldb", 1, 12, False), ("leveldb.TableBuilder", 2, 7, False),
        ("leveldb.TableBuilder.TableBuilder", 4, 4, True), ("leveldb.TableBuilder.ok", 6, 6, True),
        ("leveldb.TestInfo", 8, 10, False), ("leveldb.TestInfo.f", 9, 9, True), ("leveldb.now", 11, 11, True)]


# Enough other code in a file of N+1 that git sees no rename of the deleted file into it.
PAD = "".join(f"\n\ndef pad{i}(x):\n    return x * {i}\n" for i in range(20))
OPTION = ('class Option:\n    def value_name(self, x):\n        self._v = x\n        return self\n\n'
          '    def short(self):\n        return self._s\n    def value_name(self):\n        return self._v\n')


def test_an_overloaded_name_is_judged_by_the_definition_the_snippet_shows(tmp_path: Path) -> None:
    """scopt's getter `valueName` beside its setter `valueName(x)`: a chunk of the getter, moved
    intact to another file while the setter changed, is current; the truth once judged the name
    by its first definition, the setter, and called the chunk deleted."""
    moved = OPTION.replace("self._v = x", "self._v = str(x)")
    repo, old, new = _history(tmp_path, {"options.py": OPTION.encode()}, {"option_def.py": (moved + PAD).encode()})
    fates = file_fates(repo, old, new, ["options.py"])
    assert fates["options.py"].status == "deleted"
    release = NewRelease(repo, new, ["option_def.py"])
    fate = fates["options.py"]
    getters = chunk_class("options.py", "Option.short, Option.value_name", 6, 9, fate, OPTION, None, release)
    setter = chunk_class("options.py", "Option.value_name", 2, 4, fate, OPTION, None, release)
    assert (getters, setter) == ("function-moved-to-file", "file-deleted")
    assert getters in FRESH_TRUTH


def test_a_moved_definition_is_current_only_with_the_lines_the_snippet_shows(tmp_path: Path) -> None:
    """A chunk that shows imports above a function moved intact, the imports changed on the way:
    the function is current, the chunk as a whole is not (ambiguous, as a chunk split in its own
    file is)."""
    old_text = "import os\nimport sys\n\n\ndef keep():\n    return 1\n"
    new_text = "import re\n\n\ndef keep():\n    return 1\n"
    repo, old, new = _history(tmp_path, {"a.py": old_text.encode()}, {"b.py": (new_text + PAD).encode()})
    fate = file_fates(repo, old, new, ["a.py"])["a.py"]
    release = NewRelease(repo, new, ["b.py"])
    assert chunk_class("a.py", "<module>, keep", 1, 6, fate, old_text, None, release) == "function-moved-chunk-split"
    assert chunk_class("a.py", "keep", 5, 6, fate, old_text, None, release) == "function-moved-to-file"
    assert EXPECTED["function-moved-chunk-split"] == {"stale-but-ok", "historical-only"}


def test_module_code_of_a_deleted_file_moved_to_exactly_one_file(tmp_path: Path) -> None:
    """scopt's `implicit val`s of object Read, verbatim in Read.scala after options.scala was
    split: module code found in exactly one file of N+1 may have moved there (or be a look-alike:
    no name tells), so either verdict is right; found in several (leveldb's `namespace leveldb {`),
    it is code of no file in particular and stays deleted."""
    old_text = "namespace = 1\n\nINT_READ = reads(int)\nLONG_READ = reads(long)\n\nother = 2\n"
    repo, old, new = _history(tmp_path, {"options.py": old_text.encode()},
                              {"read.py": b"INT_READ = reads(int)\nLONG_READ = reads(long)\nnamespace = 1\n" + PAD.encode(),
                               "misc.py": b"namespace = 1\n"})
    fate = file_fates(repo, old, new, ["options.py"])["options.py"]
    release = NewRelease(repo, new, ["read.py", "misc.py"])
    assert chunk_class("options.py", "<module>", 3, 4, fate, old_text, None, release) == "other-code-elsewhere"
    assert EXPECTED["other-code-elsewhere"] == {"stale-but-ok", "historical-only"}
    assert chunk_class("options.py", "<module>", 1, 1, fate, old_text, None, release) == "file-deleted"
    assert chunk_class("options.py", "<module>", 6, 6, fate, old_text, None, release) == "file-deleted"


def test_a_dropped_byte_order_mark_changes_no_code(tmp_path: Path) -> None:
    """serilog's AssemblyInfo.cs lost its UTF-8 BOM and nothing else: the code a chunk at line 1
    shows is unchanged (the mark is an encoding signature); a real edit is still stale, though
    another file holds the old line (module code of a file still there changed in place)."""
    text = '[assembly: AssemblyVersion("2.0.0.0")]\n\n[assembly: CLSCompliant(true)]\n'
    edited = text.replace("2.0.0.0", "3.0.0.0")
    old_text = "\ufeff" + text
    repo, old, new = _history(tmp_path, {"AssemblyInfo.cs": old_text.encode(), "Other.cs": old_text.encode()},
                              {"AssemblyInfo.cs": text.encode(), "Other.cs": edited.encode()})
    fates = file_fates(repo, old, new, ["AssemblyInfo.cs", "Other.cs"])
    assert fates["AssemblyInfo.cs"].status == fates["Other.cs"].status == "modified"
    release = NewRelease(repo, new, ["AssemblyInfo.cs", "Other.cs"])
    assert chunk_class("AssemblyInfo.cs", "<module>", 1, 3, fates["AssemblyInfo.cs"], old_text, text, release) \
        == "other-code-intact"
    assert chunk_class("Other.cs", "<module>", 1, 1, fates["Other.cs"], old_text, edited, release) \
        == "other-code-changed"
