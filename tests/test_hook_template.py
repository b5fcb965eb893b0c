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
# by the script itself, before git-lac is looked for). A deliberate change to
# a hook changes its digest here, in the same commit.
SHIPPED = {
    "pre-commit": "60496ec4e34ebe8b6e6371e99e24f8ed596d37a70b3408943082d999c41d42a8",
    "pre-push": "dbbf5c133b060dcd47d265b6fc8b44c21927202fa1e7b1afd03dd42d654a3aea",
    "pre-merge-commit": "52ee27fcbaf7bd942b4514a76ec9173ca657313e1f182b3268940b16c12fe73a",
    "pre-receive": "bd4e7ff44823a689e4025b47d5b994fea236df3c1798e7917a1159d67837dc70",
    # Issue 25 (landing): the hooks after the fact, new.
    "post-commit": "daafd10bb3e09148fa387985c953c2848a3a718ad812b1a8fd546b7b0ee604d4",
    "post-receive": "5db9fb9e8212c3638ff65131652996597783df9928daef6ffe9cff5d11ca031a",
    # Rebased and squashed work known where its tip never was: new.
    "commit-msg": "bd2f3f2bf4cbf820cca13f2a968f8f9c19b059b7c625214066e396b8866ed361",
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
