"""Pages: `/l/{id}` opens the playground; `/embed/{id}` is a framable widget; who may frame what."""

import re

import pytest
from pydantic import ValidationError

from server.routes.pages import ASSET_PREFIX, STATIC_DIR
from server.settings import Settings
from tests.api.conftest import make_client

SHARE = {"source": "def matmul(x, y):\n    return x @ y\n", "entry": "tiled_matmul", "chip": "v6e"}


def frame_ancestors(response) -> str:
    found = re.search(r"frame-ancestors ([^;]+)", response.headers["content-security-policy"])
    assert found, response.headers["content-security-policy"]
    return found.group(1)


@pytest.fixture
def ids(client) -> dict[str, str]:
    share_id = client.post("/api/shares", json=SHARE).json()["id"]
    lesson_id = client.post("/api/lessons", json={"title": "T", "steps": [{"share": share_id}]}).json()["id"]
    return {"share": share_id, "lesson": lesson_id}


def test_playground_pages_refuse_every_frame(client, ids):
    for path in ("/", f"/s/{ids['share']}", f"/l/{ids['lesson']}", "/l/nope"):
        response = client.get(path)
        assert frame_ancestors(response) == "'none'", path
        assert response.headers["x-frame-options"] == "DENY", path
        assert f"{ASSET_PREFIX}/js/app.js" in response.text, path


def test_lesson_page_is_the_playground_with_an_honest_status(client, ids):
    found, missing = client.get(f"/l/{ids['lesson']}"), client.get("/l/AAAAAAAAAAA")
    assert found.status_code == 200 and missing.status_code == 404
    assert found.text == missing.text == client.get("/").text
    assert client.head(f"/l/{ids['lesson']}").status_code == 200


def test_lesson_embed_page_is_the_widget_with_the_embed_policy(backend, tmp_path):
    with make_client(backend, tmp_path, embed_origins="https://course.example.edu") as client:
        lesson = client.post("/api/lessons", json={"title": "T", "steps": [{"source": "x = 1\n"}]}).json()
        found, missing = client.get(f"/embed/l/{lesson['id']}"), client.get("/embed/l/AAAAAAAAAAA")
        assert found.status_code == 200 and missing.status_code == 404
        assert found.text == client.get("/embed/AAAAAAAAAAA").text
        assert frame_ancestors(found) == "https://course.example.edu"
        assert "x-frame-options" not in found.headers


def test_embed_page_may_be_framed_anywhere_by_default(client, ids):
    response = client.get(f"/embed/{ids['share']}")
    assert response.status_code == 200 and response.headers["content-type"].startswith("text/html")
    assert frame_ancestors(response) == "*"
    assert "x-frame-options" not in response.headers
    assert f"{ASSET_PREFIX}/js/embed.js" in response.text and "/js/app.js" not in response.text
    assert 'id="run"' in response.text and 'id="open-in-playground"' in response.text
    assert "script-src 'self'" in response.headers["content-security-policy"]


def test_embed_page_for_an_unknown_share_is_still_the_widget_with_404(client):
    response = client.get("/embed/nope")
    assert response.status_code == 404 and f"{ASSET_PREFIX}/js/embed.js" in response.text
    assert frame_ancestors(response) == "*"


def test_embed_origins_setting_names_who_may_frame(backend, tmp_path):
    origins = "https://course.example.edu   https://*.example.org:8443"
    with make_client(backend, tmp_path, embed_origins=origins) as client:
        share_id = client.post("/api/shares", json=SHARE).json()["id"]
        embed = client.get(f"/embed/{share_id}")
        assert frame_ancestors(embed) == "https://course.example.edu https://*.example.org:8443"
        assert frame_ancestors(client.get(f"/s/{share_id}")) == "'none'"


@pytest.mark.parametrize(
    "origins",
    [
        "",
        "https://a.example; script-src *",
        "https://a.example/course",
        "'none' https://a.example",
        "javascript:",
    ],
)
def test_embed_origins_setting_refuses_what_is_not_an_origin(origins):
    with pytest.raises(ValidationError, match="embed_origins"):
        Settings(embed_origins=origins)


def test_embed_page_assets_are_served(client):
    html = (STATIC_DIR / "embed.html").read_text()
    assets = re.findall(r'(?:src|href)="(/static/[^"]+)"', html)
    assert {"/static/js/embed.js", "/static/css/embed.css"} <= set(assets)
    for asset in assets:
        assert client.get(asset).status_code == 200, asset


def test_embed_script_talks_to_the_server_only_through_api_js():
    script = (STATIC_DIR / "js" / "embed.js").read_text()
    assert 'from "./api.js"' in script
    assert not re.search(r"\bfetch\(|\bEventSource\b|XMLHttpRequest", script)
    for module in re.findall(r'from "(\./[^"]+|\.\./[^"]+)"', script):
        assert (STATIC_DIR / "js" / module).resolve().is_file(), module
