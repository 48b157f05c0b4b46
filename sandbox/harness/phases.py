"""The phases every job runs inside the child, in one order and with one error handling: `JobSession`.

Each kind of job is a subclass that overrides only what it does differently: a run's kernel
(`session.Session`), a run's or a sweep's reference (`reference.ReferenceSession`), a sweep
(`sweep.SweepSession`). The sequence, owned here (`JobSession.run`):

1. `target`: native TPU or interpret mode simulating the job's chip (`target.configure`), before any
   user code is imported (kernels read the setting when they are built);
2. `watch`: what watches the simulator, installed before the user's kernels are built (a run's kernel
   job only: the interpreter monitor, the race log, the first call's trace);
3. `versions`: what the job runs on (not the reference's job, whose host hears it from the kernel's);
4. `load`: the entry's reference, then the user's module, and the functions the job needs of them,
   under the chip's context like every call into user code (`Target.chip_context`);
5. `imported` (not the reference's job either);
6. `execute`: the kind's own work: a run's cases, the expected outputs, a sweep's configs.

Every step into user code goes through `_phase`: a failure becomes one `error` event in the user's
terms (after a `log` event with the raw text), with the fault of a target that cannot run or the flag
of a memory error, and stops the job (`Failed`).
"""

from __future__ import annotations

import types
from collections.abc import Callable
from dataclasses import replace
from typing import Any, ClassVar

import jax

from sandbox.harness import compat, usercode
from sandbox.harness.errors import Scene, chip, translate
from sandbox.harness.monitor.core import Monitor
from sandbox.harness.target import Target, TargetError, configure, fault_of
from sandbox.harness.trace import capture as trace
from sandbox.protocol import Case, EntrySpec, EventWriter, Job, Mode, Tolerance
from sandbox.protocol.job import SCRATCH_CASE_NAME
from sandbox.verdict.tolerances import scratch_tolerances

SCRATCH_CASE = Case(name=SCRATCH_CASE_NAME, dtype="", seed=0)
USER_FILES = (usercode.USER_FILE,)
REFERENCE_FILES = (usercode.REFERENCE_FILE,)


class Failed(Exception):
    """Raised after an `error` event was emitted: stops the job, nothing more to report."""


class JobSession:
    """One job: the phases in order (`run`), loading user code, and turning failures into events."""

    # Whether the job says `versions` and `imported` (the reference's job does not: see the docstring).
    announces: ClassVar[bool] = True

    def __init__(self, job: Job, events: EventWriter) -> None:
        self.job = job
        self.events = events
        self.monitor: Monitor | None = None
        self.capture: trace.Capture | None = None
        self.scene = Scene(
            files=USER_FILES, devices=job.devices, jax_version=jax.__version__, elsewhere=job.elsewhere
        )

    def run(self) -> None:
        try:
            target = self._phase("target", self._configure)
            self._watch(target)
            if self.announces:
                versions = compat.went_without(target.versions(), self.monitor, self.capture)
                self.events.emit("versions", versions=versions, interpret=target.interpret)
            with target.chip_context():
                plan = self._load()
            if self.announces:
                self.events.emit("imported")
            self._execute(target, plan)
        except Failed:
            return

    # -- what a kind overrides -----------------------------------------------------------------

    def _configure(self) -> Target:
        job = self.job
        return configure(job.chip, self._mode(), job.options, job.devices)

    def _mode(self) -> Mode:
        """The mode the target is configured for: the job's own."""
        return self.job.mode

    def _watch(self, target: Target) -> None:
        """Install what watches the simulator (nothing, unless the kind has something to watch)."""

    def _load(self) -> Any:
        """The kind's plan: what it needs of the user's module and the entry's reference."""
        raise NotImplementedError

    def _execute(self, target: Target, plan: Any) -> None:
        raise NotImplementedError

    def _step_ended(self) -> None:
        """Called as soon as a step into user code has come back or failed (a stuck kernel unwound)."""

    # -- loading user code ---------------------------------------------------------------------

    def _user_module(self) -> types.ModuleType:
        return self._phase(
            "import", lambda: usercode.load_module("kernel", self.job.source, usercode.USER_FILE)
        )

    def _reference_module(self, entry: EntrySpec) -> types.ModuleType:
        return self._phase(
            "reference import",
            lambda: usercode.load_module("reference", entry.reference_source, usercode.REFERENCE_FILE),
            REFERENCE_FILES,
        )

    def _function(self, module: types.ModuleType, name: str, where: str) -> Callable[..., Any]:
        """`module.name`, which the user's file must define (`where` names that file to the user)."""
        return self._phase("import", lambda: require(module, name, where))

    def _tolerances(self, module: types.ModuleType) -> dict[str, Tolerance]:
        """A scratch file's `TOLERANCE`, as the checker reads it (none: the default tolerances)."""
        declared = getattr(module, "TOLERANCE", None)
        return self._phase("import", lambda: scratch_tolerances(declared) if declared is not None else {})

    def _cases(self, entry: EntrySpec) -> tuple[Case, ...]:
        """The entry's cases this job runs: the TPU-size ones only on a TPU."""
        return entry.cases_for(self.job.mode)

    # -- failures ------------------------------------------------------------------------------

    def _phase(
        self,
        phase: str,
        step: Callable[[], Any],
        files: tuple[str, ...] = USER_FILES,
        after_error: Callable[[], None] | None = None,
    ) -> Any:
        """`step()`; if it fails, the `error` event (`after_error` then runs) and `Failed`."""
        try:
            return step()
        except TargetError as exc:
            self._report(exc, phase, files, fault=fault_of(exc))
            raise Failed from exc
        except BaseException as exc:
            self._step_ended()  # before reporting: a stuck kernel that came back is reported from here
            if isinstance(exc, (KeyboardInterrupt, SystemExit)) and phase != "kernel":
                raise
            self._report(exc, phase, files, memory=is_memory_error(exc))
            if after_error is not None:
                after_error()
            raise Failed from exc
        finally:
            self._step_ended()

    def _report(self, exc: BaseException, phase: str, files: tuple[str, ...], **extra: Any) -> None:
        translation = translate(exc, phase, replace(self.scene, files=files))
        self.events.emit("log", text=translation.log)
        self.events.emit("error", error=translation.error, **extra)


def require(module: types.ModuleType, name: str, where: str) -> Callable[..., Any]:
    fn = getattr(module, name, None)
    if not callable(fn):
        raise NameError(f"{where} must define a function `{name}`")
    return fn


def is_memory_error(exc: BaseException) -> bool:
    # XLA reports allocation failures with the RESOURCE_EXHAUSTED status code, and the TPU compiler's
    # scoped-VMEM refusal too (E1001): that one is the kernel's `rejected`, not a memory limit (on the
    # lent v5e it read "memory limit: the job needed more than 6 GiB" until 2026-12-06).
    text = str(exc)
    if chip.is_scoped_vmem_refusal(text):
        return False
    return isinstance(exc, MemoryError) or text.startswith("RESOURCE_EXHAUSTED")
