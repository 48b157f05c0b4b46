"""Outputs too large to send whole: every element is checked, by the sampled rows and each group's sums.

An output past the channel's cap is sent as every k-th row (`sandbox.harness.sampled`); a kernel right
on those rows and wrong on the others passed (issue 41, fourth round). Each side now also sends sums
over every element per group (`sandbox.verdict.digests`), and the checker holds them to bounds drawn
from the tolerance (`sandbox.verdict.sums`): an output within the tolerance everywhere must pass, at
its very edge too; one wrong row, a moved NaN, one changed integer must not. A small channel (`CAP`)
cuts outputs of a few hundred KiB as a TPU-size case is cut.
"""

from __future__ import annotations

import dataclasses

import ml_dtypes
import numpy as np
import pytest

from sandbox.backends import checking
from sandbox.harness.sampled import fit
from sandbox.jobs.build import make_job
from sandbox.protocol import Case, CaseResult, LoweringCheck, RunResult, RunStatus, Tolerance, new_event
from sandbox.protocol.events import CaseExpected, CaseRan
from sandbox.results.classify import classify
from sandbox.verdict import arrays, digests
from sandbox.verdict.compare import as_complex128, as_float64, compare
from sandbox.verdict.judge import Expected, judge
from sandbox.verdict.tolerances import output_tolerance
from tests.executions import finished

CAP = 32 << 10
CASE = Case(name="c", dtype="float32", seed=0)
RNG = np.random.default_rng(41)
WANT = RNG.standard_normal((48, 1024)).astype(np.float32)  # cut every 6th row: rows 0, 6, …, 42 sent


def _sent(named: list[tuple[str, np.ndarray]]) -> tuple[arrays.ArrayBytes, ...]:
    return arrays.encode(fit(named, CAP))


def _judged(want: np.ndarray, got: np.ndarray, declared: dict[str, Tolerance] | None = None) -> CaseResult:
    expected = Expected.of(CaseExpected(0, 1, CASE, "in", ((1,),), _sent([("out", want)])))
    return judge(expected, CaseRan(0, "c", 0.1, "in", _sent([("out", got)]), 1), declared or {})


def _note(result: CaseResult) -> str:
    return result.outputs[0].note


def test_the_tables_layout_is_what_the_channel_bounds():
    assert len(digests.HEAD) + 2 * len(digests.PART) == arrays.SUMS_COLUMNS
    (name, rows), (sums, table) = fit([("out", WANT)], CAP)
    assert name == "out[::6]" and rows.shape == (8, 1024) and sums == arrays.SUMS_NAME
    assert table.shape[0] <= arrays.MAX_SUMS_ROWS and table[-1, 4] == WANT.size  # every element, in groups


def test_the_testers_case_a_wrong_odd_row_fails_and_says_where():
    """(2, 1114112) float32: 8.9 MB, sent as row 0 only; row 1 held 12345.0."""
    n = 16384 * 68
    x = np.random.default_rng(0).standard_normal((2, n)).astype(np.float32)
    want, got = x * 2, x * 2
    got[1] = 12345.0
    expected = Expected.of(CaseExpected(0, 1, CASE, "in", ((2, n),), arrays.encode(fit([("out", want)]))))
    result = judge(expected, CaseRan(0, "c", 0.1, "in", arrays.encode(fit([("out", got)])), 1), {})
    assert not result.passed and result.outputs[0].mismatch_count == 0  # the sampled row is right
    assert "of row 1 of out: their sum differs from the reference's by" in _note(result)
    assert "beyond what the tolerance allows" in _note(result) and "in rows 1..1" in _note(result)
    fine = judge(expected, CaseRan(0, "c", 0.1, "in", arrays.encode(fit([("out", want.copy())])), 1), {})
    assert fine.passed and "every 2nd row compared element by element" in _note(fine)


def _at_the_edge(want: np.ndarray, tol: Tolerance, sign: np.ndarray | float) -> np.ndarray:
    """Each element as far from `want` (towards `sign`) as `tol` allows, `compare` still passing it."""
    complex_ = want.dtype.kind == "c"
    e = as_complex128(want) if complex_ else as_float64(want)
    allowed = tol.atol + tol.rtol * np.abs(e)
    step = sign * allowed
    for _ in range(80):
        g = (e + step * (1 + 1j) if complex_ else e + step).astype(want.dtype)
        wide = as_complex128(g) if complex_ else as_float64(g)
        ok = np.abs(wide.real - e.real) <= allowed
        ok &= np.abs(wide.imag - e.imag) <= allowed if complex_ else True
        if ok.all():
            return g
        step = np.where(ok, step, step * 0.97)
    raise AssertionError("no output at the edge")


