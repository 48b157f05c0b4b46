"""The adapter's version table (`sandbox.harness.jaxapi.versions`) names exactly the runtimes the
playground installs, and pins its hooks to the JAX the project itself depends on."""

import re
from pathlib import Path

import pytest

from sandbox.harness.jaxapi.versions import PINNED, SUPPORTED, not_available, pinned, support

ROOT = Path(__file__).resolve().parents[2]


def test_the_table_has_a_row_for_every_runtime_and_no_other():
    runtimes = sorted(p.stem for p in (ROOT / "runtimes").glob("*.txt"))
    assert sorted(row.version for row in SUPPORTED) == runtimes


def test_the_hooks_are_pinned_to_the_projects_own_jax():
    pin = re.search(r'"jax(?:\[tpu\])?==([\d.]+)"', (ROOT / "pyproject.toml").read_text())
    assert pin and pin.group(1) == PINNED
    assert [row.version for row in SUPPORTED if row.internals] == [PINNED]
    assert not support(PINNED).prints_races  # 0.12 reports races as log records itself (`on_race`)


@pytest.mark.parametrize("version", ["0.10.2", "0.11.2"])
def test_the_older_runtimes_get_the_bridges_and_not_the_hooks(version: str):
    row = support(version)
    assert not row.internals and row.prints_races and row.chip_arithmetic


def test_an_unknown_version_gets_none_of_the_pinned_hooks():
    row = support("0.13.0")
    assert row.version == "0.13.0" and not row.internals
    assert pinned("0.13.0", "kernel trace") == not_available(
        "0.13.0", "the playground's kernel trace hooks are written for jax 0.12.0.1's internals"
    )
    assert pinned(PINNED, "kernel trace") == ""
