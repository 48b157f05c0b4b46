"""The kernel trace through real child processes: DMA counts, pipeline and grid steps, cores, the API."""

import collections
import dataclasses
import time

import pytest
from fastapi.testclient import TestClient

from sandbox.backends.execute import FORWARDED
from sandbox.catalog.entries import load_catalog
from sandbox.harness.trace import capture as trace_capture
from sandbox.jobs.build import make_job
from sandbox.protocol import RunResult, RunStatus
from sandbox.protocol.trace import Trace
from server.app import create_app
from server.settings import Settings
from tests.backends import suite_backend
from tests.sandbox.conftest import run_job
from tests.sandbox.test_spine_local import ADD_KERNEL

pytestmark = pytest.mark.slow
CATALOG = load_catalog()


def run(slug: str, chip: str = "v5p", trace: bool = True, source: str | None = None) -> RunResult:
    """The entry's solution (or `source`) on its first case only (the trace records that case)."""
    entry = CATALOG.get(slug)
    source = entry.solution_source if source is None else source
    job = make_job(source, entry=entry, chip=chip, timing_budget_seconds=0.05, trace=trace)
    job = dataclasses.replace(job, entry=dataclasses.replace(job.entry, cases=job.entry.cases[:1]))
    return run_job(job)


def traced(slug: str, chip: str = "v5p") -> Trace:
    result = run(slug, chip)
    assert result.status == RunStatus.PASSED, result.summary
    assert result.trace is not None and result.trace.available, result.trace
    return result.trace


def test_tiled_matmul_pipeline_has_the_hand_counted_dmas_and_steps():
    trace = traced("tiled_matmul")
    # f32 256x256x256 in 128 blocks: grid (i, j, k) = (2, 2, 2), 8 steps, k innermost. x's block (i, k)
    # and y's block (k, j) change every step; the output block (i, j) every second step.
    # emit_pipeline double-buffers: starts = 2 prologue copies (x and y for step 0) + 2 per step for
    # steps 0..6 (each fetches the next step's blocks; none in the last) + 1 output copy at steps
    # 1, 3, 5, 7 (where (i, j) is about to change, and the last) = 2 + 14 + 4 = 20.
    # Waits = x and y at every step (their block changed) 16 + the previous output copy at steps
    # 2, 4, 6 (3) + the last output copy in the epilogue (1) = 20.
    assert trace.counts["dma_start"] == 20 and trace.counts["dma_wait"] == 20
    assert not trace.truncated and trace.case == "f32 256x256x256"
    assert [(s.kind, s.pipeline, s.number) for s in trace.steps] == [("pipeline", 0, n) for n in range(8)]
    starts = [e for e in trace.events if e.kind == "dma_start"]
    waits = [e for e in trace.events if e.kind == "dma_wait"]
    assert {e.bytes for e in starts + waits} == {128 * 128 * 4}
    # Every start is waited for once: each wait names exactly one DMA, and all of them.
    assert sorted(e.dma for e in waits) == sorted(e.dma for e in starts)
    per_step = collections.Counter((e.step, e.kind) for e in starts + waits)
    assert [per_step[(s, "dma_wait")] for s in range(8)] == [2, 2, 3, 2, 3, 2, 3, 3]
    assert trace.hbm_bandwidth == 1230e9  # v5p, per TensorCore


def test_tiled_matmul_grid_view_shows_each_steps_blocks_and_the_revisits():
    trace = traced("tiled_matmul")
    steps = [(i, j, k) for i in range(2) for j in range(2) for k in range(2)]
    operands = {o.name: o for o in trace.grid.operands}
    assert [(o.name, o.param, o.role) for o in trace.grid.operands] == [
        ("in0", "x_hbm", "input"), ("in1", "y_hbm", "input"), ("out", "o_hbm", "output"),
    ]  # fmt: skip
    assert [(v.step, v.block) for v in operands["in0"].visits] == [
        (s, (i, k)) for s, (i, j, k) in enumerate(steps)
    ]
    assert [(v.step, v.block) for v in operands["in1"].visits] == [
        (s, (k, j)) for s, (i, j, k) in enumerate(steps)
    ]
    # x's blocks are fetched again for every j: the second pass over (i, k) is a revisit.
    assert operands["in0"].revisits == 4 and operands["in1"].revisits == 4
    assert [(v.access, v.step, v.region) for v in operands["out"].visits] == [
        ("write", 1, "[0:128, 0:128]"), ("write", 3, "[0:128, 128:256]"),
        ("write", 5, "[128:256, 0:128]"), ("write", 7, "[128:256, 128:256]"),
    ]  # fmt: skip
    assert "emit_pipeline" in trace.grid.note


def test_pallas_call_grid_view_gives_every_grid_point_its_blocks():
    trace = traced("tiled_matmul_pallas_call")
    grid = [s for s in trace.steps if s.kind == "grid"]
    assert sorted(s.grid_point for s in grid) == [
        (i, j, k) for i in range(2) for j in range(2) for k in range(2)
    ]
    assert [s.number for s in grid] == list(range(8))
    operands = {o.name: o for o in trace.grid.operands}
    by_step = collections.defaultdict(dict)
    for name, operand in operands.items():
        for visit in operand.visits:
            by_step[visit.step][name] = (visit.access, visit.block)
    for step in grid:
        i, j, k = step.grid_point
        expected = {"in0": ("read", (i, k)), "in1": ("read", (k, j))}
        if k == 1:  # the accumulator's tile is written back once, after its last K step
            expected["out"] = ("write", (i, j))
        assert by_step[step.index] == expected, step
    assert trace.counts["block_read"] == 16 and trace.counts["block_write"] == 4
    assert "pallas_call" in trace.grid.note


