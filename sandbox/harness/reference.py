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
import math
import types
from typing import Any

import jax
import numpy as np

from sandbox.harness import calls, sampled, sweep_plan, usercode
from sandbox.harness.session import SCRATCH_CASE, Failed, Session, _require
from sandbox.harness.target import configure
from sandbox.protocol import Case
from sandbox.protocol.arrays import GIVEN_INPUT_BYTES, MAX_CASE_ARRAY_BYTES, MAX_JOB_ARRAY_BYTES, ArrayBytes
from sandbox.verdict import arrays
from sandbox.verdict.tolerances import scratch_tolerances

PRINTED_CHARS = 64 << 10


class ReferenceSession(Session):
    def run(self) -> None:
        job = self.job
        try:
            # Wherever the kernel runs, its reference runs where the host put it (the CPU: exact
            # arithmetic, the same expected outputs for a simulated and a native run); the job's mode
            # still selects the cases (a native run's TPU-size cases too).
            target = self._phase("target", lambda: configure(job.chip, "auto", job.options, job.devices))
            with target.chip_context():
                self._expect()
        except Failed:
            return

    def _expect(self) -> None:
        entry = self.job.entry
        if self.job.sweep is not None:
            self._expect_sweep()
            return
        if entry is None:
            self._expect_scratch()
            return
        files = (usercode.REFERENCE_FILE,)
        module = self._phase(
            "reference import",
            lambda: usercode.load_module("reference", entry.reference_source, usercode.REFERENCE_FILE),
            files,
        )
        cases = tuple(c for c in entry.cases if not (c.tpu_only and self.job.mode != "tpu"))
        for index, case in enumerate(cases):
            self._case(index, len(cases), case, module.make_inputs, module.reference, files, {})

    def _expect_scratch(self) -> None:
        module: types.ModuleType = self._phase(
            "import", lambda: usercode.load_module("kernel", self.job.source, usercode.USER_FILE)
        )
        reference = getattr(module, "reference", None)
        if reference is None:
            return  # nothing to check against: the checker summarises the kernel's outputs
        make_inputs = self._phase("import", lambda: _require(module, "make_inputs", "a scratch file"))
        tolerances = self._scratch_tolerances(module)
        files = (usercode.USER_FILE,)
        self._case(0, 1, SCRATCH_CASE, lambda case: make_inputs(case.seed), reference, files, tolerances)

    def _scratch_tolerances(self, module: types.ModuleType) -> dict[str, Any]:
        declared = getattr(module, "TOLERANCE", None)
        return self._phase("import", lambda: scratch_tolerances(declared) if declared is not None else {})

    def _expect_sweep(self) -> None:
        """A sweep's expected outputs: one event per check size, naming the configs checked at it."""
        entry, spec = self.job.entry, self.job.sweep
        assert spec is not None
        if entry is None:
            module = self._phase(
                "import", lambda: usercode.load_module("kernel", self.job.source, usercode.USER_FILE)
            )
            reference = getattr(module, "reference", None)
            if reference is None:
                return  # nothing to check against: the checker says each config ran unchecked
            make_inputs = self._phase("import", lambda: _require(module, "make_inputs", "a scratch file"))
            inputs, files = sweep_plan.scratch_inputs(make_inputs), (usercode.USER_FILE,)
            base, tolerances = sweep_plan.scratch_check_base(make_inputs), self._scratch_tolerances(module)
            dtype, seed = "", 0
        else:
            files = (usercode.REFERENCE_FILE,)
            module = self._phase(
                "reference import",
                lambda: usercode.load_module("reference", entry.reference_source, usercode.REFERENCE_FILE),
                files,
            )
            reference, tolerances = module.reference, {}
            inputs = sweep_plan.catalog_inputs(entry, module.make_inputs, spec)
            base = sweep_plan.catalog_check_base(entry, spec)
            case = self._phase("make_inputs", lambda: sweep_plan.base_case(entry.cases, spec.case), files)
            dtype, seed = case.dtype, case.seed

        def make(case: Case) -> Any:
            return inputs(dict(case.dims))

        groups = sweep_plan.check_groups(spec, base)
        left = MAX_JOB_ARRAY_BYTES  # past it, a config's row says so (the kernel's side stops there too)
        for index, (dims, configs) in enumerate(groups):
            size = Case(", ".join(f"{k}={v}" for k, v in dims.items()), dtype, seed, dims)
            left -= self._case(index, len(groups), size, make, reference, files, tolerances, configs, left)

    def _case(
        self,
        index: int,
        of: int,
        case: Case,
        make_inputs: Any,
        reference: Any,
        files: tuple[str, ...],
        tolerances: dict[str, Any],
        configs: tuple[int, ...] = (),
        room: int | None = None,
    ) -> int:
        """Send one case's expected outputs; their size in bytes. With `room` (a sweep's check sizes),
        outputs past it or past one case's cap are not computed or sent: that config's row says so."""
        printed = _Printed()
        with contextlib.redirect_stdout(printed) if self.job.entry is None else contextlib.nullcontext():
            inputs = self._phase("make_inputs", lambda: tuple(make_inputs(case)), files)
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
            expected = sampled.fit(expected)  # a TPU-size case: every k-th row, as the kernel's side
        nbytes = sum(int(a.nbytes) for _, a in expected)
        if cap is not None and nbytes > cap:
            expected, nbytes = [], 0  # sent without outputs: the checker says the size is too big
        self.events.emit(
            "expected",
            index=index,
            of=of,
            case=case,
            inputs_digest=digest,
            input_shapes=shapes,
            outputs=self._phase("reference", lambda: arrays.encode(expected), files),
            tolerances=tolerances,
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
    return sum(math.prod(s.shape) * np.dtype(s.dtype).itemsize for s in jax.tree_util.tree_leaves(shapes))
