"""The shell reader: which paths a command writes, read before it runs."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from git_lacunari.shell_writes import Write, read_writes, write_targets

from .conftest import git

PATCH = """\
diff --git a/core/auth.py b/core/auth.py
index 1111111..2222222 100644
--- a/core/auth.py
+++ b/core/auth.py
@@ -1 +1 @@
-x = 1
+x = 2
diff --git a/docs/old.md b/docs/new.md
similarity index 100%
rename from docs/old.md
rename to docs/new.md
"""


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    """A plain directory: src/ with two files, a hidden one, a patch."""
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "auth.py").write_text("x = 1\n")
    (tmp_path / "src" / "util.py").write_text("y = 1\n")
    (tmp_path / "src" / ".hidden.py").write_text("")
    (tmp_path / "a.py").write_text("")
    (tmp_path / "notes").mkdir()
    (tmp_path / "fix.patch").write_text(PATCH)
    return tmp_path


def _seen(command: str, cwd: Path) -> list[tuple[str, bool]]:
    """The answer with ``cwd`` written as ``.``, for readable tables."""
    base = str(cwd)
    out = []
    for w in read_writes(command, base):
        assert w.path == os.path.normpath(w.path) and os.path.isabs(w.path), w
        rel = os.path.relpath(w.path, base) if w.path.startswith(base) else w.path
        out.append((rel, w.tree))
    return out


F, T = False, True

CASES: list[tuple[str, list[tuple[str, bool]]]] = [
    # redirections
    ("echo hi>out.txt", [("out.txt", F)]),
    ("echo x >> log; echo y >| clob", [("log", F), ("clob", F)]),
    ("echo x 2> err.log", [("err.log", F)]),
    ("make 3>fd3 &> both &>> both2", [("fd3", F), ("both", F), ("both2", F)]),
    ("echo x >&2; ls > /dev/null 2>&1; cmd >&out", [("out", F)]),
    ("echo '>' a.py; echo a2>f", [("f", F)]),
    ("cat > gen.py <<EOF\nrm -rf everything\nEOF\nrm after", [("gen.py", F), ("after", F)]),
    ("cat > f <<'EOF'\n$(rm quoted)\nEOF", [("f", F)]),
    ("cat > f <<EOF\n$(rm unquoted)\nEOF", [("f", F), ("unquoted", F)]),
    ("cat <<-END >t\n\trm x\n\tEND\n", [("t", F)]),
    # tee, sed, perl
    ("cat a.py | tee -a log other", [("log", F), ("other", F)]),
    ("tee -a log", [("log", F)]),
    ("sed -i 's/a/b/' src/auth.py", [("src/auth.py", F)]),
    ("sed -i.bak -e s/a/b/ a.py 'f 2'", [("a.py", F), ("a.py.bak", F), ("f 2", F), ("f 2.bak", F)]),
    ("sed --in-place -e s/a/b/ -e s/c/d/ a.py", [("a.py", F)]),
    ("sed -Ei s/a/b/ a.py", [("a.py", F)]),
    ("sed -n p a.py > copy", [("copy", F)]),
    ("perl -pi -e 's/a/b/' a.py", [("a.py", F)]),
    ("perl -i.orig -pe s/a/b/ a.py", [("a.py", F), ("a.py.orig", F)]),
    # cp, mv, ln
    ("cp a.py b.py", [("b.py", F)]),
    ("cp a.py notes", [("notes/a.py", F)]),
    ("cp -r src notes", [("notes/src", T)]),
    ("cp -r src copy", [("copy", T)]),
    ("X=1 sudo cp -r a b c/ 2>&1", [("c/a", F), ("c/b", F)]),
    ("cp -t notes a.py src/auth.py", [("notes/a.py", F), ("notes/auth.py", F)]),
    ("cp a.{py,bak}", [("a.bak", F)]),
    ("cp $X notes/", [("notes", T)]),
    ("mv a.py b.py", [("b.py", F), ("a.py", F)]),
    ("mv src lib", [("lib", T), ("src", T)]),
    ("mv a.py notes", [("notes/a.py", F), ("a.py", F)]),
    ("ln -sf a.py link", [("link", F)]),
    ("ln -s /etc/hosts", [("hosts", F)]),
    # rm and friends
    ("rm a.py", [("a.py", F)]),
    ("rm -rf src", [("src", T)]),
    ("rm -R src a.py", [("src", T), ("a.py", F)]),
    ("rm --recursive gone", [("gone", T)]),
    ("rm src", [("src", F)]),
    (r"\rm -rf .", [(".", T)]),
    ("rm -rf *", [(".", T)]),
    ("rm src/*.py", [("src/auth.py", F), ("src/util.py", F)]),
    ("rm src/.*.py", [("src/.hidden.py", F)]),
    ("rm src/*.nothing", [("src/*.nothing", F)]),
    ("rm 'src/*.py'", [("src/*.py", F)]),
    ("rm {a,b}/x", [("a/x", F), ("b/x", F)]),
    ("rm f{1..3}", [("f1", F), ("f2", F), ("f3", F)]),
    ("rmdir notes; rmdir -p q/r", [("notes", F), ("q/r", F), ("q", F)]),
    ("touch -d now new; truncate -s 0 a.py", [("new", F), ("a.py", F)]),
    ("mkdir -p made", []),
    ("dd if=/dev/zero of=img bs=1 count=1", [("img", F)]),
    ("install -m 644 a.py notes/", [("notes/a.py", F)]),
    ("install -d made", []),
    ("chmod -x a.py; chmod -R 755 src", [("a.py", F), ("src", T)]),
    ("chown bob: a.py; chgrp staff src/util.py", [("a.py", F), ("src/util.py", F)]),
    ("curl -o page.html http://x; wget -O - http://y", [("page.html", F)]),
    # patch
    ("patch -p1 < fix.patch", [("core/auth.py", F), ("docs/old.md", F), ("docs/new.md", F)]),
    ("patch -p1 -i fix.patch", [("core/auth.py", F), ("docs/old.md", F), ("docs/new.md", F)]),
    ("patch src/auth.py fix.patch", [("src/auth.py", F)]),
    ("patch -p1 < missing.patch", []),
    ("cat fix.patch | patch -p1", []),
    # cd: each segment in its own directory
    ("cd src && rm -f auth.py", [("src/auth.py", F)]),
    ("cd src; cd ..; rm x", [("x", F)]),
    ("(cd src; rm x); rm y", [("src/x", F), ("y", F)]),
    ("cd src | rm x", [("x", F)]),
    ("cd src & rm x", [("x", F)]),
    ("{ cd src; rm x; }; rm y", [("src/x", F), ("src/y", F)]),
    ("cd $D && rm x", [("x", F)]),
    ("pushd src && rm x", [("src/x", F)]),
    # compound commands and prefixes
    ("for f in a b; do rm $f; done", []),
    ("for f in a b; do rm x; done", [("x", F)]),
    ("while true; do rm w; done; until false; do rm u; done", [("w", F), ("u", F)]),
    ("! rm x", [("x", F)]),
    ("if true; then rm x; elif false; then rm y; else rm z; fi", [("x", F), ("y", F), ("z", F)]),
    ("case $x in a) rm ca;; b|c) rm cb;; esac", [("ca", F), ("cb", F)]),
    ("[[ a > b ]] && rm after", [("after", F)]),
    ("(( i > 5 )) && rm ar", [("ar", F)]),
    ("true || rm o; false && rm n\nrm nl", [("o", F), ("n", F), ("nl", F)]),
    ("env X=1 rm e; env -C src rm c", [("e", F), ("src/c", F)]),
    ("VAR=1 OTHER='a b' rm v", [("v", F)]),
    ("sudo -u bob rm s; doas rm d", [("s", F), ("d", F)]),
    ("nohup rm n &", [("n", F)]),
    (
        "time rm t; exec > log; command rm c; builtin echo > b",
        [("t", F), ("log", F), ("c", F), ("b", F)],
    ),
    ("command -v rm; nice -n 5 rm n; timeout 5 rm t", [("n", F), ("t", F)]),
    ("xargs rm < list", []),
    ("xargs rm -f fixed < list", [("fixed", F)]),
    ("xargs -I{} cp {} notes/ < list", [("notes", T)]),
    ("find . -name '*.py' -exec sed -i s/a/b/ {} +", [(".", T)]),
    ("find src -delete", [("src", T)]),
    (r"find src notes -name x -exec rm {} \;", [("src", T), ("notes", T)]),
    ("find src -execdir rm x ';'", [("src", T)]),
    ("find src -exec sh -c 'sed -i s/a/b/ {}' \\;", [("src", T)]),
    ("find src -exec cp {} /tmp/out/ +", [("/tmp/out", T)]),
    ("find src -exec mv {} {}.bak \\;", [("src", T)]),
    ("find src -name '*.py' -print", []),
    ("find -L src -fprint list.txt", [("list.txt", F)]),
    # substitutions and shells
    ("echo $(cd src; rm z); rm q", [("src/z", F), ("q", F)]),
    ('x=`rm k`; echo "$(rm dq)"', [("k", F), ("dq", F)]),
    ("$($($($(rm deep))))", [("deep", F)]),
    ("diff <(rm p) >(tee t)", [("p", F), ("t", F)]),
    ('bash -c "cd src && sed -i s/a/b/ auth.py"', [("src/auth.py", F)]),
    ("sh -c 'rm x'; zsh -c 'rm y'; bash -lc 'rm z'", [("x", F), ("y", F), ("z", F)]),
    ("sudo sh -c 'rm s'; bash -o pipefail -c 'rm p'", [("s", F), ("p", F)]),
    ("bash <<'EOF'\nrm inner\nEOF", [("inner", F)]),
    ("bash script.sh", []),
    # interpreters
    ('python3 -c \'open("a.py", "w").write("")\'', [("a.py", F)]),
    ("python -c \"import shutil; shutil.rmtree('src')\"", [("src", T)]),
    ("python3 - <<'EOF'\nopen('src/util.py', 'w')\nprint('.')\nEOF", [("src/util.py", F)]),
    ('node -e \'require("fs").unlinkSync("a.py")\'', [("a.py", F)]),
    ("ruby -e 'File.delete(\"a.py\")'; perl -e 'unlink \"a.py\"'", [("a.py", F)]),
    ('python3 -c \'print("no/such/file", "/", "..")\'', []),
    ("python3 script.py a.py", []),
    # what cannot be known is left out
    ('echo $HOME > "$OUT"; rm `x`', []),
    ("rm ~other/x", []),
    ("echo 'unbalanced", []),
    ("rm x 'y", [("x", F), ("'y", F)]),
    ('echo "x > y', [("y", F)]),  # an unbalanced quote is a character: the rest is read
    ("cat a.py # > commented", []),
    # option values attached to their options
    ("curl -osrc/auth.py URL; curl --output=a.py u", [("src/auth.py", F), ("a.py", F)]),
    ("curl -sSLo x u; curl -H h -D hdr -c jar -o - u", [("x", F), ("hdr", F), ("jar", F)]),
    ("wget -Osrc/auth.py u; wget --output-document=a.py u", [("src/auth.py", F), ("a.py", F)]),
    ("wget -qO- u; wget -o log u", [("log", F)]),
    (
        "sort -osrc/auth.py a.py; sort -o x; sort --output=y z",
        [("src/auth.py", F), ("x", F), ("y", F)],
    ),
    (
        "cp -tnotes a.py; mv --target-directory=notes src",
        [("notes/a.py", F), ("notes/src", T), ("src", T)],
    ),
    ("ln -tnotes a.py; install -tnotes a.py", [("notes/a.py", F)]),
    # interpreters' open modes
    ("perl -e \"open F,'>src/auth.py'\"", [("src/auth.py", F)]),
    ("perl -e \"open(F, '>> src/auth.py'); open G, '+<a.py'\"", [("src/auth.py", F), ("a.py", F)]),
    (
        "perl -e \"open F, '< src/util.py'; open G, '>new.txt'; open H, '<nope'\"",
        [("src/util.py", F), ("new.txt", F)],
    ),
    ('perl -e \'print ">", "> "\'', []),
    # more writers
    ("rsync -a src/ notes; rsync a.py b.py; rsync a.py host:x", [("notes", T), ("b.py", F)]),
    ("rsync --delete src/ out; rsync a.py new", [("out", T), ("new", F)]),
    ("shred -u -n 3 a.py; shred -zu src/util.py", [("a.py", F), ("src/util.py", F)]),
    (
        "vim -c wq src/auth.py +3; nano +5 a.py; emacs --eval '(x)' n; ed e",
        [("src/auth.py", F), ("a.py", F), ("n", F), ("e", F)],
    ),
    ("tar xzf x.tgz; tar -xf x.tar -C notes; tar tf x.tar", [(".", T), ("notes", T)]),
    (
        "tar czf out.tgz src; tar -cf - src; tar --create --file=o.tar src",
        [("out.tgz", F), ("o.tar", F)],
    ),
    ("unzip -d notes x.zip; unzip -l x.zip; unzip x.zip", [("notes", T), (".", T)]),
    (
        "cpio -pd notes < l; find . | cpio -o -O a.cpio; cpio -idm < a.cpio",
        [("notes", T), ("a.cpio", F), (".", T)],
    ),
    # PowerShell's write cmdlets and aliases
    ("Set-Content -Path src/auth.py -Value x; sc a.py x", [("src/auth.py", F), ("a.py", F)]),
    (
        "'x' | Out-File -FilePath o.txt; echo x | Out-File o2 -Encoding utf8",
        [("o.txt", F), ("o2", F)],
    ),
    (
        "Add-Content -LiteralPath:a.py x; ac -lit b x; Clear-Content c",
        [("a.py", F), ("b", F), ("c", F)],
    ),
    ("New-Item -ItemType File -Path n.txt; ni n2", [("n.txt", F), ("n2", F)]),
    (
        "Remove-Item -Recurse -Force src; ri a.py; del d; erase e; rd f",
        [("src", T), ("a.py", F), ("d", F), ("e", F), ("f", F)],
    ),
    ("remove-item 'src/*.py'; Remove-Item -Path p,q", [("src", T), ("p", F), ("q", F)]),
    (
        "Move-Item a.py -Destination notes; move m n",
        [("a.py", F), ("notes/a.py", F), ("m", F), ("n", F)],
    ),
    (
        "Copy-Item -Path src -Destination out -Recurse; copy a.py notes",
        [("out", T), ("notes/a.py", F)],
    ),
    ("Rename-Item src/auth.py auth2.py", [("src/auth.py", F), ("src/auth2.py", F)]),
    (
        "cp a.py -Destination notes; rm -Recurse src; mv -Path a.py -Destination b",
        [("notes/a.py", F), ("src", T), ("a.py", F), ("b", F)],
    ),
    # multi-call binaries
    (
        "busybox sh -c 'rm x'; busybox rm -rf src; toybox sed -i s/a/b/ a.py",
        [("x", F), ("src", T), ("a.py", F)],
    ),
    # $'…' decoded as bash does
    (r"echo x > $'src/auth\x2epy'", [("src/auth.py", F)]),
    (r"echo x > $'\x73rc/auth.py'", [("src/auth.py", F)]),
    (
        r"rm $'\163rc/auth.py' $'src/\u0061uth.py' $'\U00000073rc/x'",
        [("src/auth.py", F), ("src/x", F)],
    ),
    (
        r"rm $'a\cIb' $'\E\e\f\v\a\b' $'q\'\\\"\?'",
        [("a\tb", F), ("\x1b\x1b\f\v\a\b", F), ("q'\\\"?", F)],
    ),
    (r"rm $'\xc3\xa9t\xc3\xa9' $'\x' $'\q'", [("\u00e9t\u00e9", F), ("\\x", F), ("\\q", F)]),
    (r"echo x > $'src/auth\x00.py'", [(".", T)]),
    (r"echo x > $'src/\xff.py'; rm $'\ud800' $'\c@'", [(".", T)]),
    (r"echo x > $'\x01'", [(".", T)]),
]


@pytest.mark.parametrize(("command", "expected"), CASES, ids=[c for c, _ in CASES])
def test_reads(tree: Path, command: str, expected: list[tuple[str, bool]]) -> None:
    assert _seen(command, tree) == expected


def test_home_and_absolute_paths(tree: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HOME", "/home/u")
    held = tree / "src" / "auth.py"
    assert read_writes("rm ~/x ~", str(tree)) == [Write("/home/u/x", F), Write("/home/u", F)]
    assert read_writes(f"cd /elsewhere && sed -i s/a/b/ {held}", str(tree)) == [Write(str(held), F)]
    assert read_writes("rm ../up/./x", str(tree / "src")) == [Write(str(tree / "up" / "x"), F)]


def test_odd_names(tree: Path) -> None:
    (tree / "sp ace é").mkdir()
    assert _seen("rm -r 'sp ace é' \"q\\\"d\" $'t\\tab'", tree) == [
        ("sp ace é", T),
        ('q"d', T),
        ("t\tab", T),
    ]
    os.symlink(tree / "src", tree / "link")
    assert _seen("rm -rf link/../x", tree) == [("x", T)]  # normalised, not resolved


def test_deduplicated_in_order(tree: Path) -> None:
    assert _seen("rm b a; rm a b; echo > a", tree) == [("b", F), ("a", F)]


# -- git --------------------------------------------------------------------


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    """main with core/auth.py, core/util.py, README; branch other adds o.txt
    and changes README; core/util.py modified, new.txt staged, junk untracked,
    build.log ignored."""
    r = tmp_path / "repo"
    r.mkdir()
    git(r, "init", "-q", "-b", "main")
    (r / "core").mkdir()
    (r / "core" / "auth.py").write_text("a\n")
    (r / "core" / "util.py").write_text("u\n")
    (r / "README").write_text("r\n")
    (r / ".gitignore").write_text("*.log\n")
    git(r, "add", ".")
    git(r, "commit", "-qm", "init")
    git(r, "checkout", "-qb", "other")
    (r / "o.txt").write_text("o\n")
    (r / "README").write_text("r2\n")
    git(r, "add", ".")
    git(r, "commit", "-qm", "other")
    git(r, "checkout", "-q", "main")
    (r / "core" / "util.py").write_text("changed\n")
    (r / "new.txt").write_text("n\n")
    git(r, "add", "new.txt")
    (r / "junk").write_text("")
    (r / "build.log").write_text("")
    (r / "fix.patch").write_text(PATCH)
    return r


MODIFIED = [("core/util.py", F), ("new.txt", F)]
GIT_CASES: list[tuple[str, str, list[tuple[str, bool]]]] = [
    ("", "git checkout -- .", MODIFIED),
    ("", "git checkout HEAD -- core/auth.py", [("core/auth.py", F)]),
    ("", "git checkout -- core", [("core/util.py", F)]),
    ("core", "git checkout -- .", [("core/util.py", F)]),
    ("", "git restore .", MODIFIED),
    ("", "git restore core/auth.py README", [("core/auth.py", F), ("README", F)]),
    (
        "",
        "git restore --source=other .",
        [("README", F), ("core/util.py", F), ("new.txt", F), ("o.txt", F)],
    ),
    ("", "git restore --staged new.txt", []),
    ("", "git -C core restore .", [("core/util.py", F)]),
    ("", "git reset --hard", MODIFIED),
    ("", "git reset --hard other", [*MODIFIED, ("README", F), ("o.txt", F)]),
    ("", "git reset HEAD~0", []),
    ("", "git stash", MODIFIED),
    ("", "git stash push -- core", [("core/util.py", F)]),
    ("", "git stash -u", [*MODIFIED, ("fix.patch", F), ("junk", F)]),
    ("", "git stash list", []),
    # -p: the hunks of the files a plain form would change
    ("", "git checkout -p", MODIFIED),
    ("", "git checkout -p -- core", [("core/util.py", F)]),
    ("", "git checkout --patch core", [("core/util.py", F)]),
    ("", "git checkout -p other README", [("README", F)]),
    ("", "git checkout -p other", [("README", F), *MODIFIED, ("o.txt", F)]),
    ("", "git restore -p", MODIFIED),
    ("", "git restore -p core", [("core/util.py", F)]),
    ("", "git reset -p", []),
    ("", "git stash -p", MODIFIED),
    ("", "git stash push -p -- core", [("core/util.py", F)]),
    ("", "git clean -fd", [("fix.patch", F), ("junk", F)]),
    ("", "git clean -fdx", [("build.log", F), ("fix.patch", F), ("junk", F)]),
    ("", "git clean -n", []),
    ("", "git checkout other", [("README", F), ("o.txt", F)]),
    ("", "git checkout core/auth.py", [("core/auth.py", F)]),
    ("", "git checkout -b fresh", []),
    ("", "git switch other", [("README", F), ("o.txt", F)]),
    ("", "git switch -c fresh other", [("README", F), ("o.txt", F)]),
    ("", "git merge other", [("README", F), ("o.txt", F)]),
    ("", "git rebase other", [("README", F), ("o.txt", F)]),
    ("", "git cherry-pick other", [("README", F), ("o.txt", F)]),
    ("", "git revert other", [("README", F), ("o.txt", F)]),
    ("", "git pull", [(".", T)]),
    ("", "git merge nosuch", [(".", T)]),
    ("", "git reset --hard $REV", [(".", T)]),
    ("", "git switch $B", [(".", T)]),
    ("", "git mv README docs", [("docs", F), ("README", F)]),
    ("", "git mv core lib", [("lib", T), ("core", T)]),
    ("", "git rm -r core", [("core", T)]),
    ("", "git rm --cached README '*.py'", [("README", F), (".", T)]),
    ("", "git apply fix.patch", [("core/auth.py", F), ("docs/old.md", F), ("docs/new.md", F)]),
    (
        "core",
        "git apply ../fix.patch",
        [("core/auth.py", F), ("docs/old.md", F), ("docs/new.md", F)],
    ),
    ("", "git apply -p2 < fix.patch", [("auth.py", F), ("old.md", F), ("new.md", F)]),
    ("", "git apply --check fix.patch", []),
    ("", "git diff other | git apply", []),
    ("", "git am fix.patch", [("core/auth.py", F), ("docs/old.md", F), ("docs/new.md", F)]),
    ("", "git status; git log > log.txt", [("log.txt", F)]),
    ("", "find core -exec git checkout -- {} +", [("core", T)]),
    ("", "git bisect start; git bisect log", [(".", T)]),
    ("", "git worktree add ../wt2 -b x; git worktree list", [("../wt2", T)]),
    ("", "git sparse-checkout list; git submodule status; git read-tree HEAD", []),
    ("", "find core -execdir git checkout -- . \\;", [("core", T)]),
]


@pytest.mark.parametrize(
    ("sub", "command", "expected"), GIT_CASES, ids=[c for _, c, _ in GIT_CASES]
)
def test_git(repo: Path, sub: str, command: str, expected: list[tuple[str, bool]]) -> None:
    here = repo / sub
    got = [(os.path.relpath(p, repo), t) for p, t in read_writes(command, str(here))]
    assert got == expected


def test_git_heredoc_patch(repo: Path) -> None:
    got = read_writes(f"git apply <<'EOF'\n{PATCH}EOF", str(repo))
    assert [os.path.relpath(w.path, repo) for w in got] == [
        "core/auth.py",
        "docs/old.md",
        "docs/new.md",
    ]


def test_git_outside_a_repository_is_broad(tmp_path: Path) -> None:
    assert read_writes("git checkout -- .", str(tmp_path)) == [Write(str(tmp_path), T)]
    assert read_writes("git merge x", str(tmp_path / "nowhere")) == [
        Write(str(tmp_path / "nowhere"), T)
    ]


def test_git_within_a_cd(repo: Path) -> None:
    assert read_writes(f"cd /tmp && cd {repo}/core && git checkout -- .", "/") == [
        Write(str(repo / "core" / "util.py"), F)
    ]


# -- hostile input ------------------------------------------------------------


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.text() | st.text(st.characters(exclude_categories=())))  # the second: lone surrogates
def test_any_text_is_answered(command: str) -> None:
    got = read_writes(command, "/nonexistent/lac")
    assert all(isinstance(w, Write) and os.path.isabs(w.path) for w in got)


@pytest.fixture(scope="module")
def files(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A directory with things globs, cp and rm -r can find."""
    root = tmp_path_factory.mktemp("files")
    for name in ("a", "b", "x", "{a,b}", "*", "é"):
        (root / name).mkdir()
        (root / name / "f.py").write_text("")
    (root / "fix.patch").write_text(PATCH)
    return root


