"""`codevouch hooks install/uninstall` on real repositories: git itself runs the hooks here
(the test's git does not disable them), the builds are real (fake embedder), the index is polled."""
from __future__ import annotations

import json
import os
import subprocess
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from codevouch.api import Index
from codevouch.store import writer_lock
from tests.clihelp import FAKE, cv
from tests.gitrepo import GIT_ENV, Repo

HOOKS = ("post-commit", "post-merge", "post-checkout")


def user_git(repo: Repo, *args: str, env: dict[str, str] | None = None) -> float:
    """git as the user runs it, hooks and all; the seconds it took (it must not wait for the build)."""
    started = time.monotonic()
    proc = subprocess.run(("git", "-c", "commit.gpgsign=false", "-C", str(repo.root), *args), capture_output=True,
                          env={**os.environ, **GIT_ENV, **(env or {})}, check=False, timeout=60)
    assert proc.returncode == 0, proc.stderr.decode()
    return time.monotonic() - started


def until(check: Callable[[], object], what: str, timeout: float = 180) -> object:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        found = check()
        if found:
            return found
        time.sleep(0.3)
    raise AssertionError(f"timed out waiting for {what}")


def indexed(repo: Repo, index_dir: Path, branch: str) -> str | None:
    """The commit `branch` is indexed at, None when it is not."""
    if not (index_dir / "state.sqlite").exists():
        return None
    rows = [r for r in Index(repo.root, index_dir).status() if r["branch"] == branch]
    return rows[0]["commit"] if rows else None


def log_text(index_dir: Path) -> str:
    log = index_dir / "hooks.log"
    return log.read_text() if log.exists() else ""


def install(repo: Repo, index_dir: Path, *extra: str) -> dict[str, Any]:
    out = cv("hooks", "install", "--repo", str(repo.root), "--index", str(index_dir), "--json", *FAKE, *extra)
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout)


def snapshot(hooks_dir: Path) -> dict[str, tuple[str, bytes, int]]:
    """Every entry of a hooks directory: link target or bytes, and mode (without following links)."""
    out = {}
    for entry in sorted(hooks_dir.iterdir()):
        st = entry.lstat()
        body = os.readlink(entry).encode() if entry.is_symlink() else entry.read_bytes()
        out[entry.name] = ("link" if entry.is_symlink() else "file", body, st.st_mode)
    return out


@pytest.fixture
def shop(tmp_path: Path) -> Repo:
    repo = Repo(tmp_path / "shop")
    repo.commit(**{"shop.py": "def cancel_order():\n    return 1\n"})
    return repo


def test_a_commit_builds_in_the_background_queued_behind_a_running_build(shop: Repo, index_dir: Path) -> None:
    report = install(shop, index_dir)
    assert [h["action"] for h in report["hooks"]] == ["installed"] * 3
    with writer_lock(index_dir, 0):   # a build is running: the hook's build must queue, git must not wait
        shop.write("refund.py", "def refund():\n    return 2\n")
        shop.git("add", "refund.py")
        took = user_git(shop, "commit", "-q", "-m", "refund")
        until(lambda: "queued" in log_text(index_dir), "the hook's build to queue")
        assert indexed(shop, index_dir, "main") is None and "built" not in log_text(index_dir)
    assert took < 30
    head = shop.head()
    until(lambda: indexed(shop, index_dir, "main") == head, "the commit's build to land")
    assert "post-commit" in log_text(index_dir) and f"main@{head[:12]}" in log_text(index_dir)
    hits = Index(shop.root, index_dir).search("refund", k=3, validate=False)
    assert any(h.path == "refund.py" for h in hits)


