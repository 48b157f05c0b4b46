"""The teacher closes a class to new students and opens it again, and lets more join from one
address, from the teacher's page (issue 41, fourth round): a student's join page then says why it
was refused."""

from __future__ import annotations

import httpx
from playwright.sync_api import expect

STEPS = [{"source": "def kernel(x):\n    return x\n", "chip": "v5e", "note": "One step."}]


def test_the_teacher_closes_and_opens_the_class_and_raises_its_share_per_address(open_page, live_server):
    url = live_server.url
    lesson = httpx.post(f"{url}/api/lessons", json={"title": "Doors", "steps": STEPS}).json()
    room = httpx.post(f"{url}/api/classes", json={"lesson": lesson["id"]}).json()
    teacher = open_page()
    teacher.goto(f"{url}{room['teacher_url']}#token={room['teacher_token']}")
    joins = teacher.locator("html[data-ready='1'] #teacher-joins")
    expect(joins.locator(".joins-state")).to_have_text("Open to new students")
    joins.locator(".joins-toggle").click()
    expect(joins.locator(".joins-state")).to_have_text("Closed to new students")

    student = open_page()
    student.allow_console("status of 403")
    student.goto(f"{url}/c/{room['code']}")
    student.fill("html[data-ready='1'] #join-name", "ada")
    student.click("#join-button")
    expect(student.locator("#join-problem")).to_contain_text("Class closed: the teacher closed this class")

    joins.locator(".joins-toggle").click()
    expect(joins.locator(".joins-state")).to_have_text("Open to new students")
    teacher.once("dialog", lambda dialog: dialog.accept("60"))
    joins.locator(".joins-per-address").click()
    expect(joins.locator(".joins-per-address")).to_have_text("60 per address")
    student.click("#join-button")
    student.wait_for_url("**/l/**")
    door = httpx.get(
        f"{url}/api/classes/{room['id']}/progress",
        headers={"Authorization": f"Bearer {room['teacher_token']}"},
    ).json()["joins"]
    assert door == {"open": True, "per_address": 60, "per_address_default": 50}
