import re

import pytest


def test_health_reports_queue(client):
    body = client.get("/api/health").json()
    assert body["status"] == "ok" and body["problems"] == []
    assert (body["queued"], body["running"], body["slots"], body["slots_alive"]) == (0, 0, 1, 1)
    assert body["sandbox"] == {
        "backend": "fake",
        "ok": True,
        "detail": "fake",
        "restarts": 0,
        "quarantined_slots": 0,
    }


def test_version_names_the_pinned_jax_and_backend(client):
    body = client.get("/api/version").json()
    assert body["jax"] == "0.12.0.1" and body["jaxlib"] == "0.12.0.1"
    assert body["mode"] == "interpret" and body["sandbox"] == "fake"


def test_catalog_lists_entries_and_details(client):
    entries = client.get("/api/catalog").json()
    slugs = [e["slug"] for e in entries]
    assert "tiled_matmul" in slugs
    detail = client.get("/api/catalog/tiled_matmul").json()
    assert detail["entry_point"] == "matmul" and "def matmul" in detail["solution"]
    assert (
        "def reference" in detail["reference"] and detail["wrong"] and all(w["why"] for w in detail["wrong"])
    )
    assert any(c["tpu_only"] for c in detail["cases"])


def test_openapi_docs_are_served(client):
    assert client.get("/docs").status_code == 200
    assert "/api/runs" in client.get("/openapi.json").json()["paths"]


@pytest.mark.parametrize("page", ["/docs", "/redoc"])
def test_api_docs_need_no_network(client, page):
    """Offline TPU VMs and classrooms: every script, style and icon comes from this server."""
    html = client.get(page).text
    urls = re.findall(r'(?:src|href)="([^"]+)"', html)
    assert urls and not [u for u in urls if "//" in u]
    for url in urls:
        assert client.get(url).status_code == 200, url


def test_development_backend_is_refused_beyond_loopback(tmp_path):
    from sandbox.backends import UnsafeBindError
    from server.app import create_app
    from server.settings import Settings

    with pytest.raises(UnsafeBindError, match=r"refusing to bind '0\.0\.0\.0'"):
        create_app(Settings(data_dir=tmp_path, host="0.0.0.0", sandbox="local"))
    assert (
        create_app(Settings(data_dir=tmp_path, host="127.0.0.1", sandbox="local")).state.backend_name
        == "local"
    )


def test_chips_lists_the_chip_table_per_tensor_core(client):
    chips = {c["name"]: c for c in client.get("/api/chips").json()}
    assert list(chips) == ["v5e", "v5p", "v6e", "tpu7x", "tpu8i", "tpu8t"]
    assert chips["v5p"]["vmem_bytes"] == 64 * 2**20 and chips["v5p"]["tensor_cores"] == 2
    assert chips["v5e"]["sparse_core"] is None and chips["tpu7x"]["sparse_core"]["lanes"] == 16
    assert chips["v6e"]["hbm_bandwidth"] == 1640e9 and chips["v6e"]["bf16_flops"] == 920e12


def test_catalog_detail_carries_the_entrys_default_options(client):
    assert client.get("/api/catalog/race_condition_demo").json()["options"]["detect_races"] is True
    assert client.get("/api/catalog/tiled_matmul").json()["options"]["detect_races"] is False
