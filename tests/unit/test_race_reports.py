"""Race reports: the detector's log text in, the structured `Race` a user sees out; the log capture."""

import json
import logging

from sandbox.harness.checks.races import MAX_RACES_PER_CASE, RaceLog, parse, parse_all
from sandbox.protocol import CaseResult, Race, RaceAccess, from_json_dict, to_json_dict

# Recorded from jax 0.12.0.1 runs of race_condition_demo's wrong kernels (clock addresses shortened).
WRITE_WRITE = (
    "RACE DETECTED\n"
    "  write of ('hbm', 101, 0, 0)[(slice(0, 16, 1), slice(0, 128, 1))] from (103, 0), \n"
    "  clock: <jax._src.pallas.mosaic.interpret.vector_clock.NpVectorClock object at 0x7f06>\n"
    "  write of ('hbm', 101, 0, 0)[(slice(0, 16, 1), slice(0, 128, 1))] from (105, 0), \n"
    "  clock: <jax._src.pallas.mosaic.interpret.vector_clock.NpVectorClock object at 0x7f07>\n"
)
WRITE_READ = (
    "RACE DETECTED\n"
    "  write of ('vmem', 102, 0, 1)[(0, slice(0, 16, 1), slice(0, 128, 1))] from (101, 0), "
    "kernel.py:38:12 (scale_kernel.<locals>._.<locals>._)\n"
    "  clock: <jax._src.pallas.mosaic.interpret.vector_clock.NpVectorClock object at 0x7f92>\n"
    "  read of ('vmem', 102, 0, 1)[(0, slice(0, 16, 1), slice(0, 128, 1))] from (0, 1), "
    "kernel.py:40:23 (scale_kernel.<locals>._)\n"
    "  clock: <jax._src.pallas.mosaic.interpret.vector_clock.NpVectorClock object at 0x7f93>\n"
)
CORE_WRITES = (
    "RACE DETECTED\n"
    "  write of ('hbm', 101, 0, 0)[(slice(0, 8, 1), slice(0, 128, 1))] from (0, 1), pallas_call\n"
    "  clock: <...>\n"
    "  write of ('hbm', 101, 0, 0)[(slice(0, 8, 1), slice(0, 128, 1))] from (0, 0), pallas_call\n"
    "  clock: <...>\n"
)


def test_write_read_race_names_both_source_lines():
    race = parse(WRITE_READ)
    write, read = race.accesses
    assert (write.kind, write.by, write.file, write.line) == ("write", "a DMA (id 101)", "kernel.py", 38)
    assert (read.kind, read.by, read.file, read.line) == ("read", "device 0, core 1", "kernel.py", 40)
    assert read.buffer == "VMEM buffer 102 of device 0, core 1"
    assert read.region == "[0, 0:16, 0:128]"
    assert race.summary == (
        "write by a DMA (id 101) at kernel.py line 38 and read by device 0, core 1 at kernel.py line 40 "
        "overlap in VMEM buffer 102 of device 0, core 1 [0, 0:16, 0:128]"
    )
    assert race.text == WRITE_READ


def test_write_write_race_without_source_lines():
    race = parse(WRITE_WRITE)
    assert [a.by for a in race.accesses] == ["a DMA (id 103)", "a DMA (id 105)"]
    assert all(a.file is None and a.line is None for a in race.accesses)
    assert race.summary == (
        "write by a DMA (id 103) and write by a DMA (id 105) overlap in HBM buffer 101 on device 0 [0:16, 0:128]"
    )


def test_two_cores_writing_one_block():
    race = parse(CORE_WRITES)
    assert [a.by for a in race.accesses] == ["device 0, core 1", "device 0, core 0"]
    assert race.accesses[0].region == "[0:8, 0:128]"


def test_unparsable_report_is_kept_verbatim():
    race = parse("RACE DETECTED\n  something else entirely\n")
    assert race.accesses == () and "verbatim" in race.summary and "something else" in race.text


def test_whole_buffer_and_open_slices():
    text = WRITE_READ.replace("(0, slice(0, 16, 1), slice(0, 128, 1))", "()", 1).replace(
        "(0, slice(0, 16, 1), slice(0, 128, 1))", "(slice(None, None, None), slice(2, 10, 2))"
    )
    write, read = parse(text).accesses
    assert write.region == "(the whole buffer)"
    assert read.region == "[:, 2:10:2]"


def test_parse_all_keeps_the_first_few():
    races = parse_all([WRITE_READ] * (MAX_RACES_PER_CASE + 5))
    assert len(races) == MAX_RACES_PER_CASE


def test_race_log_collects_reports_from_root_and_module_loggers():
    log = RaceLog().attach()
    try:
        logging.getLogger("jax._src.pallas.mosaic.interpret.race_detection_state").warning(WRITE_READ)
        logging.warning(WRITE_WRITE)  # write races are logged on the root logger
        logging.getLogger("other").warning("an unrelated warning")
        assert log.take() == [WRITE_READ, WRITE_WRITE]
        assert log.take() == []
    finally:
        logging.getLogger().removeHandler(log)


def test_case_result_with_races_round_trips_through_json():
    race = Race(
        summary="s", accesses=(RaceAccess(kind="read", buffer="b", region="[0]", by="d", line=3),), text="t"
    )
    case = CaseResult(
        name="c",
        dtype="float32",
        dims={},
        input_shapes=((4,),),
        tolerance=None,
        passed=False,
        outputs=(),
        seconds=0.1,
        races=(race,),
    )
    assert from_json_dict(CaseResult, json.loads(json.dumps(to_json_dict(case)))) == case


def test_case_result_without_races_field_still_decodes():
    data = to_json_dict(
        CaseResult(
            name="c",
            dtype="f",
            dims={},
            input_shapes=(),
            tolerance=None,
            passed=True,
            outputs=(),
            seconds=0.0,
        )
    )
    del data["races"]
    assert from_json_dict(CaseResult, data).races == ()
