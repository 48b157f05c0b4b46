"""What a user reads when the chip refuses or suffers a kernel, and how a busy chip is waited for.

The error texts are libtpu 0.0.50.1's, recorded on a TPU v5e (JAX 0.12.0.1) on 2026-12-05."""

from __future__ import annotations

import threading

from sandbox.backends.chip_wait import chip_was_busy, run_waiting_for_chip
from sandbox.harness.errors import chip
from sandbox.harness.errors.facts import Root
from sandbox.protocol import ErrorInfo, Execution, never_ran
from sandbox.protocol.events import new_event
from tests.executions import execution

E1001 = (
    "RESOURCE_EXHAUSTED: E1001: CompileTimeScopedVmemOom:\nRan out of memory in memory space vmem while "
    "allocating on stack for %tpu_custom_call.1 = bf16[4096,4096]{1,0:T(8,128)(2,1)} custom-call(%a_ref.1, "
    '%b_ref.1), custom_call_target="tpu_custom_call". Scoped allocation with size 80.00M and limit 16.00M '
    "exceeded scoped vmem limit by 64.00M. It should not be possible to run out of scoped vmem - \nSee "
    "https://openxla.org/xla/errors/error_1001 for more details."
)


def root(text: str) -> Root:
    return Root("JaxRuntimeError", text, None, {})


def test_the_compilers_scoped_vmem_refusal_names_the_sizes_and_the_way_out():
    message = chip.message(root(E1001))
    assert message is not None and message.type == "VmemLimitExceeded"
    assert message.text.startswith(
        "the TPU compiler refused the kernel (E1001): it needs 80.00 MiB of scoped VMEM, over the limit of "
        "16.00 MiB by 64.00 MiB."
    )
    assert "vmem_limit_bytes" in message.text and "smaller blocks" in message.text


def test_a_halted_core_is_explained_and_other_errors_are_left_to_other_rules():
    for text in (
        "INTERNAL: RuntimeUnexpectedCoreHalt: core 0",
        "The program continuator has halted unexpectedly",
    ):
        message = chip.message(root(text))
        assert message is not None and message.type == "TpuCoreHalted" and ".wait()" in message.text
    assert chip.message(root("INVALID_ARGUMENT: something else")) is None


def busy_execution() -> Execution:
    info = ErrorInfo(
        type="ChipBusyError", message="the TPU is held by another program (pid 3139)", traceback=""
    )
    return execution(new_event("error", error=info, fault="chip_busy"), wall_seconds=1.3)


def test_a_job_refused_for_a_busy_chip_is_run_again_until_the_chip_is_free():
    answers = [busy_execution(), busy_execution(), never_ran("ran")]
    now = [0.0]
    tries = []

    def once() -> Execution:
        tries.append(now[0])
        return answers[len(tries) - 1]

    class Clock(threading.Event):
        def wait(self, timeout=None):  # the retry pause, on a fake clock
            now[0] += timeout or 0
            return False

    result = run_waiting_for_chip(once, Clock(), wait_seconds=60, retry_seconds=2, clock=lambda: now[0])
    assert result.infra_error == "ran" and tries == [0.0, 2.0, 4.0]
    assert chip_was_busy(answers[0]) and not chip_was_busy(result)


def test_a_chip_busy_past_the_wait_gives_the_user_the_busy_message():
    now = [0.0]

    class Clock(threading.Event):
        def wait(self, timeout=None):
            now[0] += timeout or 0
            return False

    result = run_waiting_for_chip(
        busy_execution, Clock(), wait_seconds=5, retry_seconds=2, clock=lambda: now[0]
    )
    assert chip_was_busy(result) and now[0] == 4.0


def test_a_cancelled_wait_stops_at_once():
    cancel = threading.Event()
    cancel.set()
    calls = []
    result = run_waiting_for_chip(lambda: calls.append(1) or busy_execution(), cancel, retry_seconds=30)
    assert calls == [1] and chip_was_busy(result)


def test_a_chip_held_by_another_program_is_a_busy_fault_and_other_start_failures_are_the_requests():
    from sandbox.harness.target import ChipBusyError, fault_of, start_error

    held = start_error(
        "Unable to initialize backend 'tpu': ABORTED: The TPU is already in use by process with pid 3139. "
        "Not attempting to load libtpu.so in this process."
    )
    assert isinstance(held, ChipBusyError) and fault_of(held) == "chip_busy"
    assert str(held).startswith("the TPU is held by another program (pid 3139)")
    other = start_error("Unable to initialize backend 'tpu': UNAVAILABLE: TPU initialization failed\nmore")
    assert fault_of(other) == "request"
    assert (
        str(other)
        == "the TPU did not start: Unable to initialize backend 'tpu': UNAVAILABLE: TPU initialization failed"
    )


def test_a_tpu_size_case_is_checked_on_every_kth_row_by_both_sides():
    import numpy as np

    from sandbox.harness.sampled import fit

    small = [("out", np.zeros((4, 4), np.float32))]
    assert fit(small, cap=1024) is small
    big = np.arange(4096 * 64, dtype=np.float32).reshape(4096, 64)  # 1 MiB
    (name, rows), (sums, _) = fit([("out", big)], cap=300_000)
    assert name == "out[::4]" and rows.shape == (1024, 64) and (rows[1] == big[4]).all()
    assert sums == "#sums"  # every element's sums beside the rows: `tests/unit/test_sampled_sums.py`
    few = np.arange(3 * 100_000, dtype=np.float32).reshape(3, 100_000)  # 1.2 MB in 3 rows
    (name, flat), _ = fit([("out", few)], cap=300_000)
    assert name == "out.ravel()[::4]" and flat.nbytes <= 300_000 and flat[1] == 4.0


def test_a_chip_held_through_another_lockfile_is_busy_too():
    from sandbox.harness.target import ChipBusyError, start_error
    from sandbox.host.chipprobe import read_probe

    # Recorded on the lent v5e: the holder used the VM's temp directory, the job its own.
    text = (
        "Unable to initialize backend 'tpu': FAILED_PRECONDITION: TPU initialization failed: open(0): 16: "
        "Device or resource busy; Couldn't open iommu group 0"
    )
    held = start_error(text)
    assert isinstance(held, ChipBusyError) and str(held).startswith("the TPU is held by another program; ")
    found = read_probe('PROBE {"error": "RuntimeError: ' + text + '"}\n', "", 0)
    assert found.describe() == "the chip is held by another program; jobs wait for it"


def test_tune_on_the_chip_calls_the_compilers_vmem_refusal_over_vmem_as_off_the_chip():
    """On a TPU a sweep's kernel is first compiled when it runs (its check, then its timing), and the
    lent v5e's Tune reported flash attention at (1024, 2048) blocks, head dim 256, as an `error` there
    where the compile off the chip calls it `over_vmem` (bench/tpu/v5e/sweeps.log, 2026-12-07). The
    run's refusal now reads as the off-chip verdict does; any other error stays an error."""
    from sandbox.harness.sweep import vmem_refused

    refusal = vmem_refused(RuntimeError(E1001))
    assert refusal == chip.scoped_vmem(E1001).text
    assert refusal.startswith("the TPU compiler refused the kernel (E1001): it needs 80.00 MiB")
    assert (
        vmem_refused(RuntimeError("RESOURCE_EXHAUSTED: Out of memory while trying to allocate 20GiB")) == ""
    )
    assert vmem_refused(ValueError("blocks must divide the array")) == ""
