"""Inside the kernel, in the browser: the timeline, the blocks every step moved, the error map.

Assertions read the drawings' data attributes (counts, blocks, times), never pixels.
"""

from __future__ import annotations

import pytest

from sandbox.catalog.entries import load_catalog
from sandbox.protocol.chips import CHIP_TABLE
from tests.e2e.test_playground import goto, run_and_wait, show_solution

CATALOG = load_catalog()
STEPS = [(i, j, k) for i in range(2) for j in range(2) for k in range(2)]  # grid of 256^3 in 128 blocks


def run_solution(page, live_server, slug: str, chip: str = "v5p") -> None:
    goto(page, live_server, f"/?entry={slug}")
    show_solution(page)
    page.click(f"#chips label:has-text('{chip}')")
    assert run_and_wait(page) == "passed"


def now(page, operand: str) -> dict[str, str]:
    """The blocks of `operand` lit at the grid view's current step: {block: "read" | "write"}."""
    blocks = page.locator(f"svg.gv-operand[data-name='{operand}'] rect.gv-block")
    lit = {}
    for i in range(blocks.count()):
        block = blocks.nth(i)
        if block.get_attribute("data-now"):
            lit[block.get_attribute("data-block") or ""] = block.get_attribute("data-now") or ""
    return lit


def test_tiled_matmul_timeline_has_its_dmas_and_pipeline_steps(page, live_server):
    run_solution(page, live_server, "tiled_matmul")
    assert "20 DMAs, 8 steps, 1 core" in page.inner_text("#trace-summary")
    page.click("#open-trace")
    svg = page.locator("svg.timeline")
    assert svg.get_attribute("data-unit") == "host"
    # emit_pipeline over the (2, 2, 2) grid, hand-counted in tests/sandbox/test_trace.py: 2 prologue
    # copies + 2 per step for the next step's tiles (7 steps) + 4 output write-backs = 20 DMAs.
    assert page.locator("rect.tl-dma").count() == 20
    assert page.locator("rect.tl-dma.read").count() == 16 and page.locator("rect.tl-dma.write").count() == 4
    assert page.locator("rect.tl-step").count() == 8
    assert page.locator("g.tl-lane").count() == 1
    assert "20 dma start, 20 dma wait" in page.inner_text("#trace-counts")

    page.click("button[data-unit='tpu']")
    assert svg.get_attribute("data-unit") == "tpu"
    block_bytes = 128 * 128 * 4
    for bar in page.locator("rect.tl-dma").all()[:4]:
        assert int(bar.get_attribute("data-bytes") or 0) == block_bytes
        length = float(bar.get_attribute("data-end") or 0) - float(bar.get_attribute("data-start") or 0)
        assert length == pytest.approx(block_bytes / CHIP_TABLE["v5p"].hbm_bandwidth)
    assert "bytes ÷ 1230 GB/s" in page.inner_text("#timeline-note")


def test_grid_view_steps_through_each_steps_blocks(page, live_server):
    run_solution(page, live_server, "tiled_matmul")
    page.click("#tab-trace")
    for step, (i, j, k) in enumerate(STEPS):
        assert page.get_attribute("#gv-label", "data-step") == str(step)
        assert now(page, "in0") == {f"{i},{k}": "read"}
        assert now(page, "in1") == {f"{k},{j}": "read"}
        # The output tile goes back to HBM once its last K step is done.
        assert now(page, "out") == ({f"{i},{j}": "write"} if k == 1 else {})
        page.click("#gv-next")
    # After the last step: x's tiles were each fetched twice (once per j), the output once each.
    x_blocks = page.locator("svg.gv-operand[data-name='in0'] rect.gv-block")
    assert {b.get_attribute("data-reads-so-far") for b in x_blocks.all()} == {"2"}
    assert "revisited" in (x_blocks.first.get_attribute("class") or "")


def test_bad_index_map_lights_the_wrong_blocks_in_the_error_map_and_the_grid_view(page, live_server):
    goto(page, live_server, "/?entry=tiled_matmul_pallas_call")
    page.select_option("#wrong", "x_index_map_ignores_i")
    assert run_and_wait(page) == "mismatch"
    heatmap = page.locator("#maps-section svg.heatmap").first
    assert heatmap.get_attribute("data-rows") == "16" and heatmap.get_attribute("data-over") == str(8 * 16)
    cells = heatmap.locator("rect.cell")
    bad_rows = {
        int(c.get_attribute("data-row") or -1)
        for c in cells.all()
        if "bad" in (c.get_attribute("class") or "")
    }
    assert bad_rows == set(range(8, 16)), "only the first row of output tiles (error-map rows 0-7) is right"
    page.click("#open-trace")
    reads = page.locator("svg.gv-operand[data-name='in0'] rect.gv-block")
    assert {b.get_attribute("data-block") for b in reads.all()} == {"0,0", "0,1"}, (
        "A's row block 1 is never read"
    )


def test_two_cores_get_two_lanes(page, live_server):
    run_solution(page, live_server, "megacore_matmul")
    page.click("#open-trace")
    # The timeline's module loads on first use: wait for the drawing before counting what is in it.
    page.wait_for_selector("svg.timeline g.tl-lane")
    lanes = page.locator("g.tl-lane")
    assert [lanes.nth(i).get_attribute("data-core") for i in range(lanes.count())] == ["0", "1"]
    for core in ("0", "1"):
        assert page.locator(f"rect.tl-dma[data-core='{core}']").count() == 12
    assert page.locator(".tl-mark[data-kind='sem_signal']").count() == 2  # the core barrier, once per core
