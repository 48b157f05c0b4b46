"""The MCP server as deployed: a live server on the hardened sandbox (root), driven by the official
SDK's MCP client. A catalog solution runs to `passed` (through `lower_kernel`: the same run, with the
compiler's verdict and Mosaic IR for its chip), checked against the entry's reference; a broken
kernel comes back from `run_kernel` as `error` with the translator's message in the kernel's own
names and line. Both calls run at once, on the server's two slots."""

from __future__ import annotations

from pathlib import Path

import anyio
import pytest

from sandbox.backends import capability_report, default_backend_name
from sandbox.catalog.entries import load_catalog
from server.app import create_app
from server.settings import Settings
from tests.backends import hardened_suite_backend
from tests.live import serving
from tests.mcp_session import Called, call, run_apart, session

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(
        default_backend_name() != "hardened",
        reason=f"the hardened backend cannot run here (needs root and scripts/install-job-runtime): "
        f"{capability_report()}",
    ),
]
BROKEN = (Path(__file__).parent / "broken" / "index_map_wrong_arity.py").read_text()


def test_mcp_runs_a_catalog_solution_to_passed_and_translates_a_broken_kernels_error(tmp_path):
    solution = load_catalog().get("tiled_matmul").solution_source
    # A generous wall clock: the machine is shared (at load 25 a first case took 19 s here).
    settings = Settings(data_dir=tmp_path, slots=2, timing_budget_seconds=0.2, wall_seconds=300)
    results: dict[str, Called] = {}
    with serving(create_app(settings, backend=hardened_suite_backend()), start_seconds=120) as url:

        async def one(name: str, tool: str, arguments: dict) -> None:
            async with session(url) as client:
                results[name] = await call(client, tool, arguments)

        async def main() -> None:
            solved = {"source": solution, "entry": "tiled_matmul", "chip": "v5e", "lower_chips": ["v5e"]}
            async with anyio.create_task_group() as group:
                group.start_soon(one, "solution", "lower_kernel", solved)
                group.start_soon(one, "broken", "run_kernel", {"source": BROKEN, "chip": "v5e"})

        run_apart(main)
    passed, broken = results["solution"], results["broken"]
    assert not passed.is_error and passed.structured["status"] == "passed", passed.text
    (lowered,) = passed.structured["chips"]
    assert lowered["chip"] == "v5e" and lowered["lowers"] is True and "tpu." in lowered["mosaic"]
    assert "verdict: checked against the catalog entry's reference" in passed.text
    assert "estimated on a TPU v5e" in passed.text
    assert any("passed" in (m or "") for _, _, m in passed.progress)
    assert broken.structured["status"] == "error"
    error = broken.structured["error"]
    assert "the index map for `o_ref` (output 1, f32[256, 256]) takes 2 arguments" in error["message"]
    assert error["line"] == 39 and "fix the error" in broken.structured["next_step"]
    assert "site-packages" not in broken.text and "jax/_src" not in broken.text
