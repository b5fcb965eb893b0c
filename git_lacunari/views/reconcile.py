"""`git lac reconcile`'s output: a :data:`reconcile.ReconcileOutcome` as the
edge's :class:`Result` (human text, the JSON body, the unfinished line).
Click-free: entry.py's fast path renders with it too."""

from __future__ import annotations

from ..edge import Result
from ..reconcile.model import Aborted, FileResult, Finished, ReconcileOutcome
from .terminal import shown


def json_path(path: str) -> str:
    """A path for strict JSON: bytes that are not UTF-8 as ``\\xNN``."""
    return path.encode("utf-8", "surrogateescape").decode("utf-8", "backslashreplace")


def file_json(f: FileResult) -> dict[str, object]:
    return {
        "path": json_path(f.path),
        "outcome": f.outcome.value,
        "base": f.base,
        "base_source": f.base_source.value,
        "reason": json_path(f.reason),
    }


def file_line(f: FileResult) -> str:
    base = f" {f.base[:12]}" if f.base else ""
    return (
        f"{f.outcome.value:<10} {shown(f.path)}  "
        f"(base: {f.base_source.value}{base}; {shown(f.reason)})"
    )


def reconcile_result(outcome: ReconcileOutcome) -> Result:
    if isinstance(outcome, Aborted):
        return Result(
            {"aborted": json_path(outcome.ref)},
            f"reconcile of {shown(outcome.ref)} aborted",
            warnings=outcome.notes,
        )
    if isinstance(outcome, Finished):
        done = {"ref": json_path(outcome.ref), "paths": [json_path(p) for p in outcome.paths]}
        if outcome.left:
            return Result(
                {**done, "conflicts": [json_path(p) for p in outcome.left]},
                "",
                unfinished=f"{len(outcome.left)} conflict(s) left: "
                f"{', '.join(map(shown, outcome.left[:5]))}; resolve them and `git add`",
            )
        return Result({**done, "conflicts": []}, f"reconciled {shown(outcome.ref)}: committed")
    result, dry_run = outcome.reconciliation, outcome.dry_run
    counts: dict[str, int] = {}
    for f in result.files:
        counts[f.outcome.value] = counts.get(f.outcome.value, 0) + 1
    summary = ", ".join(f"{n} {k}" for k, n in sorted(counts.items())) or "nothing to do"
    left = result.conflicts if not dry_run else []
    return Result(
        {
            "dry_run": dry_run,
            "clean": result.clean,
            "files": [file_json(f) for f in result.files],
            "counts": counts,
            "conflicts": [json_path(p) for p in result.conflicts],
        },
        "\n".join(
            [*map(file_line, result.files), f"{'plan' if dry_run else 'reconciled'}: {summary}"]
        ),
        unfinished=(
            f"{len(left)} conflict(s) left; resolve them, `git add`, then "
            "`git lac reconcile --continue` (or --abort)"
            if left
            else None
        ),
    )
