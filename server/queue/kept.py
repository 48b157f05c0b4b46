"""What the in-process queue keeps of a finished run, and which finished runs it forgets first.

A run's event log is kept so a late or reconnecting follower replays it; once the run is done, the
`done` event carries the whole result, so the live-only events (`progress`, queue places) are dropped
and the log shrinks to its milestones. Kept runs are bounded by count and by bytes; when over either,
the address that holds the most goes first (its oldest run), so one client's flood of runs (fresh or
answered from the cache) forgets its own runs, never another client's before theirs.
"""

from __future__ import annotations

import collections
import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

# Events only a live follower needs: the result supersedes them once the run is done. Of the queue
# places a run went through, the last one stays (a replay still shows the run was queued).
LIVE_ONLY = frozenset({"progress"})
# Per event: its id, its kind, the dict around it (a rough but safe share of Python's overhead).
EVENT_OVERHEAD_BYTES = 200


@dataclass(frozen=True)
class KeptRun:
    """A done run as eviction sees it: whose it is and what it holds."""

    id: str
    address: str
    bytes: int


def compact(events: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The log a done run keeps: its milestones, its last queue place and `done`, each with the id
    it was sent with."""
    places = [e["id"] for e in events if e["kind"] == "queued"]
    last_place = places[-1] if places else None
    return [
        e for e in events if e["kind"] not in LIVE_ONLY and (e["kind"] != "queued" or e["id"] == last_place)
    ]


def log_bytes(events: list[dict[str, Any]]) -> int:
    """The bytes an event log holds, as its JSON (what a replay sends), plus a per-event overhead."""
    return sum(len(json.dumps(e["data"])) + EVENT_OVERHEAD_BYTES for e in events)


def to_forget(done: Sequence[KeptRun], most_runs: int, most_bytes: int) -> list[str]:
    """The ids of the done runs (oldest first in `done`) to forget, so what stays fits both bounds."""
    count: collections.Counter[str] = collections.Counter()
    held: collections.Counter[str] = collections.Counter()
    oldest: dict[str, collections.deque[KeptRun]] = collections.defaultdict(collections.deque)
    for r in done:
        count[r.address] += 1
        held[r.address] += r.bytes
        oldest[r.address].append(r)
    total, kept, forget = sum(held.values()), len(done), []
    # Over the bytes, the newest run stays even alone: one run's size is bounded on its own.
    while kept > max(0, most_runs) or (total > most_bytes and kept > 1):
        by_bytes = total > most_bytes
        address = max(count, key=lambda a: (held[a], count[a]) if by_bytes else (count[a], held[a]))
        run = oldest[address].popleft()
        forget.append(run.id)
        count[address] -= 1
        held[address] -= run.bytes
        total, kept = total - run.bytes, kept - 1
        if not count[address]:
            del count[address]
    return forget