def test_a_checkout_of_another_branch_builds_that_branch(shop: Repo, index_dir: Path) -> None:
    shop.git("checkout", "-q", "-b", "feature")
    feature = shop.commit(**{"feature.py": "def feature():\n    return 3\n"})
    shop.git("checkout", "-q", "main")
    install(shop, index_dir)
    user_git(shop, "checkout", "-q", "feature")
    until(lambda: indexed(shop, index_dir, "feature") == feature, "the feature branch's build")
    assert indexed(shop, index_dir, "main") is None
    user_git(shop, "checkout", "-q", "main", "--", "shop.py")     # files, not a branch: nothing to build
    until(lambda: "checkout of files" in log_text(index_dir), "the file checkout to be skipped")
    user_git(shop, "checkout", "-q", "--detach")                   # no branch: the hook starts nothing
    user_git(shop, "checkout", "-q", "main")
    main = shop.git("rev-parse", "main").strip()
    until(lambda: indexed(shop, index_dir, "main") == main, "main's build after checking it out")
    user_git(shop, "merge", "-q", "--ff-only", "feature")          # post-merge: main moved to feature's commit
    until(lambda: indexed(shop, index_dir, "main") == feature, "main's build after the merge")
    checkouts = [line for line in log_text(index_dir).splitlines() if " post-checkout " in line]
    assert len(checkouts) == 3 and not any("detached" in line for line in checkouts), checkouts


def test_existing_hooks_still_run_and_uninstall_restores_them_byte_for_byte(shop: Repo, tmp_path: Path,
                                                                             index_dir: Path) -> None:
    hooks_dir = shop.root / ".git" / "hooks"
    ran = tmp_path / "ran.txt"
    (hooks_dir / "post-commit").write_text(f'#!/bin/sh\necho "post-commit $*" >> {ran}\nexit 3\n')
    (hooks_dir / "post-commit").chmod(0o750)
    script = tmp_path / "checkout-hook.sh"
    script.write_text(f'#!/bin/sh\necho "post-checkout $*" >> {ran}\n')
    script.chmod(0o755)
    (hooks_dir / "post-checkout").symlink_to(script)
    (hooks_dir / "post-merge").write_text(f"#!/bin/sh\necho post-merge >> {ran}\n")   # not executable: git skips it
    (hooks_dir / "post-merge").chmod(0o644)
    before = snapshot(hooks_dir)
    shop.git("checkout", "-q", "-b", "side")
    shop.commit(**{"side.py": "S = 1\n"})
    shop.git("checkout", "-q", "main")

    report = install(shop, index_dir)
    assert [h["action"] for h in report["hooks"]] == ["chained"] * 3
    assert install(shop, index_dir)["hooks"][0]["action"] == "unchanged"
    shop.write("b.py", "B = 1\n")
    shop.git("add", "b.py")
    user_git(shop, "commit", "-q", "-m", "b")
    user_git(shop, "checkout", "-q", "-b", "other")
    user_git(shop, "merge", "-q", "--no-edit", "side")
    lines = ran.read_text().splitlines()
    assert lines[0] == "post-commit " and lines[1].startswith("post-checkout ") and lines[1].endswith(" 1")
    assert "post-merge" not in lines
    head = shop.head()
    until(lambda: indexed(shop, index_dir, "other") == head, "the builds to land")
    until(lambda: log_text(index_dir).count(" built ") >= 3, "every hook's build")

    out = cv("hooks", "uninstall", "--repo", str(shop.root), "--json")
    assert out.returncode == 0, out.stderr
    assert [h["action"] for h in json.loads(out.stdout)["hooks"]] == ["restored"] * 3
    assert snapshot(hooks_dir) == before
    again = cv("hooks", "uninstall", "--repo", str(shop.root), "--json")
    assert [h["action"] for h in json.loads(again.stdout)["hooks"]] == ["absent"] * 3


def test_uninstall_without_earlier_hooks_leaves_the_directory_as_it_was(shop: Repo, index_dir: Path) -> None:
    hooks_dir = shop.root / ".git" / "hooks"
    before = snapshot(hooks_dir)
    install(shop, index_dir)
    assert snapshot(hooks_dir) != before
    out = cv("hooks", "uninstall", "--repo", str(shop.root))
    assert out.returncode == 0 and "removed" in out.stdout, out.stderr
    assert snapshot(hooks_dir) == before


