"""A kernel the simulator cannot run, in the browser: the `unsupported` status, JAX's words, the limitation
badge, the marked line, and the new interpret options (#25)."""

from __future__ import annotations

from pathlib import Path

from tests.e2e.test_playground import goto, run_and_wait, set_source

# A subcore barrier on a mesh of two SparseCores: legal on a TPU, still beyond the simulator (one shared
# VMEM per SparseCore is not simulated). PRNG keys as outputs, the row this test used first, now run.
TWO_SPARSECORES = (
    Path(__file__).parents[1] / "sandbox" / "simulated" / "barrier_two_sparsecores.py"
).read_text()


def test_a_simulator_limit_is_unsupported_not_an_error(page, live_server):
    goto(page, live_server, "/?scratch")
    set_source(page, TWO_SPARSECORES)
    page.click("#chips label:has-text('tpu7x')")
    assert run_and_wait(page) == "unsupported"
    assert page.text_content("#status") == "unsupported by the simulator"
    summary = page.inner_text("#summary")
    assert summary.endswith("the TPU compiler accepts it for tpu7x")
    # The simulator's words are said once, in the Error section (the summary leaves out what it repeats).
    assert "plsc.subcore_barrier() or plsc.fetch_and_add on a mesh of several SparseCores" in page.inner_text(
        "#error-section"
    )
    assert page.locator("#limitation").is_visible()


def test_the_edge_tile_options_are_offered_and_sent(page, live_server):
    goto(page, live_server, "/?scratch")
    page.select_option("#opt-oob", "uninitialized")
    page.check("#opt-padded")
    # The toolbar saves its options on every change, as a run request carries them.
    options = page.evaluate("() => JSON.parse(localStorage.getItem('pp:prefs')).options")
    assert options["out_of_bounds_reads"] == "uninitialized" and options["buffer_bounds"] == "padded"