EDGES = {
    "float32": (WANT, None),
    "float64 of a few rows (cut by elements)": (RNG.standard_normal((3, 20_000)), None),
    "bfloat16": (RNG.standard_normal((96, 2048)).astype(ml_dtypes.bfloat16), None),
    "float16, one dimension": (RNG.standard_normal(80_000).astype(np.float16), None),
    "complex64": (
        (RNG.standard_normal((48, 512)) + 1j * RNG.standard_normal((48, 512))).astype(np.complex64),
        1e-3,
    ),
    "float64 tiny (underflow)": (RNG.standard_normal((48, 1024)) * 1e-200, 1e-3),
    "float64 huge (squares overflow)": (RNG.standard_normal((48, 1024)) * 1e200, 1e-3),
    "float32 declared loose": (WANT * 100, 0.05),
}


@pytest.mark.parametrize(("want", "declared"), EDGES.values(), ids=EDGES.keys())
@pytest.mark.parametrize("towards", ["up", "away from zero", "towards zero"])
def test_an_output_within_the_tolerance_everywhere_passes_at_its_very_edge(want, declared, towards):
    declared = {"*": Tolerance(rtol=declared, atol=declared)} if declared else {}
    tol = output_tolerance("out", str(want.dtype), declared)
    e = np.abs(as_float64(want))
    sign = {
        "up": 1.0,
        "away from zero": np.sign(as_float64(want)),
        "towards zero": -np.sign(as_float64(want)),
    }
    got = _at_the_edge(want, tol, sign[towards])
    assert compare("out", got, want, tol).passed  # within the tolerance, every element
    if towards == "up" and want.dtype.kind != "c" and np.isfinite(e).all() and e.max() < 1e100:
        moved, allowed = (as_float64(got) - as_float64(want)).sum(), (tol.atol + tol.rtol * e).sum()
        assert moved > 0.7 * allowed  # near the bound on the sum, not inside it by much
    result = _judged(want, got, declared)
    assert result.passed, _note(result)
    assert "too large to send whole" in _note(result)


@pytest.mark.parametrize("row", range(48))
def test_one_wrong_row_anywhere_fails(row):
    got = WANT.copy()
    got[row] += 0.01  # 100 times the float32 atol, in every element of the row
    result = _judged(WANT, got)
    assert not result.passed
    if row % 6:  # not a sampled row: the sums tell, and where
        assert result.outputs[0].mismatch_count == 0
        assert f"of row {row} of out: their sum differs" in _note(result), _note(result)
    else:
        assert result.outputs[0].mismatch_count == 1024


def test_one_wrong_element_anywhere_fails():
    for flat in RNG.integers(0, WANT.size, 20):
        got = WANT.copy()
        got.flat[flat] += 0.5
        assert not _judged(WANT, got).passed, flat


def test_values_in_the_wrong_places_fail_though_their_sums_agree():
    got = WANT.copy()
    got[7, [3, 4]] = got[7, [4, 3]]  # a swap within one group: same sum, same squares
    result = _judged(WANT, got)
    assert not result.passed and "weighted by position" in _note(result), _note(result)


def _with_nonfinite() -> np.ndarray:
    want = WANT.copy()
    want[5, 10], want[7, 3], want[9, 0] = np.nan, np.inf, -np.inf
    return want


@pytest.mark.parametrize(
    ("where", "value", "told"),
    [
        ((5, 11), None, "NaN or infinities are in other places"),  # the NaN moved next door
        ((11, 9), np.nan, "1 NaN where the reference has 0"),
        ((7, 3), -np.inf, "0 +inf where the reference has 1"),
        ((9, 0), 1.0, "0 -inf where the reference has 1"),
    ],
)
def test_nan_and_infinities_must_be_where_the_reference_has_them(where, value, told):
    want = _with_nonfinite()
    assert _judged(want, want.copy()).passed
    got = want.copy()
    if value is None:
        got[5, 10], got[where] = want[where], np.nan
    else:
        got[where] = value
    result = _judged(want, got)
    assert not result.passed and told in _note(result), _note(result)


