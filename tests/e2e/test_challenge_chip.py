"""A challenge ranks runs on one chip (issue 42, item 4): a student whose page runs another chip (the
lesson step's v5p, the challenge's v5e) is told so when they press Run, and one click runs the
challenge's chip, which then reaches the class board. Seen at 1280×720 in a class."""

from __future__ import annotations

from collections.abc import Iterator

import httpx
import pytest
from playwright.sync_api import expect

from server.app import create_app
from server.settings import Settings
from tests.api.test_class_live import REFERENCE, ClassFake
from tests.e2e.test_playground import run_and_wait
from tests.live import serving

STEPS = [{"source": "# est=30\n" + REFERENCE, "chip": "v5p", "note": "Make it fast."}]


@pytest.fixture(scope="module")
def class_server(tmp_path_factory) -> Iterator[str]:
    settings = Settings(data_dir=tmp_path_factory.mktemp("challenge"), slots=1, rate_per_minute=0)
    with serving(create_app(settings, backend=ClassFake())) as url:
        yield url


def test_a_run_off_the_challenges_chip_says_so_and_runs_it_on_that_chip(page, class_server):
    url = class_server
    lesson = httpx.post(f"{url}/api/lessons", json={"title": "Race", "steps": STEPS}).json()
    room = httpx.post(f"{url}/api/classes", json={"lesson": lesson["id"]}).json()
    teacher = {"Authorization": f"Bearer {room['teacher_token']}"}
    setup = {"kind": "challenge", "chip": "v5e"}
    assert httpx.put(f"{url}/api/classes/{room['id']}/steps/1", json=setup, headers=teacher).is_success
    page.goto(url + room["join_url"])
    page.fill("html[data-ready='1'] #join-name", "ada")
    page.click("#join-button")
    expect(page.locator("#class-board summary")).to_be_visible()  # the class's live view has come
    assert page.input_value("#chips input:checked") == "v5p", "the lesson step's chip"

    assert run_and_wait(page) == "passed"
    notice = page.locator("#challenge-chip")
    expect(notice).to_contain_text("a challenge on v5e")
    expect(notice).to_contain_text("this run is on v5p")
    board = lambda: httpx.get(f"{url}/api/classes/{room['id']}/progress", headers=teacher).json()["boards"]  # noqa: E731
    assert board()[0]["rows"] == [], "a pass on v5p does not rank"

    notice.get_by_role("button", name="Run on v5e").click()
    page.wait_for_selector("#result[data-status='passed']")
    assert page.input_value("#chips input:checked") == "v5e"
    expect(notice).to_have_count(0)
    expect(page.locator("#class-board")).to_contain_text("ada")
    assert [row["name"] for row in board()[0]["rows"]] == ["ada"]
