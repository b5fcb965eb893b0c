"""`git lac serve`: the live board page."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from .. import edge
from ..edge import Result
from ..session import Session

if TYPE_CHECKING:
    from ..web.server import Serving


def serve(
    session: Session,
    *,
    host: str,
    port: int,
    open_browser: bool,
    allow_actions: bool,
    token: str | None,
    echo: Callable[[str], None],
    as_json: bool = False,
    max_clients: int = 100,
) -> Result:
    """Serve until stopped. With ``as_json`` the one object is printed as soon
    as the server listens (a supervisor reads the URL of --port 0 there); the
    stop is told by the exit code and stderr, nothing more on stdout."""
    try:
        from ..web.server import serve as run_server
    except ImportError as exc:
        from ..errors import CannotWorkHere
        from ..web import EXTRA_HINT

        missing = (exc.name or "starlette").split(".")[0]
        raise CannotWorkHere(
            f"git lac serve needs the web extra ({missing} is missing): {EXTRA_HINT}"
        ) from None

    def listening(served: Serving) -> None:
        if as_json:
            body: dict[str, Any] = {"url": served.url, "token_url": served.token_url}
            body |= {"actions": served.actions, "role": served.role}
            edge.render(Result(body), as_json=True)

    served = run_server(
        session,
        host=host,
        port=port,
        token=token,
        allow_actions=allow_actions,
        open_browser=open_browser,
        echo=echo,
        listening=listening,
        max_clients=max_clients,
    )
    return Result(stopped_by=served.stopped_by, shown=as_json)
