"""A sweep's configs judged by the checker outside the sweep's processes (`sandbox.verdict.configs`).

A sweep job's process says what each config did and sends its outputs at the check size; only the
checker says `ok`. Each row is what a lying or broken process sends and the row a user then sees.
"""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from sandbox.backends import checking
from sandbox.jobs.build import make_sweep_job
from sandbox.protocol import Case, ConfigResult, Event, SweepSpec, new_event
from sandbox.protocol.arrays import ArrayBytes
from sandbox.protocol.events import CaseExpected
from sandbox.results.classify import classify
from sandbox.verdict import arrays
from sandbox.verdict.judge import Expected
from tests.executions import execution, finished

SPEC = SweepSpec(params={"bm": (128, 256)}, size={"m": 4096}, check_size={"m": 256}, bind={"bm": "m"})
JOB = make_sweep_job("def kernel(x, *, bm): ...\ndef reference(x): ...\n", SPEC)
WANT = np.arange(12, dtype=np.float32).reshape(3, 4)


def reference(*, of: int = 1) -> checking.Reference:
    """The reference's job's answer: one check size (m=256) for both configs."""
    size = Case(name="m=256", dtype="float32", seed=0, dims={"m": 256})
    event = CaseExpected(0, 1, size, "in", ((3, 4),), arrays.encode([("out", WANT)]), configs=(0, 1))
    expected = Expected.of(event)
    return checking.Reference(expected={0: expected} if of else {}, of=of, tolerances={})


def account(index: int = 0, status: str = "ok", **changes) -> ConfigResult:
    """What the sweep's process says of a config (its estimate, and the status it reached)."""
    fields = {"estimated_seconds": 1e-3, "bound": "compute", "roofline_fraction": 0.5, "reason": ""}
    fields |= {"params": {"bm": 128 + 128 * index}, **changes}
    return ConfigResult(index=index, status=status, check_size={}, **fields)


def ran(result: ConfigResult, got: np.ndarray | None = WANT, digest: str = "in", **extra) -> Event:
    outputs = arrays.encode([("out", got)]) if got is not None else ()
    data = {"result": result, "done": 1, "of": 2, "ran": got is not None, "how": "generic interpreter"}
    return new_event("config_outputs", **data, inputs_digest=digest, outputs=outputs, **extra)


def rows(reference: checking.Reference | None, *events: Event) -> list[ConfigResult]:
    result = classify(JOB, checking.Checker(JOB, reference).rewrite(finished(*events)))
    return list(result.sweep.configs) if result.sweep is not None else []


def test_a_config_whose_outputs_match_is_ok_and_says_where_it_was_checked():
    [row] = rows(reference(), ran(account()))
    assert (row.status, row.correct, row.max_abs_error) == ("ok", True, 0.0)
    assert row.reason == "1 ms, compute-bound, 50% of roofline; correct at m=256 (generic interpreter)"
    assert row.check_size == {"m": 256}


@pytest.mark.parametrize(
    ("event", "status", "said"),
    [
        (ran(account(correct=True, max_abs_error=0.0), WANT + 1), "wrong", "12 of 12 elements differ"),
        (ran(account(), WANT, digest="other"), "wrong", "other inputs than the reference"),
        (ran(account(correct=True), None), "error", "sent no outputs to check"),
        (ran(account(), WANT.astype(np.float64)), "wrong", "differ"),
        (ran(account(), WANT[:2]), "wrong", "differ"),
        (ran(account(status="wrong")), "ok", "correct at m=256"),
        (ran(account(estimated_seconds=None)), "unestimated", "correct at m=256"),
    ],
    ids=["wrong outputs", "other inputs", "no outputs", "other dtype", "other shape", "hint", "no estimate"],
)
def test_only_the_checker_says_a_config_is_ok(event, status, said):
    [row] = rows(reference(), event)
    assert row.status == status and said in row.reason, row.reason


def test_outputs_that_do_not_fit_their_header_are_an_error_row():
    event = new_event(
        "config_outputs",
        result=account(),
        done=1,
        of=2,
        ran=True,
        inputs_digest="in",
        outputs=(ArrayBytes("out", "float32", (3, 4), "AAAA"),),
    )
    [row] = rows(reference(), event)
    assert row.status == "error" and "could not be checked" in row.reason


def test_a_config_event_the_process_writes_itself_is_dropped():
    forged = new_event("config", result=account(correct=True, reason="correct"), done=1, of=1)
    assert rows(reference(), forged) == []


def test_a_config_reported_again_and_again_or_outside_the_spec_counts_once(caplog):
    first, again = ran(account(), WANT + 1), ran(account())
    stranger = ran(account(index=7))
    [row] = rows(reference(), first, *[again] * 300, *[stranger] * 300)
    assert (row.index, row.status) == (0, "wrong")
    assert len([r for r in caplog.records if "twice" in r.getMessage()]) == 1  # the flood is logged once


def test_the_params_of_a_row_are_the_specs_not_the_processs():
    [row] = rows(reference(), ran(account(index=1, params={"bm": 4096})))
    assert row.params == {"bm": 256}


def test_a_config_the_process_rules_out_stays_out_whatever_it_sends():
    [row] = rows(reference(), ran(account(status="over_vmem", reason="needs 200 MiB of VMEM")))
    assert row.status == "over_vmem" and row.correct is None


def test_without_a_reference_a_config_ran_but_is_not_called_correct():
    for found in (None, reference(of=0)):
        [row] = rows(found, ran(account(correct=True)))
        assert row.status == "ok" and row.correct is None and "no reference to check" in row.reason


