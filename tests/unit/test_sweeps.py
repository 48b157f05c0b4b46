"""Sweeps on the host side (`sandbox.jobs.sweeps`, `SweepSpec`): parsing, specs, shards, merging, the verdict."""

from __future__ import annotations

import dataclasses
import types

import pytest

from sandbox.catalog.entries import load_catalog
from sandbox.jobs import sweeps
from sandbox.jobs.build import make_sweep_job
from sandbox.protocol import ConfigResult, Execution, RunStatus, SweepResult, SweepSpec, new_event
from sandbox.results.classify import classify

CATALOG = load_catalog()


def config(
    index: int, status: str = "ok", seconds: float | None = 1e-3, measured: float | None = None
) -> ConfigResult:
    return ConfigResult(
        index=index,
        params={"bm": 128 * (index + 1)},
        status=status,  # type: ignore[arg-type]
        reason=status,
        check_size={},
        estimated_seconds=seconds if status == "ok" else None,
        measured_seconds=measured,
    )


def test_parse_assignments_and_params():
    assert sweeps.parse_assignments("m=4096, k=512") == {"m": 4096, "k": 512}
    assert sweeps.parse_param("bm=128,512") == ("bm", (128, 512))
    assert sweeps.parse_param("mode=fast,true,0.5") == ("mode", ("fast", True, 0.5))
    for bad in ("m", "m=x", "1m=3"):
        with pytest.raises(sweeps.SweepError):
            sweeps.parse_assignments(bad)
    with pytest.raises(sweeps.SweepError, match="no values"):
        sweeps.parse_param("bm=")


def test_configs_are_the_product_in_row_major_order_and_shards_cover_them_once():
    spec = SweepSpec(params={"bm": (1, 2, 3), "bk": (10, 20)}, size={"m": 8})
    assert spec.total == 6
    assert spec.configs()[1] == (1, {"bm": 1, "bk": 20})
    parts = sweeps.shards(spec, 4)
    assert [p.only for p in parts] == [(0, 4), (1, 5), (2,), (3,)]
    assert sorted(i for p in parts for i, _ in p.configs()) == list(range(6))
    assert len(sweeps.shards(spec, 99)) == 6


def test_check_size_grows_to_fit_each_configs_blocks():
    spec = SweepSpec(
        params={}, size={}, check_size={"m": 256, "k": 256}, bind={"bm": "m", "bk": "k", "bn": "k"}
    )
    assert spec.check_dims({"bm": 512, "bk": 128, "bn": 384}, {}) == {"m": 512, "k": 384}
    assert spec.check_dims({"bm": 100}, {"n": 8}) == {"m": 300, "k": 256, "n": 8}


def test_a_catalog_entry_fills_the_spec_and_limits_are_checked():
    entry = CATALOG.get("tiled_matmul_pallas_call")
    spec = sweeps.make_spec(entry, size={"m": 1024, "k": 1024, "n": 1024})
    assert spec.total == 27 and spec.bind == {"bm": "m", "bk": "k", "bn": "n"}
    assert spec.check_size == {"m": 256, "k": 256, "n": 256}
    with pytest.raises(sweeps.SweepError, match="at most 64"):
        sweeps.make_spec(None, params={"a": range(5), "b": range(5), "c": range(5)}, size={"m": 1})
    with pytest.raises(sweeps.SweepError, match="target problem size"):
        sweeps.make_spec(None, params={"a": [1]})


def test_best_prefers_measured_times_only_when_every_ok_config_has_one():
    configs = [config(0, seconds=2e-3, measured=1e-3), config(1, seconds=1e-3), config(2, "rejected")]
    assert sweeps.best(configs) == 1  # config 1 has no measurement: estimates decide
    configs[1] = config(1, seconds=1e-3, measured=3e-3)
    assert sweeps.best(configs) == 0
    assert sweeps.best([config(0, "wrong"), config(1, "over_vmem")]) is None


