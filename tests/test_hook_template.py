"""The four hook scripts are made from one template (hooks/hook.template):
each comes out whole, valid shell, with no tag or field left over, and byte
for byte the script that shipped as its own file before (so an installed hook
from then is `unchanged`, not rewritten)."""

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
# sha256 of each hook rendered with @LAC@ left as itself: the four files
# hooks/pre-commit... as they were before the template replaced them. A
# deliberate change to a hook changes its digest here, in the same commit.
SHIPPED = {
    "pre-commit": "3a58b07ca4e807d8e54c9be6d021ded5efdb8ead91726ea3ffa814809369a862",
    "pre-push": "3fc650aa4ad0156a8de359c91758f5cb2ae1b3899502ee7cf787f072cee835fc",
    "pre-merge-commit": "e001e5b559be3dc37413a7e10d8c2a5a304da1d02d4175a417bccaf1adda1db4",
    "pre-receive": "bd4e7ff44823a689e4025b47d5b994fea236df3c1798e7917a1159d67837dc70",
}


@pytest.mark.parametrize("name", ALL)
def test_each_hook_is_the_script_that_shipped_before(name: str) -> None:
    assert hashlib.sha256(render(name, "@LAC@").encode()).hexdigest() == SHIPPED[name]


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
    text = render(name, "/opt/git lac's/bin/git-lac")
    assert text.startswith("#!/bin/sh\n") and MARKER in text
    assert not re.search(r"@(HOOK|WHAT|LAC)@", text)
    assert not any(TAGGED.match(line) for line in text.splitlines())
    assert "LAC='/opt/git lac'\\''s/bin/git-lac'\n" in text
    assert f'"$here/{name}.legacy"' in text
    assert f'"$LAC" guard {name}' in text
    subprocess.run(["sh", "-n"], input=text, text=True, check=True)


def test_a_path_holding_a_field_name_is_not_filled_in() -> None:
    assert "LAC='/x/@HOOK@/git-lac'" in render("pre-push", "/x/@HOOK@/git-lac")
