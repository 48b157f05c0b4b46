#!/usr/bin/env bash
# The measurements on a TPU VM, as the project's own commands take them (bench/tpu/README.md).
#   bench/tpu/on-chip.sh evidence OUT   what `python -m sandbox tpu` says, every catalog case natively,
#                                       a plain script's first call, and Tune sweeps measured on the chip
#   bench/tpu/on-chip.sh tier OUT       the chip tier of the test suite (pytest -m tpu), then the
#                                       simulator-vs-chip corpus and the scoped-VMEM compile grid
# Needs python3.12 with the project installed (the lent v5e: ../shared/tpu/README.md's kit, then
# `pip install -e .`). Every step writes under OUT as it goes; a failed step does not stop the next.
set -u
what=${1:?evidence or tier}; out=${2:?output folder}
cd "$(dirname "$0")/../.." && mkdir -p "$out"
py=${PYTHON:-python3.12}
export PYTHONUNBUFFERED=1
step() { echo "== $* ($(date -u +%T))"; }

if [ "$what" = evidence ]; then
    step "sandbox tpu"; timeout 120 $py -m sandbox tpu 2>&1 | tee "$out/tpu.txt"
    step "plain first call"; timeout 120 $py bench/tpu/plain_first_call.py 2>/dev/null | tee "$out/plain.json"
    step "catalog cases"; timeout 900 $py bench/tpu/cases.py --chip v5e --out "$out/cases.jsonl"
    tune() {  # entry, then tune's arguments
        local entry=$1; shift
        step "tune $entry $*"
        timeout 300 $py -m sandbox tune "kernels_catalog/$entry/kernel.py" --entry "$entry" --chip v5e \
            --measure --record "$out/tune.jsonl" "$@" 2>&1 | tail -n 40
    }
    tune tiled_matmul_pallas_call
    tune tiled_matmul --size m=4096,k=4096,n=4096 --param bm=256,512,1024 --param bk=256,512,1024 \
        --param bn=256,512,1024 --bind bm=m,bk=k,bn=n
    tune hbm_manual_dma --size m=16384,k=1024,n=1024 --param chunk=128,256,512,1024,2048 --bind chunk=m
    tune inplace_chunked_matmul --size m=65536,k=1024 --param chunk=256,512,1024,2048,4096 --bind chunk=m
    tune emit_pipeline_nested --size m=8192,d=2048,hidden=8192,n=2048 --param chunk=256,512,1024 \
        --param bh=256,512 --param bn=256,512 --bind chunk=m,bh=hidden,bn=n
elif [ "$what" = tier ]; then
    step "pytest -m tpu"; timeout 420 $py -m pytest -p no:cacheprovider -m tpu tests/tpu -q -x \
        -o addopts="" 2>&1 | tail -n 40 | tee "$out/tier.txt"
fi
step done
