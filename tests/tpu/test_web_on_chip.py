"""The web stack on a real chip, over a unix socket (the lent VM has no TCP at all): one server for
the module, and every door a person or an agent uses to reach the chip through it. The page itself
needs a browser, which the lent VM lacks: its HTML and scripts are fetched, and the run it posts is
the API run below."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import anyio
import httpx
import httpx2
import pytest

from tests.mcp_session import call
from tests.tpu.conftest import ENTRY, KERNEL, ROOT, chip_here

pytestmark = pytest.mark.tpu
# With DNS-rebinding protection on (the server's host setting is loopback), MCP accepts loopback names.
BASE_URL = "http://localhost:8000"


@pytest.fixture(scope="module")
def socket_path(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    folder = tmp_path_factory.mktemp("web")
    sock = folder / "playground.sock"
    env = {
        **os.environ,
        "PLAYGROUND_UDS": str(sock),
        "PLAYGROUND_SANDBOX": "local",
        "PLAYGROUND_DATA_DIR": str(folder / "var"),
        "PLAYGROUND_RATE_PER_MINUTE": "0",
    }
    server = subprocess.Popen([sys.executable, "-m", "server"], cwd=ROOT, env=env)
    try:
        with client_on(sock) as client:
            for _ in range(240):
                assert server.poll() is None, f"the server exited ({server.returncode})"
                try:
                    if client.get("/api/health").status_code == 200:
                        break
                except httpx.TransportError:
                    time.sleep(0.5)
        yield sock
    finally:
        server.terminate()
        server.wait(30)


def client_on(sock: Path) -> httpx.Client:
    return httpx.Client(transport=httpx.HTTPTransport(uds=str(sock)), base_url=BASE_URL, timeout=60)


def finished(client: httpx.Client, url: str, seconds: float = 300) -> dict:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        view = client.get(url).json()
        if view["state"] == "done":
            return view["result"]
        time.sleep(0.5)
    raise AssertionError(f"{url} not done in {seconds} s")


def assert_native_pass(result: dict) -> None:
    assert result["status"] == "passed", result["summary"]
    assert result["mode"] == "tpu" and result["versions"]["device_kind"].startswith("TPU v")


def test_a_run_posted_over_the_socket_runs_natively(socket_path):
    with client_on(socket_path) as client:
        body = {"source": KERNEL.read_text(), "entry": ENTRY, "chip": chip_here(), "mode": "auto"}
        run = client.post("/api/runs", json=body)
        assert run.status_code in (200, 201, 202), run.text
        assert_native_pass(finished(client, run.json()["url"]))


def test_the_page_and_its_scripts_are_served_over_the_socket(socket_path):
    with client_on(socket_path) as client:
        page = client.get("/")
        assert page.status_code == 200 and "<html" in page.text.lower()
        scripts = [part.split('"')[0] for part in page.text.split('src="')[1:] if ".js" in part.split('"')[0]]
        assert scripts, page.text[:2000]
        for script in scripts:
            assert client.get(script).status_code == 200, script


def test_an_agent_runs_a_kernel_on_the_chip_over_mcp(socket_path):
    async def main() -> dict:
        from mcp import ClientSession
        from mcp.client.streamable_http import streamable_http_client

        transport = httpx2.AsyncHTTPTransport(uds=str(socket_path))
        async with (
            httpx2.AsyncClient(transport=transport, timeout=300) as http,
            streamable_http_client(f"{BASE_URL}/mcp", http_client=http) as (read, write),
            ClientSession(read, write) as session,
        ):
            await session.initialize()
            body = {"source": KERNEL.read_text(), "entry": ENTRY, "chip": chip_here(), "mode": "tpu"}
            got = await call(session, "run_kernel", body)
            assert not got.is_error, got.text
            return got.structured

    structured = anyio.run(main)
    assert structured["status"] == "passed" and structured["chip"] == chip_here(), structured
    assert structured["mode"] == "tpu", structured


def challenge(client: httpx.Client) -> tuple[dict, dict]:
    """A one-step lesson on the catalog kernel, its class, and the step made a challenge (a board)."""
    step = {"source": KERNEL.read_text(), "entry": ENTRY, "chip": chip_here(), "note": "On the chip."}
    lesson = client.post("/api/lessons", json={"title": "Chip day", "steps": [step]}).json()
    room = client.post("/api/classes", json={"lesson": lesson["id"]}).json()
    teacher = {"Authorization": f"Bearer {room['teacher_token']}"}
    made = client.put(f"/api/classes/{room['id']}/steps/1", json={"kind": "challenge"}, headers=teacher)
    assert made.status_code == 200, made.text
    return room, teacher


def class_run(client: httpx.Client, room: dict, name: str, source: str) -> dict:
    token = client.post(f"/api/classes/{room['code']}/join", json={"name": name}).json()["student_token"]
    body = {
        "source": source,
        "entry": ENTRY,
        "chip": chip_here(),
        "mode": "auto",
        "class_token": token,
        "step": 1,
    }
    run = client.post("/api/runs", json=body)
    assert run.status_code in (200, 201, 202), run.text
    return finished(client, run.json()["url"])


def test_a_class_runs_its_lesson_on_the_chip_and_the_host_times_it(socket_path):
    """Issue 41: the board's time on a chip is the host's own, not what the kernel's process said."""
    with client_on(socket_path) as client:
        room, teacher = challenge(client)
        result = class_run(client, room, "Ada", KERNEL.read_text())
        assert_native_pass(result)
        host = result["host_timing"]
        assert host["note"].startswith("measured by the host"), host
        assert host["case"] == result["timing"]["case"] and host["chip"] == chip_here()
        # The same program, timed by the kernel's process and by the host's rerun: the same kernel.
        assert 0.5 < host["seconds"] / result["timing"]["device_seconds"] < 2, (host, result["timing"])
        grid = client.get(f"/api/classes/{room['id']}/progress", headers=teacher)
        assert grid.status_code == 200 and "passed" in grid.text, grid.text[:2000]
        (row,) = grid.json()["boards"][0]["rows"]
        assert (row["name"], row["basis"], row["seconds"]) == ("Ada", "measured", host["seconds"])


