"""The playground's command-line doors on a real chip: `run` in auto mode, a chip held by another
program, a kernel the compiler refuses, `tune --measure`, and the hardened backend where it cannot
start. Each job is a fresh process that opens the chip (2-11 s on the lent v5e)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from sandbox.protocol import chip_info
from tests.sandbox.test_run_both import READS_UNWRITTEN
from tests.tpu.conftest import ENTRY, KERNEL, ROOT, chip_here, cli, sandbox_command

pytestmark = pytest.mark.tpu

# The catalog's tiled matmul with 1024^3 bf16 blocks at 8192^3: its blocks count exactly 16 MiB, and
# the compiler refused it on the lent v5e ("Scoped allocation with size 18.36M and limit 16.00M",
# bench/tpu/v5e/vmem.jsonl). A scratch file without a reference: the run only has to compile.
OVER_VMEM = (
    KERNEL.read_text()
    + """

def make_inputs(seed):
    x = jax.numpy.ones((8192, 8192), jax.numpy.bfloat16)
    return x, x

def kernel(x, y):
    return matmul(x, y, bm=1024, bk=1024, bn=1024)
"""
)


def test_a_catalog_entry_runs_natively_in_auto_mode_and_says_so():
    result, stderr = cli(str(KERNEL), "--entry", ENTRY, "--chip", chip_here(), "--mode", "auto")
    assert f"mode auto: native on this machine's {chip_here()} chip (" in stderr
    assert result["status"] == "passed", result["summary"]
    assert result["mode"] == "tpu" and result["versions"]["device_kind"].startswith("TPU v")
    assert result["versions"]["libtpu"]
    timing = result["timing"]
    assert timing["simulated"] is False and timing["device_seconds"] > 0
    assert timing["case"] == result["cases"][-1]["name"]  # the TPU-size case is the one timed


def test_a_kernel_over_the_scoped_vmem_limit_is_explained(tmp_path):
    source = tmp_path / "big.py"
    source.write_text(OVER_VMEM)
    result, _ = cli(str(source), "--chip", chip_here(), "--mode", "tpu")
    # The simulator's verdict on the same kernel (tests/unit/test_vmem_verdicts.py): rejected.
    assert result["status"] == "rejected", json.dumps(result)[:3000]
    assert result["error"]["type"] == "VmemLimitExceeded"
    assert "E1001" in result["error"]["message"] and "MiB of scoped VMEM" in result["error"]["message"]


def test_a_run_waits_for_a_chip_another_program_holds(tmp_path):
    holder = subprocess.Popen(
        [sys.executable, "-c", "import jax, time; jax.devices(); print('held', flush=True); time.sleep(12)"],
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "held"
        started = time.monotonic()
        result, _ = cli(str(KERNEL), "--entry", ENTRY, "--chip", chip_here(), "--mode", "tpu")
        assert result["status"] == "passed", result["summary"]
        assert time.monotonic() - started > 4  # it waited for the holder to let go
    finally:
        holder.kill()
        holder.wait()


def test_tune_times_each_config_on_the_chip_and_records_it(tmp_path):
    record = tmp_path / "tune.jsonl"
    done = sandbox_command(
        "tune", str(KERNEL), "--entry", ENTRY, "--chip", chip_here(), "--measure", "--record", str(record),
        "--size", "m=2048,k=2048,n=2048", "--param", "bm=256,512", "--param", "bk=512", "--param", "bn=512",
        "--bind", "bm=m,bk=k,bn=n", "--json",
    )  # fmt: skip
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    out = json.loads(done.stdout)
    configs = out["configs"]
    assert len(configs) == 2 and all(c["measured_seconds"] > 0 for c in configs)
    # XLA's own op (the entry's jnp.dot reference) timed once on the chip, beside every config: no
    # faster than the chip's peak allows for 2 * 2048^3 flops, and said in the verdict's line.
    xla = {c["xla_measured_seconds"] for c in configs}
    assert len(xla) == 1 and 2 * 2048**3 / chip_info(chip_here()).bf16_flops < xla.pop() < 2e-3
    assert "XLA's own op measured at" in out["summary"], out["summary"]
    rows = [json.loads(line) for line in record.read_text().splitlines()]
    assert len(rows) == 2 and {r["params"]["bm"] for r in rows} == {256, 512}
    for row in rows:
        assert row["measured_device_seconds"] > 0 and row["device"].startswith("TPU v")
        assert row["libtpu"] and row["jax"] and row["commit"] and row["estimated_seconds"] > 0
        assert row["xla_measured_device_seconds"] > 0 and row["xla_estimated_seconds"] > 0


def test_the_hardened_backend_says_why_it_cannot_start_without_root():
    if os.geteuid() == 0:
        pytest.skip(
            "this VM runs commands as root: the hardened backend's chip checklist applies (docs/tpu-vm.md)"
        )
    done = sandbox_command(
        "run", str(KERNEL), "--entry", ENTRY, "--chip", chip_here(), "--mode", "tpu", "--backend", "hardened"
    )
    assert done.returncode == 2 and "Traceback" not in done.stderr, done.stderr[-3000:]
    last = done.stderr.strip().splitlines()[-1]
    assert last.startswith("error: the hardened backend cannot start on this machine: "), last
    assert "not root" in last


def keep(name: str, result: dict) -> None:
    """What a test saw, for the evidence folder of `bench/tpu/on-chip.sh` (PLAYGROUND_TIER_OUT)."""
    folder = os.environ.get("PLAYGROUND_TIER_OUT")
    if folder:
        Path(folder, f"{name}.json").write_text(json.dumps(result, indent=1))


def test_a_run_in_both_modes_gives_the_chips_and_the_simulators_verdicts_side_by_side():
    result, _ = cli(str(KERNEL), "--entry", ENTRY, "--chip", chip_here(), "--mode", "both")
    keep("both-catalog", result)
    assert result["status"] == "passed" and result["mode"] == "tpu", result["summary"]
    both = result["both"]
    assert both["agree"] and both["chip_status"] == both["simulated_status"] == "passed", both
    # The TPU-size case runs on the chip only; the simulator runs the rest.
    assert 0 < len(both["cases"]) < len(result["cases"]) and "ran on the chip only" in both["largest"], both
    # bf16 on both sides: the same products, f32 sums in another order at most.
    assert all(o["passed"] for case in both["cases"] for o in case["outputs"]), both["largest"]
    assert both["measured_seconds"] > 0 and both["timed_case"] == result["timing"]["case"]


def test_both_modes_show_where_the_chip_and_the_simulator_part(tmp_path):
    """A kernel that reads VMEM it never wrote: NaN in the simulator (its fill), whatever the chip's
    memory held there. Kept as evidence of what the chip does; the verdicts are each side's own."""
    source = tmp_path / "unwritten.py"
    source.write_text(READS_UNWRITTEN)
    result, _ = cli(str(source), "--chip", chip_here(), "--mode", "both")
    keep("both-unwritten", result)
    both = result["both"]
    assert both["simulated_status"] == "mismatch" and both["chip_status"] == result["status"], both
    assert len(both["cases"]) == 1 and both["largest"], both


