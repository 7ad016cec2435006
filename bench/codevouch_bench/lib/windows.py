"""Splitter windows, the freshness figure's third snippet source, and their ground truth.

Windows: LangChain's text splitters as a retrieval pipeline runs them, `RecursiveCharacterTextSplitter
.from_language` for each file's language (Python, Go, TypeScript, JavaScript, Rust) at 1,000
characters with 100 overlap, its default whitespace stripping, `add_start_index=True`, over every
file of those languages at release N. Each window gets its path, commit, blob, offset and lines, and
is validated against the working tree at release N+1.

Ground truth, by plain string search here, never by codevouch's matcher: a window is *current* when
the text it stands for is in the new file at its own path, or at git's rename target of that path
(`git diff -M`). The text it stands for is its text with what the splitter stripped put back where
that runs to a line edge: a window that began at a line's indentation must begin at a line's start
with the same indentation (a re-indented line is a changed line), one that ended at a line's end
must end at one with the same trailing blanks; a window cut mid-line may sit mid-line. Line
endings (CRLF / LF) are the one other difference forgiven. `loose` truth (the bare window text
anywhere in the file) is kept beside it, to show how much the choice matters.

Other splitters (SPLITTERS) cut the same files as their pipelines would, for the splitters figure
(codevouch_bench/splitters.py): LangChain's plain RecursiveCharacterTextSplitter, and LlamaIndex's
SentenceSplitter and CodeSplitter at their defaults. A window is sent with the offset its splitter
gives (`start_index`, LlamaIndex's `start_char_idx`); one whose splitter cannot place it in its file
is counted apart (`unplaced`), as a pipeline could only send its bare text.
"""
from __future__ import annotations

import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from codevouch_bench.lib import corpus

CHUNK_SIZE, OVERLAP = 1000, 100
FRESH = ("usable", "stale-but-ok")
TRUTH = ("current: the window's text, with the blanks the splitter stripped put back where they run to a "
         "line edge, is in the new file at its own path or git's rename target (`git diff -M`), beginning "
         "(ending) at a line edge where it did in release N; CRLF as LF; plain string search in the "
         "benchmark, never codevouch's matcher. Right: usable / stale-but-ok for a current window, "
         "historical-only / excluded otherwise")
# suffix -> LangChain's Language member name
LANGUAGES = {".py": "PYTHON", ".go": "GO", ".ts": "TS", ".js": "JS", ".rs": "RUST"}


@dataclass(frozen=True)
class Stands:
    """What a window stands for in its own version: its text with the stripped blanks that run to a
    line edge put back, and whether it must begin (end) at a line edge."""
    text: str
    at_line_start: bool
    at_line_end: bool


def stands_for(old: str, start: int, text: str) -> Stands:
    """The window `text` found at offset `start` of `old` (both LF), as it stands there."""
    end = start + len(text)
    line_start = old.rfind("\n", 0, start) + 1
    stop = old.find("\n", end)
    stop = len(old) if stop == -1 else stop
    lead, tail = old[line_start:start], old[end:stop]
    head_edge, tail_edge = not lead.strip(), not tail.strip()
    return Stands((lead if head_edge else "") + text + (tail if tail_edge else ""), head_edge, tail_edge)


def occurs(s: Stands, new: str) -> bool:
    """Whether `s` is in `new` (LF) with its line edges where they must be."""
    pos = new.find(s.text)
    while pos != -1:
        end = pos + len(s.text)
        if (not s.at_line_start or pos == 0 or new[pos - 1] == "\n") and \
                (not s.at_line_end or end == len(new) or new[end] == "\n"):
            return True
        pos = new.find(s.text, pos + 1)
    return False


def lf(data: bytes) -> str | None:
    """A file's text with CRLF as LF, or None when it is not UTF-8 (such files are left out)."""
    try:
        return data.decode("utf-8").replace("\r\n", "\n")
    except UnicodeDecodeError:
        return None


