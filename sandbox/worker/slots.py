"""Which backend each of a worker's slots runs its jobs on.

Interpret pools: one backend shared by all slots, so a host's cores run that many jobs at once
(the hardened backend gets as many pool slots, each with its own slot uid and cgroups).

TPU pools (`tpu-v5e`, …): one slot per chip. libtpu lets one process own a set of chips, so each
slot's jobs must see only their own chip, through the environment libtpu reads (visible chips,
process bounds, ports). That environment is built by one pure function of (chip kind, slot, slots),
`sandbox.jobenv`'s TPU builder (issue 18, being written beside this); each slot then gets its own
backend whose jobs run with it. Until that builder is in the tree, a TPU pool runs one slot, which
owns every chip of the host (what the single-server deployment does today).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping

from sandbox.backends import Backend, create_backend

SlotEnvironment = Callable[[str, int, int], Mapping[str, str]]


class SlotLayoutError(ValueError):
    """The worker was asked for a slot layout this tree cannot give it yet."""


def is_tpu_pool(pool: str) -> bool:
    return pool.startswith("tpu-")


def slot_backends(
    backend_name: str, pool: str, slots: int, chip_environment: SlotEnvironment | None = None
) -> list[Backend]:
    """The backend of each slot, index = slot."""
    if is_tpu_pool(pool) and slots > 1:
        if chip_environment is None:
            raise SlotLayoutError(
                f"pool {pool!r} with {slots} slots needs one chip per slot, and the per-chip environment "
                "builder (sandbox.jobenv, issue 18) is not available here; run --slots 1 meanwhile"
            )
        # The seam: each slot's own backend, its jobs confined to that slot's chip(s).
        raise SlotLayoutError("backends do not take a per-slot environment yet (issue 18)")
    return [shared_backend(backend_name, slots)] * slots


def shared_backend(name: str, slots: int) -> Backend:
    if name == "hardened":
        from sandbox.backends.hardened import HardenedBackend

        return HardenedBackend(slots=slots)
    return create_backend(name)
