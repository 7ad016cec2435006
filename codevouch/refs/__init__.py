"""Check the code references in an agent's answer against the working tree.

    report = check_refs(repo, answer_text)      # extract (pure) -> check (git, files, tree-sitter)
    report.missing                              # what the answer cites that is not there

extract.py finds the references (paths with lines, backticked symbols, imports, a patch's
files and hunks); worktree.py reads the working tree and its history lazily; check.py
resolves each reference; model.py holds the statuses, reasons and results.
"""
from codevouch.refs.check import check_refs
from codevouch.refs.extract import Extracted, Reference, extract
from codevouch.refs.model import REASONS, STATUSES, RefReport, RefResult

__all__ = ["REASONS", "STATUSES", "Extracted", "RefReport", "RefResult", "Reference", "check_refs", "extract"]
