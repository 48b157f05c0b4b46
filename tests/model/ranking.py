"""Published autotuning winners against the model's own ranking (tests/model/test_ranking.py).

tokamax publishes, per chip and shape, the tiling its autotuner measured fastest. The model is asked
to rank that winner against its neighbours in the search space: each of tm, tk and tn halved or
doubled alone (tiles stay multiples of 128, tk and tn no larger than K and N, the double-buffered
tiles and the f32 accumulator within the chip's default scoped VMEM limit where it is published,
else its VMEM). The winner passes when the model's estimate
for it is within 5 % of the model's best estimate among them.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator

from sandbox.protocol.chips import chip_info
from sandbox.protocol.estimate import Estimate
from tests.model.published import Measurement, model

WITHIN = 0.05


def neighbours(m: Measurement) -> Iterator[tuple[int, int, int]]:
    size, t = m.raw["size"], m.raw["tiling"]
    winner = (t["tm"], t["tk"], t["tn"])
    limits = (size["m"], size["k"], size["n"])
    yield winner
    for axis in range(3):
        for factor in (0.5, 2.0):
            tile = list(winner)
            tile[axis] = int(tile[axis] * factor)
            valid = tile[axis] >= 128 and tile[axis] % 128 == 0 and (axis == 0 or tile[axis] <= limits[axis])
            if valid and _fits(tuple(tile), m.chip):
                yield tuple(tile)  # type: ignore[misc]


def vmem_bytes(tile: tuple[int, ...]) -> int:
    """The tiles' VMEM: bf16 lhs, rhs and out blocks double-buffered, the f32 accumulator."""
    tm, tk, tn = tile
    return 2 * 2 * (tm * tk + tk * tn + tm * tn) + 4 * tm * tn


def _fits(tile: tuple[int, ...], chip: str) -> bool:
    """Within what a kernel that sets no `vmem_limit_bytes` (tokamax's ragged_dot sets none) may use:
    the chip's default scoped VMEM limit where it is published, else all its VMEM."""
    info = chip_info(chip)  # type: ignore[arg-type]
    return vmem_bytes(tile) <= (info.scoped_vmem_bytes or info.vmem_bytes)


def estimate_at(m: Measurement, tile: tuple[int, ...]) -> Estimate:
    raw = {**m.raw, "tiling": dict(zip(("tm", "tk", "tn"), tile, strict=True))}
    return model(dataclasses.replace(m, raw=raw))


def ranked(m: Measurement) -> dict[tuple[int, int, int], float]:
    """The model's estimate for the winner and each neighbour."""
    return {tile: estimate_at(m, tile).seconds for tile in neighbours(m)}


def explain(m: Measurement, tile: tuple[int, ...]) -> list[str]:
    """Why the model costs a tiling as it does: its split, and its costliest kinds of step."""
    e = estimate_at(m, tile)
    lines = [
        f"  {tile}: {e.seconds * 1e3:.3f} ms, {e.kernels[0].steps} steps, {e.hbm_bytes / 1e9:.2f} GB moved, "
        f"VMEM {vmem_bytes(tile) / 2**20:.2f} MiB; compute {e.compute_seconds * 1e3:.3f} ms, "
        f"memory {e.memory_seconds * 1e3:.3f} ms, per-step overhead {e.overhead_seconds * 1e3:.3f} ms"
    ]
    for c in sorted(e.classes, key=lambda c: -c.count * c.seconds)[:3]:
        lines.append(
            f"    {c.count:6d} x {c.seconds * 1e6:5.2f} us: in {c.copy_in_bytes / 1e6:5.2f} MB, "
            f"out {c.copy_out_bytes / 1e6:4.2f} MB, compute {c.compute_seconds * 1e6:5.2f} us "
            f"({c.mxu_flops / 1e9:.2f} GFLOP, {c.vector_ops / 1e6:.2f} M vector ops), "
            f"DMA {c.copy_seconds * 1e6:5.2f} us, overhead {c.overhead_seconds * 1e6:.2f} us ({c.bound})"
        )
    return lines


if __name__ == "__main__":
    import sys

    from tests.model.published import load

    # python -m tests.model.ranking <chip>... [--explain]: each winner's gap; with --explain, a miss's
    # winner and the model's best step by step.
    for m in load():
        if m.kernel == "gmm" and m.chip in sys.argv[1:]:
            est = ranked(m)
            winner, best = next(iter(est)), min(est, key=est.get)
            gap = est[winner] / est[best] - 1
            print(f"{gap:+.3f} {'ok' if gap <= WITHIN else 'MISS'} {m.id} best={best}", flush=True)
            if gap > WITHIN and "--explain" in sys.argv:
                print("\n".join(explain(m, winner) + explain(m, best)), flush=True)
