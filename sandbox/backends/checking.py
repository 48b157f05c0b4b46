"""A run's verdict, made outside the user's process: the reference's job, then the checker.

A job that checks outputs runs as two jobs on the same backend. First the reference's job
(`Job.role == "reference"`, `sandbox.harness.reference`) makes each case's inputs and expected
outputs: in catalog mode it never loads the user's code, in scratch mode it never calls `kernel`.
Then the kernel's job runs and sends what its kernel returned (`case_outputs`). Here, in the
trusted process that ran both, each case is judged (`sandbox.verdict.judge`) and becomes the run's
`case` event; whatever verdict-like event a job's process writes itself (`case`, `outputs`,
`expected` from the kernel's job) is dropped. A kernel's process that sends unreadable outputs,
skips cases or ends early without an error gets `error`, never `passed`.

A catalog entry's expected outputs depend only on the entry, the runtime, the mode, the chip and
the devices: they are computed once per backend process and kept (bounded by bytes).
"""

from __future__ import annotations

import ast
import hashlib
import json
import logging
import threading
import weakref
from collections import OrderedDict
from dataclasses import dataclass, field, replace

from sandbox.backends.base import Backend
from sandbox.protocol import ErrorInfo, Event, Execution, Job, Tolerance, new_event, to_json_dict
from sandbox.protocol.codec import DecodeError, from_json_dict
from sandbox.protocol.events import CaseExpected, CaseRan
from sandbox.verdict import arrays
from sandbox.verdict.judge import Expected, judge
from sandbox.verdict.summary import summarize_output

log = logging.getLogger(__name__)

REFERENCE_CACHE_BYTES = 64 << 20
# Verdicts only the checker makes: a job's process that writes one is ignored.
CHECKER_KINDS = frozenset({"case", "outputs", "expected"})


@dataclass(frozen=True)
class Reference:
    """What the reference's job computed: per case index, the expected outputs (none: nothing to check)."""

    expected: dict[int, Expected]
    of: int
    tolerances: dict[str, Tolerance]
    nbytes: int = 0


@dataclass(frozen=True)
class ReferenceFailed:
    """The reference's job did not end normally: its raw facts (a scratch reference's error is the user's)."""

    job: Job
    execution: Execution


def reference_job(job: Job) -> Job | None:
    """The reference's half of `job`, or None when nothing is checked (a sweep, a file without a reference)."""
    if job.role != "kernel" or job.sweep is not None:
        return None
    if job.entry is None and not defines_reference(job.source):
        return None
    source = "" if job.entry is not None else job.source  # a catalog reference never sees user code
    return replace(job, id=f"{job.id}-ref", source=source, role="reference", trace=False, lower_chips=())


def defines_reference(source: str) -> bool:
    """Whether a scratch file may bind `reference` (read, not run: the source is untrusted).

    Over-inclusive on purpose: any binding of the name anywhere, or the string "reference" (for
    `globals()["reference"] = …`), runs the reference's job, which finds out for sure; a file that
    never mentions it has nothing to check against and runs as one job.
    """
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return True  # let the reference's job report the error in the user's terms
    for node in ast.walk(tree):
        if (
            isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))
            and node.name == "reference"
        ):
            return True
        if isinstance(node, ast.Name) and node.id == "reference" and not isinstance(node.ctx, ast.Load):
            return True
        if isinstance(node, ast.alias) and (node.asname or node.name).split(".")[0] == "reference":
            return True
        if isinstance(node, ast.Constant) and node.value == "reference":
            return True
    return False


class ReferenceCache:
    """Catalog references by what they depend on, least recently used dropped first, bounded by bytes."""

    def __init__(self, max_bytes: int = REFERENCE_CACHE_BYTES) -> None:
        self.max_bytes = max_bytes
        self._items: OrderedDict[str, Reference] = OrderedDict()
        self._lock = threading.Lock()

    def get(self, key: str) -> Reference | None:
        with self._lock:
            found = self._items.get(key)
            if found is not None:
                self._items.move_to_end(key)
            return found

    def put(self, key: str, reference: Reference) -> None:
        if reference.nbytes > self.max_bytes:
            return
        with self._lock:
            self._items[key] = reference
            while sum(r.nbytes for r in self._items.values()) > self.max_bytes:
                self._items.popitem(last=False)


# One cache per backend (weakly held): a backend's references are its own runs' (a test's fake backend
# must never answer for a real one in the same process), and go when the backend goes.
CACHES: weakref.WeakKeyDictionary[Backend, ReferenceCache] = weakref.WeakKeyDictionary()
_CACHES_LOCK = threading.Lock()


def cache_of(backend: Backend) -> ReferenceCache | None:
    """The backend's reference cache (None if it cannot be held weakly: then nothing is kept)."""
    with _CACHES_LOCK:
        try:
            return CACHES.setdefault(backend, ReferenceCache())
        except TypeError:
            return None


