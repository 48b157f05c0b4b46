"""Suite-wide options: `--runtimes` runs the tests that run kernels on every installed JAX runtime.

They take many minutes on a two-core machine (each runtime runs the catalog and the real-kernel
suite), so the everyday suite skips them; `.ci/run` passes `--runtimes`, and so can anyone.
"""

from __future__ import annotations

import pytest


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption(
        "--runtimes", action="store_true", help="also run the tests marked `runtimes` (every JAX runtime)"
    )


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    if config.getoption("--runtimes"):
        return
    skip = pytest.mark.skip(reason="runs kernels on every JAX runtime: pass --runtimes (CI does)")
    for item in items:
        if "runtimes" in item.keywords:
            item.add_marker(skip)
