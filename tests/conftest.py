"""Suite-wide options, services and the time per tier.

- `--runtimes` runs the tests that run kernels on every installed JAX runtime. They take many minutes
  on a two-core machine (each runtime runs the catalog and the real-kernel suite), so the everyday
  suite skips them; `.ci/run` passes `--runtimes`, and so can anyone.
- `--long` runs the long matrices: the rows of a parametrised table that take the path another row of
  it already took (more catalog entries, more kernels, more sizes, more chips). The everyday suite runs
  a few representative rows of each (`tests.matrices`) to stay within ~15 minutes on two cores;
  `.ci/run` passes `--long`, and so can anyone.
- One real Redis and one real PostgreSQL per session (started on loopback in a temporary directory
  when a test first asks; never mocks), shared by the queue, store and deployed tiers.
- The session's sandbox backend (`tests.backends`) is closed when the session ends.
"""

from __future__ import annotations

import os
from collections.abc import Iterator

import pytest

from tests.backends import close_suite_backend
from tests.scale.deployment import Process, deployed
from tests.services import RedisServer, ServiceUnavailable, postgres_server, redis_server


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption(
        "--runtimes", action="store_true", help="also run the tests marked `runtimes` (every JAX runtime)"
    )
    parser.addoption(
        "--long", action="store_true", help="also run the tests marked `long` (the long matrices)"
    )


# Each opt-in marker, and why its tests are skipped without its option.
_OPT_IN = {
    "runtimes": "runs kernels on every JAX runtime: pass --runtimes (CI does)",
    "long": "a further row of a long matrix: pass --long (CI does)",
}


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    for marker, reason in _OPT_IN.items():
        if config.getoption(f"--{marker}"):
            continue
        skip = pytest.mark.skip(reason=reason)
        for item in items:
            if marker in item.keywords:
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


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    close_suite_backend()


# -- services ---------------------------------------------------------------------------------------
def unavailable(exc: ServiceUnavailable) -> None:
    """Skip, unless CI said the services must be there (`REQUIRE_SERVICES=1` in .ci/run)."""
    if os.environ.get("REQUIRE_SERVICES") == "1":
        pytest.fail(f"{exc} (REQUIRE_SERVICES=1)")
    pytest.skip(str(exc))


@pytest.fixture(scope="session")
def redis_service(tmp_path_factory) -> Iterator[RedisServer]:
    try:
        with redis_server(tmp_path_factory.mktemp("redis")) as server:
            yield server
    except ServiceUnavailable as exc:
        unavailable(exc)


@pytest.fixture(scope="session")
def postgres_url() -> Iterator[str]:
    try:
        with postgres_server() as url:
            yield url
    except ServiceUnavailable as exc:
        unavailable(exc)


@pytest.fixture(scope="session")
def redis_pg_web(redis_service, postgres_url, tmp_path_factory) -> Iterator[Process]:
    """The multi-host deployment in processes, once per session: `python -m server` on Redis and
    PostgreSQL, its runs on a runner worker in the hardened sandbox (the deployed tier and the
    browser's main flows share it)."""
    from sandbox.backends import capability_report, default_backend_name

    if default_backend_name() != "hardened":
        pytest.skip(f"the deployed configuration needs the hardened sandbox (root): {capability_report()}")
    directory = tmp_path_factory.mktemp("redis_pg")
    with deployed("redis_pg", directory, redis_url=redis_service.url, postgres_url=postgres_url) as web:
        yield web
