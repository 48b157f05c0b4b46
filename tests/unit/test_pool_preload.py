"""The warm pool imports what catalog kernels import, so a job's first call does not pay for it."""

from __future__ import annotations

import ast
import contextlib
import importlib
import importlib.util
import sys
from pathlib import Path

from sandbox.jail import pool

ROOT = Path(__file__).resolve().parents[2]


def catalog_imports() -> set[str]:
    """Every module a catalog file (kernel, reference, template, wrong kernels) imports, by name."""
    found: set[str] = set()
    for path in (ROOT / "kernels_catalog").rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Import):
                found |= {alias.name for alias in node.names}
            elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
                found.add(node.module)
    return found


def test_the_pool_preloads_every_module_the_catalog_imports():
    # What `pool.preload` imports (its fork-safety check aside: this process may have a JAX backend).
    for name in pool.PRELOAD:
        importlib.import_module(name)
    for name in pool.PRELOAD_IF_PRESENT:
        with contextlib.suppress(Exception):
            importlib.import_module(name)
    missing = {
        m for m in catalog_imports() if m not in sys.modules and importlib.util.find_spec(m) is not None
    }
    assert not missing, f"the pool does not preload {sorted(missing)}: add them to PRELOAD_IF_PRESENT"
    assert (
        "jaxlib.mlir.dialects.mhlo" in pool.PRELOAD_IF_PRESENT
    )  # a kernel's first call imports it otherwise
