"""The pure parts of the kernel trace: regions, capping, DMA links, step derivation, the grid view.

Over 400 lines as one file: they are table tests of one module family (`sandbox.harness.trace`) that
share its fixtures and hand-built records; each section is a table, not logic to split.
"""

import inspect
import json
import types

import numpy as np
import pytest

from sandbox.harness.trace import capture as trace
from sandbox.harness.trace import regions, timeline
from sandbox.harness.trace.records import Recorder, describe, phase
from sandbox.protocol import from_json_dict, to_json_dict
from sandbox.protocol.trace import Trace


def rec(kind, t, device=0, core=0, dur=0.0, thread=1, **fields):
    return {"kind": kind, "t": t, "dur": dur, "device": device, "core": core, "thread": thread, **fields}


def start(t, src, dst, sem, *, phase="", nbytes=64, core=0, dst_device=0, dst_core=None, **more):
    return rec(
        "dma_start",
        t,
        core=core,
        phase=phase,
        bytes=nbytes,
        src=src,
        dst=dst,
        semaphore=sem,
        dst_device=dst_device,
        dst_core=core if dst_core is None else dst_core,
        **more,
    )


def wait(t, sem, *, phase="", nbytes=64, core=0, dur=0.0, device=0):
    return rec("dma_wait", t, device=device, core=core, dur=dur, phase=phase, bytes=nbytes, semaphore=sem)


# -- regions ------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("rng", "text"),
    [
        (((0, 128, 1), (128, 256, 1)), "[0:128, 128:256]"),
        ((1, (0, 8, 1), (0, 128, 1)), "[1, 0:8, 0:128]"),
        (((0, 16, 2),), "[0:16:2]"),
        ((), "[...]"),
        (None, "[...]"),
    ],
)
def test_region_text_reads_like_python_slices(rng, text):
    assert regions.region_text(rng) == text


def test_normalize_turns_the_interpreters_slices_into_tuples():
    assert regions.normalize((slice(0, 128, None), 3, slice(8, 16, 2))) == ((0, 128, 1), 3, (8, 16, 2))
    assert regions.whole((2, 128)) == ((0, 2, 1), (0, 128, 1))


def test_region_bytes_counts_elements_times_itemsize():
    assert regions.region_bytes((1, (0, 128, 1), (0, 128, 1)), 4) == 65536
    assert regions.region_bytes(((0, 16, 2),), 2) == 16
    assert regions.region_bytes(((0, 8, 1),), None) is None


@pytest.mark.parametrize(
    ("rng", "block"),
    [
        (((128, 256, 1), (0, 128, 1)), (1, 0)),
        ((1, (128, 256, 1), (0, 128, 1)), (1, 1, 0)),
        (((22, 23, 1), (0, 128, 1)), (22, 0)),
        (((64, 192, 1),), None),  # not aligned to its own size
        (((0, 16, 2),), None),  # strided
    ],
)
def test_block_of_a_region(rng, block):
    assert regions.block_of(rng) == block


# -- capping -------------------------------------------------------------------------------------


def test_cap_keeps_everything_under_the_limit():
    records = [rec("load", t) for t in range(3)]
    assert timeline.cap(records, 3) == (records, None)


def test_cap_drops_loads_and_stores_first():
    records = [rec("load", 0), rec("dma_start", 1), rec("store", 2), rec("dma_wait", 3)]
    kept, cut = timeline.cap(records, 3)
    assert [r["kind"] for r in kept] == ["dma_start", "dma_wait"] and cut is None


def test_cap_then_cuts_the_latest_records_and_says_when():
    records = [rec("dma_start", t) for t in range(10)]
    kept, cut = timeline.cap(records, 4)
    assert [r["t"] for r in kept] == [0, 1, 2, 3] and cut == 3


def test_build_marks_a_capped_trace_and_keeps_full_counts():
    records = [rec("load", t / 10) for t in range(5)] + [
        rec("dma_start", 1.0 + t, src="a", dst="b", semaphore=1, bytes=4, dst_device=0, dst_core=0)
        for t in range(3)
    ]
    result = timeline.build(
        records,
        operands=[],
        counts={"load": 5, "dma_start": 3},
        seconds=4.0,
        case="c",
        hbm_bandwidth=1e12,
        failures=[],
        limit=2,
    )
    assert result.truncated and [e.kind for e in result.events] == ["dma_start", "dma_start"]
    assert result.counts == {"dma_start": 3, "load": 5}
    assert "Over the cap of 2 events: loads and stores are left out, then the events after t = 2.000 s." in (
        result.note
    )


# -- devices and DMA links -------------------------------------------------------------------


