"""Every error path answers with the one problem+json shape and a precise 4xx, never a 500."""

import pytest

BIG = "x" * (64 * 1024 + 1)

CASES = [
    (
        "bad JSON",
        "post",
        "/api/runs",
        {"content": b"{bad", "headers": {"content-type": "application/json"}},
        400,
        "not valid JSON",
    ),
    ("missing source", "post", "/api/runs", {"json": {}}, 422, "source"),
    ("unknown chip", "post", "/api/runs", {"json": {"source": "x", "chip": "v9"}}, 422, "chip"),
    ("unknown mode", "post", "/api/runs", {"json": {"source": "x", "mode": "gpu"}}, 422, "mode"),
    ("unknown field", "post", "/api/runs", {"json": {"source": "x", "evil": 1}}, 422, "evil"),
    (
        "unknown option",
        "post",
        "/api/runs",
        {"json": {"source": "x", "options": {"turbo": True}}},
        422,
        "turbo",
    ),
    ("unknown entry", "post", "/api/runs", {"json": {"source": "x", "entry": "nope"}}, 422, "'nope'"),
    ("source too large", "post", "/api/runs", {"json": {"source": BIG}}, 413, "65,537 bytes"),
    ("no TPU here", "post", "/api/runs", {"json": {"source": "x", "mode": "tpu"}}, 422, "no TPU"),
    ("unknown run", "get", "/api/runs/nope", {}, 404, "nope"),
    ("unknown run events", "get", "/api/runs/nope/events", {}, 404, "nope"),
    ("cancel unknown run", "delete", "/api/runs/nope", {}, 404, "nope"),
    ("unknown catalog entry", "get", "/api/catalog/nope", {}, 404, "nope"),
    ("unknown path", "get", "/api/nothing-here", {}, 404, ""),
    ("wrong method", "put", "/api/health", {}, 405, ""),
    (
        "share: unknown entry",
        "post",
        "/api/shares",
        {"json": {"source": "x", "entry": "nope"}},
        422,
        "'nope'",
    ),
    ("share: source too large", "post", "/api/shares", {"json": {"source": BIG}}, 413, "65,537 bytes"),
    ("unknown share", "get", "/api/shares/nope", {}, 404, "nope"),
    ("lesson: no title", "post", "/api/lessons", {"json": {"steps": [{"source": "x"}]}}, 422, "title"),
    (
        "lesson: long title",
        "post",
        "/api/lessons",
        {"json": {"title": "t" * 201, "steps": [{"source": "x"}]}},
        422,
        "at most 200",
    ),
    ("lesson: no steps", "post", "/api/lessons", {"json": {"title": "t", "steps": []}}, 422, "at least 1"),
    (
        "lesson: 31 steps",
        "post",
        "/api/lessons",
        {"json": {"title": "t", "steps": [{"source": "x"}] * 31}},
        422,
        "at most 30",
    ),
    (
        "lesson: share and source",
        "post",
        "/api/lessons",
        {"json": {"title": "t", "steps": [{"share": "AAAAAAAAAAA", "source": "x"}]}},
        422,
        "not both",
    ),
    (
        "lesson: empty step",
        "post",
        "/api/lessons",
        {"json": {"title": "t", "steps": [{"note": "n"}]}},
        422,
        "needs `source`",
    ),
    (
        "lesson: unknown step field",
        "post",
        "/api/lessons",
        {"json": {"title": "t", "steps": [{"source": "x", "evil": 1}]}},
        422,
        "evil",
    ),
    ("unknown lesson", "get", "/api/lessons/nope", {}, 404, "nope"),
]


@pytest.mark.parametrize(
    ("name", "method", "path", "kwargs", "status", "phrase"), CASES, ids=[c[0] for c in CASES]
)
def test_error_paths_return_problem_details(client, name, method, path, kwargs, status, phrase):
    response = getattr(client, method)(path, **kwargs)
    assert response.status_code == status
    assert response.headers["content-type"] == "application/problem+json"
    body = response.json()
    assert set(body) >= {"type", "title", "status", "detail"}
    assert body["status"] == status and body["title"]
    assert phrase in body["detail"] or any(phrase in e["field"] for e in body.get("errors", []))


def test_lone_surrogates_are_a_422_everywhere_text_enters(client):
    for path, body in [
        ("/api/runs", '{"source": "x = \\"\\ud800\\""}'),
        ("/api/shares", '{"source": "ok", "chip": "v5p", "options": {"\\udc80": true}}'),
        ("/api/lessons", '{"title": "\\ud800", "steps": [{"source": "x"}]}'),
    ]:
        response = client.post(path, content=body, headers={"content-type": "application/json"})
        assert response.status_code == 422, (path, response.text)
        assert response.headers["content-type"] == "application/problem+json"
        assert "not valid Unicode text" in response.json()["detail"]


def test_a_body_over_the_limit_is_refused_before_it_is_read(backend, tmp_path):
    from tests.api.conftest import make_client

    with make_client(backend, tmp_path, body_bytes=1000) as client:
        declared = client.post("/api/runs", content=b"x" * 5000, headers={"content-type": "application/json"})
        assert declared.status_code == 413 and declared.json()["title"] == "Request too large"

        def chunks():  # no Content-Length: counted as it streams
            for _ in range(10):
                yield b" " * 500

        streamed = client.post("/api/runs", content=chunks(), headers={"content-type": "application/json"})
        assert streamed.status_code == 413
        assert streamed.headers["content-type"] == "application/problem+json"


def test_a_native_run_on_a_chip_the_host_lacks_is_refused(backend, tmp_path):
    from tests.api.conftest import make_client

    with make_client(backend, tmp_path, tpu="v6e") as client:
        refused = client.post("/api/runs", json={"source": "x", "mode": "tpu", "chip": "v5e"})
        accepted = client.post("/api/runs", json={"source": "x", "mode": "tpu", "chip": "v6e"})
        version = client.get("/api/version").json()
    backend.release.set()
    assert refused.status_code == 422 and refused.headers["content-type"] == "application/problem+json"
    assert refused.json()["detail"] == (
        "this server's TPU is a v6e, not a v5e: choose v6e to run natively, or mode 'interpret' to "
        "simulate a v5e"
    )
    assert accepted.status_code == 201
    assert version["device_kind"] == "TPU v6e (Trillium) (native)" and version["mode"] == "tpu"
