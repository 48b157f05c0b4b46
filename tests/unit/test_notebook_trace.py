"""The notebook's reading of a profiler trace (`server/notebook/cells/trace.py.txt`, run here as the
notebook runs it): the median span of TPU 0's "XLA Modules" line over the timed calls, and nothing
from other devices, other lines or the host; None when the trace has too few such spans (no TPU).
The event layout is Chrome/Perfetto JSON as `jax.profiler.trace(create_perfetto_trace=True)` writes
it (checked on this CPU's traces); the TPU process and line names follow xprof's, not seen here."""

from __future__ import annotations

from server.notebook.build import CELLS


def module_seconds():
    namespace: dict = {}
    exec(compile((CELLS / "trace.py.txt").read_text(), "trace.py", "exec"), namespace)
    return namespace["module_seconds"]


def meta(kind: str, pid: int, name: str, tid: int | None = None) -> dict:
    return {
        "ph": "M",
        "name": kind,
        "pid": pid,
        **({"tid": tid} if tid is not None else {}),
        "args": {"name": name},
    }


def spans(pid: int, tid: int, micros: list[float]) -> list[dict]:
    return [
        {"ph": "X", "pid": pid, "tid": tid, "name": "jit_matmul", "ts": i * 10_000, "dur": d}
        for i, d in enumerate(micros)
    ]


TRACE = [
    meta("process_name", 1, "/host:CPU"),
    meta("process_name", 2, "/device:TPU:0"),
    meta("thread_name", 2, "XLA Modules", tid=10),
    meta("thread_name", 2, "XLA Ops", tid=11),
    meta("process_name", 3, "/device:TPU:1"),
    meta("thread_name", 3, "XLA Modules", tid=10),
    *spans(1, 5, [9999.0] * 20),  # host work
    *spans(2, 11, [5.0] * 40),  # ops inside the module
    *spans(3, 10, [7777.0] * 20),  # another chip
    *spans(2, 10, [5000.0] + [1920.0] * 19 + [1930.0]),  # a warm-up span first, then the 20 timed calls
]


def test_the_median_span_of_tpu0s_modules_over_the_timed_calls():
    assert module_seconds()({"traceEvents": TRACE}, 20) == 1920.0 * 1e-6


def test_too_few_spans_or_no_tpu_is_none():
    read = module_seconds()
    assert read({"traceEvents": TRACE}, 30) is None
    host_only = [
        meta("process_name", 701, "/host:CPU"),
        meta("thread_name", 701, "python", tid=1),
        *spans(701, 1, [3.0] * 20),
    ]
    assert read({"traceEvents": host_only}, 20) is None