def test_grid_steps_take_the_device_of_the_next_record_on_their_thread():
    records = [
        rec("grid_step", 0.0, device=None, thread=7),
        rec("grid_step", 0.1, device=None, thread=8),
        rec("load", 0.2, device=3, thread=7),
        rec("load", 0.3, device=1, thread=8),
    ]
    timeline.assign_devices(records)
    assert [r["device"] for r in records[:2]] == [3, 1]


def test_a_grid_step_takes_the_device_that_runs_it_not_the_one_before():
    # A host thread that ran device 2 before now runs device 3's grid step.
    records = [
        rec("load", 0.0, device=2, thread=7),
        rec("grid_step", 0.1, device=None, thread=7),
        rec("load", 0.2, device=3, thread=7),
    ]
    timeline.assign_devices(records)
    assert records[1]["device"] == 3


def test_a_wait_completes_the_oldest_dma_on_its_semaphore_and_core():
    records = [
        start(0.0, "in0", "vmem#1", 5),
        start(0.1, "in0", "vmem#1", 5),
        start(0.2, "in1", "vmem#2", 5, core=1),  # same semaphore id, other core: not ours
        wait(0.3, 5),
        wait(0.4, 5),
        wait(0.5, 5, core=1),
    ]
    timeline.link_dmas(records)
    assert [r["dma"] for r in records] == [(0,), (1,), (2,), (0,), (1,), (2,)]
    assert records[0]["recv_wait"] is records[3]


def test_one_wait_can_cover_several_dmas_by_bytes():
    records = [
        start(0.0, "a", "b", 1, nbytes=32),
        start(0.1, "a", "b", 1, nbytes=32),
        wait(0.2, 1, nbytes=64),
    ]
    timeline.link_dmas(records)
    assert records[2]["dma"] == (0, 1)


def test_a_receiver_waiting_before_the_sender_starts_is_matched_when_its_wait_returns():
    # Device 1 waits from t=0 to t=1; device 0 starts the remote DMA at t=0.5.
    records = [
        wait(0.0, 9, device=1, dur=1.0),
        start(0.5, "out", "out", 9, dst_device=1, send_semaphore=4),
        wait(0.6, 4),
    ]
    timeline.link_dmas(sorted(records, key=lambda r: r["t"]))
    assert records[0]["dma"] == (0,) and records[2]["dma"] == (0,)


# -- steps ---------------------------------------------------------------------------------------


def pipeline_records(steps, t0=0.0):
    """An emit_pipeline over `steps` steps with one input and one output that changes every step."""
    records, t = [start(t0, "in0", "vmem#1", 1, phase="prologue")], t0
    for s in range(steps):
        t += 1
        if s + 1 < steps:
            records.append(start(t, "in0", "vmem#1", 1, phase="copy_in"))
        records.append(wait(t + 0.1, 1, phase="wait_in"))
        records.append(rec("load", t + 0.2, phase="body", src="vmem#1"))
        records.append(start(t + 0.3, "vmem#2", "out", 2, phase="copy_out"))
        if s > 0:
            records.append(wait(t + 0.4, 2, phase="wait_out"))
    records.append(wait(t + 0.5, 2, phase="epilogue"))
    return records


def test_pipeline_steps_are_rebuilt_from_the_dma_phases():
    records = pipeline_records(3)
    timeline.link_dmas(records)
    steps = timeline.derive_steps(records)
    assert [(s["kind"], s["pipeline"], s["number"]) for s in steps] == [("pipeline", 0, n) for n in range(3)]
    assert records[0]["step"] == 0  # the prologue's copy counts to step 0
    assert records[-1]["step"] == 2  # the epilogue's wait to the last step
    assert [r["step"] for r in records if r["kind"] == "load"] == [0, 1, 2]


def test_a_second_pipeline_starts_again_from_step_zero():
    records = pipeline_records(2) + pipeline_records(2, t0=10.0) + [rec("sem_signal", 20.0)]
    timeline.link_dmas(records)
    steps = timeline.derive_steps(records)
    assert [(s["pipeline"], s["number"]) for s in steps] == [(0, 0), (0, 1), (1, 0), (1, 1)]
    assert records[-1]["step"] is None  # after the epilogue: outside every pipeline


def test_a_pipeline_after_an_epilogue_is_a_new_pipeline_even_without_a_prologue():
    # The second pipeline only writes (no inputs, so no prologue): its first copy starts pipeline 1.
    records = [
        *pipeline_records(1),
        start(5.0, "vmem#3", "out", 3, phase="copy_out"),
        wait(5.1, 3, phase="epilogue"),
    ]
    timeline.link_dmas(records)
    steps = timeline.derive_steps(records)
    assert [(s["pipeline"], s["number"]) for s in steps] == [(0, 0), (1, 0)]