def test_a_hooks_path_in_the_repositorys_own_config_is_refused_and_nothing_runs(shop: Repo, tmp_path: Path,
                                                                                 index_dir: Path) -> None:
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    marker = tmp_path / "pwned"
    shop.git("config", "core.hooksPath", str(elsewhere))
    for key in ("core.fsmonitor", "core.pager", "diff.external", "core.sshCommand"):
        shop.git("config", key, f"touch {marker}")
    before = snapshot(shop.root / ".git" / "hooks")
    out = cv("hooks", "install", "--repo", str(shop.root), "--index", str(index_dir), *FAKE)
    assert out.returncode == 2 and "own git config" in out.stderr and "--global" in out.stderr
    assert list(elsewhere.iterdir()) == [] and snapshot(shop.root / ".git" / "hooks") == before
    assert cv("hooks", "uninstall", "--repo", str(shop.root)).returncode == 2
    assert not marker.exists()


def test_a_hooks_path_in_the_users_global_config_is_honoured_and_guarded(shop: Repo, tmp_path: Path,
                                                                          index_dir: Path,
                                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    shared = tmp_path / "my-hooks"
    config = tmp_path / "gitconfig"
    (tmp_path / "gitconfig-hooks").write_text(f"[core]\n\thooksPath = {shared}\n")
    config.write_text(f"[include]\n\tpath = {tmp_path / 'gitconfig-hooks'}\n")   # the user's own includes count
    monkeypatch.setenv("GIT_CONFIG_GLOBAL", str(config))
    report = install(shop, index_dir)
    assert report["hooks_dir"] == str(shared) and "global" in report["hooks_dir_source"]
    assert sorted(p.name for p in shared.iterdir()) == sorted(HOOKS)
    other = Repo(tmp_path / "other")
    other.commit(**{"o.py": "O = 1\n"})
    refused = cv("hooks", "install", "--repo", str(other.root), "--index", str(index_dir), *FAKE)
    assert refused.returncode == 2 and "another repository" in refused.stderr
    other.write("p.py", "P = 2\n")
    other.git("add", "p.py")
    user_git(other, "commit", "-q", "-m", "p", env={"GIT_CONFIG_GLOBAL": str(config)})
    until(lambda: "is not the repository these hooks were installed for" in log_text(index_dir), "the guard")
    assert not (index_dir / "state.sqlite").exists() or indexed(other, index_dir, "main") is None
    assert cv("hooks", "uninstall", "--repo", str(shop.root)).returncode == 0
    assert list(shared.iterdir()) == []


def test_a_hook_kept_aside_but_replaced_is_never_overwritten(shop: Repo, index_dir: Path) -> None:
    hooks_dir = shop.root / ".git" / "hooks"
    (hooks_dir / "post-commit").write_text("#!/bin/sh\necho mine\n")
    (hooks_dir / "post-commit").chmod(0o755)
    install(shop, index_dir)
    (hooks_dir / "post-commit").write_text("#!/bin/sh\necho edited by hand\n")   # the user replaced ours
    before = snapshot(hooks_dir)
    for command in ("install", "uninstall"):
        out = cv("hooks", command, "--repo", str(shop.root), "--index", str(index_dir), *FAKE) if command == "install" \
            else cv("hooks", command, "--repo", str(shop.root))
        assert out.returncode == 2 and "nothing is changed" in out.stderr, out.stderr
        assert snapshot(hooks_dir) == before


def outcomes(index_dir: Path) -> list[str]:
    """The hooks log's outcome lines (one per background build: built, failed or skipped)."""
    return [line for line in log_text(index_dir).splitlines()
            if any(f": {word}" in line for word in ("built ", "failed", "skipped"))]


def sh_runs(hook: Path) -> None:
    assert subprocess.run(["sh", "-n", str(hook)], capture_output=True, check=False).returncode == 0


# -- where hooks go ----------------------------------------------------------------------------

@pytest.mark.parametrize("how", ["commondir", "gitfile"])
def test_a_git_directory_pointing_at_another_repository_gets_no_hooks(shop: Repo, tmp_path: Path, index_dir: Path,
                                                                     how: str) -> None:
    victim = Repo(tmp_path / "victim")
    victim.commit(**{"v.py": "V = 1\n"})
    before = snapshot(victim.root / ".git" / "hooks")
    if how == "commondir":      # shop's own .git says its refs, objects and hooks live in the victim's
        (shop.root / ".git" / "commondir").write_text(f"{victim.root / '.git'}\n")
        target = shop.root
    else:                       # a `.git` file naming the victim's git directory
        target = tmp_path / "handed"
        target.mkdir()
        (target / ".git").write_text(f"gitdir: {victim.root / '.git'}\n")
    # Refused before git runs (gitreads.guard: the git directory is elsewhere), and by hooks'
    # own check where the user allows git directories elsewhere: nothing is written either way.
    out = cv("hooks", "install", "--repo", str(target), "--index", str(index_dir), *FAKE)
    assert out.returncode == 1 and "another directory" in out.stderr and "nothing was run" in out.stderr, out.stderr
    allowed = {"CODEVOUCH_ALLOW_OUTSIDE_GIT_DIR": "1"}
    out = cv("hooks", "install", "--repo", str(target), "--index", str(index_dir), *FAKE, env=allowed)
    assert out.returncode == 2 and "outside" in out.stderr and "nothing is written" in out.stderr, out.stderr
    assert snapshot(victim.root / ".git" / "hooks") == before
    assert not (victim.root / ".git" / "codevouch-hooks.json").exists()
    assert cv("hooks", "uninstall", "--repo", str(target), env=allowed).returncode == 2
    assert snapshot(victim.root / ".git" / "hooks") == before


def test_a_linked_worktree_installs_into_its_repositorys_hooks_and_builds_its_branch(shop: Repo, tmp_path: Path,
                                                                                     index_dir: Path) -> None:
    linked = tmp_path / "linked"
    shop.git("worktree", "add", "-q", "-b", "side", str(linked))
    side = Repo.__new__(Repo)     # the linked worktree, without `git init`
    side.root = linked
    report = install(side, index_dir)
    assert Path(report["hooks_dir"]) == (shop.root / ".git" / "hooks").resolve()
    side.write("s.py", "S = 1\n")
    user_git(side, "add", "s.py")
    user_git(side, "commit", "-q", "-m", "s")
    head = side.git("rev-parse", "HEAD").strip()
    until(lambda: indexed(side, index_dir, "side") == head, "the linked worktree's branch build")
    assert cv("hooks", "uninstall", "--repo", str(linked)).returncode == 0


def test_a_hooks_path_set_through_an_include_is_seen_and_refused(shop: Repo, tmp_path: Path, index_dir: Path) -> None:
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (shop.root / ".git" / "more-config").write_text(f"[core]\n\thooksPath = {elsewhere}\n")
    shop.git("config", "include.path", "more-config")    # relative to .git/config's directory
    before = snapshot(shop.root / ".git" / "hooks")
    out = cv("hooks", "install", "--repo", str(shop.root), "--index", str(index_dir), *FAKE)
    assert out.returncode == 2 and "include.path" in out.stderr and str(elsewhere) in out.stderr, out.stderr
    assert list(elsewhere.iterdir()) == [] and snapshot(shop.root / ".git" / "hooks") == before


def test_an_index_path_that_holds_shell_runs_nothing_when_the_hook_fires(shop: Repo, tmp_path: Path) -> None:
    marker, other = tmp_path / "pwned", tmp_path / "pwned-too"
    odd = tmp_path / f"idx'$(touch {other})'\ntouch {marker}\n#"
    report = install(shop, odd)
    for hook in HOOKS:
        sh_runs(shop.root / ".git" / "hooks" / hook)
    assert report["log"] == str(odd / "hooks.log")
    shop.write("refund.py", "def refund():\n    return 2\n")
    shop.git("add", "refund.py")
    user_git(shop, "commit", "-q", "-m", "refund")
    head = shop.head()
    until(lambda: any(f"main@{head[:12]}" in line for line in outcomes(odd)), "the hook's build in the odd directory")
    assert indexed(shop, odd, "main") == head
    assert not marker.exists() and not other.exists()


# -- what uninstall puts back ---------------------------------------------------------------

def test_a_chained_hook_planted_by_someone_else_is_never_restored(shop: Repo, index_dir: Path) -> None:
    hooks_dir = shop.root / ".git" / "hooks"
    planted = hooks_dir / "post-commit.codevouch-chained"
    planted.write_text("#!/bin/sh\ntouch /tmp/never\n")
    planted.chmod(0o755)
    out = cv("hooks", "uninstall", "--repo", str(shop.root), "--json")   # never installed
    assert out.returncode == 0, out.stderr
    [commit] = [h for h in json.loads(out.stdout)["hooks"] if h["name"] == "post-commit"]
    assert commit["action"] == "absent" and "not put aside by codevouch" in commit["note"]
    assert not (hooks_dir / "post-commit").exists() and planted.exists()
    planted.unlink()
    install(shop, index_dir)                      # installed with no hook there: nothing was put aside ...
    planted.write_text("#!/bin/sh\ntouch /tmp/never\n")   # ... then one appears beside it
    out = cv("hooks", "uninstall", "--repo", str(shop.root), "--json")
    assert out.returncode == 0, out.stderr
    assert [h["action"] for h in json.loads(out.stdout)["hooks"]] == ["removed"] * 3
    assert not (hooks_dir / "post-commit").exists() and planted.exists()


def test_a_chained_hook_changed_since_install_is_not_put_back(shop: Repo, index_dir: Path) -> None:
    hooks_dir = shop.root / ".git" / "hooks"
    (hooks_dir / "post-commit").write_text("#!/bin/sh\necho mine\n")
    (hooks_dir / "post-commit").chmod(0o755)
    install(shop, index_dir)
    (hooks_dir / "post-commit.codevouch-chained").write_text("#!/bin/sh\necho swapped\n")
    before = snapshot(hooks_dir)
    out = cv("hooks", "uninstall", "--repo", str(shop.root))
    assert out.returncode == 2 and "not the hook codevouch put aside" in out.stderr, out.stderr
    assert snapshot(hooks_dir) == before


def test_lines_a_user_added_to_a_codevouch_hook_are_kept(shop: Repo, tmp_path: Path, index_dir: Path) -> None:
    hooks_dir = shop.root / ".git" / "hooks"
    ran = tmp_path / "ran.txt"
    install(shop, index_dir)
    commit_hook, merge_hook = hooks_dir / "post-commit", hooks_dir / "post-merge"
    commit_hook.write_text(commit_hook.read_text() + f"echo appended >> {ran}\n")      # a line appended
    lines = merge_hook.read_text().splitlines(keepends=True)
    merge_hook.write_text(lines[0] + f"echo mine >> {ran}\n" + "".join(lines[1:]))    # a command inserted
    out = cv("hooks", "uninstall", "--repo", str(shop.root), "--json")
    assert out.returncode == 0, out.stderr
    assert [h["action"] for h in json.loads(out.stdout)["hooks"]] == ["kept-yours", "kept-yours", "removed"]
    assert commit_hook.read_text() == f"#!/bin/sh\necho appended >> {ran}\n"
    assert merge_hook.read_text() == f"#!/bin/sh\necho mine >> {ran}\n"
    assert os.access(commit_hook, os.X_OK) and not (hooks_dir / "post-checkout").exists()
    shop.write("c.py", "C = 1\n")
    shop.git("add", "c.py")
    user_git(shop, "commit", "-q", "-m", "c")          # the user's line runs; codevouch's do not
    assert ran.read_text() == "appended\n"
    assert not (index_dir / "state.sqlite").exists()


def test_uninstall_refuses_when_it_cannot_keep_both_or_tell_lines_apart(shop: Repo, index_dir: Path) -> None:
    hooks_dir = shop.root / ".git" / "hooks"
    (hooks_dir / "post-commit").write_text("#!/bin/sh\necho mine\n")
    (hooks_dir / "post-commit").chmod(0o755)
    install(shop, index_dir)
    hook = hooks_dir / "post-commit"
    ours = hook.read_text()
    hook.write_text(ours + "echo added\n")       # added to a hook that chains one: both cannot be put back
    before = snapshot(hooks_dir)
    out = cv("hooks", "uninstall", "--repo", str(shop.root))
    assert out.returncode == 2 and " you added" in out.stderr and "(s)" not in out.stderr and "nothing" in out.stderr, out.stderr
    assert snapshot(hooks_dir) == before
    again = cv("hooks", "install", "--repo", str(shop.root), "--index", str(index_dir), *FAKE)
    assert again.returncode == 2 and "changed since codevouch wrote it" in again.stderr, again.stderr
    assert snapshot(hooks_dir) == before
    hook.write_text(ours.replace("--wait 3600", "--wait 5"))     # one of codevouch's lines changed
    before = snapshot(hooks_dir)
    out = cv("hooks", "uninstall", "--repo", str(shop.root))
    assert out.returncode == 2 and "cannot be told apart" in out.stderr, out.stderr
    assert snapshot(hooks_dir) == before
    hook.write_text(ours)
    assert cv("hooks", "uninstall", "--repo", str(shop.root)).returncode == 0
    assert hook.read_text() == "#!/bin/sh\necho mine\n"


def test_every_refusal_of_uninstall_names_a_step_that_then_succeeds(shop: Repo, index_dir: Path) -> None:
    """A line added to codevouch's hook over a chained one: the refusal's step (take the lines
    out, uninstall, add them back) ends with your hook and your line; and the path a user took
    before (lines moved into the kept-aside hook, then `mv` it back as the message said) ends
    with the hook reported as kept, not absent."""
    hooks_dir = shop.root / ".git" / "hooks"
    hook, aside = hooks_dir / "post-commit", hooks_dir / "post-commit.codevouch-chained"
    for moved in (False, True):
        hook.write_text("#!/bin/sh\necho mine\n")
        hook.chmod(0o755)
        install(shop, index_dir)
        ours = hook.read_text()
        hook.write_text(ours + "echo added\n")
        refused = cv("hooks", "uninstall", "--repo", str(shop.root))
        assert refused.returncode == 2 and "remove them there, run `codevouch hooks uninstall`" in refused.stderr
        hook.write_text(ours)                       # the lines taken out, as the message says
        if moved:       # or, as the old message said: into the hook kept aside
            aside.write_text(aside.read_text() + "echo added\n")
            second = cv("hooks", "uninstall", "--repo", str(shop.root))
            assert second.returncode == 2 and f"mv {aside} {hook}" in second.stderr, second.stderr
            os.replace(aside, hook)
        done = cv("hooks", "uninstall", "--repo", str(shop.root), "--json")
        assert done.returncode == 0, done.stderr
        action = {h["name"]: h["action"] for h in json.loads(done.stdout)["hooks"]}["post-commit"]
        assert action == ("kept-yours" if moved else "restored")
        assert hook.read_text() == "#!/bin/sh\necho mine\n" + ("echo added\n" if moved else "")
        assert not aside.exists()


# -- which branch a hook builds ---------------------------------------------------------------

def test_a_hook_builds_the_branch_it_fired_on_not_the_one_checked_out_since(shop: Repo, index_dir: Path) -> None:
    shop.git("checkout", "-q", "-b", "topic")
    install(shop, index_dir)
    shop.write("topic.py", "def topic():\n    return 4\n")
    shop.git("add", "topic.py")
    user_git(shop, "commit", "-q", "-m", "topic")            # post-commit on topic ...
    topic = shop.head()
    user_git(shop, "checkout", "-q", "main")                 # ... then, at once, back to main
    user_git(shop, "merge", "-q", "--no-ff", "--no-edit", "topic")
    main = shop.head()
    until(lambda: len(outcomes(index_dir)) >= 3, "the three hooks' builds")
    assert indexed(shop, index_dir, "topic") == topic
    assert indexed(shop, index_dir, "main") == main
    [fired] = [line for line in outcomes(index_dir) if " post-commit " in line]
    assert f"topic@{topic[:12]}" in fired, outcomes(index_dir)


@pytest.mark.parametrize("kind", ["directory", "fifo"])
def test_an_install_record_that_is_not_a_file_is_refused_unread(shop: Repo, index_dir: Path, kind: str) -> None:
    record = shop.root / ".git" / "codevouch-hooks.json"
    record.mkdir() if kind == "directory" else os.mkfifo(record)
    before = snapshot(shop.root / ".git" / "hooks")
    out = cv("hooks", "install", "--repo", str(shop.root), "--index", str(index_dir), *FAKE)
    assert out.returncode == 2 and "not a regular file" in out.stderr, out.stderr
    assert snapshot(shop.root / ".git" / "hooks") == before
    out = cv("hooks", "uninstall", "--repo", str(shop.root), "--json")     # nothing recorded: nothing restored
    assert out.returncode == 0 and snapshot(shop.root / ".git" / "hooks") == before, out.stderr
