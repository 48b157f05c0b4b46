"""Real browser against a real server: plain fixtures (no pytest-playwright).

- `live_server` (session): the real app (`create_app`, real kernel runs on the session's sandbox
  backend, `tests.backends`) served by uvicorn in a thread on 127.0.0.1, on a socket bound to port
  0 first (no port race).
- `redis_pg_server` (session): the same page served by `python -m server` on Redis and PostgreSQL
  with a runner worker; `any_server` gives a main flow both (#28: features work as deployed). The
  second row repeats the flow on another deployment, so it is `long` (`--long`; CI passes it) but for
  the page's run flow, which takes both every time (it parametrizes `any_server` itself);
  `tests/deployed` runs each capability on both deployments through the API every time.
- `browser` (session): Debian's Chromium driven by Playwright. Skipped with a reason when either
  is missing; a failure instead when REQUIRE_BROWSER=1 (CI must not pass by skipping).
- `page` (per test): a fresh context (own storage, so its own client id) at 1280×720. Page errors
  and console errors are collected and fail the test at teardown, except the ones a test expects
  (`page.allow_console("status of 413")`).
"""

from __future__ import annotations

import os
import shutil
import typing
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from fastapi import FastAPI

from server.app import create_app
from server.settings import Settings
from tests.backends import SLOTS, suite_backend
from tests.live import serving
from tests.matrices import LONG

CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-dev-shm-usage",
    "--disable-quic",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
    "--no-default-browser-check",
]
VIEWPORT = {"width": 1280, "height": 720}


@dataclass
class LiveServer:
    url: str
    app: FastAPI
    settings: Settings


def chromium_path() -> str | None:
    for candidate in (os.environ.get("CHROMIUM_PATH"), "/usr/bin/chromium", shutil.which("chromium")):
        if candidate and Path(candidate).exists():
            return candidate
    return None


def missing(reason: str) -> None:
    if os.environ.get("REQUIRE_BROWSER") == "1":
        pytest.fail(f"{reason} (REQUIRE_BROWSER=1)", pytrace=False)
    pytest.skip(reason)


@pytest.fixture(scope="session")
def live_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LiveServer]:
    settings = Settings(
        data_dir=tmp_path_factory.mktemp("data"),
        slots=SLOTS,
        timing_budget_seconds=0.3,  # frugal: the machine is shared; timings are not under test here
    )
    # The session's backend (the hardened warm pool as deployed, where the machine allows).
    app = create_app(settings, backend=suite_backend())
    with serving(app) as url:
        yield LiveServer(url, app, settings)


@pytest.fixture(scope="session")
def redis_pg_server(redis_pg_web) -> LiveServer:
    """The page as deployed on several hosts (`tests/conftest.py`, `redis_pg_web`)."""
    return LiveServer(redis_pg_web.url, None, None)  # type: ignore[arg-type]


@pytest.fixture(params=["live_server", pytest.param("redis_pg_server", marks=LONG)])
def any_server(request) -> LiveServer:
    """For the main flows: once on the session's server (the hardened sandbox as root), and with
    `--long` once more as deployed on several hosts (Redis, a worker, PostgreSQL)."""
    return request.getfixturevalue(request.param)


@pytest.fixture(scope="session")
def browser():
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        missing("playwright is not installed (pip install -e '.[test]')")
    executable = chromium_path()
    if executable is None:
        missing("Chromium not installed (apt-get install chromium) and CHROMIUM_PATH not set")
    with sync_playwright() as playwright:
        chromium = playwright.chromium.launch(executable_path=executable, headless=True, args=CHROMIUM_ARGS)
        yield chromium
        chromium.close()


def new_page(browser, **context_options):
    """A page in a fresh context that records page errors and console errors."""
    context = browser.new_context(**{"viewport": VIEWPORT, **context_options})
    page = context.new_page()
    page.js_errors = []
    page.allowed_console = []
    page.on("pageerror", lambda error: page.js_errors.append(f"pageerror: {error}"))
    page.on("console", lambda msg: msg.type == "error" and page.js_errors.append(f"console: {msg.text}"))
    page.allow_console = page.allowed_console.append
    return page


def unexpected_errors(page) -> list[str]:
    return [e for e in page.js_errors if not any(allowed in e for allowed in page.allowed_console)]


@pytest.fixture
def page(browser) -> Iterator:
    page = new_page(browser)
    yield page
    errors = unexpected_errors(page)
    page.context.close()
    assert not errors, f"errors in the page: {errors}"


@pytest.fixture
def open_page(browser):
    """Pages in further fresh contexts (another browser, as far as the server can tell)."""
    pages = []

    def make(**options):
        pages.append(new_page(browser, **options))
        return pages[-1]

    yield make
    errors = [e for p in pages for e in unexpected_errors(p)]
    for p in pages:
        p.context.close()
    assert not errors, f"errors in the page: {errors}"


@pytest.fixture(scope="module")
def js(browser, live_server):
    """`js(module, body, arg)`: run `body` (JS, with `m` the imported module and `arg`) in the page."""
    page = new_page(browser)
    page.goto(live_server.url + "/")
    page.wait_for_selector("html[data-ready='1']")

    def run(module: str, body: str, arg: object = None) -> typing.Any:
        return page.evaluate(
            f"async (arg) => {{ const m = await import('/static/js/{module}'); {body} }}", arg
        )

    yield run
    errors = unexpected_errors(page)
    page.context.close()
    assert not errors, f"errors in the page: {errors}"


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    here = Path(__file__).parent
    for item in items:
        if Path(str(item.fspath)).parent == here and "browser" in getattr(item, "fixturenames", ()):
            item.add_marker(pytest.mark.e2e)