def test_a_second_copy_of_one_operand_starts_a_step_even_in_the_same_phase():
    # One input whose blocks over 4 steps are A, A, B, C: step 1 only fetches B, step 2 fetches C
    # before it waits for B. Nothing but the repeated copy of x shows where step 2 begins.
    records = [
        start(0.0, "x", "vmem#1", 1, phase="prologue"),
        wait(1.0, 1, phase="wait_in"),
        start(2.0, "x", "vmem#1", 1, phase="copy_in"),
        start(3.0, "x", "vmem#1", 1, phase="copy_in"), wait(3.1, 1, phase="wait_in"),
        wait(4.0, 1, phase="wait_in"),
    ]  # fmt: skip
    timeline.link_dmas(records)
    timeline.derive_steps(records)
    assert [r["step"] for r in records] == [0, 0, 1, 2, 2, 3]


def two_input_steps(first_step_copies):
    """Two inputs x and y whose blocks change on different steps; no outputs."""
    records = [start(0.0, "x", "vmem#1", 1, phase="prologue"), start(0.1, "y", "vmem#2", 2, phase="prologue")]
    return records + first_step_copies


def test_a_step_begins_where_the_phase_order_starts_over():
    # Step 0 copies y's next block and waits for both; step 1 copies x's next block: only the order
    # (a copy after the waits) shows that step 1 has begun.
    records = two_input_steps([
        start(1.0, "y", "vmem#2", 2, phase="copy_in"),
        wait(1.1, 1, phase="wait_in"), wait(1.2, 2, phase="wait_in"),
        start(2.0, "x", "vmem#1", 1, phase="copy_in"),
    ])  # fmt: skip
    timeline.link_dmas(records)
    timeline.derive_steps(records)
    assert [r["step"] for r in records] == [0, 0, 0, 0, 0, 1]


def test_a_wait_for_a_copy_of_its_own_step_starts_the_next_step():
    # Step 0 fetches x's next block; step 1 fetches y's and waits for x; step 2 only waits for y. Steps 1
    # and 2 are both "a wait for one input": only y's copy, started in step 1, shows step 2 has begun.
    records = two_input_steps([
        start(1.0, "x", "vmem#1", 1, phase="copy_in"), wait(1.1, 1, phase="wait_in"), wait(1.2, 2, phase="wait_in"),
        start(2.0, "y", "vmem#2", 2, phase="copy_in"), wait(2.1, 1, phase="wait_in"),
        wait(3.0, 2, phase="wait_in"),
    ])  # fmt: skip
    timeline.link_dmas(records)
    timeline.derive_steps(records)
    assert [r["step"] for r in records] == [0, 0, 0, 0, 0, 1, 1, 2]


def test_grid_steps_number_per_core_and_hold_their_pipelines():
    records = [
        rec("kernel_start", 0.0, core=None, label="k"),
        rec("grid_step", 0.1, core=1, grid_point=(1,)),
        rec("grid_step", 0.2, core=0, grid_point=(0,)),
        *pipeline_records(1, t0=0.3),
        rec("grid_step", 5.0, core=0, grid_point=(2,)),
    ]
    timeline.link_dmas(records)
    steps = timeline.derive_steps(records)
    assert [(s["kind"], s["core"], s["number"], s["grid_point"]) for s in steps if s["kind"] == "grid"] == [
        ("grid", 1, 0, (1,)), ("grid", 0, 0, (0,)), ("grid", 0, 1, (2,)),
    ]  # fmt: skip
    (inner,) = [s for s in steps if s["kind"] == "pipeline"]
    assert inner["parent"] == 1 and inner["kernel"] == "k"


# -- the grid view -------------------------------------------------------------------------------


def test_reads_belong_to_the_step_that_waited_and_revisits_are_marked():
    records = pipeline_records(3)
    for r in records:
        if r["kind"] == "dma_start":
            side = "src" if r["src"] == "in0" else "dst"
            r[f"{side}_operand"] = (0, 0, r[side])
            r[f"{side}_range"] = ((0, 8, 1),)  # the same block every time
    timeline.link_dmas(records)
    steps = timeline.derive_steps(records)
    visits = timeline.grid_visits(records, steps)
    reads = visits[(0, 0, "in0")]
    assert [(v.step, v.revisit) for v in reads] == [(0, False), (1, True), (2, True)]
    writes = visits[(0, 0, "out")]
    first = writes[0]
    assert (first.access, first.step, first.block, first.region) == ("write", 0, (0,), "[0:8]")


def test_a_built_trace_survives_the_json_round_trip():
    records = pipeline_records(2)
    operands = [
        {
            "device": 0,
            "launch": 0,
            "name": "in0",
            "role": "input",
            "kernel": "k",
            "param": "x_ref",
            "shape": (8,),
            "dtype": "float32",
        }
    ]
    built = timeline.build(
        records,
        operands=operands,
        counts={"dma_start": 4},
        seconds=1.0,
        case="c",
        hbm_bandwidth=1.23e12,
        failures=[],
    )
    assert from_json_dict(Trace, json.loads(json.dumps(to_json_dict(built)))) == built


