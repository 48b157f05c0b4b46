"""The TPU time model's estimate in a real browser: its validation band and range, the XLA ops around
a kernel that it includes, and the roofline chart against the chip table."""

from __future__ import annotations

import pytest

from tests.e2e.test_playground import goto, run_and_wait, set_source, show_solution
from tests.sandbox.test_lowering import MIXED_ELEMENT


def test_a_validated_estimate_shows_its_band_and_range(page, live_server):
    goto(page, live_server, "/?entry=tiled_matmul_pallas_call")
    show_solution(page)
    page.click("#chips label:has-text('v5e')")
    assert run_and_wait(page) == "passed"
    band = page.locator("#estimate-band")
    text = band.text_content() or ""
    assert (
        text.startswith("real chip ") and "±4.5 % on 17 published kernels of this family on TPU v5e" in text
    )
    seconds = float(page.locator("#estimate-section").get_attribute("data-seconds") or 0)
    low, high = float(band.get_attribute("data-low") or 0), float(band.get_attribute("data-high") or 0)
    assert 0 < low < seconds < high
    # v5e's host dispatch is known: reported apart from the device time, never added to it
    assert "µs of host dispatch" in (page.locator("#estimate-host").text_content() or "")


# The one-block `double_kernel` file, its kernel called between two transposes.
TRANSPOSED_AROUND = MIXED_ELEMENT[: MIXED_ELEMENT.index("def kernel(x):")] + (
    "def kernel(x):  # XLA transposes before and after the kernel: the estimate includes both copies\n"
    "    double = pl.pallas_call(double_kernel, out_shape=jax.ShapeDtypeStruct(x.T.shape, x.dtype))\n"
    "    return double(x.T).T\n"
)


def test_xla_ops_around_the_kernel_are_in_the_estimate_and_said(page, any_server):
    goto(page, any_server, "/?scratch")
    set_source(page, TRANSPOSED_AROUND)
    page.click("#chips label:has-text('v6e')")
    assert run_and_wait(page) == "passed", page.inner_text("#result")
    outside = page.locator("#estimate-outside")
    # Two transposes of 128 KiB of f32, each read once and written once.
    assert outside.get_attribute("data-bytes") == str(4 * 256 * 128 * 4)
    assert float(outside.get_attribute("data-seconds") or 0) > 0
    assert "of XLA ops outside the kernels" in (outside.text_content() or "")


def test_roofline_matches_the_chip_table_on_every_chip(page, live_server):
    from sandbox.protocol.chips import CHIP_TABLE

    goto(page, live_server, "/?entry=tiled_matmul")
    show_solution(page)
    page.click("#chips label:has-text('v6e')")
    assert run_and_wait(page) == "passed"
    facts = page.locator("#roofline-facts")
    # The timed case is f32 256x256x256: 2*256^3 flops; A, B read and C written once, 4 bytes each.
    flop, byte = 2 * 256**3, 3 * 256 * 256 * 4
    assert (facts.get_attribute("data-flops"), facts.get_attribute("data-bytes")) == (str(flop), str(byte))
    rows = page.locator("#roofline tbody tr")
    assert rows.count() == len(CHIP_TABLE)
    for i, chip in enumerate(CHIP_TABLE.values()):
        row = rows.nth(i)
        assert row.get_attribute("data-chip") == chip.name
        assert float(row.get_attribute("data-seconds") or 0) == pytest.approx(
            chip.roofline_seconds(flop, byte)
        )
        assert row.get_attribute("data-bound") == "memory"  # 43 FLOP/byte: below every ridge (v5e 240)
    assert page.locator("#roofline tr.chosen").get_attribute("data-chip") == "v6e"
    assert page.locator(".roofline-chart .roof.selected").get_attribute("data-chip") == "v6e"
    assert float(page.get_attribute(".kernel-intensity", "data-intensity") or 0) == pytest.approx(flop / byte)
