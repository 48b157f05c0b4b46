"""The reference's job: make each case's inputs and expected outputs, and never run the user's kernel.

The other half of a run (`sandbox.backends.checking`): in catalog mode this process loads only the
entry's reference (no user code at all); in scratch mode it imports the user's file for its
`make_inputs`, `reference` and `TOLERANCE`, and never calls `kernel`. It sends, per case, the inputs'
digest and the expected arrays to the checker, which compares them with what the kernel's own
process returns; neither process sees the other. For a sweep, a "case" is a check size: one event
per distinct size among the job's configs, naming the configs checked at it (`sweep_plan`).
"""

from __future__ import annotations

import contextlib
import io
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import jax
import numpy as np

from sandbox.harness import calls, sampled, sweep_plan
from sandbox.harness.phases import REFERENCE_FILES, SCRATCH_CASE, USER_FILES, JobSession
from sandbox.harness.target import Target
from sandbox.protocol import Case, Mode, SweepSpec
from sandbox.protocol.arrays import GIVEN_INPUT_BYTES, MAX_CASE_ARRAY_BYTES, MAX_JOB_ARRAY_BYTES, ArrayBytes
from sandbox.verdict import arrays

PRINTED_CHARS = 64 << 10


@dataclass(frozen=True)
class Expectation:
    """What the reference's job computes: per case (a sweep's: per check size, with the configs
    checked at it), the inputs and the reference's outputs on them."""

    make_inputs: Callable[[Case], Any]
    reference: Callable[..., Any]
    cases: tuple[Case, ...]
    files: tuple[str, ...]
    tolerances: dict[str, Any]
    configs: tuple[tuple[int, ...], ...] | None = None  # a sweep's, per check size


class ReferenceSession(JobSession):
    announces = False

    def _mode(self) -> Mode:
        # Wherever the kernel runs, its reference runs where the host put it (the CPU: exact
        # arithmetic, the same expected outputs for a simulated and a native run); the job's mode
        # still selects the cases (a native run's TPU-size cases too).
        return "auto"

    def _load(self) -> Expectation | None:
        """None for a scratch file without a `reference`: the checker summarises the kernel's outputs
        (a sweep's: it says each config ran unchecked)."""
        entry, spec = self.job.entry, self.job.sweep
        if entry is None:
            module = self._user_module()
            reference = getattr(module, "reference", None)
            if reference is None:
                return None
            make_inputs = self._function(module, "make_inputs", "a scratch file")
            tolerances = self._tolerances(module)
            if spec is None:
                return Expectation(
                    lambda case: make_inputs(case.seed), reference, (SCRATCH_CASE,), USER_FILES, tolerances
                )
            inputs, base = sweep_plan.scratch_inputs(make_inputs), sweep_plan.scratch_check_base(make_inputs)
            return self._sweep(spec, inputs, base, reference, USER_FILES, tolerances, SCRATCH_CASE)
        module = self._reference_module(entry)
        if spec is None:
            return Expectation(module.make_inputs, module.reference, self._cases(entry), REFERENCE_FILES, {})
        inputs = sweep_plan.catalog_inputs(entry, module.make_inputs, spec)
        base = sweep_plan.catalog_check_base(entry, spec)
        case = self._phase(
            "make_inputs", lambda: sweep_plan.base_case(entry.cases, spec.case), REFERENCE_FILES
        )
        return self._sweep(spec, inputs, base, module.reference, REFERENCE_FILES, {}, case)

    def _sweep(
        self,
        spec: SweepSpec,
        inputs: sweep_plan.MakeInputs,
        base: dict[str, int],
        reference: Callable[..., Any],
        files: tuple[str, ...],
        tolerances: dict[str, Any],
        like: Case,
    ) -> Expectation:
        """A sweep's expected outputs: one "case" per check size (with `like`'s dtype and seed),
        naming the configs checked at it."""
        groups = sweep_plan.check_groups(spec, base)
        sizes = tuple(
            Case(", ".join(f"{k}={v}" for k, v in dims.items()), like.dtype, like.seed, dims)
            for dims, _ in groups
        )
        return Expectation(
            lambda case: inputs(dict(case.dims)),
            reference,
            sizes,
            files,
            tolerances,
            tuple(c for _, c in groups),
        )

    def _execute(self, target: Target, plan: Expectation | None) -> None:
        if plan is None:
            return
        with target.chip_context():
            if plan.configs is None:
                for index, case in enumerate(plan.cases):
                    self._case(index, case, plan)
                return
            left = MAX_JOB_ARRAY_BYTES  # past it, a config's row says so (the kernel's side stops there too)
            for index, (case, configs) in enumerate(zip(plan.cases, plan.configs, strict=True)):
                left -= self._case(index, case, plan, configs, left)

    def _case(
        self,
        index: int,
        case: Case,
        plan: Expectation,
        configs: tuple[int, ...] = (),
        room: int | None = None,
    ) -> int:
        """Send one case's expected outputs; their size in bytes. With `room` (a sweep's check sizes),
        outputs past it or past one case's cap are not computed or sent: that config's row says so."""
        reference, files, printed = plan.reference, plan.files, _Printed()
        with contextlib.redirect_stdout(printed) if self.job.entry is None else contextlib.nullcontext():
            inputs = self._phase("make_inputs", lambda: tuple(plan.make_inputs(case)), files)
        # Taken before the reference runs: a scratch file's `reference` may change its inputs in place.
        digest, shapes = arrays.digest(calls.leaves(inputs)), tuple(tuple(np.shape(x)) for x in inputs)
        given = given_inputs(inputs, scratch=self.job.entry is None) if self._gives_inputs() else ()
        cap = min(room, MAX_CASE_ARRAY_BYTES) if room is not None else None
        expected: list[tuple[str, Any]] = []
        if cap is None or _output_bytes(reference, inputs) <= cap:
            expected = self._phase(
                "reference", lambda: calls.flatten("out", calls.run_reference(reference, inputs)), files
            )
        if cap is None:
            expected = sampled.fit(expected)  # a TPU-size case: rows and sums, as the kernel's side
        nbytes = sum(int(a.nbytes) for _, a in expected)
        if cap is not None and nbytes > cap:
            expected, nbytes = [], 0  # sent without outputs: the checker says the size is too big
        self.events.emit(
            "expected",
            index=index,
            of=len(plan.cases),
            case=case,
            inputs_digest=digest,
            input_shapes=shapes,
            outputs=self._phase("reference", lambda: arrays.encode(expected), files),
            tolerances=plan.tolerances,
            configs=configs,
            inputs=given,
            printed=printed.text() if given else "",
        )
        return nbytes

    def _gives_inputs(self) -> bool:
        """A run's inputs for its kernel's job, which then does not make them again: a catalog entry's
        are kept by the host for every later run; a scratch file's serve the kernel's job that runs
        after this one (not beside it). Not a sweep's, not a multi-device run's (which may place its
        inputs on a mesh)."""
        return self.job.sweep is None and self.job.devices == 1