def test_a_check_size_past_the_channels_caps_is_said_so_not_called_unchecked():
    too_big = checking.Reference(expected={}, of=1, tolerances={})  # its one size came without outputs
    [row] = rows(too_big, ran(account()))
    assert row.status == "error" and "sweep fewer configs or choose a smaller check size" in row.reason


def test_a_catalog_config_whose_program_has_no_pallas_kernel_is_not_ok():
    from sandbox.catalog.entries import load_catalog

    entry = load_catalog().get("tiled_matmul_pallas_call")
    job = make_sweep_job("def matmul(x, y, *, bm): ...\n", SPEC, entry=entry)
    events = (ran(account(), kernels=0), ran(account(index=1)))  # the second never said: not judged so
    found = checking.Checker(job, reference()).rewrite(execution(*events))
    rows = {e.data["result"]["index"]: e.data["result"] for e in found.events if e.kind == "config"}
    assert rows[0]["status"] == "error" and "no Pallas kernel ran" in rows[0]["reason"]
    assert rows[1]["status"] == "ok"


def test_every_field_of_a_processs_account_is_held_to_what_a_real_one_can_be():
    """A lying process's numbers and words: clipped, or unknown where no real config has them; a time it
    says it measured on a CPU host (where nothing is measured) is dropped, so the sweep ranks by estimate."""
    lies = account(
        estimated_seconds=-1.0,
        roofline_fraction=float("inf"),
        steps=-5,
        vmem_bytes=2**70,
        bound="x" * 10_000,
        measured_seconds=1e-12,
        measured_host_seconds=1e-12,
        xla_measured_seconds=1e9,
        xla_not_measured="z" * 100_000,
        host_seconds={f"phase{i}": 0.1 for i in range(1000)} | {"nan": float("nan")},
    )
    [row] = rows(reference(), ran(lies))
    assert row.status == "unestimated"  # correct, but with no estimate left to rank it by
    assert (row.estimated_seconds, row.roofline_fraction, row.steps, row.vmem_bytes) == (None,) * 4
    assert (row.measured_seconds, row.measured_host_seconds, row.xla_measured_seconds) == (None,) * 3
    assert row.xla_not_measured == ""  # off the chip nothing was timed, so nothing was refused
    assert len(row.bound) == 40 and len(row.host_seconds) <= 16
    ruled_out = ran(account(status="error", reason="y" * 100_000))
    [row] = rows(reference(), ruled_out)
    assert row.status == "error" and len(row.reason) == 300


def test_a_configs_estimate_and_progress_are_held_to_what_a_real_one_can_be():
    """The estimate a sweep's process attaches to a config (shown in the row's title and the baseline
    line) is its own word: an estimate whose time is not a time is dropped, every other number made
    finite and not negative, its words and lists clipped. Progress is counted by the checker."""
    from sandbox.protocol import Estimate

    lying = Estimate(
        chip="v5e" * 100, seconds=1e-3, bound="compute", roofline_seconds=float("nan"), roofline_fraction=-3.0,
        flops=-1, hbm_bytes=2**70, min_hbm_bytes=0, compute_seconds=float("inf"), memory_seconds=0.0,
        overhead_seconds=0.0, launch_seconds=0.0, notes=("n" * 10_000,) * 100, validation="v" * 10_000,
        xla_seconds=-1.0, xla_validation="x" * 10_000, low_seconds=float("nan"),
    )  # fmt: skip
    events = checking.Checker(JOB, reference()).rewrite(finished(ran(account(estimate=lying)))).events
    [row] = [e for e in events if e.kind == "config"]
    e = row.data["result"]["estimate"]
    numbers = ("roofline_seconds", "roofline_fraction", "flops", "hbm_bytes", "compute_seconds")
    assert [e[k] for k in numbers] == [0] * 5 and (e["xla_seconds"], e["low_seconds"]) == (None, None)
    assert len(e["notes"]) == 8 and len(e["chip"]) == 40
    assert max(len(e["validation"]), len(e["xla_validation"]), *map(len, e["notes"])) == 300
    assert (row.data["done"], row.data["of"]) == (1, 2)  # counted here, as the process said
    nowhere = account(estimate=dataclasses.replace(lying, seconds=float("nan")))
    [row] = [
        e
        for e in checking.Checker(JOB, reference()).rewrite(finished(ran(nowhere))).events
        if e.kind == "config"
    ]
    assert row.data["result"]["estimate"] is None
    # Without a reference the check size is the process's word too: a few dimensions that are sizes.
    wide = dataclasses.replace(account(), check_size={f"d{i}": i for i in range(1000)} | {"neg": -1})
    [row] = [
        e
        for e in checking.Checker(JOB, reference(of=0)).rewrite(finished(ran(wide))).events
        if e.kind == "config"
    ]
    assert len(row.data["result"]["check_size"]) == 16 and "neg" not in row.data["result"]["check_size"]


def test_a_config_returning_the_right_elements_in_another_structure_is_not_ok():
    # The reference returns one array ("out"); a kernel returning it inside a tuple ("out[0]") or a
    # dict has the same elements but is not what the entry's callers get (as a run's check says).
    tupled = new_event(
        "config_outputs", result=account(), done=1, of=2, ran=True, how="generic interpreter",
        inputs_digest="in", outputs=arrays.encode([("out[0]", WANT)]),
    )  # fmt: skip
    [row] = rows(reference(), tupled)
    assert row.status == "error" and "return the same structure" in row.reason
