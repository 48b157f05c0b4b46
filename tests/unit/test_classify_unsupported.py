"""A construct the simulator cannot run is `unsupported`, not the user's `error`, unless the TPU compiler
rejects the kernel too (then it is `rejected`): the lowering check of the job's chip decides whose it is."""

import dataclasses

from sandbox.protocol import ErrorInfo, RunStatus, new_event
from sandbox.results.matrix import VERBS
from tests.unit.test_classify_lowering import ELEMENT_ERROR, lowering_event, report, run

JAX_SAYS = (
    "plsc.subcore_barrier() is not supported by TPU interpret mode in JAX 0.12.0.1: a limitation of the "
    "simulator, not a mistake in your kernel (JAX says: MLIR translation rule for primitive 'barrier' not "
    "found for platform cpu)"
)
LIMIT = ErrorInfo(
    type="NotImplementedError", message=JAX_SAYS, traceback="...", line=12, phase="kernel", limitation=True
)


def failed(info: ErrorInfo):
    return new_event("error", error=info)


def test_a_limitation_the_compiler_accepts_is_unsupported_and_keeps_jaxs_words():
    result = run(failed(LIMIT), lowering_event(report()))
    assert result.status == RunStatus.UNSUPPORTED
    assert result.summary == (
        f"unsupported by the simulator: NotImplementedError: {JAX_SAYS} (line 12); the TPU compiler "
        "accepts it for v5e"
    )
    assert result.error is not None and result.error.limitation


def test_a_limitation_without_a_lowering_verdict_says_the_check_could_not_tell():
    unchecked = dataclasses.replace(report(), lowers=None, note="built at import")
    result = run(failed(LIMIT), lowering_event(unchecked))
    assert result.status == RunStatus.UNSUPPORTED
    assert "the TPU lowering check could not tell whether it compiles for a TPU" in result.summary


def test_a_limitation_the_compiler_rejects_is_rejected():
    result = run(failed(LIMIT), lowering_event(report(lowers=False, error=ELEMENT_ERROR)))
    assert result.status == RunStatus.REJECTED
    assert result.summary.startswith("rejected by the TPU compiler for v5e: NotImplementedError: All block")
    assert "the simulator cannot run it either" in result.summary


def test_the_users_own_error_stays_an_error():
    mine = dataclasses.replace(LIMIT, message="name 'x' is not defined", limitation=False)
    assert run(failed(mine), lowering_event(report())).status == RunStatus.ERROR


def test_every_status_reads_in_a_sentence():
    assert set(VERBS) == set(RunStatus)