# A splitter: (suffix, LF text) -> its windows as (offset, text); offset -1 when it cannot say.
Cutter = Callable[[str, str], list[tuple[int, str]]]
SPLITTERS = {
    "langchain-code": f"LangChain RecursiveCharacterTextSplitter.from_language, {CHUNK_SIZE}/{OVERLAP}, "
                      "default whitespace stripping, add_start_index",
    "langchain-plain": f"LangChain RecursiveCharacterTextSplitter (plain), {CHUNK_SIZE}/{OVERLAP}, "
                       "default whitespace stripping, add_start_index",
    "llamaindex-sentence": "LlamaIndex SentenceSplitter, its defaults (1,024 tokens, 200 overlap)",
    "llamaindex-code": "LlamaIndex CodeSplitter, its defaults (40 lines, 15 overlap, 1,500 characters), "
                       "its tree-sitter parser from the grammar wheels",
}
# suffix -> (CodeSplitter's language name, the grammar wheel's module, its language function)
CODE_GRAMMARS = {".py": ("python", "tree_sitter_python", "language"),
                 ".go": ("go", "tree_sitter_go", "language"),
                 ".ts": ("typescript", "tree_sitter_typescript", "language_typescript"),
                 ".js": ("javascript", "tree_sitter_javascript", "language"),
                 ".rs": ("rust", "tree_sitter_rust", "language")}


def _langchain(plain: bool) -> Cutter:
    from langchain_text_splitters import Language, RecursiveCharacterTextSplitter
    sizes: dict[str, Any] = {"chunk_size": CHUNK_SIZE, "chunk_overlap": OVERLAP, "add_start_index": True}
    by_suffix = {suffix: RecursiveCharacterTextSplitter(**sizes) if plain else
                 RecursiveCharacterTextSplitter.from_language(Language[name], **sizes)
                 for suffix, name in LANGUAGES.items()}
    return lambda suffix, text: [(d.metadata["start_index"], d.page_content)
                                 for d in by_suffix[suffix].create_documents([text])]


def _llama_nodes(splitter: Any, text: str) -> list[tuple[int, str]]:
    from llama_index.core import Document
    out = []
    for node in splitter.get_nodes_from_documents([Document(text=text)]):
        body, at = node.get_content(), node.start_char_idx
        if not body.strip():   # an empty file's one empty node: nothing a pipeline would embed
            continue
        out.append((at if at is not None and text[at:at + len(body)] == body else -1, body))
    return out


def _llamaindex(code: bool) -> Cutter:
    import importlib

    from llama_index.core.node_parser import CodeSplitter, SentenceSplitter
    if not code:
        sentences = SentenceSplitter()
        return lambda suffix, text: _llama_nodes(sentences, text)
    import tree_sitter
    by_suffix = {}
    for suffix, (name, module, function) in CODE_GRAMMARS.items():
        grammar = tree_sitter.Language(getattr(importlib.import_module(module), function)())
        by_suffix[suffix] = CodeSplitter(language=name, parser=tree_sitter.Parser(grammar))
    return lambda suffix, text: _llama_nodes(by_suffix[suffix], text)


def cutter(splitter: str) -> Cutter:
    makers: dict[str, Callable[[], Cutter]] = {
        "langchain-code": lambda: _langchain(plain=False), "langchain-plain": lambda: _langchain(plain=True),
        "llamaindex-sentence": lambda: _llamaindex(code=False), "llamaindex-code": lambda: _llamaindex(code=True)}
    return makers[splitter]()


def files_at(repo: Path, rev: str, prefix: str = "") -> dict[str, str]:
    """Path -> LF text of the splitter languages' files at `rev` (under `prefix`), UTF-8 ones only."""
    out = {}
    for path, data in corpus.blobs_at(repo / ".git", rev, 1 << 30).items():
        text = lf(data) if path.startswith(prefix) and Path(path).suffix in LANGUAGES else None
        if text is not None:
            out[path] = text
    return out


def blob_ids(repo: Path, commit: str) -> dict[str, str]:
    out = {}
    for line in corpus.git(repo, "ls-tree", "-r", commit).splitlines():
        meta, path = line.split("\t", 1)
        out[path] = meta.split()[2]
    return out


def cut(repo: Path, commit: str, files: dict[str, str], splitter: str = "langchain-code") -> list[dict[str, Any]]:
    """Every window of `files` (release N's text), as snippet JSON a pipeline would send; a window
    its splitter could not place has `start_index` -1 (scored apart, never sent)."""
    split, blobs = cutter(splitter), blob_ids(repo, commit)
    items = []
    for path, content in files.items():
        for at, text in split(Path(path).suffix, content):
            start = content.count("\n", 0, max(at, 0)) + 1
            items.append({"path": path, "commit": commit, "blob_sha": blobs[path], "text": text,
                          "start_index": at, "start_line": start, "end_line": start + text.count("\n")})
    return items


