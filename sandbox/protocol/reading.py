"""Reading a job's report: each line decoded once against its kind's schema, within caps that bound
what the reading costs the host, per line and per job.

The host reads every line a job writes, in its own process and outside the job's CPU limits, so
the caps are on the host's work as well as on bytes (issue 41): a schema-valid 15.8 MB `trace` whose
lists held millions of ints once cost ~9 s to decode and ~9 s more to bound. A line's size is
checked against its kind's cap before it is parsed (the writer puts the kind first; a long line
that does not is refused), and the values a decode builds (list items, object entries, a
dataclass's fields) are counted as each list or object is reached, per line and per job, so an
over-long list is refused before any of it is built. The decoded payload stays with the event (`events.payload`): nothing
decodes the line again.
"""

from __future__ import annotations

import json
import re
from typing import Any

from sandbox.protocol.codec import Budget, DecodeError, from_json_dict
from sandbox.protocol.events import PAYLOADS, Event, with_payload

# What one job may write on its event descriptor: a line, all lines, and the number of events.
MAX_EVENT_BYTES = 16 << 20  # a case's outputs (8 MiB of arrays, as base64), a reference's with its inputs
MAX_REPORT_BYTES = 48 << 20
MAX_EVENTS = 10_000
# A line that does not name its kind first (the writer always does): a few words at most.
SMALL_EVENT_BYTES = 64 << 10
# Per kind: (bytes per line, values per line). A value (a list's item, an object's entry, a dataclass's
# field) is what costs the host work to decode and bound (~1 µs each); a string is one value however
# long, so kinds of a few words keep the old line cap and are held by their count of values. Kinds
# of many values are held in bytes too, generously for the harness: over the catalog the largest
# trace is 184 KB with 12,001 values, a lowering check of every chip 464 KB with 3,861, an estimate
# 36 KB with 1,451 (every solution, interpret mode, every chip, 2026-12-06); the harness's own caps
# (2,000 trace events with their steps and blocks, a timeline of 2,000 steps, IR texts of 200,000
# characters, a program of 2 MiB) stay well below these.
KIND_CAPS: dict[str, tuple[int, int]] = {
    "trace": (4 << 20, 250_000),
    "lowering": (8 << 20, 250_000),
    "estimate": (1 << 20, 100_000),
    "config_outputs": (MAX_EVENT_BYTES, 50_000),
    "exported": (4 << 20, 1_000),  # one program, base64
}
OTHER_CAPS = (MAX_EVENT_BYTES, 20_000)
# Values one job's lines may build in all: a sweep of 64 configs and a scratch file's biggest trace
# fit many times over; about a second of the host's time.
REPORT_VALUES = 1_000_000

# How the writer starts a line (`EventWriter`: `{"kind": "...", ...`): a line longer than
# SMALL_EVENT_BYTES must start so, naming the kind whose cap it is held to.
_HEAD = re.compile(rb'\A\s*\{\s*"kind"\s*:\s*"([a-z_]{1,40})"')


class ReportError(ValueError):
    """The child's events could not be read: malformed, of an unknown kind, or over a cap."""


def caps_of(kind: str) -> tuple[int, int]:
    """(bytes per line, values per line) for events of `kind`."""
    return KIND_CAPS.get(kind, OTHER_CAPS)


def line_limit(line: bytes | bytearray) -> tuple[str | None, int]:
    """The kind a line (or its start, still being written) names first, and the bytes it may have."""
    head = _HEAD.match(bytes(line[:200]))
    named = head.group(1).decode() if head else None
    if named is None or named not in PAYLOADS:
        return None, SMALL_EVENT_BYTES
    return named, caps_of(named)[0]


def read_event(line: bytes, report: Budget | None = None) -> Event:
    """One line of a child's report as an Event whose data fits its kind's schema, or `ReportError`.

    Each line is held to its kind's caps; `report`, the values the job's report may still build
    (`Budget(REPORT_VALUES)`), is spent by what the line built. The event keeps its decoded payload."""
    named, limit = line_limit(line)
    if len(line) > limit:
        raise ReportError(
            f"{f'a {named} event' if named else 'an event'} of {len(line):,} bytes (the limit is {limit:,})"
        )
    try:
        raw = json.loads(line)
    except (ValueError, RecursionError) as exc:
        raise ReportError(f"not JSON: {str(exc)[:120]}") from None
    if not isinstance(raw, dict) or set(raw) - {"kind", "data", "t"} or "kind" not in raw:
        raise ReportError("not an event object")
    kind = raw["kind"]
    if not isinstance(kind, str) or kind not in PAYLOADS:
        raise ReportError(f"unknown event kind {str(kind)[:40]!r}")
    if named is not None and kind != named:  # a second "kind" key: the line was held to another's cap
        raise ReportError(f"an event that names two kinds ({named!r}, then {kind[:40]!r})")
    values = caps_of(kind)[1]
    left = report.left if report is not None else values
    by_report = left < values  # the job's budget is the tighter
    budget = Budget(min(values, left))
    try:
        typed: Any = from_json_dict(PAYLOADS[kind], raw.get("data", {}), budget)
        event = from_json_dict(Event, raw)
    except (DecodeError, RecursionError) as exc:
        if by_report and budget.left < 0:
            raise ReportError(f"the job's events hold more than {REPORT_VALUES:,} values") from None
        raise ReportError(f"{kind} event: {str(exc)[:300]}") from None
    if report is not None:
        report.left -= budget.values - budget.left
    return with_payload(event, typed)
