"""Which protocol events a run's followers see while it runs, and in what shape.

Both run queues (in-process and Redis workers) forward these; the harness's own `done` is replaced
by the queue's, which carries the whole result, and the trace is folded into the result only.
"""

from __future__ import annotations

from typing import Any

FORWARDED = frozenset(
    {
        "started",
        "versions",
        "imported",
        "compiled",
        "case",
        "outputs",
        "timing",
        "memory",
        "error",
        "lowering",
        "progress",  # live step counts of the kernel running now
        "config",  # a sweep config judged (the model's `estimate` is big: it waits for the result)
    }
)
# IR texts can be hundreds of KB per chip: progress events carry verdicts only, the result has the texts.
IR_FIELDS = ("jaxpr", "mosaic", "stablehlo")


def slim(data: dict[str, Any]) -> dict[str, Any]:
    """A lowering event without its IR texts."""

    def strip(check: Any) -> Any:
        return {k: v for k, v in check.items() if k not in IR_FIELDS} if isinstance(check, dict) else check

    return {
        **data,
        "check": strip(data.get("check")),
        "checks": [strip(r) for r in data.get("checks", [])],
    }


def progress(kind: str, data: dict[str, Any], t: float) -> dict[str, Any] | None:
    """The data a follower sees for one harness event, or None if it is not forwarded."""
    if kind not in FORWARDED:
        return None
    return {**(slim(data) if kind == "lowering" else data), "t": t}
