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
        timeout "${TUNE_SECONDS:-150}" $py -m sandbox tune "kernels_catalog/$entry/kernel.py" --entry "$entry" --chip v5e \
            --measure --record "$out/tune.jsonl" "$@" 2>&1 | tail -n 40
    }
    tune tiled_matmul_pallas_call
    tune hbm_manual_dma --size m=16384,k=1024,n=1024 --param chunk=128,256,512,1024,2048 --bind chunk=m
    tune inplace_chunked_matmul --size m=65536,k=1024 --param chunk=256,512,1024,2048,4096 --bind chunk=m
    tune tiled_matmul --size m=4096,k=4096,n=4096 --param bm=512,1024 --param bk=512,1024 \
        --param bn=512,1024 --bind bm=m,bk=k,bn=n
    tune emit_pipeline_nested --size m=8192,d=2048,hidden=8192,n=2048 --param chunk=512,1024 \
        --param bh=512 --param bn=512,1024 --bind chunk=m,bh=hidden,bn=n
elif [ "$what" = tier ]; then
    step "corpus"; mkdir -p "$out/corpus"
    timeout -k 5 60 $py bench/tpu/corpus/run.py --mode tpu --out "$out/corpus" --budget 45 > "$out/corpus/run.log" 2>&1
    tail -n 5 "$out/corpus/run.log"
    step "vmem grid"; timeout -k 5 60 $py bench/tpu/vmem_grid.py --out "$out/vmem.jsonl" --budget 45 > "$out/vmem.log" 2>&1
    tail -n 3 "$out/vmem.log"
    step "pytest -m tpu"; timeout 300 $py -m pytest -p no:cacheprovider -m tpu tests/tpu -q -o addopts="" \
        2>&1 | tail -n 40 | tee "$out/tier.txt"
fi
step done