class _Printed(io.StringIO):
    """What a scratch file's `make_inputs` prints, up to `PRINTED_CHARS` (a flood is cut, not kept):
    it travels with the inputs to the kernel's job, which prints it in `make_inputs`' place."""

    cut = False

    def write(self, text: str) -> int:
        room = PRINTED_CHARS - self.tell()
        super().write(text[: max(room, 0)])
        self.cut = self.cut or len(text) > room
        return len(text)

    def text(self) -> str:
        return self.getvalue() + ("\n[make_inputs printed more: cut]\n" if self.cut else "")


def given_inputs(inputs: tuple[Any, ...], *, scratch: bool = False) -> tuple[ArrayBytes, ...]:
    """A case's inputs for kernel's jobs, when each one is a plain numeric array (else none: those
    jobs make them again); one case's inputs stay within the channel's cap like its outputs.

    The kernel's job rebuilds each as a committed JAX array, so a scratch file's are given only when
    that is what its `make_inputs` made: not a NumPy array (the kernel may treat it as one), not a
    weakly typed one or a scalar (a rebuilt one would promote dtypes differently)."""
    if not all(isinstance(x, (np.ndarray, jax.Array)) for x in inputs):
        return ()
    if scratch and not all(isinstance(x, jax.Array) and not x.weak_type and x.ndim for x in inputs):
        return ()
    if sum(int(x.nbytes) for x in inputs) > GIVEN_INPUT_BYTES:
        return ()
    try:
        return arrays.encode((f"input[{i}]", np.asarray(x)) for i, x in enumerate(inputs))
    except (arrays.ChannelError, TypeError, ValueError):  # e.g. PRNG keys, which have no NumPy form
        return ()


def _output_bytes(reference: Any, inputs: tuple[Any, ...]) -> int:
    """What the reference would return, in bytes, from shapes alone (0 if that cannot be told)."""
    try:
        shapes = jax.eval_shape(reference, *inputs)
    except Exception:  # not traceable as written: it is computed, then measured
        return 0
    return calls.shape_bytes(shapes)