SHELLISH = st.lists(
    st.sampled_from(
        [
            "rm",
            "x",
            "'",
            '"',
            "$(",
            ")",
            "`",
            "(",
            "{",
            "}",
            ";",
            "&&",
            "|",
            ">",
            "<<",
            "EOF",
            "\n",
            "\\",
            "bash -c",
            "cd",
            "..",
            "*",
            "{a,b}",
            "$X",
            "find",
            "-exec",
            "\\;",
            "git",
            "checkout",
            "--",
            "sed -i",
            "\0",
            "\ud800",
            "é",
            " ",
            *("{}", "cp", "-r", "patch -p1 <", "fix.patch", "python -c", "'a'", "#", "$'"),
            *("<(", "2>", "xargs", "\x02", "*", "a", "for", "do", "done", "case", "in", ";;"),
        ]
    ),
    max_size=40,
).map("".join)


@settings(
    max_examples=400,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)
@given(SHELLISH)
def test_shellish_text_is_answered(files: Path, command: str) -> None:
    for cwd in ("/nonexistent/lac", str(files)):
        got = read_writes(command, cwd)
        assert all(isinstance(w, Write) and w.path == os.path.normpath(w.path) for w in got)


@pytest.mark.parametrize(
    "command",
    [
        "a " * 500_000,
        "echo " + "x" * 1_000_000 + " > out",
        "cat > big <<EOF\n" + "line of text $HOME\n" * 50_000 + "EOF\n",
        "$(" * 5_000 + "rm x" + ")" * 5_000,
        "`" * 10_001,
        "bash -c " * 3000 + "rm x",
        "{" * 100_000 + "a,b" + "}" * 100_000,
        "rm " + "{a,b}" * 40,
        '"' * 200_001 + "'" * 200_001,
        "\ud800\udfff rm \ud800 > \udc80",
        "rm -rf /" + "x/" * 20_000,
        "for " * 100_000,
    ],
    ids=lambda c: f"{c[:20]!r}..{len(c)}",
)
def test_huge_and_deep_input_is_quick(tmp_path: Path, command: str) -> None:
    start = time.perf_counter()
    got = write_targets(command, str(tmp_path))
    assert time.perf_counter() - start < 3.0
    assert all(isinstance(w, Write) for w in got)


