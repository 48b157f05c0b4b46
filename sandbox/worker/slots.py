"""Which backend each of a worker's slots runs its jobs on.

Interpret pools: one backend shared by all slots, so a host's cores run that many jobs at once (the
hardened backend gets as many CPU slots, each with its own slot uid and cgroups, and no chip: an
interpret worker on a TPU host never takes a chip).

TPU pools (`tpu-v5e`, …, `tpu7x`): one slot per chip. The hardened backend's chip slots
(`sandbox.host.tpuhost.host_slots`) confine each job to its chip with the environment libtpu reads
(`sandbox.host.jobenv.tpu_environment`: visible chips, process bounds, ports) and only that chip's device
nodes; the worker runs as many jobs at once as the host has chip slots. Untested on hardware here.
"""

from __future__ import annotations

import os

from sandbox.backends import Backend, create_backend


class SlotLayoutError(ValueError):
    """The worker was asked for a slot layout this host cannot give."""


def is_tpu_pool(pool: str) -> bool:
    return pool.startswith("tpu")


def pool_chip(pool: str) -> str:
    """`tpu-v5e` → `v5e`; `tpu7x` names its chip itself."""
    return pool.removeprefix("tpu-")


def slot_backends(backend_name: str, pool: str, slots: int | None) -> list[Backend]:
    """The backend of each slot, index = slot (`slots` None: one per core, or one per chip slot)."""
    if is_tpu_pool(pool):
        return chip_slot_backends(backend_name, pool, slots)
    count = slots or os.cpu_count() or 1
    return [shared_backend(backend_name, count)] * count


def chip_slot_backends(backend_name: str, pool: str, slots: int | None) -> list[Backend]:
    if backend_name != "hardened":
        raise SlotLayoutError(
            f"pool {pool!r} runs jobs natively on chips, which only the hardened backend confines to "
            "their chip slots; use --backend hardened"
        )
    from sandbox.backends.hardened import HardenedBackend
    from sandbox.backends.runtimes import RuntimeBackend

    # Chip slots only (one per chip of this host), a warm pool per JAX runtime sharing them.
    backend = create_backend("hardened", slots=0)
    assert isinstance(backend, RuntimeBackend) and isinstance(backend.default, HardenedBackend)
    chip_slots = backend.default.tpu_slots
    found = sorted({slot.chip for slot in chip_slots})
    count = len(chip_slots)
    problem = ""
    if found != [pool_chip(pool)]:
        problem = f"pool {pool!r} runs on {pool_chip(pool)} chips; this host has {', '.join(found) or 'none'}"
    elif slots not in (None, count):
        problem = f"this host has {count} chip slots; run --slots {count} (or leave --slots out)"
    if problem:
        backend.close()
        raise SlotLayoutError(problem)
    return [backend] * count


def shared_backend(name: str, slots: int) -> Backend:
    """Every installed JAX runtime behind one backend, as on a web server's own slots: a job runs on
    the runtime it names (a bare warm pool would run every job on the newest, whatever it asked for)."""
    if name == "hardened":
        return create_backend(name, slots=slots, tpu_slots=())
    return create_backend(name)
