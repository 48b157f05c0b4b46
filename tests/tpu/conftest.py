"""The chip tier: tests that need a real TPU (marker `tpu`), run on a TPU VM with `pytest -m tpu
tests/tpu -n 0` (one process: one program at a time may hold a chip). Elsewhere every test here
skips with the reason; CI has no TPU. docs/tpu-vm.md says how they were run on the lent v5e.

Files run in name order: the doors first (`test_on_chip`, `test_web_on_chip`), then the kernels that
fail on the chip (`test_when_kernels_fail_on_chip`), each followed by a run that must pass."""

from __future__ import annotations

import functools
import json
import subprocess
import sys
from pathlib import Path

import pytest

from sandbox.host.tpuhost import TpuHostError, discover

ROOT = Path(__file__).resolve().parents[2]
ENTRY = "tiled_matmul_pallas_call"
KERNEL = ROOT / "kernels_catalog" / ENTRY / "kernel.py"


@functools.cache
def chip_here() -> str:
    """This machine's chip ('' without a usable one)."""
    try:
        host = discover()
    except TpuHostError:
        return ""
    return host.generation.chip if host is not None else ""


def sandbox_command(*args: str, timeout: float = 300) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "sandbox", *args], cwd=ROOT, capture_output=True, text=True, timeout=timeout
    )


def cli(*args: str, timeout: float = 300) -> tuple[dict, str]:
    """`python -m sandbox run ARGS --backend local --json`: the result and what it said on stderr."""
    done = sandbox_command("run", *args, "--backend", "local", "--json", timeout=timeout)
    return json.loads(done.stdout), done.stderr


def assert_the_chip_runs_the_catalog_matmul() -> None:
    """The run every failure test ends with: the next user's run on the same chip passes."""
    result, _ = cli(str(KERNEL), "--entry", ENTRY, "--chip", chip_here(), "--mode", "tpu")
    assert result["status"] == "passed", result["summary"]


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    if chip_here():
        return
    skip = pytest.mark.skip(reason="needs a TPU chip: `python -m sandbox tpu` finds none on this machine")
    for item in items:
        if "tpu" in item.keywords:
            item.add_marker(skip)
