"""IR texts for the UI: locations resolved to kernel.py lines, stripped from the text, then capped."""

from sandbox.harness.lowering.irtext import capped, elide_mosaic_bodies, jaxpr_text, mlir_text

# The shape of `get_asm(enable_debug_info=True)` output (taken from a real Mosaic module, shortened).
MOSAIC = """#loc = loc(unknown)
#loc1 = loc("x_hbm")
module @body attributes {stable_mosaic.version = 15 : i64} {
  func.func @body(%arg0: i32 loc(unknown), %arg1: memref<16x128xf32, #tpu.memory_space<any>> loc("x_hbm")) {
    %c8_i32 = arith.constant 8 : i32 loc(#loc16)
    %0 = arith.muli %arg0, %c8_i32 : i32 loc(#loc16)
    tpu.enqueue_dma source(%4 : memref<8x128xf32>) target(%3 : memref<8x128xf32>) loc(#loc11)
    %1 = arith.addi %0, %0 : i32 loc(#loc20)
    return loc(#loc)
  } loc(#loc)
} loc(#loc)
#loc3 = loc("kernel.py":15:39 to :44)
#loc6 = loc("dma_start/dma_start")
#loc8 = loc("kernel.<locals>.body"(#loc3))
#loc11 = loc("dma_start:"(#loc6))
#loc13 = loc("mul"(#loc8))
#loc16 = loc("mul:"(#loc13))
#loc17 = loc("/srv/sandbox/session.py":90:3)
#loc18 = loc("kernel.py":7:1)
#loc19 = loc("helper"(#loc18))
#loc20 = loc(callsite(#loc19 at #loc22))
#loc21 = loc("kernel"("kernel.py":30:3))
#loc22 = loc(callsite(#loc21 at #loc17))
"""


def test_mlir_text_maps_lines_to_the_innermost_kernel_py_location():
    text, pairs = mlir_text(MOSAIC, "kernel.py")
    lines = text.splitlines()
    assert lines[2] == "    %c8_i32 = arith.constant 8 : i32"
    # The DMA has no file location: not mapped. The addi was called from line 30, in `helper` at line 7.
    assert dict(pairs) == {3: 15, 4: 15, 6: 7}
    assert lines[5] == "    %1 = arith.addi %0, %0 : i32"


def test_mlir_text_strips_every_location_and_the_alias_table():
    text, _ = mlir_text(MOSAIC, "kernel.py")
    assert "loc(" not in text and "#loc" not in text
    assert "session.py" not in text  # the harness's paths are never shown
    assert "func.func @body(%arg0: i32, %arg1: memref<16x128xf32, #tpu.memory_space<any>>) {" in text


def test_mlir_text_ignores_other_files_with_the_same_basename():
    text, pairs = mlir_text('%0 = x loc(#loc1)\n#loc1 = loc("/lib/kernel.py":3:1)\n', "kernel.py")
    assert text == "%0 = x\n" and pairs == []


def test_mlir_text_survives_parentheses_and_quotes_inside_locations():
    line = '%0 = y loc("a(b"("kernel.py":9:2))'
    text, pairs = mlir_text(line, "kernel.py")
    assert text == "%0 = y\n" and pairs == [(1, 9)]


def test_mlir_text_stops_on_cyclic_aliases():
    text, pairs = mlir_text("%0 = z loc(#loc1)\n#loc1 = loc(#loc2)\n#loc2 = loc(#loc1)\n", "kernel.py")
    assert text == "%0 = z\n" and pairs == []


JAXPR = (
    "{ lambda ; a:f32[256,128]. let\n"
    "    b:f32[256,128] = pallas_call[                                     # kernel.py:15:11 (kernel)\n"
    "      jaxpr={ lambda ; c:Ref<default>{f32[128,128]}. let\n"
    "          e:f32[128,128] <- c[...]                                    # kernel.py:6:17 (copy_kernel)\n"
    "          f:i32[] = add 0:i32[] 1:i32[]                               # \n"
    "          g:i32[] = mul f 2:i32[]              # /venv/jax/_src/pallas/mosaic/pipeline.py:512:4 (_next)\n"
    "        in () }\n"
    "    ] a\n"
    "  in (b,) }\n"
)


def test_jaxpr_text_maps_source_comments_and_removes_them():
    text, pairs = jaxpr_text(JAXPR, "kernel.py")
    lines = text.splitlines()
    assert pairs == [(2, 15), (4, 6)]
    assert lines[1] == "    b:f32[256,128] = pallas_call["
    assert lines[4] == "          f:i32[] = add 0:i32[] 1:i32[]"
    assert "#" not in text and "pipeline.py" not in text
    assert len(lines) == len(JAXPR.splitlines())  # line numbers are those of the printed jaxpr


def test_capped_cuts_at_a_line_and_keeps_only_the_map_of_kept_lines():
    text = "".join(f"line {i}\n" for i in range(1, 101))  # 7-8 chars a line
    ir = capped(text, [(1, 10), (50, 20), (100, 30)], limit=400)
    assert ir.truncated and ir.total_chars == len(text)
    assert ir.text.endswith("\n") and len(ir.text) <= 400
    kept = ir.text.count("\n")
    assert ir.source_lines == ((1, 10), (50, 20)) and kept < 100


def test_capped_keeps_short_texts_whole():
    ir = capped("a\nb\n", [(2, 5)])
    assert not ir.truncated and ir.text == "a\nb\n" and ir.source_lines == ((2, 5),)


def test_elide_mosaic_bodies_names_the_size_instead_of_the_base64():
    hlo = 'backend_config = "{\\22custom_call_config\\22: {\\22body\\22: \\22TUzvUgFN+/AA==\\22, \\22x\\22: 1}}"'
    out = elide_mosaic_bodies(hlo)
    assert "TUzvUgFN" not in out
    assert "<serialized Mosaic module, 14 base64 chars: see the Mosaic IR>" in out
    assert out.endswith('\\22, \\22x\\22: 1}}"')
