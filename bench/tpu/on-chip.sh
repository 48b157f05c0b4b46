#!/usr/bin/env bash
# The measurements on a TPU VM, as the project's own commands take them (bench/tpu/README.md).
#   bench/tpu/on-chip.sh evidence OUT   what `python -m sandbox tpu` says, every catalog case natively,
#                                       a plain script's first call, and Tune sweeps measured on the chip
#   bench/tpu/on-chip.sh tier OUT       the chip tier of the test suite (pytest -m tpu), then the
#                                       simulator-vs-chip corpus and the scoped-VMEM compile grid
#   bench/tpu/on-chip.sh tests OUT      the chip tier of the test suite alone (TIER_FILES: some of its
#                                       files only, e.g. to split it over two 10-minute device calls)
#   bench/tpu/on-chip.sh sweeps-a OUT   the time model's calibration sweeps, part 1: the catalog's matmul
#                                       families at several shapes each (square, skinny, small K)
#   bench/tpu/on-chip.sh sweeps-b OUT   part 2: elementwise, row softmax, flash attention and grouped matmul
#                                       (bench/tpu/sweeps/), then the VMEM grid's follow-up compiles
#   bench/tpu/on-chip.sh sweeps-c OUT   part 3: splash attention (causal) and a DMA-driven program without
#                                       dots (an emit_pipeline of x * 2 + 1), two shapes each
#   bench/tpu/on-chip.sh sweeps-d OUT   part 4: JAX's paged attention (decode), two shapes
#   bench/tpu/on-chip.sh sweeps-e OUT   part 5: megablox gmm's second shape, then XLA's own op at every
#                                       sweep's size timed so far (xla_baselines.py; OUT of part 4 again)
#   bench/tpu/on-chip.sh sweeps-f OUT   part 6, held out of every fit: f32 operands at HIGHEST, int8
#                                       operands, a bf16 RMS norm (two shapes), flash attention at head dim 64
#   bench/tpu/on-chip.sh sweeps-g OUT   part 7, held out too: JAX's ragged paged attention (mixed prefill
#                                       and decode, trip counts from data)
#   bench/tpu/on-chip.sh sweeps-h OUT   part 8: the in-place chunked matmul again, its timed call now waiting
#                                       for the refs it writes (its part-1 times were under the roofline)
#   bench/tpu/on-chip.sh sweeps-i OUT   part 9, held out: flash attention at head dim 256 and at 2048-row
#                                       query blocks, splash at 16 heads of 2048, element-wise at a new shape
#   bench/tpu/on-chip.sh sweeps-j OUT   part 10, held out: flash at 16 heads of 4096 with kv blocks to 4096,
#                                       splash at 2 heads of 16384, flash at head dim 256 past the VMEM
#                                       limit (Tune's over_vmem on the chip), XLA's attention at 4 x 8192 again
#   bench/tpu/on-chip.sh sweeps-k OUT   part 11, held out: four kernels of kinds no sweep had timed, their
#                                       estimates fixed before the run: a layer norm, column sums (a sublane
#                                       reduction across the grid), a matmul with a bias + GELU epilogue and a
#                                       blocked transpose
#   bench/tpu/on-chip.sh sweeps-l OUT   part 12, held out: the cross-lane kinds at new shapes (a layer norm,
#                                       softmax, RMS norm, transpose, column sums), timed against the
#                                       dotless cross-lane step cost chosen on part 11
#   bench/tpu/on-chip.sh sweeps-m OUT   part 13, held out: blocks of equal bytes from whole rows to 128
#                                       lanes wide (element-wise f32, the DMA-driven bf16 copy), to see what
#                                       a copy of a block narrower than its array costs per row
#   bench/tpu/on-chip.sh sweeps-n OUT   part 14, a fit part: hand-written DMA streams (a copy and reads
#                                       alone) at 4 KiB to 1 MiB blocks with 1-4 blocks in flight, to tell
#                                       a DMA's latency (hidden by copies in flight) from a cost per copy
#   bench/tpu/on-chip.sh sweeps-o OUT   part 15, held out: the hand-written copy with its writes waited
#                                       1-3 blocks later (reads and writes in flight together), and the
#                                       emit_pipeline copy at whole-row blocks of 8 KiB to 2 MiB
#   bench/tpu/on-chip.sh sweeps-p OUT   part 16, held out: hand-written streams of writes alone at 4 KiB to
#                                       1 MiB blocks with 1-4 in flight (bench/tpu/sweeps/dma_write.py)
#   bench/tpu/on-chip.sh sweeps-q OUT   part 17, held out: a read stream and a write stream side by side
#                                       at 4 : 1, 1 : 1 and 1 : 4 of their bytes (bench/tpu/sweeps/dma_mixed.py)
#   bench/tpu/on-chip.sh sweeps-r OUT   part 18, held out: the same streams at 64 and 256 KiB blocks, one or
#                                       two of each in flight, the read or the write started first
#   bench/tpu/on-chip.sh sweeps-s OUT   part 19: the same streams with one, two or four reads and, apart,
#                                       writes in flight: what one read takes beside writes, and one write
#                                       beside reads (bench/tpu/sweeps/dma_mixed.py's wdepth)
#   bench/tpu/on-chip.sh sweeps-t OUT   part 20, held out: block sizes and ratios parts 17-19 do not have
#                                       (32, 128 and 512 KiB blocks; 1 : 2 and 2 : 1), one to three deep
#   bench/tpu/on-chip.sh sweeps-u OUT   part 21, held out: timed against the engine parts 17-19 chose (uneven
#                                       shares, switch, read tail): the hand-written copy at 32, 128 and 512
#                                       KiB blocks, its writes waited later, the emit_pipeline copy at a new
#                                       shape, reads beside writes at 8 : 1 and 1 : 8
#   bench/tpu/on-chip.sh sweeps-v OUT   part 22: a grid's copies in and write-backs side by side at 1-4 : 1
#                                       and 1 : 1-4 of their bytes, 64 KiB to 2 MiB blocks, whole rows and
#                                       narrower (bench/tpu/sweeps/grid_mix.py)
#   bench/tpu/on-chip.sh sweeps-w OUT   part 23, held out: the same at another array and ratios part 22 does
#                                       not have (3 : 2), whole rows and quarter rows
# (each part fits one 10-minute device call; every tune command appends to OUT/tune.jsonl as it ends)
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
elif [ "$what" = sweeps-a ] || [ "$what" = sweeps-b ] || [ "$what" = sweeps-c ] || [ "$what" = sweeps-d ] || [ "$what" = sweeps-e ] || [ "$what" = sweeps-f ] || [ "$what" = sweeps-g ] || [ "$what" = sweeps-h ] || [ "$what" = sweeps-i ] || [ "$what" = sweeps-j ] || [ "$what" = sweeps-k ] || [ "$what" = sweeps-l ] || [ "$what" = sweeps-m ] || [ "$what" = sweeps-n ] || [ "$what" = sweeps-o ] || [ "$what" = sweeps-p ] || [ "$what" = sweeps-q ] || [ "$what" = sweeps-r ] || [ "$what" = sweeps-s ] || [ "$what" = sweeps-t ] || [ "$what" = sweeps-u ] || [ "$what" = sweeps-v ] || [ "$what" = sweeps-w ]; then
    sweep() {  # file (catalog entry slug or bench/tpu/sweeps/NAME.py), seconds, then tune's arguments
        local what=$1 seconds=$2; shift 2
        local file=$what entry=()
        if [ -d "kernels_catalog/$what" ]; then file="kernels_catalog/$what/kernel.py" entry=(--entry "$what"); fi
        step "tune $what $*"
        timeout -k 5 "$seconds" $py -m sandbox tune "$file" "${entry[@]}" --chip v5e --measure \
            --record "$out/tune.jsonl" "$@" > "$out/last.log" 2>&1
        echo "exit $?"; tail -n 3 "$out/last.log"; cat "$out/last.log" >> "$out/sweeps.log"
    }
    if [ "$what" = sweeps-a ]; then
        sweep tiled_matmul_pallas_call 90 --size m=8192,k=512,n=8192 --param bm=256,512,1024 \
            --param bk=128,256,512 --param bn=256,512,1024 --bind bm=m,bk=k,bn=n
        sweep tiled_matmul_pallas_call 80 --size m=16384,k=2048,n=512 --param bm=256,512,1024,2048 \
            --param bk=512,1024,2048 --param bn=256,512 --bind bm=m,bk=k,bn=n
        sweep tiled_matmul 90 --size m=4096,k=4096,n=4096 --param bm=256,512,1024 --param bk=256,512,1024 \
            --param bn=256,512,1024 --bind bm=m,bk=k,bn=n
        sweep hbm_manual_dma 45 --size m=16384,k=1024,n=1024 --param chunk=128,256,512,1024,2048 --bind chunk=m
        sweep hbm_manual_dma 45 --size m=65536,k=512,n=512 --param chunk=256,512,1024,2048,4096 --bind chunk=m
        sweep inplace_chunked_matmul 45 --size m=65536,k=1024 --param chunk=256,512,1024,2048,4096 --bind chunk=m
        sweep inplace_chunked_matmul 45 --size m=16384,k=2048 --param chunk=128,256,512,1024,2048 --bind chunk=m
        sweep emit_pipeline_nested 60 --size m=8192,d=2048,hidden=8192,n=2048 --param chunk=128,256,512 \
            --param bh=128,256 --param bn=256,512 --bind chunk=m,bh=hidden,bn=n
        sweep block_sparse_matmul 45 --size m=8192,k=8192,n=2048,block=128,density_pct=10 \
            --param bn=128,256,512,1024,2048
        sweep block_sparse_matmul 45 --size m=8192,k=8192,n=2048,block=128,density_pct=30 \
            --param bn=128,256,512,1024,2048
    elif [ "$what" = sweeps-i ]; then
        sweep bench/tpu/sweeps/flash.py 150 --size b=1,h=8,s=4096,d=256 --check-size b=1,h=2,s=256,d=256 \
            --param bq=256,512,1024 --param bk=256,512,1024,2048 --bind bq=s,bk=s
        sweep bench/tpu/sweeps/flash.py 70 --size b=1,h=4,s=8192,d=128 --param bq=2048 \
            --param bk=256,512,1024,2048 --bind bq=s,bk=s
        sweep bench/tpu/sweeps/splash.py 100 --size h=16,s=2048,d=128 --param bq=256,512 \
            --param bkv=256,512,1024,2048 --bind bq=s,bkv=s
        sweep bench/tpu/sweeps/elementwise.py 60 --size m=16384,n=4096 --param br=8,32,128,512 \
            --param bc=512,4096 --bind br=m,bc=n
    elif [ "$what" = sweeps-j ]; then
        sweep bench/tpu/sweeps/flash.py 150 --size b=1,h=16,s=4096,d=128 --param bq=128,512,1024 \
            --param bk=512,2048,4096 --bind bq=s,bk=s
        sweep bench/tpu/sweeps/splash.py 150 --size h=2,s=16384,d=128 --param bq=512,1024,2048 \
            --param bkv=512,1024,2048,4096 --bind bq=s,bkv=s
        sweep bench/tpu/sweeps/flash.py 60 --size b=1,h=8,s=4096,d=256 --check-size b=1,h=2,s=256,d=256 \
            --param bq=1024,2048 --param bk=2048 --bind bq=s,bk=s
        sweep bench/tpu/sweeps/flash.py 60 --size b=1,h=4,s=8192,d=128 --param bq=1024 --param bk=512,2048 \
            --bind bq=s,bk=s
    elif [ "$what" = sweeps-k ]; then
        sweep bench/tpu/sweeps/layernorm.py 60 --size m=16384,n=2048 --param br=8,16,32,64,128,256,512 --bind br=m
        sweep bench/tpu/sweeps/layernorm.py 50 --size m=4096,n=8192 --param br=8,32,64,128 --bind br=m
        sweep bench/tpu/sweeps/column_sum.py 60 --size m=16384,n=4096 --param br=64,256,1024 \
            --param bc=512,1024,4096 --bind br=m,bc=n
        sweep bench/tpu/sweeps/matmul_gelu.py 90 --size m=4096,k=4096,n=4096 --param bm=256,512 \
            --param bk=512,1024 --param bn=512,1024 --bind bm=m,bk=k,bn=n
        sweep bench/tpu/sweeps/matmul_gelu.py 90 --size m=8192,k=1024,n=4096 --param bm=256,512 \
            --param bk=512,1024 --param bn=512,1024 --bind bm=m,bk=k,bn=n
        sweep bench/tpu/sweeps/transpose.py 90 --size m=8192,n=8192 --param br=128,256,512,1024 \
            --param bc=128,256,512,1024 --bind br=m,bc=n
    elif [ "$what" = sweeps-l ]; then
        sweep bench/tpu/sweeps/layernorm.py 50 --size m=8192,n=4096 --param br=8,16,32,64,128 --bind br=m
        sweep bench/tpu/sweeps/softmax.py 50 --size m=8192,n=2048 --param br=8,16,32,64,128 --bind br=m
        sweep bench/tpu/sweeps/rmsnorm.py 50 --size m=32768,n=2048 --param br=8,16,32,64,256 --bind br=m
        sweep bench/tpu/sweeps/transpose.py 70 --size m=4096,n=16384 --param br=128,256,512 \
            --param bc=128,256,512 --bind br=m,bc=n
        sweep bench/tpu/sweeps/column_sum.py 60 --size m=65536,n=1024 --param br=128,512,2048 \
            --param bc=256,1024 --bind br=m,bc=n
    elif [ "$what" = sweeps-m ]; then
        sweep bench/tpu/sweeps/elementwise.py 120 --size m=8192,n=8192 --param br=8,32,128,512,2048 \
            --param bc=128,512,2048,8192 --bind br=m,bc=n
        sweep bench/tpu/sweeps/pipelined_copy.py 100 --size m=8192,n=8192 --param br=16,64,256,1024 \
            --param bc=128,512,2048,8192 --bind br=m,bc=n
    elif [ "$what" = sweeps-n ]; then
        sweep bench/tpu/sweeps/dma_stream.py 150 --size m=131072,n=128 --param br=8,32,128,512,2048 \
            --param depth=1,2,3,4 --bind br=m
        sweep bench/tpu/sweeps/dma_read.py 150 --size m=131072,n=128 --param br=8,32,128,512,2048 \
            --param depth=1,2,3,4 --bind br=m
        sweep bench/tpu/sweeps/dma_stream.py 100 --size m=16384,n=1024 --param br=8,64,256 \
            --param depth=1,2,4 --bind br=m
    elif [ "$what" = sweeps-o ]; then
        sweep bench/tpu/sweeps/dma_stream.py 150 --size m=131072,n=128 --param br=8,32,128,512,2048 \
            --param depth=2,4 --param lag=1,3 --bind br=m
        sweep bench/tpu/sweeps/pipelined_copy.py 100 --size m=131072,n=256 --param br=16,64,256,1024,4096 \
            --param bc=256 --bind br=m,bc=n
    elif [ "$what" = sweeps-p ]; then
        sweep bench/tpu/sweeps/dma_write.py 150 --size m=131072,n=128 --param br=8,32,128,512,2048 \
            --param depth=1,2,4 --bind br=m
        sweep bench/tpu/sweeps/dma_write.py 100 --size m=16384,n=1024 --param br=8,64,256 \
            --param depth=1,2,4 --bind br=m
    elif [ "$what" = sweeps-q ]; then
        for size in m=65536,w=16384 m=65536,w=65536 m=16384,w=65536; do  # checked outputs: 32 MiB a command
            sweep bench/tpu/sweeps/dma_mixed.py 100 --size "$size,n=128" --param blocks=32,128,512 \
                --param depth=1,2,4 --check-size m=4096,w=4096,n=128
            sweep bench/tpu/sweeps/dma_mixed.py 100 --size "$size,n=128" --param blocks=2048 \
                --param depth=1,2,4 --check-size m=16384,w=16384,n=128
        done
    elif [ "$what" = sweeps-r ]; then
        for size in m=65536,w=65536 m=65536,w=16384; do
            sweep bench/tpu/sweeps/dma_mixed.py 100 --size "$size,n=128" --param blocks=128,512 \
                --param depth=1,2 --param write_first=0,1 --check-size m=4096,w=4096,n=128
        done
    elif [ "$what" = sweeps-s ]; then
        for size in m=65536,w=65536 m=65536,w=16384 m=16384,w=65536; do  # checked outputs: 32 MiB a command
            for blocks in 128 512; do
                sweep bench/tpu/sweeps/dma_mixed.py 100 --size "$size,n=128" --param blocks=$blocks \
                    --param depth=1,2,4 --param wdepth=1,2,4 --check-size m=4096,w=4096,n=128
            done
        done
    elif [ "$what" = sweeps-t ]; then
        for size in m=32768,w=65536 m=65536,w=32768; do
            sweep bench/tpu/sweeps/dma_mixed.py 100 --size "$size,n=128" --param blocks=64,256 \
                --param depth=1,3 --param wdepth=1,3 --check-size m=4096,w=4096,n=128
            sweep bench/tpu/sweeps/dma_mixed.py 100 --size "$size,n=128" --param blocks=1024 \
                --param depth=1,3 --param wdepth=1,3 --check-size m=8192,w=8192,n=128
        done
    elif [ "$what" = sweeps-v ]; then
        for mix in k=1,r=1 k=2,r=1 k=3,r=1 k=4,r=1 k=1,r=2 k=1,r=3 k=1,r=4 k=2,r=2; do
            sweep bench/tpu/sweeps/grid_mix.py 100 --size "m=12288,n=2048,$mix" --param br=8,16,24,32,48,64,128 \
                --param bc=2048 --bind br=m,bc=n --check-size "m=128,n=2048,$mix"
        done
        for mix in k=1,r=1 k=2,r=1; do
            sweep bench/tpu/sweeps/grid_mix.py 100 --size "m=12288,n=2048,$mix" --param br=32,64,128,256 \
                --param bc=256,512 --bind br=m,bc=n --check-size "m=128,n=2048,$mix"
        done
    elif [ "$what" = sweeps-w ]; then
        for mix in k=1,r=1 k=3,r=1 k=1,r=3 k=3,r=2; do
            sweep bench/tpu/sweeps/grid_mix.py 100 --size "m=6144,n=4096,$mix" --param br=8,16,24,32,48 \
                --param bc=4096 --bind br=m,bc=n --check-size "m=64,n=4096,$mix"
            sweep bench/tpu/sweeps/grid_mix.py 100 --size "m=6144,n=4096,$mix" --param br=32,64,96,128 \
                --param bc=1024 --bind br=m,bc=n --check-size "m=64,n=4096,$mix"
        done
    elif [ "$what" = sweeps-u ]; then
        sweep bench/tpu/sweeps/dma_stream.py 120 --size m=131072,n=128 --param br=64,256,1024 \
            --param depth=1,2,3,4 --bind br=m
        sweep bench/tpu/sweeps/dma_stream.py 120 --size m=131072,n=128 --param br=64,256,1024 \
            --param depth=2,4 --param lag=1,3 --bind br=m
        sweep bench/tpu/sweeps/pipelined_copy.py 100 --size m=16384,n=2048 --param br=32,128,512 \
            --param bc=512,2048 --bind br=m,bc=n
        for size in m=65536,w=8192 m=8192,w=65536; do
            sweep bench/tpu/sweeps/dma_mixed.py 100 --size "$size,n=128" --param blocks=64,256 \
                --param depth=1,2 --param wdepth=1,2 --check-size m=4096,w=4096,n=128
        done
    elif [ "$what" = sweeps-h ]; then
        sweep inplace_chunked_matmul 60 --size m=65536,k=1024 --param chunk=256,512,1024,2048,4096 --bind chunk=m
        sweep inplace_chunked_matmul 60 --size m=16384,k=2048 --param chunk=128,256,512,1024,2048 --bind chunk=m
    elif [ "$what" = sweeps-d ]; then
        sweep bench/tpu/sweeps/paged.py 150 --size b=16,h=32,kvh=8,s=2048,page=16,d=128 \
            --param ppcb=1,2,4,8,16,32 --check-size s=512
        sweep bench/tpu/sweeps/paged.py 150 --size b=8,h=32,kvh=8,s=8192,page=32,d=128 \
            --param ppcb=2,4,8,16,32 --check-size s=512
    elif [ "$what" = sweeps-f ]; then
        sweep bench/tpu/sweeps/rmsnorm.py 60 --size m=16384,n=4096 --param br=8,32,128,256,512 --bind br=m
        sweep bench/tpu/sweeps/rmsnorm.py 60 --size m=65536,n=1024 --param br=64,256,1024,2048 --bind br=m
        sweep bench/tpu/sweeps/matmul_f32.py 110 --size m=2048,k=2048,n=2048 --param bm=256,512 \
            --param bk=256,512 --param bn=512,1024 --bind bm=m,bk=k,bn=n
        sweep bench/tpu/sweeps/matmul_int8.py 110 --size m=4096,k=4096,n=4096 --param bm=256,512,1024 \
            --param bk=512,1024 --param bn=512,1024 --bind bm=m,bk=k,bn=n
        sweep bench/tpu/sweeps/flash.py 120 --size b=4,h=16,s=2048,d=64 --check-size b=1,h=2,s=256,d=64 \
            --param bq=256,512,1024 --param bk=256,512,1024 --bind bq=s,bk=s
    elif [ "$what" = sweeps-g ]; then
        sweep bench/tpu/sweeps/ragged.py 420 --size s=16,q=128,kv=2048,page=16,h=32,kvh=8,d=128 --check-size kv=512 \
            --param ppb=8,16,32 --param qpb=16,32,64
    elif [ "$what" = sweeps-e ]; then
        sweep bench/tpu/sweeps/grouped.py 280 --size m=16384,k=1024,n=4096,g=16 --param tm=256,512 \
            --param tk=512,1024 --param tn=1024,2048 --bind tk=k,tn=n
        step "XLA's own op at every timed sweep's size"
        timeout -k 5 240 $py bench/tpu/xla_baselines.py --records bench/tpu/v5e/tune.jsonl "$out/tune.jsonl" \
            --out "$out/xla.jsonl" > "$out/xla.log" 2>&1
        echo "exit $?"; tail -n 3 "$out/xla.log"
    elif [ "$what" = sweeps-c ]; then
        sweep bench/tpu/sweeps/splash.py 120 --size h=8,s=4096,d=128 --param bq=256,512,1024 \
            --param bkv=256,512,1024,2048 --bind bq=s,bkv=s
        sweep bench/tpu/sweeps/splash.py 100 --size h=4,s=8192,d=128 --param bq=256,512,1024 \
            --param bkv=512,1024,2048 --bind bq=s,bkv=s
        sweep bench/tpu/sweeps/pipelined_copy.py 80 --size m=8192,n=8192 --param br=16,64,256,512 \
            --param bc=512,2048,8192 --bind br=m,bc=n
        sweep bench/tpu/sweeps/pipelined_copy.py 60 --size m=32768,n=1024 --param br=64,256,1024,4096 \
            --param bc=256,1024 --bind br=m,bc=n
    else
        sweep emit_pipeline_nested 60 --size m=8192,d=2048,hidden=8192,n=2048 --param chunk=128,256,512 \
            --param bh=128,256 --param bn=256,512 --bind chunk=m,bh=hidden,bn=n
        sweep bench/tpu/sweeps/elementwise.py 60 --size m=8192,n=8192 --param br=8,64,256,512,1024 \
            --param bc=512,2048,8192 --bind br=m,bc=n
        sweep bench/tpu/sweeps/elementwise.py 50 --size m=32768,n=2048 --param br=32,128,512,1024 \
            --param bc=256,1024,2048 --bind br=m,bc=n
        sweep bench/tpu/sweeps/softmax.py 40 --size m=16384,n=1024 --param br=8,32,128,256,512 --bind br=m
        sweep bench/tpu/sweeps/softmax.py 40 --size m=4096,n=8192 --param br=8,16,32,64,128 --bind br=m
        sweep bench/tpu/sweeps/softmax.py 40 --size m=65536,n=256 --param br=64,256,1024,2048,4096 --bind br=m
        sweep bench/tpu/sweeps/flash.py 80 --size b=2,h=8,s=4096,d=128 --param bq=128,256,512,1024 \
            --param bk=128,256,512,1024 --bind bq=s,bk=s
        sweep bench/tpu/sweeps/flash.py 70 --size b=1,h=8,s=8192,d=128 --param bq=256,512,1024 \
            --param bk=256,512,1024,2048 --bind bq=s,bk=s
        sweep bench/tpu/sweeps/grouped.py 90 --size m=8192,k=2048,n=2048,g=8 --param tm=128,256,512 \
            --param tk=512,1024,2048 --param tn=256,512,1024 --bind tk=k,tn=n
        sweep bench/tpu/sweeps/grouped.py 70 --size m=16384,k=1024,n=4096,g=16 --param tm=128,256,512 \
            --param tk=256,1024 --param tn=512,1024,2048 --bind tk=k,tn=n
        step "vmem follow-up"
        timeout -k 5 60 $py bench/tpu/vmem_grid.py --set followup --out "$out/vmem-followup.jsonl" --budget 50 \
            > "$out/vmem-followup.log" 2>&1
        tail -n 3 "$out/vmem-followup.log"
    fi
fi
if [ "$what" = tier ]; then
    step "corpus"; mkdir -p "$out/corpus"
    timeout -k 5 60 $py bench/tpu/corpus/run.py --mode tpu --out "$out/corpus" --budget 45 > "$out/corpus/run.log" 2>&1
    tail -n 5 "$out/corpus/run.log"
    step "vmem grid"; timeout -k 5 60 $py bench/tpu/vmem_grid.py --out "$out/vmem.jsonl" --budget 45 > "$out/vmem.log" 2>&1
    tail -n 3 "$out/vmem.log"
fi
if [ "$what" = tier ] || [ "$what" = tests ]; then
    step "pytest -m tpu"; PLAYGROUND_TIER_OUT=$out timeout 540 $py -m pytest -p no:cacheprovider -m tpu ${TIER_FILES:-tests/tpu} -q -o addopts="" \
        > "$out/tier-full.txt" 2>&1; tail -n 40 "$out/tier-full.txt" | tee "$out/tier.txt"
fi
step done