def test_classify_gathers_a_sweep_jobs_configs_into_its_verdict():
    entry = CATALOG.get("tiled_matmul_pallas_call")
    spec = sweeps.make_spec(entry, params={"bm": [128, 256, 512]}, size={"m": 512, "k": 512, "n": 512})
    job = make_sweep_job("x", spec, entry=entry, chip="v5e")
    assert job.limits.wall_seconds > 60 and job.trace is False
    events = (
        new_event("started", pid=1),
        new_event("config", result=config(2, seconds=5e-4), done=1, of=3),
        new_event("config", result=config(0, "rejected"), done=2, of=3),
        new_event("config", result=config(1, "over_vmem"), done=3, of=3),
        new_event("done", peak_rss_bytes=0),
    )
    execution = Execution(events, 0, None, False, False, 1.0, "", "", False, False)
    result = classify(job, execution)
    assert result.status is RunStatus.PASSED
    assert result.sweep is not None and [c.index for c in result.sweep.configs] == [0, 1, 2]
    assert result.sweep.best == 2
    assert result.summary.startswith(
        "swept 3 of 3 configs on v5e at m=512,k=512,n=512: 1 ok, 1 rejected, 1 over VMEM"
    )
    assert "best bm=384: estimated 0.5 ms" in result.summary


def test_a_sweep_with_only_wrong_configs_is_a_mismatch_and_a_stopped_one_says_how_far_it_got():
    spec = SweepSpec(params={"bm": (1, 2)}, size={"m": 8})
    assert sweeps.verdict(sweeps.merge([], spec), RunStatus.RAN, "")[0] is RunStatus.ERROR
    part = sweeps.merge([], spec)
    failed = SweepResult(
        chip="v5e", spec=spec, total=2, configs=(config(0, "wrong"), config(1, "error")), best=None
    )
    wrong = sweeps.verdict(failed, RunStatus.RAN, "")
    assert wrong[0] is RunStatus.MISMATCH and "no config is both correct and accepted" in wrong[1]
    stopped = sweeps.verdict(part, RunStatus.CANCELLED, "cancelled after 2.0 s")
    assert stopped == (
        RunStatus.CANCELLED,
        "cancelled after 2.0 s (swept 0 of 2 configs on v5e at m=8: none judged)",
    )


def test_repeated_bind_keeps_every_pair_and_refuses_a_conflict(tmp_path, capsys):
    from sandbox.__main__ import main

    missing = str(tmp_path / "absent.py")  # the spec is judged before the file is read
    argv = ["tune", missing, "--param", "bm=128", "--param", "bn=128", "--size", "n=8"]
    assert main([*argv, "--bind", "bm=q", "--bind", "bn=n"]) == 2
    assert "bound to unknown size dimensions: q" in capsys.readouterr().err  # the first --bind counts
    assert sweeps.parse_bind(["bm=m,bk=k", "bn=n", "bm=m"]) == {"bm": "m", "bk": "k", "bn": "n"}
    with pytest.raises(sweeps.SweepError, match="bm is bound to both 'm' and 'n'"):
        sweeps.parse_bind(["bm=m", "bm=n"])
    with pytest.raises(sweeps.SweepError, match="expected parameter=dimension, got 'bm'"):
        sweeps.parse_bind(["bm"])


def test_a_sweep_whose_correct_configs_have_no_estimate_says_so_and_fails():
    spec = SweepSpec(params={"bm": (1, 2)}, size={"m": 8})
    unranked = ConfigResult(
        index=0,
        params={"bm": 1},
        status="unestimated",
        reason="correct at m=8 (TPU interpret mode); no estimate: ModelLimitError: kernel: too long",
        check_size={},
    )
    sweep = SweepResult(chip="v5e", spec=spec, total=2, configs=(unranked, config(1, "wrong")), best=None)
    status, summary = sweeps.verdict(sweep, RunStatus.RAN, "")
    assert status is RunStatus.ERROR
    assert summary == (
        "swept 2 of 2 configs on v5e at m=8: 1 unestimated, 1 wrong; "
        "no correct config has an estimate to rank it by (ModelLimitError: kernel: too long)"
    )
    assert sweeps.best(sweep.configs) is None


def test_rows_of_a_sweep_that_judged_no_config_are_the_header_only():
    spec = SweepSpec(params={"bn": (128, 256)}, size={"n": 2048})
    sweep = SweepResult(chip="v5e", spec=spec, total=2, configs=(), best=None)
    (head,) = sweeps.rows(sweep)
    assert head.split()[:2] == ["bn", "status"]