def renames(repo: Path, old: str, new: str) -> dict[str, str]:
    out = {}
    for line in corpus.git(repo, "diff", "--name-status", "-M", old, new).splitlines():
        parts = line.split("\t")
        if parts[0].startswith("R"):
            out[parts[1]] = parts[2]
    return out


@dataclass(frozen=True)
class Scene:
    """What the working tree holds when the windows are checked: path -> LF text of the splitter
    languages' files, and git's rename target of each old path that moved."""
    name: str
    new_files: dict[str, str]
    moved: dict[str, str]


def release_scene(repo: Path, old: str, new: str = "HEAD", prefix: str = "") -> Scene:
    """The working tree at `new` (a later release), renames as `git diff -M` finds them."""
    new_files = {p: t for p, t in ((p, lf((repo / p).read_bytes())) for p in files_at(repo, new, prefix)) if t}
    return Scene("release", new_files, renames(repo, old, new))


def score(repo: Path, old: str, new: str = "HEAD", prefix: str = "") -> dict[str, Any]:
    """Windows of every splitter-language file at `old`, validated with the working tree (at `new`)."""
    old_files = files_at(repo, old, prefix)
    return judge(repo, old_files, cut(repo, old, old_files), release_scene(repo, old, new, prefix))


def judge(repo: Path, old_files: dict[str, str], cut_items: list[dict[str, Any]], scene: Scene) -> dict[str, Any]:
    """Each placed window validated in `repo`'s working tree (as `scene` says it is) against its truth."""
    from codevouch.validator import validate

    items = [i for i in cut_items if i["start_index"] >= 0]
    new_files, moved = scene.new_files, scene.moved
    began = time.perf_counter()
    results = validate(repo, items)
    seconds = time.perf_counter() - began
    tally: Counter[str] = Counter()
    stale_reasons: Counter[str] = Counter()
    fresh_reasons: Counter[str] = Counter()
    elsewhere: Counter[str] = Counter()
    loose_differs: Counter[str] = Counter()
    wrong: list[dict[str, Any]] = []
    for item, res in zip(items, results):
        s = stands_for(old_files[item["path"]], item["start_index"], item["text"])
        target = item["path"] if item["path"] in new_files else moved.get(item["path"], "")
        current = occurs(s, new_files.get(target, ""))
        fresh = res.verdict in FRESH
        tally["right"] += current == fresh
        tally["false_fresh"] += fresh and not current
        tally["false_stale"] += current and not fresh
        tally["current"] += current
        if current and not fresh:
            stale_reasons[res.reason] += 1
            # The bare text in several places: a short window at none of its own lines is refused.
            tally["false_stale_repeated"] += new_files[target].count(item["text"]) > 1
        if fresh and not current:
            fresh_reasons[res.reason] += 1
        if current != (item["text"] in new_files.get(target, "")):
            loose_differs[f"{res.verdict}: {res.reason}"] += 1
        if not current and any(occurs(s, t) for p, t in new_files.items() if p != target):
            elsewhere[f"{res.verdict}: {res.reason}"] += 1
        if current != fresh and len(wrong) < 10:
            cur = res.current
            wrong.append({"path": item["path"], "lines": [item["start_line"], item["end_line"]],
                          "truth": "current" if current else "not current", "verdict": res.verdict,
                          "reason": res.reason, "text": item["text"][:120],
                          "current": None if cur is None else f"{cur.path}#L{cur.start_line}-L{cur.end_line}"})
    n = len(items)
    return {"windows": n, "unplaced": len(cut_items) - n, "files": len(old_files), "current": tally["current"],
            "right": tally["right"], "accuracy": round(tally["right"] / n, 4) if n else None,
            "false_fresh": tally["false_fresh"], "false_stale": tally["false_stale"],
            "false_stale_reasons": dict(stale_reasons),
            "false_stale_text_repeated": tally["false_stale_repeated"], "false_fresh_reasons": dict(fresh_reasons),
            "text_only_in_another_file": dict(elsewhere), "loose_truth_differs": dict(loose_differs),
            "languages": dict(Counter(LANGUAGES[Path(i["path"]).suffix] for i in items)),
            "validate_seconds": round(seconds, 3), "windows_per_second": round(n / seconds, 1) if seconds else None,
            "disagreements_sample": wrong}
