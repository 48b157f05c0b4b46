"""The notebook of a catalog share, run on this CPU-only machine: its code cells, as the server serves
them, executed in a child process with this project's Python (the install cell sees the pinned JAX
and skips), check the kernel in interpret mode and print the measurement line. A wrong scratch
kernel's notebook (scratch mode: the file's own inputs, reference and TOLERANCE) says mismatch, so
the notebook's check is not vacuous; and the round trip ends where it should: the printed line,
pasted back, is refused as an interpret-mode time."""

from __future__ import annotations

import hashlib
import json
import subprocess
import sys

import nbformat
import pytest
from fastapi.testclient import TestClient

from sandbox.catalog.entries import load_catalog
from server.app import create_app
from server.settings import Settings
from tests.api.fakes import FakeBackend

pytestmark = pytest.mark.slow
ENTRY = load_catalog().get("tiled_matmul")


def run_notebook(text: str, tmp_path, cells: int | None = None) -> str:
    """The notebook's code cells (the first `cells` of them), in order, as one program in a child of
    this Python; its output."""
    book = nbformat.reads(text, as_version=4)
    nbformat.validate(book)
    code = [cell.source for cell in book.cells if cell.cell_type == "code"]
    return run_program("\n\n".join(code[:cells]), tmp_path)


def run_program(program: str, tmp_path, python: str = sys.executable) -> str:
    """`program` run by `python` (default: this project's) in `tmp_path`; its stdout (it must succeed)."""
    path = tmp_path / "notebook.py"
    path.write_text(program)
    done = subprocess.run(
        [python, str(path)], cwd=tmp_path, capture_output=True, text=True, timeout=600, check=False
    )
    assert done.returncode == 0, done.stderr[-3000:]
    return done.stdout


@pytest.fixture(scope="module")
def client(tmp_path_factory):
    app = create_app(Settings(data_dir=tmp_path_factory.mktemp("data")), backend=FakeBackend())
    with TestClient(app) as c:
        yield c


def notebook_of(client: TestClient, source: str) -> tuple[str, str]:
    share = client.post("/api/shares", json={"source": source, "entry": ENTRY.slug, "chip": "v5e"}).json()[
        "id"
    ]
    return share, client.get(f"/api/shares/{share}/notebook").text


def test_the_notebook_of_a_catalog_share_passes_in_interpret_mode(client, tmp_path):
    share, text = notebook_of(client, ENTRY.solution_source)
    out = run_notebook(text, tmp_path)
    assert "jax 0.12.0.1 is installed; nothing to install" in out
    assert "case f32 256x256x256: passed" in out and "case bf16 256x512x384: passed" in out
    assert "verdict: passed" in out
    measured = json.loads(out.strip().splitlines()[-1])
    assert measured["share"] == share and measured["interpret"] is True and measured["chip"] == "v5e"
    assert measured["kernel_sha256"] == hashlib.sha256(ENTRY.solution_source.encode()).hexdigest()
    assert measured["device_seconds"] is None and measured["wall_seconds"] > 0
    pasted = client.post(f"/api/shares/{share}/measurements", json={"line": out.strip().splitlines()[-1]})
    assert pasted.status_code == 422 and "interpret mode" in pasted.json()["detail"]


SCRATCH = """\
import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl

TOLERANCE = {"float32": (1e-5, 1e-5)}


def make_inputs(seed):
    return (jax.random.normal(jax.random.key(seed), (8, 128), jnp.float32),)


def add_kernel(x_ref, o_ref):
    o_ref[...] = x_ref[...] + ADDED


def kernel(x):
    return pl.pallas_call(add_kernel, out_shape=jax.ShapeDtypeStruct(x.shape, x.dtype))(x)


def reference(x):
    return x + 1.0
"""


def test_the_notebook_of_a_wrong_scratch_kernel_says_mismatch(client, tmp_path):
    wrong = SCRATCH.replace("ADDED", "2.0")  # the file's own reference adds 1
    share = client.post("/api/shares", json={"source": wrong, "chip": "v6e"}).json()["id"]
    text = client.get(f"/api/shares/{share}/notebook").text
    out = run_notebook(text, tmp_path, cells=5)  # up to the check: the measurement is not needed here
    assert "case scratch: out: 1,024 of 1,024 elements differ" in out and "verdict: mismatch" in out