def test_a_failing_runs_trace_shows_the_revisited_output_block():
    entry = CATALOG.get("tiled_matmul_pallas_call")
    wrong = next(w for w in entry.wrong if w.name == "k_axis_outermost")
    result = run(entry.slug, source=wrong.source)
    assert result.status == RunStatus.ERROR
    assert "the same output block is written again at grid step (k=1, i=0, j=0)" in result.error.message
    # Grid (k, i, j): the output tile (i, j) is written at every step, and (0, 0) again at (1, 0, 0),
    # where the interpreter stops; the trace keeps everything up to there.
    (out,) = [o for o in result.trace.grid.operands if o.name == "out"]
    assert [(v.grid_point, v.block, v.revisit) for v in out.visits] == [
        ((0, 0, 0), (0, 0), False), ((0, 0, 1), (0, 1), False), ((0, 1, 0), (1, 0), False),
        ((0, 1, 1), (1, 1), False), ((1, 0, 0), (0, 0), True),
    ]  # fmt: skip
    assert out.revisits == 1 and result.trace.counts["grid_step"] == 5


def test_megacore_matmul_runs_on_two_cores():
    trace = traced("megacore_matmul")
    lanes = {(lane.device, lane.core): lane.counts for lane in trace.lanes}
    for core in (0, 1):
        counts = lanes[(0, core)]
        assert counts["sem_signal"] == 1 and counts["sem_wait"] == 1, counts  # the core barrier
        assert counts["dma_start"] == counts["dma_wait"] == 12, counts
        # Split-K pipeline: (2 cores x 2 x 1 x 2) steps, halved per core; then the combine's (2, 1).
        pipelines = collections.Counter(s.pipeline for s in trace.steps if s.core == core)
        assert pipelines == {0: 4, 1: 1}
    assert {e.core for e in trace.events if e.kind.startswith("dma")} == {0, 1}


def test_ring_all_gather_has_a_lane_per_device_and_links_each_remote_dma_to_both_waits():
    trace = traced("ring_all_gather", chip="v5e")
    assert [(lane.device, lane.core) for lane in trace.lanes if lane.core is not None] == [
        (d, 0) for d in range(4)
    ]
    hops = [e for e in trace.events if e.kind == "dma_start" and e.dst_device != e.device]
    # Each of the 4 devices forwards 3 shards to its right neighbour; the sender waits for the send
    # semaphore, the neighbour for the receive semaphore, so each hop completes two waits.
    assert sorted((e.device, e.dst_device) for e in hops) == sorted(
        (d, (d + 1) % 4) for d in range(4) for _ in range(3)
    )
    waits = collections.Counter(i for e in trace.events if e.kind == "dma_wait" for i in e.dma)
    assert all(waits[e.dma[0]] == 2 for e in hops)
    assert trace.counts["dma_start"] == 16 and trace.counts["dma_wait"] == 4 + 2 * 12


def test_no_trace_when_the_job_asks_for_none():
    result = run("tiled_matmul_pallas_call", trace=False)
    assert result.status == RunStatus.PASSED and result.trace is None


def test_the_api_returns_the_trace_with_the_result_but_never_streams_it(tmp_path):
    assert "trace" not in FORWARDED  # too big for a progress event; the final result carries it
    settings = Settings(
        data_dir=tmp_path,
        slots=1,
        timing_budget_seconds=0.05,
        rate_per_minute=0,
        cache_size=0,
    )
    with TestClient(create_app(settings, backend=suite_backend())) as client:
        run_id = client.post("/api/runs", json={"source": ADD_KERNEL}).json()["id"]
        deadline = time.monotonic() + 120
        while (state := client.get(f"/api/runs/{run_id}").json())["state"] != "done":
            assert time.monotonic() < deadline
            time.sleep(0.3)
    trace = state["result"]["trace"]
    assert trace["available"] and trace["counts"]["block_read"] == 2 and trace["counts"]["block_write"] == 1
    (out,) = [o for o in trace["grid"]["operands"] if o["name"] == "out"]
    assert out["visits"][0]["region"] == "[0:8, 0:128]" and out["param"] == "o_ref"


def test_the_installed_interpreter_has_what_the_trace_wraps():
    from jax._src.pallas.mosaic.interpret import interpret_pallas_call as ipc

    assert trace_capture.check(ipc) == ""


def test_on_another_jax_the_trace_says_it_is_unavailable_and_patches_nothing(monkeypatch):
    import jax
    from jax._src.pallas.mosaic.interpret import interpret_pallas_call as ipc

    before = ipc.dma_start
    monkeypatch.setattr(jax, "__version__", "0.13.0")
    capture = trace_capture.install()
    assert capture.result("c", 1.0) == Trace(
        available=False,
        reason="not available on jax 0.13.0 (the playground's kernel trace hooks are written for jax "
        "0.12.0.1's internals)",
    )
    assert ipc.dma_start is before
