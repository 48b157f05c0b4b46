"""Data races found by the interpret-mode race detector, captured from its log and made structured.

With `InterpretParams(detect_races=True, on_race="warn")` the detector (JAX's
`pallas/mosaic/interpret/race_detection_state.py`) logs one WARNING per race and carries on. Read
races go to that module's logger, write races to the root logger, so `RaceLog` sits on the root
logger, which sees both. `parse` turns one report into a `Race`: the two accesses, the buffer, and
the user's source line for each side when the detector knew it. The report format is the one of
jax 0.12.0.1; a report that does not parse is kept verbatim, and the case still fails.

Parsing is pure (no JAX import), so it is unit-tested on recorded reports.
"""

from __future__ import annotations

import logging
import re

from sandbox.protocol import Race, RaceAccess

REPORT_PREFIX = "RACE DETECTED"
# Every case keeps its first few races; the rest are only counted (a racy loop reports one per step).
MAX_RACES_PER_CASE = 10
# The detector numbers DMA "threads" from 100 up, and devices from 0 (see `dma_id_counter`).
FIRST_DMA_ID = 100

_ACCESS = re.compile(
    r"^\s*(?P<kind>read|write) of \((?P<key>[^)]*)\)\[(?P<region>.*)\] from \((?P<thread>[^)]*)\),\s?(?P<frame>.*)$"
)
_FRAME = re.compile(r"^(?P<file>.+?):(?P<line>\d+)(?::\d+)?(?: \((?P<function>.*)\))?$")
_SLICE = re.compile(r"slice\((\w+), (\w+), (\w+)\)")


class RaceLog(logging.Handler):
    """Collects race reports while attached to the root logger; `take()` hands over what came in."""

    def __init__(self) -> None:
        super().__init__(level=logging.WARNING)
        self._reports: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        # Called under the handler's lock (`Handler.handle`); reports come from interpreter threads.
        text = record.getMessage()
        if text.startswith(REPORT_PREFIX):
            self._reports.append(text)

    def take(self) -> list[str]:
        self.acquire()
        try:
            reports, self._reports = self._reports, []
        finally:
            self.release()
        return reports

    def attach(self) -> RaceLog:
        # A handler on the root logger also stops `logging.warning` from configuring a stderr
        # handler of its own, so the reports reach the user once, structured, not also as raw text.
        logging.getLogger().addHandler(self)
        return self


def parse(text: str) -> Race:
    """One detector report (the text of one WARNING) as a `Race`."""
    accesses = tuple(a for a in (_access(line) for line in text.splitlines()) if a is not None)
    if len(accesses) != 2:
        return Race(
            summary="data race (the detector's report is shown verbatim)", accesses=accesses, text=text
        )
    first, second = accesses
    summary = (
        f"{first.kind} by {first.by}{_where(first)} and {second.kind} by {second.by}{_where(second)} "
        f"overlap in {first.buffer} {first.region}"
    )
    return Race(summary=summary, accesses=accesses, text=text)


def parse_all(reports: list[str]) -> tuple[Race, ...]:
    return tuple(parse(text) for text in reports[:MAX_RACES_PER_CASE])


def _access(line: str) -> RaceAccess | None:
    match = _ACCESS.match(line)
    if match is None:
        return None
    file, number, function = _frame(match["frame"].strip())
    return RaceAccess(
        kind=match["kind"],
        buffer=_buffer(match["key"]),
        region=_region(match["region"]),
        by=_thread(match["thread"]),
        file=file,
        line=number,
        function=function,
    )


def _frame(frame: str) -> tuple[str | None, int | None, str]:
    # "kernel.py:31:8 (scale_kernel.<locals>._)"; "pallas_call" or "" when no user frame was known.
    match = _FRAME.match(frame)
    if match is None:
        return None, None, ""
    return match["file"], int(match["line"]), match["function"] or ""


def _buffer(key: str) -> str:
    # "'hbm', 101, 0, 0": memory space, buffer id, device, core (always 0 for HBM).
    if "`" in key:  # already the user's name for it (`sandbox.harness.monitor.racenames`)
        return key
    parts = [p.strip().strip("'\"") for p in key.split(",")]
    if len(parts) != 4:
        return f"buffer ({key})"
    space, buffer_id, device, core = parts
    if space.lower() == "hbm":
        return f"HBM buffer {buffer_id} on device {device}"
    return f"{space.upper()} buffer {buffer_id} of device {device}, core {core}"


def _region(region: str) -> str:
    def one(m: re.Match[str]) -> str:
        start, stop, step = ("" if v == "None" else v for v in m.groups())
        return f"{start}:{stop}" + (f":{step}" if step not in ("", "1") else "")

    inner = _SLICE.sub(one, region.strip())
    if inner.startswith("(") and inner.endswith(")"):
        inner = inner[1:-1].rstrip(",")
    return f"[{inner}]" if inner else "(the whole buffer)"


def _thread(thread: str) -> str:
    parts = [p.strip() for p in thread.split(",") if p.strip()]
    if not parts or not all(p.isdigit() for p in parts):
        return f"({thread})"
    if int(parts[0]) >= FIRST_DMA_ID:
        return f"a DMA (id {parts[0]})"
    core = f", core {parts[1]}" if len(parts) > 1 else ""
    return f"device {parts[0]}{core}"


def _where(access: RaceAccess) -> str:
    return f" at {access.file} line {access.line}" if access.file and access.line else ""
