"""The chip tier: tests that need a real TPU (marker `tpu`), run on a TPU VM with `pytest -m tpu
tests/tpu -n 0` (one process: one program at a time may hold a chip). Elsewhere every test here
skips with the reason; CI has no TPU. docs/tpu-vm.md says how they were run on the lent v5e."""

from __future__ import annotations

import functools

import pytest

from sandbox.host.tpuhost import TpuHostError, discover


@functools.cache
def chip_here() -> str:
    """This machine's chip ('' without a usable one)."""
    try:
        host = discover()
    except TpuHostError:
        return ""
    return host.generation.chip if host is not None else ""


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    if chip_here():
        return
    skip = pytest.mark.skip(reason="needs a TPU chip: `python -m sandbox tpu` finds none on this machine")
    for item in items:
        if "tpu" in item.keywords:
            item.add_marker(skip)
