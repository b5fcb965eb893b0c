"""`git lac hooks install | uninstall`: the native guard hooks."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from ..edge import Result
from ..errors import InvalidInput
from ..session import Session

if TYPE_CHECKING:
    from ..hooks import HookChange


def _changed(changes: Sequence[HookChange]) -> Result:
    return Result(
        {"hooks": [vars(c) for c in changes]},
        "\n".join(f"{c.hook}: {c.action} ({c.path})" for c in changes),
    )


def install(session: Session, force: bool, server: bool, global_ok: bool) -> Result:
    from ..hooks import install as install_hooks
    from ..hooks import install_server, shared_hooks_path
    from ..repo import discover_git_dir

    if server:
        return _changed(install_server(discover_git_dir(), force=force))
    shared = shared_hooks_path(session.repo)
    if shared is not None and not global_ok:
        raise InvalidInput(
            f"core.hooksPath comes from the {shared.scope} git config ({shared.path}): "
            "installing there guards every repository on this machine that has no "
            "core.hooksPath of its own (they stay silent where there is no board); "
            "give --global-hooks-path to do that"
        )
    return _changed(install_hooks(session.repo, force=force))


def uninstall(session: Session, server: bool) -> Result:
    from ..hooks import uninstall as uninstall_hooks
    from ..hooks import uninstall_server
    from ..repo import discover_git_dir

    return _changed(
        uninstall_server(discover_git_dir()) if server else uninstall_hooks(session.repo)
    )
