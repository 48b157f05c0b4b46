"""A share's notebook made on an older JAX runtime runs on that runtime's own Python (its install cell
finds the pinned JAX and skips) and passes in interpret mode: the notebook's set-up cell uses only
what every installed runtime has."""

from __future__ import annotations

import pytest

from sandbox.catalog.entries import load_catalog
from sandbox.host.runtimes import RuntimeSet
from sandbox.protocol import to_json_dict
from server.notebook.build import SharedKernel, code_cells, notebook
from tests.sandbox.test_notebook import run_program

pytestmark = [pytest.mark.runtimes, pytest.mark.slow]
# Passes as written on every runtime (kernels_catalog/runtimes.toml); tiled_matmul_pallas_call's one-block
# case is all NaN on 0.11.2 (JAX's trace cache), and the notebook says mismatch there too.
ENTRY = load_catalog().get("hbm_manual_dma")


@pytest.mark.parametrize("name", ["0.10.2", "0.11.2"])
def test_a_notebook_made_on_an_older_runtime_passes_there(runtimes: RuntimeSet, name, tmp_path):
    runtime = runtimes.get(name)
    assert runtime is not None
    shared = SharedKernel(
        "s", "http://x/s/s", ENTRY.solution_source, ENTRY, "v5e", to_json_dict(ENTRY.options), name, 1
    )
    out = run_program("\n\n".join(code_cells(notebook(shared))), tmp_path, str(runtime.python))
    assert f"jax {name} is installed; nothing to install" in out and "verdict: passed" in out
    assert f'"jax":"{name}"' in out.strip().splitlines()[-1]
