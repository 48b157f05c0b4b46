"""Reading libtpu's final bundle listing (bench/tpu/bundles.py): bundles per loop depth, ops by name.
The lines are the format libtpu 0.0.50.1 writes (`--xla_jf_dump_to`), cut from a softmax kernel's."""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bench" / "tpu"))

import bundles

LISTING = """= control target key start
LH: loop header
LB: loop body
= control target key end

     0   :  { %s1_s30 = smov [#allocation8] /* materialized constant */  ;;  %s2_s8 = smov [#allocation9] }
   0x1   :  { %3 = vsyncpa [#allocation14], 0 } /* Start region 1 */
   0x2 LB: > { %s4_s2 = sadd.s32 4294967295, %s5_s20 /* iteration index */  ;;  %s5_s20 = sphi %s6_s20, %s7_s20 }
   0x3   : > { %v8_v0 = vld [vmem:[%s9_s1] sm:$0xff]  ;;  %v10_v1 = vld [vmem:[%s9_s1 + $0x8] sm:$0xff] }
   0x4 LB: >> { %v11_v2 = vmul.f32 %v8_v0, %v10_v1  ;;  %12 = vst [vmem:[%s13_s2] sm:$0xff] %v11_v2 }
   0x5   : >> { %v14_v3 = vexp2.f32 %v11_v2 }
   0x6   : > { %15 = sbr.rel (%p16_p1) target bundleno = 2 (0x2), region = 40 }
   0x7   :  { %17 = vsyncpa [#allocation14], 1 }
"""


def test_a_listing_is_counted_by_depth_and_op(tmp_path: Path):
    path = tmp_path / "1796554361777852701-kernel.1-72-final_bundles.txt"
    path.write_text(LISTING)
    (tmp_path / "1796554361777852701-TLP-73-final_bundles.txt").write_text(LISTING)
    (tmp_path / "1796554361777852701-kernel.1-71-schedule-analysis_final_bundles.txt").write_text(LISTING)
    found = bundles.kernel_listings(tmp_path)
    assert list(found) == ["kernel.1"]  # XLA's top-level program and the schedule analysis left out
    listing = found["kernel.1"]
    assert listing.bundles == 8 and dict(listing.by_depth) == {0: 3, 1: 3, 2: 2}
    assert listing.in_loops() == 5 and listing.deepest == 2
    assert listing.ops["vld"] == 2 and listing.ops["vmul.f32"] == 1 and listing.ops["vst"] == 1
    assert listing.ops["smov"] == 2 and listing.ops["vexp2.f32"] == 1