def test_the_simulator_on_a_tpu_vm_compiles_with_libtpu_as_a_cpu_host_does(tmp_path):
    """An interpret-mode run on the TPU VM (a job off the chip slots, JAX on the CPU): libtpu compiles
    the kernel for the chip without opening it, beside whatever holds the chips, and refuses the
    over-VMEM kernel with the E1001 figures a CPU host gets (tests/sandbox/test_lowering.py)."""
    from tests.sandbox.test_lowering import BIG_BLOCKS

    result, _ = cli(str(KERNEL), "--entry", ENTRY, "--chip", chip_here(), "--mode", "interpret")
    keep("interpret-compiled", result)
    assert result["lowering"]["compiled"] is True, result["lowering"]
    assert result["lowering"]["compiler"].startswith(f"libtpu 0.0.50.1, for a {chip_info(chip_here()).title}")
    source = tmp_path / "over.py"
    source.write_text(BIG_BLOCKS)
    result, _ = cli(str(source), "--chip", chip_here(), "--mode", "interpret")
    assert result["lowering"]["compiled"] is False and result["status"] == "rejected", result["summary"]
    assert "needs 64.00 MiB of scoped VMEM, over the limit of 16.00 MiB" in result["summary"], result[
        "summary"
    ]


def test_xla_attention_is_costed_by_the_chips_own_compiler_as_off_the_chip():
    """XLA's own attention beside a flash-attention kernel: a native job on the chip costs it with
    libtpu's cost analysis of the program it compiles there, as a job off the chip slots does with the
    compile-only client (`offline.cost_seconds`), and both give the same figure (one libtpu)."""
    flash = str(ROOT / "bench" / "tpu" / "sweeps" / "flash.py")
    native, _ = cli(flash, "--chip", chip_here(), "--mode", "tpu")
    simulated, _ = cli(flash, "--chip", chip_here(), "--mode", "interpret")
    keep("xla-costed-native", native)
    for result in (native, simulated):
        assert result["status"] == "passed", result["summary"]
        estimate = result["estimate"]
        assert estimate["xla_validation"].startswith(
            "XLA's reductions, gathers or ragged dots, costed by libtpu"
        )
    assert native["estimate"]["xla_seconds"] == pytest.approx(simulated["estimate"]["xla_seconds"], rel=0.01)
