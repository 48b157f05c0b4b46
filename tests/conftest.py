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


# -- time per tier ---------------------------------------------------------------------------------
# The suite must stay within ~15 minutes on a 2-core machine: the summary says where the time goes,
# per tier (the folders of tests/), setup and teardown included (module fixtures run real jobs).
_TIER_SECONDS: dict[str, float] = {}
_TIER_TESTS: dict[str, int] = {}


def pytest_runtest_logreport(report: pytest.TestReport) -> None:
    parts = report.nodeid.split("/")
    tier = parts[1] if len(parts) > 2 and parts[0] == "tests" else "other"
    _TIER_SECONDS[tier] = _TIER_SECONDS.get(tier, 0.0) + report.duration
    if report.when == "call":
        _TIER_TESTS[tier] = _TIER_TESTS.get(tier, 0) + 1


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    if not _TIER_SECONDS:
        return
    rows = sorted(_TIER_SECONDS.items(), key=lambda item: -item[1])
    terminalreporter.write_sep("-", "time per tier (setup + call + teardown)")
    for tier, seconds in rows:
        terminalreporter.write_line(f"{tier:10} {_TIER_TESTS.get(tier, 0):5} tests {seconds:8.1f} s")
