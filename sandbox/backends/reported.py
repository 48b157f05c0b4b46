"""What a kernel's process reports beside its outputs, bounded before anything reads it (issue 41).

The checker judges outputs; every other event a job's process writes (its timing, memory figures,
versions, estimate, progress, trace, lowering checks, its error) passes through to `classify`, the
run's result, its followers and whatever keeps the result (a share, the class board). Those events
fit their schema (`sandbox.protocol.reading.read_event`), but a schema says only "a number" or "a
string": a forged `memory` event carried a list of 1,000 warnings of 10,000 characters (a 10 MB
result), 10**300 as a count and "nan" as a time. Here each such event is rebuilt field by field:
every float finite (else None where the field may be null, else 0), every integer within int64,
every string and list clipped (generously where the harness itself sends long text: IR, traces,
tracebacks), the event's own time finite. What is left is still the process's word, and shown as such.
"""

from __future__ import annotations

import dataclasses
import enum
import functools
import logging
import math
import re
import types
import typing
from typing import Any

from sandbox.protocol import Event, Tolerance, to_json_dict
from sandbox.protocol.codec import DecodeError
from sandbox.protocol.events import CaseExpected, CaseRan, payload, with_payload
from sandbox.verdict.arrays import ChannelError
from sandbox.verdict.tolerances import usable

log = logging.getLogger(__name__)

INT_BOUND = 2**63 - 1
# JSON's "\ud800" decodes to a lone surrogate, which no UTF-8 can carry: a result holding one made
# every answer that showed it a 500 (`GET /api/runs/{id}`, a share of it).
_SURROGATE = re.compile("[\ud800-\udfff]")
# (characters per string, items per list) per kind; the harness's own caps are below these.
LIMITS: dict[str, tuple[int, int]] = {
    "trace": (4_000, 50_000),  # MAX_EVENTS events, their steps and grid visits
    "estimate": (1_000, 4_000),  # a timeline of MAX_TIMELINE steps
    "lowering": (250_000, 64),  # IR texts of MAX_IR_CHARS, one check per chip
    "error": (20_000, 64),  # a traceback trimmed to the user's frames
    "exported": (3_000_000, 4),  # a program of PROGRAM_BYTES in base64 (`jaxapi.exported`)
}
DEFAULT_LIMITS = (2_000, 32)  # timing, memory, versions, progress, ...: a few short words each
# What a scratch file's `make_inputs` printed, as the harness caps it (`sandbox.harness.reference`).
PRINTED_CHARS = 64 << 10
MAX_INPUTS, MAX_RANK = 64, 8


def bounded(event: Event) -> Event | None:
    """`event` with every field bounded (see the module doc). Never raises: it runs while the job
    does, and an exception there would be the checker's, not the run's. An event that does not fit
    its schema is left as it is (the reader refuses those from a job, so it is our own fault, which
    `classify` reports as such); one that fits but cannot be rebuilt is dropped (None)."""
    try:
        typed = payload(event)
    except (DecodeError, KeyError, TypeError, RecursionError):
        return event
    try:
        chars, items = LIMITS.get(event.kind, DEFAULT_LIMITS)
        kept = _bound(typed, chars, items, nullable=False)
        return with_payload(Event(kind=event.kind, data=to_json_dict(kept), t=event_time(event.t)), kept)
    except (TypeError, ValueError, RecursionError) as exc:
        log.warning("a %s event of a job's process could not be bounded; dropped: %r", event.kind, exc)
        return None


# What a case's report may carry besides its arrays, all of it the kernel process's word.
MAX_NOTES, NOTE_CHARS, MAX_RACES, RACE_CHARS, MAX_BANDS = 8, 500, 10, 2000, 8


def case_ran(ran: CaseRan) -> CaseRan:
    """`ran` with every field the verdict shows bounded: a few short notes (its mismatch hint and
    chip bands too), a few races with short texts, counts that are counts, a time that is a finite
    number (JSON has no NaN)."""
    races = tuple(
        dataclasses.replace(
            r,
            summary=r.summary[:RACE_CHARS],
            text=r.text[:RACE_CHARS],
            accesses=tuple(
                dataclasses.replace(
                    a, kind=a.kind[:40], buffer=a.buffer[:200], region=a.region[:200], by=a.by[:200]
                )
                for a in r.accesses[:4]
            ),
        )
        for r in ran.races[:MAX_RACES]
    )
    seconds = ran.seconds if math.isfinite(ran.seconds) and ran.seconds >= 0 else 0.0
    return dataclasses.replace(
        ran,
        case=ran.case[:NOTE_CHARS],
        seconds=seconds,
        notes=tuple(n[:NOTE_CHARS] for n in ran.notes[:MAX_NOTES]),
        mismatch_hint=ran.mismatch_hint[:NOTE_CHARS],
        chip_bands=tuple(
            (name[:40], band)
            for name, band in ran.chip_bands[:MAX_BANDS]
            if math.isfinite(band) and band >= 0
        ),
        races=races,
        race_count=min(max(ran.race_count, 0), 1 << 30),
        kernels=min(max(ran.kernels, -1), 1 << 20),
    )