INTEGERS = {
    "int32": RNG.integers(-1000, 1000, (48, 1024)).astype(np.int32),
    "uint64 near 2**64": (np.uint64(2**64 - 1) - RNG.integers(0, 10, (48, 1024)).astype(np.uint64)),
    "int64 near 2**63": (np.int64(2**63 - 1) - RNG.integers(0, 10, (48, 1024))).astype(np.int64),
    "bool": RNG.integers(0, 2, (96, 4096)).astype(bool),
    "int8": RNG.integers(-128, 128, (96, 4096)).astype(np.int8),
    "int4": RNG.integers(-8, 8, (96, 4096)).astype(ml_dtypes.int4),
}


@pytest.mark.parametrize("want", INTEGERS.values(), ids=INTEGERS.keys())
def test_integers_are_checked_exactly_over_every_element(want):
    assert _judged(want, want.copy()).passed
    changed = want.copy()
    changed[7, 5] = want[7, 6] if want[7, 5] != want[7, 6] else want[7, 4 if want[7, 4] != want[7, 5] else 8]
    result = _judged(want, changed)
    assert not result.passed and "compared exactly" in _note(result), _note(result)
    swapped = want.copy()
    i, j = next((i, i + 1) for i in range(3, 12) if want[7, i] != want[7, i + 1])
    swapped[7, [i, j]] = want[7, [j, i]]  # the same sum
    assert not _judged(want, swapped).passed


def test_integers_held_to_a_declared_tolerance_pass_within_it():
    want = INTEGERS["int32"]
    declared = {"int32": Tolerance(rtol=0.0, atol=2.0)}
    within = want + np.where(RNG.random(want.shape) < 0.5, 2, -2).astype(np.int32)
    assert compare("out", within, want, declared["int32"]).passed
    assert _judged(want, within, declared).passed
    beyond = want.copy()
    beyond[7, 5] += 1000
    assert not _judged(want, beyond, declared).passed


def test_complex_outputs_are_checked_on_both_parts():
    want = EDGES["complex64"][0]
    declared = {"*": Tolerance(rtol=1e-3, atol=1e-3)}
    got = want.copy()
    got[7, 100] += 0.5j
    result = _judged(want, got, declared)
    assert not result.passed and "imaginary parts" in _note(result), _note(result)
    got = want.copy()
    got[7, 100] = complex(want[7, 100].real, np.nan)
    result = _judged(want, got, declared)
    assert not result.passed and "1 NaN in the imaginary parts where the reference has 0" in _note(result)


def test_small_outputs_beside_a_large_one_are_sent_whole():
    small = np.arange(300, dtype=np.float32)
    sent = fit([("out[0]", WANT), ("out[1]", small), ("out[2]", np.float32(3.0))], CAP)
    assert [n for n, _ in sent] == ["out[0][::7]", "out[1]", "out[2]", arrays.SUMS_NAME]
    assert (sent[1][1] == small).all() and set(sent[-1][1][:, 0]) == {0.0}  # sums of the cut one only


# -- the table the checker receives, bounded before it is read -----------------------------------------


def _table(rows: int = 4, columns: int = arrays.SUMS_COLUMNS, dtype: str = "float64") -> arrays.ArrayBytes:
    (record,) = arrays.encode([(arrays.SUMS_NAME, np.zeros((rows, columns), dtype))])
    return record


@pytest.mark.parametrize(
    "table",
    [
        _table(dtype="float32"),
        _table(columns=arrays.SUMS_COLUMNS - 1),
        _table(rows=arrays.MAX_SUMS_ROWS + 1),
        _table(rows=0),
        dataclasses.replace(_table(), shape=(2, 2, arrays.SUMS_COLUMNS)),
    ],
    ids=["float32", "a column short", "too many groups", "no groups", "three dimensions"],
)
def test_a_table_of_sums_of_any_other_shape_is_refused_before_it_is_read(table):
    with pytest.raises(arrays.ChannelError):
        arrays.decode((table,))


