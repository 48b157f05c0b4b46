"""Device timing from profiler traces (`sandbox.harness.devicetime`): the parser on a hand-made TPU
trace in the profiler's trace-event format, and the whole path on a trace `jax.profiler` writes on
this CPU (no TPU here: the `/device:TPU` tracks are only exercised by the hand-made trace)."""

from __future__ import annotations

import gzip
import json

import jax
import jax.numpy as jnp
import pytest

from sandbox.harness import devicetime


def _tpu_trace() -> list[dict]:
    """Two annotated calls on the host; on /device:TPU:0 a kernel and a copy per call, overlapping once."""
    meta = [
        {"ph": "M", "pid": 1, "name": "process_name", "args": {"name": "/host:CPU"}},
        {"ph": "M", "pid": 7, "name": "process_name", "args": {"name": "/device:TPU:0"}},
        {"ph": "M", "pid": 7, "tid": 3, "name": "thread_name", "args": {"name": "XLA Ops"}},
    ]
    calls = [
        {"ph": "X", "pid": 1, "tid": 1, "name": "playground_call_1", "ts": 1000.0, "dur": 400.0},
        {"ph": "X", "pid": 1, "tid": 1, "name": "playground_call_0", "ts": 0.0, "dur": 500.0},
    ]
    device = [
        {"ph": "X", "pid": 7, "tid": 3, "name": "matmul_kernel", "ts": 100.0, "dur": 300.0},
        {"ph": "X", "pid": 7, "tid": 3, "name": "copy", "ts": 350.0, "dur": 100.0},  # overlaps: 50 us once
        {"ph": "X", "pid": 7, "tid": 3, "name": "matmul_kernel", "ts": 1100.0, "dur": 250.0},
        {"ph": "X", "pid": 7, "tid": 3, "name": "outside", "ts": 2000.0, "dur": 999.0},  # in no call
        {"ph": "X", "pid": 1, "tid": 1, "name": "PjitFunction(matmul)", "ts": 10.0, "dur": 480.0},  # host
    ]
    return meta + calls + device


def test_device_time_is_the_union_of_device_events_inside_each_call():
    times, source = devicetime.call_times(_tpu_trace())
    assert "/device:TPU:0" in source
    assert [t.wall_seconds for t in times] == pytest.approx([500e-6, 400e-6])  # ordered by index
    assert [t.device_seconds for t in times] == pytest.approx([350e-6, 250e-6])
    assert [t.host_seconds for t in times] == pytest.approx([150e-6, 150e-6])


def test_summary_takes_medians_and_reads_gzipped_traces(tmp_path):
    path = tmp_path / devicetime.TRACE_NAME
    path.write_bytes(gzip.compress(json.dumps({"traceEvents": _tpu_trace()}).encode()))
    timing = devicetime.summarize(devicetime.read_trace(path), warmup=2)
    assert timing.device_seconds == pytest.approx(300e-6) and timing.host_seconds == pytest.approx(150e-6)
    assert len(timing.calls) == 2 and timing.warmup == 2


def test_union_counts_overlaps_once():
    assert devicetime.union([(0, 2), (1, 3), (5, 6), (5.5, 5.7)]) == pytest.approx(4.0)
    assert devicetime.union([]) == 0.0


def test_a_trace_without_annotations_is_an_error():
    with pytest.raises(ValueError, match="annotations"):
        devicetime.summarize([{"ph": "X", "name": "fusion", "ts": 0, "dur": 1}])


def test_profile_on_this_cpu_reads_the_trace_jax_writes(tmp_path):
    """The real profiler on CPU: one event per call, device work found on the XLA threads."""
    f = jax.jit(lambda x: jnp.tanh(x @ x))
    x = jnp.ones((128, 128), jnp.float32)
    timing = devicetime.profile(lambda: f(x).block_until_ready(), repeats=3, warmup=1, workdir=str(tmp_path))
    assert len(timing.calls) == 3 and "XLA execution threads" in timing.source
    for call in timing.calls:
        assert 0 < call.device_seconds <= call.wall_seconds
    assert timing.host_seconds >= 0 and timing.wall_seconds >= timing.device_seconds


def test_native_runs_report_device_time_and_host_dispatch_apart():
    """`measure.device_time` on a native target profiles the call (here the CPU's XLA threads stand in
    for the TPU's tracks); in the simulator it does nothing. The report prints both figures."""
    from sandbox.harness import measure
    from sandbox.harness.target import Target
    from sandbox.protocol import InterpretOptions, Stats
    from sandbox.results.text_report import _timing

    f = jax.jit(lambda x: x @ x)
    x = jnp.ones((128, 128), jnp.float32)
    run = lambda: f(x).block_until_ready()  # noqa: E731
    assert measure.device_time(Target("v5e", interpret=True, options=InterpretOptions()), run) is None
    native = Target("v5e", interpret=False, options=InterpretOptions())
    found = measure.device_time(native, run)
    assert found is not None and 0 < found.device_seconds <= found.wall_seconds
    stats = Stats(n=3, mean=1e-3, median=1e-3, min=1e-3, max=1e-3, std=0.0, rse=0.0)
    timing = measure.timing_result(native, "case", 0.5, stats, None, None, None, device=found)
    assert (
        timing.device_seconds == found.device_seconds and timing.host_dispatch_seconds == found.host_seconds
    )
    assert any("on the device (profiler trace)" in line for line in _timing(timing))


def test_xla_own_op_timed_faster_than_the_chips_hbm_can_move_its_bytes_is_not_given(monkeypatch):
    """XLA's own op as a baseline (`measure.reference_device_time`): its device time where the trace is
    plausible, and none, with why, where it is under what the chip's HBM needs to read the op's inputs
    and write its outputs (a 64 MiB reduction "timed" at 22 us on the lent v5e: 3 TB/s on an 820 GB/s chip)."""
    from sandbox.harness import measure
    from sandbox.harness.target import Target
    from sandbox.protocol import InterpretOptions

    native = Target("v5e", interpret=False, options=InterpretOptions())
    x = jnp.ones((1024, 128), jnp.float32)  # 512 KiB in, 4 KiB out: 0.644 us at the v5e's 820 GB/s
    sums = lambda x: jnp.sum(x.reshape(-1, 8, 128), axis=0)  # noqa: E731
    assert measure.reference_device_time(
        Target("v5e", interpret=True, options=InterpretOptions()), sums, [x]
    ) == (
        None,
        "",
    )

    def traced(seconds):
        timing = devicetime.DeviceTiming(seconds, 0.0, seconds, (), 0, "test")
        monkeypatch.setattr(measure, "device_time", lambda target, run: (run(), timing)[1])

    traced(1e-6)
    assert measure.reference_device_time(native, sums, [x]) == (1e-6, "")
    traced(0.2e-6)
    found, why = measure.reference_device_time(native, sums, [x])
    assert found is None and "under the 0.0006444 ms the chip's HBM needs" in why and "missed part" in why
    # An op that reads a slice of its input moves what XLA counts, not the whole input: a tile of x's
    # first 8 rows into 512 KiB moves 0.64 us of bytes at 820 GB/s where x and the output are 1.28 us.
    tiled = lambda x: jnp.tile(x[:8], (128, 1))  # noqa: E731
    traced(0.7e-6)
    assert measure.reference_device_time(native, tiled, [x]) == (0.7e-6, "")
    traced(0.5e-6)
    found, why = measure.reference_device_time(native, tiled, [x])
    assert found is None and "missed part" in why
