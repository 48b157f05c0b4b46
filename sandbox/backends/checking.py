"""A run's verdict, made outside the user's process: the reference's job, then the checker.

A job that checks outputs runs as two jobs on the same backend. The reference's job
(`Job.role == "reference"`, `sandbox.harness.reference`) makes each case's inputs and expected
outputs: in catalog mode it never loads the user's code, in scratch mode it never calls `kernel`.
The kernel's job sends what its kernel returned (`case_outputs`); it runs after the reference's
job, or beside it when a slot is free (`sandbox.backends.pairing`). Here, in the
trusted process that ran both, each case is judged (`sandbox.verdict.judge`) and becomes the run's
`case` event; whatever verdict-like event a job's process writes itself (`case`, `outputs`,
`expected` from the kernel's job) is dropped. A kernel's process that sends unreadable outputs,
skips cases or ends early without an error gets `error`, never `passed`.

A sweep is judged the same way, per config: its reference's job sends the expected outputs per
check size, its kernel's job each config's account and outputs (`config_outputs`), and the checker
makes each `config` event (`sandbox.verdict.configs`); a `config` event a sweep's process writes
itself is dropped like any other verdict.

Kept references: `sandbox.backends.kept_references`.
"""

from __future__ import annotations

import ast
import logging
import threading
from dataclasses import dataclass, field, replace
from typing import Protocol

from sandbox.backends import reported, scratch_reference
from sandbox.backends.base import Backend
from sandbox.backends.kept_references import Reference, ReferenceCache, cache_key, cache_of, nbytes_of
from sandbox.protocol import ErrorInfo, Event, Execution, Job, new_event
from sandbox.protocol.codec import DecodeError
from sandbox.protocol.events import CaseRan, ConfigRan, payload
from sandbox.verdict import arrays, digests
from sandbox.verdict.configs import judge_config
from sandbox.verdict.judge import Expected, judge
from sandbox.verdict.summary import summarize_output

log = logging.getLogger(__name__)

# Verdicts only the checker makes (and the host's rerun, `sandbox.backends.rerun`): a job's process
# that writes one is ignored.
CHECKER_KINDS = frozenset({"case", "outputs", "expected", "config", "rerun"})
# What a kernel's process sends for the checker to judge, in order.
JUDGED_KINDS = frozenset({"case_outputs", "config_outputs"})


@dataclass(frozen=True)
class ReferenceFailed:
    """The reference's job did not end normally: its raw facts (a scratch reference's error is the user's)."""

    job: Job
    execution: Execution


def reference_job(job: Job) -> Job | None:
    """The reference's half of `job`, or None when nothing is checked (a file without a reference)."""
    if job.role != "kernel":
        return None
    checked = job.reference_source if job.reference_source is not None else job.source
    if job.entry is None and not defines_reference(checked):
        return None
    # A catalog reference never sees user code; a scratch one sees its file without the bodies it
    # cannot reach (the kernel's), the text its kept result is keyed by (`scratch_reference`).
    source = "" if job.entry is not None else scratch_reference.reference_text(checked)
    return replace(
        job,
        id=f"{job.id}-ref",
        source=source,
        role="reference",
        trace=False,
        lower_chips=(),
        reference_source=None,
    )


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


def expected_for(
    backend: Backend,
    job: Job,
    cancel: threading.Event,
    cache: ReferenceCache | None = None,
    *,
    reuse: bool = True,
) -> Reference | ReferenceFailed | None:
    """Run (or, with `reuse`, reuse) the reference's job of `job`; None when the run checks nothing.

    `reuse=False`: the caller looked for a kept reference once and found none; one another run kept
    meanwhile is not taken here, since the caller would take it for this run's own (and give its
    kernel's job what another run's `make_inputs` printed)."""
    ref_job = reference_job(job)
    if ref_job is None:
        return None
    cache = cache or cache_of(backend)
    key = cache_key(job) if cache is not None else None
    cached = kept(backend, job, cache) if reuse else None
    if cached is not None:
        return cached
    execution = backend.run(ref_job, lambda event: None, cancel)
    if not _ended_well(execution):
        return ReferenceFailed(ref_job, execution)
    try:
        reference = _reference(job, execution)
    except Exception as exc:  # a scratch reference's process is the user's: whatever it sent, a result
        log.error("job %s: the reference's outputs could not be read: %r", job.id, exc)
        return ReferenceFailed(ref_job, replace(execution, report_error=f"reference outputs: {_why(exc)}"))
    if cache is not None and key:
        cache.put(key, reference)
    return reference


