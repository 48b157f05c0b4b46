"""JAX versions on the page, in a real browser against a real server running real kernels on every
installed runtime: "Run on all versions" shows the matrix with the first change marked, and a share
made on an older JAX, re-run on today's, shows what changed.

The kernel is one a user copies from a recent blog post: `pl.kernel` over `pltpu.TensorCoreMesh`,
which jax 0.10.2 does not have. Small (one 8×128 block), so five runs take seconds.
"""

from __future__ import annotations

import re

import pytest

from tests.e2e.test_playground import goto, set_source, source
from tests.runtimes.conftest import EXPECTED

pytestmark = pytest.mark.slow
MATRIX_TIMEOUT_MS = 180_000
MESH_KERNEL = """\
import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import tpu as pltpu


def make_inputs(seed):
    return (jax.random.normal(jax.random.key(seed), (8, 128), jnp.float32),)


def reference(x):
    return x + 1.0


def add_one_kernel(x_hbm, o_hbm):
    def body(x_ref, o_ref):
        o_ref[...] = x_ref[...] + 1.0

    spec = pl.BlockSpec((8, 128), lambda i: (0, 0))
    pltpu.emit_pipeline(body, grid=(1,), in_specs=[spec], out_specs=spec)(x_hbm, o_hbm)


@jax.jit
def kernel(x):
    mesh = pltpu.TensorCoreMesh(axis_name="core", num_cores=1)
    return pl.kernel(add_one_kernel, out_type=jax.ShapeDtypeStruct(x.shape, x.dtype), mesh=mesh)(x)
"""
MISSING = "`pltpu.TensorCoreMesh` is not in jax 0.10.2; it is in 0.11.2 and later"


def cells(page, selector: str) -> list[str]:
    return [text.strip() for text in page.locator(selector).all_text_contents()]


def test_run_on_all_versions_shows_the_matrix_with_the_first_change_marked(page, any_server):
    goto(page, any_server, "/?scratch")
    assert cells(page, "#runtime option") == [
        f"jax {EXPECTED[-1]} (newest)",
        *(f"jax {n}" for n in EXPECTED[-2::-1]),
    ]
    set_source(page, MESH_KERNEL)
    page.click("#run-all")
    page.wait_for_selector("#matrix[data-state='done']", timeout=MATRIX_TIMEOUT_MS)

    rows = page.locator("#matrix-table tbody tr")
    assert [rows.nth(i).get_attribute("data-runtime") for i in range(rows.count())] == list(EXPECTED)
    assert cells(page, "#matrix-table tbody td:nth-child(2)") == ["error", "passed", "passed"]
    changed = page.locator("#matrix-table tr[data-change='1']")
    assert changed.count() == 1 and changed.get_attribute("data-runtime") == "0.11.2"
    assert "◀ changes" in changed.inner_text()
    verdict = page.inner_text("#matrix-verdict")
    assert verdict.startswith(
        f"fails up to 0.10.2, passes from 0.11.2: error in kernel: AttributeError: {MISSING}"
    )
    # The old version's note names what it went without; the page says the times are simulated.
    page.locator("#matrix-table tr[data-runtime='0.10.2'] details summary").click()
    assert "kernel trace: not available on jax 0.10.2" in page.inner_text(
        "#matrix-table tr[data-runtime='0.10.2']"
    )
    assert "CPU simulation" in page.inner_text("#matrix")


def test_a_share_made_on_an_old_jax_reruns_on_todays_with_a_diff(page, open_page, any_server):
    goto(page, any_server, "/?scratch")
    set_source(page, MESH_KERNEL)
    page.select_option("#runtime", "0.10.2")
    page.click("#share")
    page.wait_for_selector("#share-panel:not([hidden])")
    url = page.input_value("#share-url")

    other = open_page()
    other.goto(url)
    other.wait_for_selector("html[data-ready='1']")
    assert source(other) == MESH_KERNEL
    assert other.input_value("#runtime") == "0.10.2"  # it runs where it was made while that is installed
    notice = other.inner_text("#notices")
    assert "This link was made on jax 0.10.2; it runs there (today's JAX is 0.12.0.1)." in notice
    other.click("#rerun-today")
    other.wait_for_selector("#matrix[data-state='done'] #diff-table", timeout=MATRIX_TIMEOUT_MS)

    assert other.text_content("#diff-section h3") == "jax 0.10.2 → jax 0.12.0.1"
    status = other.locator("#diff-table tr[data-field='status']")
    assert status.get_attribute("data-changed") == "1"
    assert cells(other, "#diff-table tr[data-field='status'] td") == ["error", "passed"]
    error = cells(other, "#diff-table tr[data-field='error'] td")
    assert error[0].startswith(f"AttributeError: {MISSING}") and error[1] == "—"
    assert re.search(
        r"\d", other.inner_text("#diff-table tr[data-field='kernel time (median)'] td:nth-child(3)")
    )
    assert other.inner_text("#ir-diff-note") == (
        "Mosaic IR: no Mosaic IR from jax 0.10.2 (the TPU lowering did not get that far)"
    )
