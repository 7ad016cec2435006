"""GitPython vs codevouch's git plumbing on one repository: `pip install GitPython`, then
    python -m codevouch_bench.gitpython REPO
GitPython is not a dependency: these figures are why (see notes)."""
import sys
import time
from pathlib import Path

import git

from codevouch.worktree import gitio

repo = Path(sys.argv[1])
def best(f, n=5):
    t = []
    for _ in range(n):
        s = time.perf_counter()
        f()
        t.append(time.perf_counter() - s)
    return min(t) * 1000
head = gitio.head_commit(repo)
files = gitio.ls_tree(repo, head)
shas = [e.blob_sha for e in files.values()]
r = git.Repo(repo)
print(f"files {len(files)}")
print(f"tree listing: gitio.ls_tree {best(lambda: gitio.ls_tree(repo, head)):.1f} ms; "
      f"GitPython tree.traverse {best(lambda: [b for b in r.commit(head).tree.traverse() if b.type == 'blob']):.1f} ms")
print(f"read {len(shas)} blobs: gitio.read_blobs {best(lambda: gitio.read_blobs(repo, shas), 3):.1f} ms; "
      f"GitPython odb (persistent cat-file) {best(lambda: [r.odb.stream(bytes.fromhex(s)).read() for s in shas], 3):.1f} ms")
print(f"HEAD + branch: gitio {best(lambda: (gitio.current_branch(repo), gitio.head_commit(repo))):.1f} ms; "
      f"GitPython {best(lambda: (git.Repo(repo).active_branch.name, git.Repo(repo).head.commit.hexsha)):.1f} ms")