def kept(backend: Backend, job: Job, cache: ReferenceCache | None = None) -> Reference | None:
    """The reference an earlier run of the same catalog job, or of a scratch file with the same
    reference, left in the backend's cache, if any."""
    cache = cache or cache_of(backend)
    key = cache_key(job) if cache is not None else None
    return cache.get(key) if cache is not None and key else None


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
    events = [reported.expected(payload(e)) for e in execution.events if e.kind == "expected"]
    expected = {e.index: Expected.of(e) for e in events}
    declared = job.entry.tolerances if job.entry is not None else (events[0].tolerances if events else {})
    nbytes = nbytes_of(expected)  # the inputs it gives count too, kept on disk or not
    of = events[0].of if events else 0
    return Reference(expected=expected, of=of, tolerances=declared, nbytes=nbytes)


class Pending(Protocol):
    """A reference's job still running beside the kernel's (`sandbox.backends.pairing`)."""

    def done(self) -> bool: ...

    def result(self) -> Reference | ReferenceFailed | None:
        """Waits for the job's end."""
        ...


@dataclass
class Checker:
    """Turns the kernel job's events into what its followers and `classify` see (see the module doc).

    When the reference is still being computed beside the kernel's job (`pending`), outputs that
    arrive first wait; they are judged, in order, as soon as it is ready, and at the latest when
    `settle` has it after both jobs ended.
    """

    job: Job
    reference: Reference | None
    pending: Pending | None = None
    _stream: list[Event] = field(default_factory=list)  # events of JUDGED_KINDS, in the order seen
    _verdicts: list[list[Event]] = field(default_factory=list)  # per event of `_stream`, once judged
    _cases: int = 0
    _configs: set[int] = field(default_factory=set)
    _warned: set[str] = field(default_factory=set)
    _reports: dict[int, tuple[Event, Event | None]] = field(default_factory=dict)  # by id: each bounded
    # Why the job's outputs cannot be checked, once they cannot: the job is stopped (`execute`).
    broken: str | None = None
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def see(self, event: Event, nth: int | None = None) -> list[Event]:
        """What `event` of the kernel's job becomes: itself, verdicts, or nothing (yet).

        `nth`: the event's place among the job's outputs, when the whole execution is re-read."""
        if event.kind in CHECKER_KINDS:
            self._warn_once(f"its process wrote a {event.kind!r} event of its own; ignored")
            return []
        if event.kind not in JUDGED_KINDS:
            kept = self._bounded(event)  # the process's own report, every field bounded
            return [kept] if kept is not None else []
        with self._lock:
            if nth is not None:
                return self._judged_upto(nth, event)
            self._stream.append(event)
        return self.flush()

    def _bounded(self, event: Event) -> Event | None:
        """`reported.bounded(event)`, made once per event (`rewrite` sees every event again)."""
        seen = self._reports.get(id(event))
        if seen is None or seen[0] is not event:
            seen = self._reports[id(event)] = (event, reported.bounded(event))
        return seen[1]

    def flush(self) -> list[Event]:
        """The verdicts not made yet of outputs seen so far, if the reference is ready (else none)."""
        with self._lock:
            if not self._stream or not self._ready():
                return []
            made = len(self._verdicts)
            self._judged_upto(len(self._stream) - 1, self._stream[-1])
            return [v for verdicts in self._verdicts[made:] for v in verdicts]

    def settle(self) -> ReferenceFailed | None:
        """Wait for a pending reference; its failure, if it failed (the kernel's result is then moot)."""
        if self.pending is None:
            return None
        found = self.pending.result()
        if isinstance(found, ReferenceFailed):
            return found
        with self._lock:
            self.reference, self.pending = found, None
        return None

    def rewrite(self, execution: Execution) -> Execution:
        """The execution as `classify` must read it: verdicts in place of outputs, no forged verdicts."""
        events: list[Event] = []
        nth = 0
        for event in execution.events:
            events += self.see(event, nth) if event.kind in JUDGED_KINDS else self.see(event)
            nth += event.kind in JUDGED_KINDS
        missing = self._missing(execution, events)
        return replace(execution, events=tuple(events + ([missing] if missing else [])))

    def _ready(self) -> bool:
        if self.pending is None:
            return True
        if not self.pending.done():
            return False
        found = self.pending.result()
        if isinstance(found, ReferenceFailed):
            return False  # the run's result is that failure; nothing here is judged
        self.reference, self.pending = found, None
        return True

    def _judged_upto(self, nth: int, event: Event) -> list[Event]:
        if nth >= len(self._stream):
            self._stream.append(event)  # not seen while the job ran
        while len(self._verdicts) <= nth:
            self._verdicts.append(self._judge(self._stream[len(self._verdicts)]))
        return self._verdicts[nth]

    def _judge(self, event: Event) -> list[Event]:
        if event.kind == "config_outputs":
            return self._config(event)
        self._cases += 1
        return [self._verdict(event, self._cases - 1)]

    def _verdict(self, event: Event, nth: int) -> Event:
        """The case's verdict, or the user's error: nothing a job sent may raise out of the checker
        (an exception here would leave the job running in a slot the host thinks free)."""
        try:
            ran = reported.case_ran(payload(event))
            return self._judged(ran, nth, reported.event_time(event.t))
        except Exception as exc:
            self._warn_once(f"its outputs could not be checked: {exc!r}"[:300])
            self.broken = self.broken or f"the kernel's outputs could not be checked: {_why(exc)}"
            return _check_error(self.broken, reported.event_time(event.t))

    def _judged(self, ran: CaseRan, nth: int, t: float) -> Event:
        if self.reference is None or not self.reference.of:
            sent, _ = digests.split(arrays.decode(ran.outputs))  # no sums to check without a reference
            outputs = [summarize_output(name, a) for name, a in sent]
            return new_event("outputs", t=t, outputs=outputs)
        expected = self.reference.expected.get(ran.index)
        if expected is None or ran.index != nth:
            raise arrays.ChannelError(f"the kernel's process reported case {ran.index} out of order")
        result = judge(expected, ran, self.reference.tolerances)
        return new_event("case", t=t, index=ran.index, of=self.reference.of, result=result)

    def _config(self, event: Event) -> list[Event]:
        """A sweep config's row; none for a config that is not this job's or was reported already,
        or whose report breaks the checker (logged: never raised, like a case's)."""
        try:
            return self._config_row(event)
        except Exception as exc:
            self._warn_once(f"a config's report could not be checked: {exc!r}"[:300])
            return []

    def _config_row(self, event: Event) -> list[Event]:
        try:
            ran: ConfigRan = payload(event)
        except DecodeError:
            return []
        index = ran.result.index
        params = dict(self.job.sweep.configs()).get(index) if self.job.sweep is not None else None
        if params is None or index in self._configs:
            self._warn_once("its process reported a config twice or one outside its spec; ignored")
            return []
        self._configs.add(index)
        reference = self.reference
        expected = reference.by_config.get(index) if reference is not None else None
        has_reference = reference is not None and reference.of > 0
        declared = reference.tolerances if reference is not None else {}
        expects_kernel = self.job.entry is not None and self.job.entry.expects_kernel
        result = judge_config(
            ran,
            params,
            expected,
            declared,
            has_reference=has_reference,
            expects_kernel=expects_kernel,
            on_chip=self.job.mode == "tpu",
        )
        # Progress is counted here, not taken from the process: the configs judged of the job's own.
        of = len(self.job.sweep.configs()) if self.job.sweep is not None else 0
        t = reported.event_time(event.t)
        return [new_event("config", t=t, result=result, done=min(len(self._configs), of), of=of)]

    def _warn_once(self, what: str) -> None:
        """One log line per kind of lie and job: a process that floods them cannot flood the log."""
        if what not in self._warned:
            self._warned.add(what)
            log.warning("job %s: %s", self.job.id, what)

    def _missing(self, execution: Execution, events: list[Event]) -> Event | None:
        """An error when a kernel's process ended normally without reporting every case."""
        want = self.reference.of if self.reference is not None and self.job.sweep is None else 0
        judged = sum(e.kind == "case" for e in events)
        ended_normally = execution.exit_code == 0 and not execution.timed_out and not execution.cancelled
        if not want or judged >= want or not ended_normally or any(e.kind == "error" for e in events):
            return None
        return _check_error(
            f"the kernel's process ended after {judged} of {want} cases without an error; "
            "no verdict can be given for the rest",
            0.0,
        )


def _why(exc: Exception) -> str:
    """What a user is told about outputs that broke the check: ours say it; anything else, its kind."""
    if isinstance(exc, (DecodeError, arrays.ChannelError)):
        return str(exc)
    return f"they are not what their header claims ({type(exc).__name__})"


def _check_error(message: str, t: float) -> Event:
    error = ErrorInfo(type="CheckError", message=message, traceback=f"CheckError: {message}\n", phase="check")
    return new_event("error", t=t, error=error)