def cache_key(job: Job) -> str | None:
    if job.entry is None:
        return None  # a scratch reference is the user's code: run every time, never shared
    facts = [to_json_dict(job.entry), job.runtime, job.mode, job.chip, job.devices]
    return hashlib.sha256(json.dumps(facts, sort_keys=True).encode()).hexdigest()


def expected_for(
    backend: Backend, job: Job, cancel: threading.Event, cache: ReferenceCache | None = None
) -> Reference | ReferenceFailed | None:
    """Run (or reuse) the reference's job of `job`; None when the run checks nothing."""
    ref_job = reference_job(job)
    if ref_job is None:
        return None
    cache = cache or cache_of(backend)
    key = cache_key(job) if cache is not None else None
    cached = cache.get(key) if cache is not None and key else None
    if cached is not None:
        return cached
    execution = backend.run(ref_job, lambda event: None, cancel)
    if not _ended_well(execution):
        return ReferenceFailed(ref_job, execution)
    try:
        reference = _reference(job, execution)
    except (DecodeError, arrays.ChannelError) as exc:
        log.error("job %s: the reference's outputs could not be read: %s", job.id, exc)
        return ReferenceFailed(ref_job, replace(execution, report_error=f"reference outputs: {exc}"))
    if cache is not None and key:
        cache.put(key, reference)
    return reference


def _ended_well(execution: Execution) -> bool:
    kinds = {e.kind for e in execution.events}
    return (
        execution.exit_code == 0
        and "done" in kinds
        and "error" not in kinds
        and not (
            execution.timed_out or execution.cancelled or execution.infra_error or execution.report_error
        )
    )


def _reference(job: Job, execution: Execution) -> Reference:
    events = [from_json_dict(CaseExpected, e.data) for e in execution.events if e.kind == "expected"]
    expected = {e.index: Expected.of(e) for e in events}
    declared = job.entry.tolerances if job.entry is not None else (events[0].tolerances if events else {})
    nbytes = sum(a.nbytes for x in expected.values() for _, a in x.outputs)
    return Reference(expected=expected, of=events[0].of if events else 0, tolerances=declared, nbytes=nbytes)


@dataclass
class Checker:
    """Turns the kernel job's events into what its followers and `classify` see (see the module doc)."""

    job: Job
    reference: Reference | None
    _verdicts: list[Event] = field(default_factory=list)
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def see(self, event: Event, nth: int | None = None) -> list[Event]:
        """What `event` of the kernel's job becomes: itself, the checker's verdict, or nothing."""
        if event.kind in CHECKER_KINDS:
            log.warning("job %s: its process wrote a %r event of its own; ignored", self.job.id, event.kind)
            return []
        if event.kind != "case_outputs":
            return [event]
        with self._lock:
            if nth is None or nth >= len(self._verdicts):
                self._verdicts.append(self._verdict(event, len(self._verdicts)))
            return [self._verdicts[nth if nth is not None else -1]]

    def rewrite(self, execution: Execution) -> Execution:
        """The execution as `classify` must read it: verdicts in place of outputs, no forged verdicts."""
        events: list[Event] = []
        nth = 0
        for event in execution.events:
            events += self.see(event, nth) if event.kind == "case_outputs" else self.see(event)
            nth += event.kind == "case_outputs"
        missing = self._missing(execution, events)
        return replace(execution, events=tuple(events + ([missing] if missing else [])))

    def _verdict(self, event: Event, nth: int) -> Event:
        try:
            ran = from_json_dict(CaseRan, event.data)
            return self._judged(ran, nth, event.t)
        except (DecodeError, arrays.ChannelError) as exc:
            return _check_error(f"the kernel's outputs could not be checked: {exc}", event.t)

    def _judged(self, ran: CaseRan, nth: int, t: float) -> Event:
        if self.reference is None or not self.reference.of:
            outputs = [summarize_output(name, a) for name, a in arrays.decode(ran.outputs)]
            return new_event("outputs", t=t, outputs=outputs)
        expected = self.reference.expected.get(ran.index)
        if expected is None or ran.index != nth:
            raise arrays.ChannelError(f"the kernel's process reported case {ran.index} out of order")
        result = judge(expected, ran, self.reference.tolerances)
        return new_event("case", t=t, index=ran.index, of=self.reference.of, result=result)

    def _missing(self, execution: Execution, events: list[Event]) -> Event | None:
        """An error when a kernel's process ended normally without reporting every case."""
        want = self.reference.of if self.reference is not None else 0
        judged = sum(e.kind == "case" for e in events)
        ended_normally = execution.exit_code == 0 and not execution.timed_out and not execution.cancelled
        if not want or judged >= want or not ended_normally or any(e.kind == "error" for e in events):
            return None
        return _check_error(
            f"the kernel's process ended after {judged} of {want} cases without an error; "
            "no verdict can be given for the rest",
            0.0,
        )


def _check_error(message: str, t: float) -> Event:
    error = ErrorInfo(type="CheckError", message=message, traceback=f"CheckError: {message}\n", phase="check")
    return new_event("error", t=t, error=error)
