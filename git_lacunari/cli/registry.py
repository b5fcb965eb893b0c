"""The lazy command registry: a verb's module is imported only when it is invoked.

`git lac claim 12` imports the claim family and nothing else; `--help`,
completion and the man page, which list every command, import them all.
"""

from __future__ import annotations

import importlib
from collections.abc import Iterator, Mapping, MutableMapping
from typing import Any

import click

# name -> "module:attribute" (relative to this package), in one place.
COMMANDS = {
    "boards": "setup:boards",
    "check": "locks:check",
    "claim": "claims:claim",
    "completion": "completion:completion",
    "desks": "desks:desks",
    "doctor": "doctor:doctor",
    "done": "claims:done",
    "drain": "liveness:drain",
    "env": "desks:env",
    "forecast": "landing:forecast",
    "guard": "guard:guard",
    "heartbeat": "claims:heartbeat",
    "help": "help:help_cmd",
    "hooks": "hooks:hooks",
    "init": "setup:init",
    "instance": "instance:instance",
    "keeper": "liveness:keeper",
    "land": "land_queue:land",
    "lander": "land_queue:lander",
    "lock": "locks:lock",
    "locks": "locks:locks",
    "log": "listing:log",
    "mcp": "agents:mcp_cmd",
    "prime": "agents:prime_cmd",
    "ready": "status:ready",
    "reconcile": "reconcile:reconcile",
    "release": "claims:release",
    "resource": "resource:resource",
    "serve": "serve:serve",
    "show": "listing:show",
    "status": "status:status",
    "sweep": "landing:sweep",
    "task": "task:task",
    "tasks": "listing:tasks",
    "team": "team:team",
    "unlock": "locks:unlock",
    "wait": "agents:wait_cmd",
    "whoami": "whoami:whoami",
}


class LazyCommands(MutableMapping[str, click.Command]):
    """A group's ``commands``, each imported on first use from its module path."""

    def __init__(self, paths: Mapping[str, str], package: str) -> None:
        self.paths = dict(paths)
        self.package = package
        self.loaded: dict[str, click.Command] = {}

    def __getitem__(self, name: str) -> click.Command:
        if name not in self.loaded:
            module, _, attr = self.paths[name].partition(":")
            found = getattr(importlib.import_module(f"{self.package}.{module}"), attr)
            assert isinstance(found, click.Command), self.paths[name]
            self.loaded[name] = found
        return self.loaded[name]

    def __setitem__(self, name: str, command: click.Command) -> None:
        self.loaded[name] = command
        self.paths.setdefault(name, "")

    def __delitem__(self, name: str) -> None:
        del self.paths[name]
        self.loaded.pop(name, None)

    def __iter__(self) -> Iterator[str]:
        return iter(self.paths)

    def __len__(self) -> int:
        return len(self.paths)


class LazyGroup(click.Group):
    """A click group whose commands are named here and imported when used."""

    def __init__(self, *args: Any, lazy: Mapping[str, str], package: str, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.commands = LazyCommands(lazy, package)