# A student's file whose kernel is right but whose process hands the host another program: one that
# makes its own inputs (the catalog's seed 2, drawn in the program) and passes the product through a
# copy kernel; and one that is XLA's dot alone. Each run passes; neither gets a time, nor a place.
FORGED = """
import sys

import jax.numpy as jnp


def _copy(x):
    def body(i_ref, o_ref):
        o_ref[...] = i_ref[...]

    spec = pl.BlockSpec((256, x.shape[1]), lambda i: (i, 0))
    return pl.pallas_call(
        body, out_shape=jax.ShapeDtypeStruct(x.shape, x.dtype), grid=(x.shape[0] // 256,),
        in_specs=[spec], out_specs=spec,
    )(x)


def _own_inputs(a, b):
    kx, ky = jax.random.split(jax.random.key(2))
    x = jax.random.normal(kx, a.shape, jnp.float32).astype(a.dtype)
    y = jax.random.normal(ky, b.shape, jnp.float32).astype(b.dtype)
    return _copy(jnp.dot(x, y, preferred_element_type=jnp.float32).astype(a.dtype))


def _xla_only(a, b):
    return jnp.dot(a, b, preferred_element_type=jnp.float32).astype(a.dtype)


_exported = sys.modules["sandbox.harness.jaxapi.exported"]
_real = _exported.export_for_tpu
_exported.export_for_tpu = lambda fn, args: _real(FORGE, args)
"""


def test_a_program_swapped_by_the_kernels_process_gets_no_time_and_no_place(socket_path):
    with client_on(socket_path) as client:
        room, teacher = challenge(client)
        notes = {}
        for name, forge in (("Eve", "_own_inputs"), ("Mal", "_xla_only")):
            source = KERNEL.read_text() + FORGED.replace("FORGE", forge)
            result = class_run(client, room, name, source)
            assert_native_pass(result)  # the kernel itself is right: the checker says so
            assert result["host_timing"]["seconds"] is None, result["host_timing"]
            notes[name] = result["host_timing"]["note"]
        assert "on new inputs the program's out does not match" in notes["Eve"], notes
        assert "no Pallas kernel" in notes["Mal"], notes
        grid = client.get(f"/api/classes/{room['id']}/progress", headers=teacher).json()
        assert grid["boards"][0]["rows"] == [], grid["boards"]


def test_a_sweep_from_the_tune_tab_is_timed_on_the_chip(socket_path):
    with client_on(socket_path) as client:
        body = {
            "source": KERNEL.read_text(),
            "entry": ENTRY,
            "chip": chip_here(),
            "mode": "tpu",
            "size": {"m": 2048, "k": 2048, "n": 2048},
            "params": {"bm": [256, 512], "bk": [512], "bn": [512]},
            "bind": {"bm": "m", "bk": "k", "bn": "n"},
        }
        sweep = client.post("/api/sweeps", json=body)
        assert sweep.status_code in (200, 201, 202), sweep.text
        result = finished(client, sweep.json()["url"])
        configs = result["sweep"]["configs"]
        assert len(configs) == 2 and all(
            c["measured_seconds"] and c["measured_seconds"] > 0 for c in configs
        ), result
        # XLA's own op timed once on the chip beside the configs, and the estimate's word on its kind.
        assert all(c["xla_measured_seconds"] and c["xla_measured_seconds"] > 0 for c in configs), configs
        assert all(c["estimate"]["xla_validation"].startswith("XLA's dots") for c in configs), configs


def test_the_page_asks_for_both_runs_and_gets_them(socket_path):
    with client_on(socket_path) as client:
        assert client.get("/api/version").json()["mode"] == "tpu"  # the page shows "Chip and simulator"
        body = {"source": KERNEL.read_text(), "entry": ENTRY, "chip": chip_here(), "mode": "both"}
        run = client.post("/api/runs", json=body)
        assert run.status_code in (200, 201, 202), run.text
        result = finished(client, run.json()["url"])
        assert_native_pass(result)
        assert result["both"]["agree"] and result["both"]["simulated_status"] == "passed", result["both"]
