"""Long matrices: a parametrised table whose rows take one path again and again (catalog entries,
kernels, sizes, chips) runs a few representative rows by default and the rest with `--long`.

`split` marks all but the kept rows `long` (`tests/conftest.py` skips those unless `--long`; CI passes
it); a module fixture that runs every row's job up front asks `running` which rows this session runs,
so a skipped row costs no job.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Iterable
from typing import Any

import pytest

LONG = pytest.mark.long


def split(rows: Iterable[Any], kept: Collection[str], id: Callable[[Any], str]) -> list[Any]:
    """`rows` as test parameters (`pytest.param`) named by `id`, every one but the `kept` ids marked `long`."""
    params = [pytest.param(row, id=id(row), marks=() if id(row) in kept else LONG) for row in rows]
    unknown = set(kept) - {p.id for p in params}
    assert not unknown, f"kept rows that are not in the table: {sorted(unknown)}"
    return params


def running(params: Iterable[Any], config: pytest.Config) -> list[Any]:
    """The rows of `params` this session runs: all of them with `--long`, else those not marked `long`."""
    every = config.getoption("--long")
    return [p.values[0] for p in params if every or not any(m.name == LONG.name for m in p.marks)]