# -- reading the interpreter's calls ---------------------------------------------------------


def test_phase_comes_from_emit_pipelines_named_scopes():
    def info(stack):
        return types.SimpleNamespace(name_stack=stack)

    assert phase(info("jit(matmul)/ep_copy_in")) == "copy_in"
    assert phase(info("ep_initialize_1")) == "prologue"
    assert phase(info("ep_finalize_0")) == "epilogue"
    assert phase(info("while/body")) == ""
    assert phase(None) == ""


def kernel_kwargs(aliases=(), mesh=None):
    mapping = types.SimpleNamespace(
        num_inputs=2, num_outputs=1, num_index_operands=1, slice_block_ops=slice(1, 4)
    )
    jaxpr = types.SimpleNamespace(
        debug_info=types.SimpleNamespace(
            arg_names=["idx_ref", "x_ref", "y_ref", "o_ref", "acc_ref"], func_name="matmul_kernel"
        )
    )
    return {
        "grid_mapping": mapping,
        "jaxpr": jaxpr,
        "input_output_aliases": aliases,
        "mesh": mesh,
        "name": None,
    }


def test_describe_names_operands_like_the_harness():
    kernel = describe(kernel_kwargs(), tensor_core_mesh=int)
    assert kernel.name == "matmul_kernel" and not kernel.on_cores
    assert kernel.operands == (
        ("in0", "input", "x_ref"),
        ("in1", "input", "y_ref"),
        ("out", "output", "o_ref"),
    )


def test_an_aliased_output_is_its_input():
    kernel = describe(kernel_kwargs(aliases=((2, 0),), mesh=3), tensor_core_mesh=int)
    assert kernel.operands == (("in0", "input", "x_ref"), ("in1", "input and output", "y_ref"))
    assert kernel.on_cores


def test_recorder_names_the_first_hbm_buffers_of_a_launch_after_the_operands():
    recorder = Recorder({0: "vmem", 5: "hbm"}, to_range=lambda transforms: [slice(*t) for t in transforms])
    kernel = describe(kernel_kwargs(), tensor_core_mesh=int)
    params = types.SimpleNamespace(kernel=kernel)
    recorder.initialize_shared_memory(None, {"device_id": 0, "interpret_params": params})
    for number, space in ((100, 5), (101, 5), (102, 5), (103, 0)):
        val = np.zeros((256, 256), np.float32)
        recorder.allocate_buffer(
            (None, number), {"device_id": 0, "local_core_id": None, "memory_space": space, "val": val}
        )
    record = recorder.dma_start(None, {
        "device_id": 0, "src_local_core_id": 0, "src_memory_space": 5, "src_id": 101,
        "src_transforms": ((128, 256), (0, 128)), "dst_memory_space": 0, "dst_id": 103,
        "dst_transforms": (), "dst_sem_id": 7, "src_sem_id": None, "dst_device_id": None,
    })  # fmt: skip
    assert (record["src"], record["src_operand"], record["dst"]) == ("in1", (0, 0, "in1"), "vmem#103")
    assert (record["src_space"], record["dst_space"]) == ("hbm", "vmem")
    assert record["bytes"] == 128 * 128 * 4
    assert regions.region_text(record["src_range"]) == "[128:256, 0:128]"
    assert regions.region_text(record["dst_range"]) == "[0:256, 0:256]"  # the whole buffer
    assert [o["name"] for o in recorder.operands] == ["in0", "in1", "out"]


def fake_function(names):
    def fn(*args, **kwargs): ...

    kind = inspect.Parameter.POSITIONAL_OR_KEYWORD
    fn.__signature__ = inspect.Signature([inspect.Parameter(n, kind) for n in names])
    return fn


def test_check_accepts_the_expected_interpreter_and_says_what_changed():
    fake = types.SimpleNamespace(**{name: fake_function(params) for name, params in trace.SIGNATURES.items()})
    fake.interpret_pallas_call = fake_function(trace.LOWERING_KEYWORDS)
    fake.TPU_MEMORY_SPACE_NAMES = {}
    assert trace.check(fake) == ""
    fake.dma_wait = fake_function(("token", "device_id", "local_core_id", "sem_id", "nbytes", "source_info"))
    assert trace.check(fake) == (
        "the interpreter's `dma_wait` takes (token, device_id, local_core_id, sem_id, nbytes, source_info), "
        "not (token, device_id, local_core_id, sem_id, size, source_info)"
    )
    fake.dma_start = None
    assert trace.check(fake) == "the interpreter has no `dma_start` to trace"
