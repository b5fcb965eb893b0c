"""The four hook scripts are made from one template (hooks/hook.template):
each comes out whole, valid shell, with no tag or field left over, and byte
for byte the script pinned below (so a change to an installed hook is always
a deliberate one)."""

from __future__ import annotations

import hashlib
import re
import subprocess

import pytest

from git_lacunari.hooks import (
    HOOK_NAMES,
    MARKER,
    SERVER_HOOK_NAMES,
    TAGGED,
    TEMPLATE,
    TEMPLATES,
    TRAITS,
    render,
)

ALL = (*HOOK_NAMES, *SERVER_HOOK_NAMES)
# sha256 of each hook rendered with @LAC@ left as itself: first the four files
# hooks/pre-commit... as they were before the template replaced them; then
# the client hooks changed once, on purpose (issue 22: LAC_GUARD=off is read
# by the script itself, before git-lac is looked for); then every hook once
# more, on purpose: it runs the resident helper's thin client first
# (@PY@ -I -S @CLIENT@), git-lac itself when that is gone. A deliberate
# change to a hook changes its digest here, in the same commit.
SHIPPED = {
    "pre-commit": "f4d16c17fe0411aa8f1c4b2d0581d73a7d502d3adb80921553b2b1ae06105cc4",
    "pre-push": "1b032843f8b24ea901ac7364e44e0e6ecd11faa8507e13ee439d14047003172b",
    "pre-merge-commit": "9b77d71061b2281b938c79c017b93a89e4914cd43a185abce7b8e5e859d894da",
    "post-commit": "818886ddf044caa87ae4d7a5080bf5491f74f69970631c73617c910a743ebabe",
    "commit-msg": "2e22d1e67568e0991ec1df10e3b07a35e59731bc3675539af54448f63de2c033",
    "pre-receive": "7ceb0d2905c4e121ff711b8c948ea8f003edce6eb9b17f198db30e0c5ac16bf4",
    "post-receive": "26c9008637ee344ae4e7fc281d89fe69d92817ffb384a52a958c8ac7730f923b",
}


@pytest.mark.parametrize("name", ALL)
def test_each_hook_is_the_script_that_shipped_before(name: str) -> None:
    text = render(name, "@LAC@", "@PY@", "@CLIENT@")
    assert hashlib.sha256(text.encode()).hexdigest() == SHIPPED[name]


def test_every_tag_in_the_template_is_a_hook_or_a_trait() -> None:
    known = {*ALL, *(t for traits in TRAITS.values() for t in traits)}
    used: set[str] = set()
    for line in (TEMPLATES / TEMPLATE).read_text().splitlines():
        tagged = TAGGED.match(line)
        if tagged:
            used |= set(tagged[1].split())
    assert used and used <= known, used - known
    assert set(TRAITS) == set(ALL)


@pytest.mark.parametrize("name", ALL)
def test_a_rendered_hook_is_whole_shell(name: str) -> None:
    text = render(name, "/opt/git lac's/bin/git-lac", "/opt/py's/python3", "/opt/c's/resident.py")
    assert text.startswith("#!/bin/sh\n") and MARKER in text
    assert not re.search(r"@(HOOK|WHAT|LAC|PY|CLIENT)@", text)
    assert not any(TAGGED.match(line) for line in text.splitlines())
    assert "LAC='/opt/git lac'\\''s/bin/git-lac'\n" in text
    assert f'"$here/{name}.legacy"' in text
    assert "PY='/opt/py'\\''s/python3'\n" in text
    assert "CLIENT='/opt/c'\\''s/resident.py'\n" in text
    assert f"lac_run guard {name}" in text
    assert '"$PY" -I -S "$CLIENT" "$LAC" "$@"' in text and '"$LAC" "$@"' in text
    subprocess.run(["sh", "-n"], input=text, text=True, check=True)


def test_a_path_holding_a_field_name_is_not_filled_in() -> None:
    assert "LAC='/x/@HOOK@/git-lac'" in render("pre-push", "/x/@HOOK@/git-lac")