def test_a_measured_sweep_shows_its_measured_column_and_xla_measured_against_measured():
    spec = SweepSpec(params={"bm": (128, 256)}, size={"m": 4096})
    timed = [
        dataclasses.replace(config(i, measured=m), xla_measured_seconds=0.5e-3)
        for i, m in enumerate((0.49e-3, 0.8e-3))
    ]
    sweep = SweepResult(chip="v5e", spec=spec, total=2, configs=tuple(timed), best=0)
    head, first, second = sweeps.rows(sweep)
    assert head.split()[:4] == ["bm", "status", "estimate", "measured"]
    assert "0.49 ms" in first and "0.8 ms" in second
    text = sweeps.describe(timed[0])
    assert "measured 0.49 ms" in text and "XLA's own op measured at 0.5 ms, the kernel 0.98x it" in text


def test_a_sweep_on_the_chip_says_why_xla_own_op_was_not_timed():
    """Where the chip could not time XLA's op (`measure.reference_device_time`'s reasons), every row says
    why beside the model's estimate of it, and a sweep without an estimate of it says why alone."""
    why = "its trace gave 0.1 ms, under the 0.2 ms the chip's HBM needs to move its 1 bytes"
    estimate = types.SimpleNamespace(xla_seconds=1e-3, low_seconds=None, validation="", xla_validation="")
    row = dataclasses.replace(config(0, measured=0.49e-3), xla_not_measured=why, estimate=estimate)
    text = sweeps.baseline_text(row)
    assert (
        text
        == f"; XLA's own op not timed on the chip ({why}), estimated at 1 ms, the kernel's estimate 1.00x it"
    )
    bare = dataclasses.replace(row, estimate=None)
    assert sweeps.baseline_text(bare) == f"; XLA's own op not timed on the chip ({why})"


def test_off_the_chip_the_baseline_is_the_models_estimate_against_the_kernels():
    estimated = dataclasses.replace(
        config(0, seconds=2e-3),
        estimate=types.SimpleNamespace(xla_seconds=1e-3, low_seconds=None, validation="", xla_validation=""),
    )
    assert (
        sweeps.baseline_text(estimated) == "; XLA's own op estimated at 1 ms, the kernel's estimate 2.00x it"
    )
    assert sweeps.baseline_text(config(0)) == ""  # no baseline: nothing said
    said = dataclasses.replace(
        estimated,
        estimate=types.SimpleNamespace(xla_seconds=1e-3, xla_validation="not timed on a real TPU v6e"),
    )
    assert sweeps.baseline_text(said).endswith("2.00x it (not timed on a real TPU v6e)")
    head, _ = sweeps.rows(
        SweepResult(
            chip="v5e",
            spec=SweepSpec(params={"bm": (128,)}, size={"m": 8}),
            total=1,
            configs=(config(0),),
            best=0,
        )
    )
    assert "measured" not in head  # nothing was timed: no column for it


def test_a_measured_time_is_given_its_own_share_of_the_roofline_and_one_past_it_is_doubted():
    """The estimate's roofline (estimate x its fraction) over the measured time; a measured time more
    than 2 % under the roofline is said to have missed part of the run (an in-place kernel timed at
    251 TFLOP/s on a 197 TFLOP/s v5e did)."""
    estimated = dataclasses.replace(config(0, seconds=1e-3), roofline_fraction=0.8)
    assert ", 80% of roofline" in sweeps.describe(estimated)
    slower = dataclasses.replace(estimated, measured_seconds=1.6e-3)
    assert slower.measured_roofline_fraction == pytest.approx(0.5)
    assert "measured 1.6 ms, 50% of roofline" in sweeps.describe(slower)
    faster = dataclasses.replace(estimated, measured_seconds=0.5e-3)
    assert "160% of roofline (faster than the chip's roofline: this timing missed part of the run)" in (
        sweeps.describe(faster)
    )
    assert "missed" not in sweeps.describe(dataclasses.replace(estimated, measured_seconds=0.79e-3))
    assert faster.faster_than_the_chip and not slower.faster_than_the_chip