def event_time(t: float) -> float:
    """A process's event time as an event the host makes may carry it: finite, 0 <= t < 1e9, else 0
    (JSON has no NaN: one reached a run's event stream as `NaN`, which no browser parses)."""
    return t if math.isfinite(t) and 0 <= t < 1e9 else 0.0


def expected(event: CaseExpected) -> CaseExpected:
    """A reference's case with the fields its process chose bounded (a scratch file's reference is
    user code): the case's name and dims, the inputs' shapes, what `make_inputs` printed; its
    tolerances usable (`ChannelError` else: the harness refuses such a `TOLERANCE`, so its process wrote
    them itself). Its arrays are the checker's to vet (`sandbox.verdict.arrays`)."""
    return dataclasses.replace(
        event,
        tolerances={str(name)[:200]: _usable(tol) for name, tol in event.tolerances.items()},
        case=_bound(event.case, 500, 32, nullable=False),
        input_shapes=tuple(
            tuple(max(0, min(n, INT_BOUND)) for n in shape[:MAX_RANK])
            for shape in event.input_shapes[:MAX_INPUTS]
        ),
        printed=event.printed[:PRINTED_CHARS],
    )


def _usable(tol: Tolerance) -> Tolerance:
    try:
        return usable(tol)
    except ValueError as exc:  # told to the user as the reference's unreadable outputs
        raise ChannelError(f"the reference's {exc}") from None


def text(value: str) -> str:
    """`value` as valid Unicode: a lone surrogate as U+FFFD."""
    return _SURROGATE.sub("\ufffd", value)


def valid_unicode[T](value: T) -> T:
    """`value` (a result, its events: dataclasses, tuples, dicts) with every string valid Unicode."""
    if isinstance(value, enum.Enum):  # a str enum (`RunStatus`) stays itself
        return value
    if isinstance(value, str):
        return typing.cast(T, text(value))
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        changed = {f.name: valid_unicode(getattr(value, f.name)) for f in dataclasses.fields(value) if f.init}
        return typing.cast(T, dataclasses.replace(value, **changed))
    if isinstance(value, tuple | list):
        return typing.cast(T, type(value)(valid_unicode(v) for v in value))
    if isinstance(value, dict):
        return typing.cast(T, {valid_unicode(k): valid_unicode(v) for k, v in value.items()})
    return value


def _bound(value: Any, chars: int, items: int, *, nullable: bool) -> Any:
    kind = type(value)
    if value is None or kind is bool:
        return value
    if kind is float:
        return value if math.isfinite(value) else (None if nullable else 0.0)
    if kind is int:
        return max(-INT_BOUND, min(INT_BOUND, value))
    if isinstance(value, str):  # an enum's value too
        return text(value if len(value) <= chars else value[: chars - 1] + "…")
    if kind is tuple or kind is list:
        return kind(_bound(v, chars, items, nullable=False) for v in value[:items])
    if kind is dict:
        kept = list(value.items())[:items]
        return {
            _bound(k, 200, items, nullable=False): _bound(v, chars, items, nullable=False) for k, v in kept
        }
    plan = _fields(kind) if dataclasses.is_dataclass(kind) else None
    if plan is not None:  # a payload's dataclass: its own constructor, as `dataclasses.replace` would call it
        return kind(
            **{name: _bound(getattr(value, name), chars, items, nullable=null) for name, null in plan}
        )
    return value


@functools.cache
def _fields(cls: type) -> tuple[tuple[str, bool], ...]:
    """A dataclass's fields its constructor takes, each with whether it may be None."""
    hints = typing.get_type_hints(cls)
    return tuple((f.name, _nullable(hints[f.name])) for f in dataclasses.fields(cls) if f.init)


def _nullable(annotation: Any) -> bool:
    return (
        typing.get_origin(annotation) is typing.Union or isinstance(annotation, types.UnionType)
    ) and type(None) in typing.get_args(annotation)
