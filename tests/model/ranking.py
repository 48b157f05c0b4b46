"""Published autotuning winners against the model's own ranking (tests/model/test_ranking.py).

tokamax publishes, per chip and shape, the tiling its autotuner measured fastest. The model is asked
to rank that winner against its neighbours in the search space: each of tm, tk and tn halved or
doubled alone (tiles stay multiples of 128, tk and tn no larger than K and N, the double-buffered
tiles and the f32 accumulator within the chip's VMEM). The winner passes when the model's estimate
for it is within 5 % of the model's best estimate among them.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator

from sandbox.protocol.chips import chip_info
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


def _fits(tile: tuple[int, ...], chip: str) -> bool:
    tm, tk, tn = tile
    vmem = 2 * 2 * (tm * tk + tk * tn + tm * tn) + 4 * tm * tn  # bf16 double-buffered, f32 acc
    return vmem <= chip_info(chip).vmem_bytes  # type: ignore[arg-type]


def ranked(m: Measurement) -> dict[tuple[int, int, int], float]:
    """The model's estimate for the winner and each neighbour."""
    found = {}
    for tile in neighbours(m):
        raw = {**m.raw, "tiling": dict(zip(("tm", "tk", "tn"), tile, strict=True))}
        found[tile] = model(dataclasses.replace(m, raw=raw)).seconds
    return found


if __name__ == "__main__":
    import sys

    from tests.model.published import load

    points = load()
    for m in points:
        if m.kernel == "gmm" and m.chip in sys.argv[1:]:
            est = ranked(m)
            winner = next(iter(est))
            gap = est[winner] / min(est.values()) - 1
            print(
                f"{gap:+.3f} {'ok' if gap <= WITHIN else 'MISS'} {m.id} best={min(est, key=est.get)}",
                flush=True,
            )
