"""The family registry: every traced kernel falls in exactly one family, the one the if-chains it
replaced gave it, and each family's bands and validation points agree with the published data."""

from __future__ import annotations

import itertools

import pytest

from sandbox.harness.model import families
from sandbox.harness.model.families import Traits
from sandbox.protocol.chips import CHIPS
from tests.model.bands import FAMILY_OF
from tests.model.published import load

SOFTMAX, DOT = frozenset({"exp", "reduce_max"}), frozenset({"dot_general"})


def _every_traits() -> list[Traits]:
    found = []
    for form, dots, softmax, *flags in itertools.product(
        ("grid", "program", "sparse_core"), *[(False, True)] * 6
    ):
        names = frozenset({"add"}) | (DOT if dots else frozenset()) | (SOFTMAX if softmax else frozenset())
        prefetch, dynamic, quantized, remote = flags
        found.append(Traits(form, names, prefetch, dynamic, quantized, remote))  # type: ignore[arg-type]
    return found


def _as_before(t: Traits) -> str:
    """The family the if-chains gave (`families.grid_family`, `program_family`, `program.model_kernel`)
    before each family became a module of its own."""
    if t.form == "sparse_core":
        return families.SPARSE_CORE
    if t.form == "program":
        if t.remote:
            return families.COLLECTIVE
        if not t.dots:
            return families.PROGRAM
        return families.PROGRAM_SOFTMAX_LIKE if t.softmax_like else families.PROGRAM_MATMUL
    if not t.dots:
        return families.SOFTMAX_LIKE if t.softmax_like else families.ELEMENTWISE
    if t.dynamic:
        return families.QUANTIZED_GROUPED if t.quantized else families.GROUPED
    if t.prefetch:
        return families.SPARSE_ATTENTION if t.softmax_like else families.BLOCK_SPARSE
    return families.SOFTMAX_LIKE if t.softmax_like else families.MATMUL


def _name(t: Traits) -> str:
    """A test id that is the same in every process (a frozenset's order is not)."""
    flags = ("dots", "softmax_like", "prefetch", "dynamic", "quantized", "remote")
    return "-".join([t.form, *(f for f in flags if getattr(t, f))])


@pytest.mark.parametrize("traits", _every_traits(), ids=_name)
def test_every_kernel_is_of_exactly_one_family_the_one_it_was_before(traits):
    matching = [f.name for f in families.FAMILIES if f.matches(traits)]
    assert matching == [_as_before(traits)]
    assert families.classify(traits) == matching[0]


def test_every_family_is_registered_once_and_reachable():
    names = [f.name for f in families.FAMILIES]
    assert len(set(names)) == len(names) == 12
    assert {families.classify(t) for t in _every_traits()} == set(names)


def test_bands_are_of_the_families_with_published_kernels_one_per_family_and_chip():
    keys = [(b.family, b.chip) for b in families.BANDS]
    assert len(set(keys)) == len(keys)
    assert {b.family for b in families.BANDS} == {f.name for f in families.FAMILIES if f.validation_points}
    assert {b.chip for b in families.BANDS} <= set(CHIPS)
    # Listed in the registry's order of families, as the docs' table lists them.
    order = [f.name for f in families.FAMILIES]
    assert [order.index(b.family) for b in families.BANDS] == sorted(
        order.index(b.family) for b in families.BANDS
    )


def test_each_published_kernel_validates_one_family():
    assert sum(len(f.validation_points) for f in families.FAMILIES) == len(FAMILY_OF)
    assert {m.kernel for m in load()} == set(FAMILY_OF)