def test_big_heredoc_is_read_through(tmp_path: Path) -> None:
    command = "cat > big <<'EOF'\n" + "rm nothing > x\n" * 60_000 + "EOF\nrm after"
    assert _seen(command, tmp_path) == [("big", F), ("after", F)]


def test_too_deep_is_broad(tmp_path: Path) -> None:
    assert read_writes("$(" * 40 + "rm x" + ")" * 40, str(tmp_path)) == [Write(str(tmp_path), T)]


def test_a_defect_is_broad_not_raised(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import git_lacunari.shell_writes as sw

    def broken(self: object, *args: object) -> None:
        raise KeyError("defect")

    monkeypatch.setattr(sw._Reader, "run", broken)
    assert write_targets("rm x", str(tmp_path)) == [Write(str(tmp_path), T)]


def test_import_is_cheap() -> None:
    """The reader is on the path of every tool call: stdlib only, nothing heavy."""
    code = (
        "import sys; before = set(sys.modules); import git_lacunari.shell_writes; "
        "print(sorted(set(sys.modules) - before))"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    ).stdout
    loaded = eval(out)  # noqa: S307 - our own child's repr of a list of names
    assert not {"subprocess", "glob", "shlex", "click"} & set(loaded), loaded


def test_a_hung_git_costs_its_budget_and_is_broad(
    repo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import git_lacunari.shell_writes as sw

    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (bin_dir / "git").write_text("#!/bin/sh\nexec sleep 30\n")
    (bin_dir / "git").chmod(0o755)
    monkeypatch.setenv("PATH", f"{bin_dir}:{os.environ['PATH']}")
    start = time.monotonic()
    got = read_writes("git checkout -- . && git reset --hard && git stash", str(repo))
    assert time.monotonic() - start < sw.GIT_BUDGET + 1.5
    assert got == [Write(str(repo), T)]