def test_one_table_at_most_and_no_more_outputs_than_before():
    outputs = arrays.encode((f"out[{i}]", np.zeros(1, np.float32)) for i in range(arrays.MAX_ARRAYS))
    assert len(arrays.decode((*outputs, _table()))) == arrays.MAX_ARRAYS + 1
    with pytest.raises(arrays.ChannelError):
        arrays.decode((*outputs[1:], _table(), _table()))
    with pytest.raises(arrays.ChannelError):
        arrays.decode((*outputs, *arrays.encode([("out[64]", np.zeros(1, np.float32))])))


def _sent_table(table: np.ndarray) -> tuple[arrays.ArrayBytes, ...]:
    named = fit([("out", WANT)], CAP)
    return arrays.encode([named[0], (arrays.SUMS_NAME, table)])


def _broken(change) -> np.ndarray:
    table = fit([("out", WANT)], CAP)[-1][1].copy()
    change(table)
    return table


BROKEN = {
    "an element left out": lambda t: t.__setitem__((0, 4), t[0, 4] - 1),
    "groups of another output": lambda t: t.__setitem__((slice(None), 0), 1),
    "a count that is not a whole number": lambda t: t.__setitem__((3, digests.column(0, "nan")), 0.5),
    "a NaN for a count": lambda t: t.__setitem__((3, digests.column(0, "nan")), np.nan),
    "rows of another output": lambda t: t.__setitem__((slice(None), 1), 96),
}


@pytest.mark.parametrize("change", BROKEN.values(), ids=BROKEN.keys())
def test_the_references_table_must_describe_its_sampled_outputs(change):
    with pytest.raises(arrays.ChannelError):
        Expected.of(CaseExpected(0, 1, CASE, "in", ((1,),), _sent_table(_broken(change))))


def test_sampled_outputs_without_their_sums_are_refused():
    rows = fit([("out", WANT)], CAP)[0]
    with pytest.raises(arrays.ChannelError, match="without their sums"):
        Expected.of(CaseExpected(0, 1, CASE, "in", ((1,),), arrays.encode([rows])))


JOB = make_job("def kernel(x): ...\ndef reference(x): ...\n")
LOWERS = new_event("lowering", check=LoweringCheck(chip=JOB.chip, lowers=True, seconds=0.1))


def _result(got: tuple[arrays.ArrayBytes, ...]) -> RunResult:
    """The run's result as the checker and `classify` make it from what the kernel's process sent."""
    event = CaseExpected(0, 1, CASE, "in", ((1,),), _sent([("out", WANT)]))
    reference = checking.Reference(expected={0: Expected.of(event)}, of=1, tolerances={})
    ran = new_event(
        "case_outputs", index=0, case="c", seconds=0.1, inputs_digest="in", outputs=got, kernels=1
    )
    return classify(JOB, checking.Checker(JOB, reference).rewrite(finished(ran, LOWERS)))


def test_the_summary_says_how_a_large_output_was_checked():
    passed = _result(_sent([("out", WANT.copy())]))
    assert passed.status is RunStatus.PASSED, passed.summary
    assert "out[::6]: too large to send whole: every 6th row compared element by element" in passed.summary
    assert "all 49,152 elements by the sums of" in passed.summary
    wrong = WANT.copy()
    wrong[1] = 12345.0
    failed = _result(_sent([("out", wrong)]))
    assert failed.status is RunStatus.MISMATCH
    assert "of row 1 of out: their sum differs from the reference's by" in failed.summary, failed.summary


@pytest.mark.parametrize(
    ("table", "status"),
    [
        (None, RunStatus.ERROR),  # sampled rows alone: never judged on them only
        (np.full((4, arrays.SUMS_COLUMNS), np.nan), RunStatus.MISMATCH),
        (_broken(BROKEN["an element left out"]), RunStatus.MISMATCH),
        (_broken(lambda t: t.__setitem__((slice(None), slice(5, None)), np.nan)), RunStatus.MISMATCH),
    ],
    ids=["none", "all NaN", "other groups", "NaN sums"],
)
def test_a_kernels_table_that_is_not_the_references_is_never_a_pass(table, status):
    rows = fit([("out", WANT.copy())], CAP)[0]
    sent = arrays.encode([rows] if table is None else [rows, (arrays.SUMS_NAME, table)])
    result = _result(sent)
    assert result.status is status, result.summary
    if status is RunStatus.ERROR:
        assert "could not be checked" in result.summary and "without their sums" in result.summary
