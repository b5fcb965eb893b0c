"""`git lac serve`: the live board page.

Split so that only the ASGI layer needs the ``web`` install extra
(``pip install 'git-lacunari[web]'``): :mod:`.overview` reads one snapshot of
the board through its named queries, :mod:`.feed` is the one watcher per
server process (``LISTEN`` on PostgreSQL, ``PRAGMA data_version`` on SQLite)
fanned out to every open page, :mod:`.app` is the Starlette application and
:mod:`.server` binds and runs it under uvicorn. Nothing here is imported by
the plain command line or the hooks until `git lac serve` runs.
"""

from __future__ import annotations

EXTRA_HINT = "pip install 'git-lacunari[web]'"
