"""`git lac serve`: the live board page."""

from __future__ import annotations

from collections.abc import Callable

from ..edge import Result
from ..session import Session


def serve(
    session: Session,
    *,
    host: str,
    port: int,
    open_browser: bool,
    allow_actions: bool,
    token: str | None,
    echo: Callable[[str], None],
) -> Result:
    try:
        from ..web.server import serve as run_server
    except ImportError as exc:
        from ..errors import CannotWorkHere
        from ..web import EXTRA_HINT

        missing = (exc.name or "starlette").split(".")[0]
        raise CannotWorkHere(
            f"git lac serve needs the web extra ({missing} is missing): {EXTRA_HINT}"
        ) from None

    served = run_server(
        session,
        host=host,
        port=port,
        token=token,
        allow_actions=allow_actions,
        open_browser=open_browser,
        echo=echo,
    )
    return Result(
        {"url": served.url, "actions": served.actions, "role": served.role},
        "",
        stopped_by=served.stopped_by,
    )
