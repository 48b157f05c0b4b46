"""What the TPU compiler says, in the browser: lowering verdict, chip warnings, all chips, IR tabs."""

from __future__ import annotations

from sandbox.catalog.entries import load_catalog
from tests.e2e.test_playground import goto, run_and_wait, set_source, show_solution
from tests.sandbox.test_lowering import MIXED_ELEMENT, TWO_CORES

CATALOG = load_catalog()


def cursor_line(page) -> int:
    return page.evaluate(
        "() => { const v = window.playground.editor.view; return v.state.doc.lineAt(v.state.selection.main.head).number; }"
    )


def test_ir_tabs_show_jaxpr_mosaic_and_stablehlo_with_source_links(page, live_server):
    goto(page, live_server, "/?entry=tiled_matmul")
    show_solution(page)
    page.click("#chips label:has-text('v5e')")
    assert run_and_wait(page) == "passed"
    lowering = page.locator("#lowering")
    assert lowering.get_attribute("data-lowers") == "true" and lowering.get_attribute("data-chip") == "v5e"
    # libtpu compiled it for a v5e on this host, which has no TPU: the chip's own compiler's verdict.
    assert lowering.get_attribute("data-compiled") == "true"
    assert (
        "Compiles for v5e: the chip's own compiler accepted it (libtpu 0.0.50.1, for a TPU v5e, off the chip ("
        in lowering.inner_text()
    )

    page.click("#tab-ir")
    text = page.locator("#ir-text")
    for kind, needle in (
        ("jaxpr", "dot_general"),
        ("stablehlo", "tpu_custom_call"),
        ("mosaic", "tpu.matmul"),
    ):
        page.click(f".ir-kind[data-kind='{kind}']")
        assert text.get_attribute("data-kind") == kind
        assert int(text.get_attribute("data-lines") or 0) > 10 or kind == "stablehlo"
        assert needle in text.inner_text()

    page.fill("#ir-search", "tpu.matmul")
    assert page.inner_text("#ir-count").startswith("1 of ")
    current = page.locator(".ir-line.current")
    assert "tpu.matmul" in current.inner_text()
    # Mosaic ops of the accumulate step come from the `jnp.dot` line of the user's kernel.
    dot_line = next(
        n
        for n, line in enumerate(CATALOG.get("tiled_matmul").solution_source.splitlines(), 1)
        if "jnp.dot(" in line
    )
    assert current.get_attribute("data-source-line") == str(dot_line)
    current.click()
    assert cursor_line(page) == dot_line


def test_check_on_all_chips_lowers_side_by_side(page, live_server):
    goto(page, live_server, "/?entry=tiled_matmul")
    show_solution(page)
    assert run_and_wait(page) == "passed"
    page.click("#check-all-chips")
    page.wait_for_selector("html[data-running='0'] #chip-table", timeout=120_000)
    rows = page.locator("#chip-table tbody tr")
    assert [rows.nth(i).get_attribute("data-chip") for i in range(rows.count())] == [
        "v5e",
        "v5p",
        "v6e",
        "tpu7x",
        "tpu8i",
        "tpu8t",
    ]
    assert {rows.nth(i).get_attribute("data-lowers") for i in range(6)} == {"true"}
    assert "0.34%" in rows.nth(0).inner_text()  # 458,752 B of v5e's 128 MiB of VMEM


def test_mixed_element_block_is_rejected_by_the_tpu_compiler(page, live_server):
    goto(page, live_server, "/?scratch")
    set_source(page, MIXED_ELEMENT)
    page.click("#chips label:has-text('v5e')")
    # It passes in the simulator, but a TPU would not compile it: the status says so, not "passed".
    assert run_and_wait(page) == "rejected"
    assert page.text_content("#status") == "rejected by the TPU compiler"
    summary = page.inner_text("#summary")
    assert summary.startswith("rejected by the TPU compiler for v5e: NotImplementedError")
    assert summary.endswith("but this kernel would not compile for a TPU")
    assert page.locator("#lowering").get_attribute("data-lowers") == "false"
    assert "All block dimensions must be Elements or none of them can be Elements." in page.inner_text(
        "#lowering-error"
    )
    line = next(n for n, text in enumerate(MIXED_ELEMENT.splitlines(), 1) if "return pl.pallas_call(" in text)
    assert page.locator("#compiler-section .goto-line").get_attribute("data-line") == str(line)
    page.click("#tab-ir")
    # No Mosaic (it never got there), but the jaxpr it traced is there to read.
    assert page.locator("#ir-text").get_attribute("data-kind") == "jaxpr"
    assert "interpret=False" in page.inner_text("#ir-text")


def test_two_cores_on_v5e_is_refused_with_the_numbers(page, live_server):
    goto(page, live_server, "/?scratch")
    set_source(page, TWO_CORES)
    page.click("#chips label:has-text('v5e')")
    # The simulator could run two cores on a one-core chip; the harness refuses, as the chip would,
    # and the chip check still explains why with the numbers.
    assert run_and_wait(page) == "error"
    assert "asks for 2 TensorCores, but a TPU v5e device has 1" in page.inner_text("#error-section")
    warning = page.inner_text("#chip-warnings")
    assert "num_cores=2" in warning and "has 1 TensorCore" in warning


def test_vmem_demand_beyond_the_chip_turns_the_meter_red_with_the_numbers(page, live_server):
    from tests.sandbox.test_lowering import BIG_SCRATCH

    goto(page, live_server, "/?scratch")
    set_source(page, BIG_SCRATCH)
    page.click("#chips label:has-text('v5p')")
    assert run_and_wait(page) == "rejected"  # as the chip's compiler refuses it (VmemLimitExceeded)
    vmem = page.locator("#memory .membar[data-kind='vmem']")
    # 2304 x 8192 f32 scratch plus one buffer each for the (8, 128) f32 input and output blocks.
    needed = 2304 * 8192 * 4 + 2 * 8 * 128 * 4
    assert vmem.get_attribute("data-used") == str(needed) and "over" in (vmem.get_attribute("class") or "")
    assert f"allocates {needed:,} bytes, more than the 67,108,864 bytes" in page.inner_text("#chip-warnings")
