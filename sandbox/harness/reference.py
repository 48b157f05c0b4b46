"""The reference's job: make each case's inputs and expected outputs, and never run the user's kernel.

The other half of a run (`sandbox.backends.checking`): in catalog mode this process loads only the
entry's reference (no user code at all); in scratch mode it imports the user's file for its
`make_inputs`, `reference` and `TOLERANCE`, and never calls `kernel`. It sends, per case, the inputs'
digest and the expected arrays to the checker, which compares them with what the kernel's own
process returns; neither process sees the other.
"""

from __future__ import annotations

import types
from typing import Any

import numpy as np

from sandbox.harness import calls, usercode
from sandbox.harness.session import SCRATCH_CASE, Failed, Session, _require
from sandbox.harness.target import configure
from sandbox.protocol import Case
from sandbox.verdict import arrays
from sandbox.verdict.tolerances import scratch_tolerances


class ReferenceSession(Session):
    def run(self) -> None:
        job = self.job
        try:
            target = self._phase("target", lambda: configure(job.chip, job.mode, job.options, job.devices))
            with target.chip_context():
                self._expect()
        except Failed:
            return

    def _expect(self) -> None:
        entry = self.job.entry
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
        declared = getattr(module, "TOLERANCE", None)
        tolerances = self._phase(
            "import", lambda: scratch_tolerances(declared) if declared is not None else {}
        )
        files = (usercode.USER_FILE,)
        self._case(0, 1, SCRATCH_CASE, lambda case: make_inputs(case.seed), reference, files, tolerances)

    def _case(
        self,
        index: int,
        of: int,
        case: Case,
        make_inputs: Any,
        reference: Any,
        files: tuple[str, ...],
        tolerances: dict[str, Any],
    ) -> None:
        inputs = self._phase("make_inputs", lambda: tuple(make_inputs(case)), files)
        digest = arrays.digest(calls.leaves(inputs))
        expected = self._phase(
            "reference", lambda: calls.flatten("out", calls.run_reference(reference, inputs)), files
        )
        self.events.emit(
            "expected",
            index=index,
            of=of,
            case=case,
            inputs_digest=digest,
            input_shapes=tuple(tuple(np.shape(x)) for x in inputs),
            outputs=self._phase("reference", lambda: arrays.encode(expected), files),
            tolerances=tolerances,
        )
