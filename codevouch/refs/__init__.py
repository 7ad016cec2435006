"""Check the code references in an agent's answer against the working tree.

    report = check_refs(repo, answer_text)      # extract (pure) -> check (git, files, tree-sitter)
    report.missing                              # what the answer cites that is not there

extract.py finds the references (paths with lines, backticked symbols, imports, a patch's
files and hunks); check.py resolves each one in the working tree.
"""
from codevouch.refs.extract import Extracted, Reference, extract

__all__ = ["Extracted", "Reference", "extract"]
