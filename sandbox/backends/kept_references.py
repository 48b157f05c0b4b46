"""Kept references: what a reference's job computed, kept per backend by what it depends on.

A catalog entry's expected outputs depend only on the entry, the runtime, the mode, the chip and
the devices (and, for a sweep, its spec): they are computed once per backend process and kept
(bounded by bytes; a sweep's in a budget of its own). A scratch file's depend on the code its reference's job can run
(`sandbox.backends.scratch_reference`): a learner who edits only the kernel is answered by the
reference kept from the first run (in memory only, in a budget of their own, so scratch files cannot
push the catalog's references out).
"""

from __future__ import annotations

import functools
import hashlib
import json
import threading
import weakref
from collections import OrderedDict
from dataclasses import dataclass

from sandbox.backends import scratch_reference
from sandbox.backends.base import Backend
from sandbox.protocol import Job, Tolerance, to_json_dict
from sandbox.verdict.judge import Expected

REFERENCE_CACHE_BYTES = 64 << 20
SCRATCH_REFERENCE_BYTES = 32 << 20
# A catalog sweep's reference is kept per sweep spec (its values and shards): anyone can make new ones
# at will, up to 32 MiB each. In the catalog's own budget, two or three such sweeps pushed every
# entry's reference out, and every learner's next run computed its reference again (issue 41).
SWEEP_REFERENCE_BYTES = 32 << 20
SCRATCH = "scratch:"  # the key prefix of a scratch file's reference
SWEEP = "sweep:"  # the key prefix of a catalog sweep's reference


@dataclass(frozen=True)
class Reference:
    """What the reference's job computed: per case index, the expected outputs (none: nothing to check)."""

    expected: dict[int, Expected]
    of: int
    tolerances: dict[str, Tolerance]
    nbytes: int = 0

    @functools.cached_property
    def by_config(self) -> dict[int, Expected]:
        """A sweep's expected outputs per config index, from the check sizes that name it. Derived, not
        stored: a reference read back from disk once lost them (every config of a sweep run after a
        worker restarted was an error). A check size sent without outputs was past the caps: its
        configs get none to match."""
        return {i: x for x in self.expected.values() if x.outputs for i in x.event.configs}


def nbytes_of(expected: dict[int, Expected]) -> int:
    """Memory a kept reference holds: the decoded outputs (and sums) and the encoded inputs."""
    outputs = sum(a.nbytes for x in expected.values() for _, a in x.outputs)
    outputs += sum(x.sums.nbytes for x in expected.values() if x.sums is not None)
    inputs = sum(len(a.data) for x in expected.values() for a in x.event.inputs)
    return outputs + inputs


class ReferenceCache:
    """References by what they depend on, least recently used dropped first, bounded by bytes: the
    catalog's and scratch files' each in their own budget."""

    def __init__(
        self,
        max_bytes: int = REFERENCE_CACHE_BYTES,
        scratch_bytes: int = SCRATCH_REFERENCE_BYTES,
        sweep_bytes: int = SWEEP_REFERENCE_BYTES,
    ) -> None:
        self.max_bytes, self.scratch_bytes, self.sweep_bytes = max_bytes, scratch_bytes, sweep_bytes
        self._catalog: OrderedDict[str, Reference] = OrderedDict()
        self._scratch: OrderedDict[str, Reference] = OrderedDict()
        self._sweeps: OrderedDict[str, Reference] = OrderedDict()
        self._lock = threading.Lock()

    def _part(self, key: str) -> tuple[OrderedDict[str, Reference], int]:
        if key.startswith(SCRATCH):
            return self._scratch, self.scratch_bytes
        if key.startswith(SWEEP):
            return self._sweeps, self.sweep_bytes
        return self._catalog, self.max_bytes

    def get(self, key: str) -> Reference | None:
        items, _ = self._part(key)
        with self._lock:
            found = items.get(key)
            if found is not None:
                items.move_to_end(key)
            return found

    def put(self, key: str, reference: Reference) -> None:
        items, budget = self._part(key)
        if reference.nbytes > budget:
            return
        with self._lock:
            items[key] = reference
            items.move_to_end(key)
            while sum(r.nbytes for r in items.values()) > budget:
                items.popitem(last=False)


# One cache per backend (weakly held): a backend's references are its own runs' (a test's fake backend
# must never answer for a real one in the same process), and go when the backend goes.
CACHES: weakref.WeakKeyDictionary[Backend, ReferenceCache] = weakref.WeakKeyDictionary()
_CACHES_LOCK = threading.Lock()


def cache_of(backend: Backend) -> ReferenceCache | None:
    """The backend's reference cache (None if it cannot be held weakly: then nothing is kept)."""
    with _CACHES_LOCK:
        try:
            return CACHES.setdefault(backend, ReferenceCache())
        except TypeError:
            return None


def cache_key(job: Job) -> str | None:
    """What `job`'s reference's job computes depends on, hashed; None when it is not kept."""
    if job.entry is None:
        return scratch_key(job)
    facts = [to_json_dict(job.entry), job.runtime, job.mode, job.chip, job.devices, to_json_dict(job.sweep)]
    digest = hashlib.sha256(json.dumps(facts, sort_keys=True).encode()).hexdigest()
    return SWEEP + digest if job.sweep is not None else digest


def scratch_key(job: Job) -> str | None:
    """A scratch file's reference's job runs its code with the job's target and limits: the same code
    it can run (`reference_text`: the kernel's bodies left out) on the same target computes the same,
    for a `make_inputs` and `reference` that are functions of the seed, as the harness asks. A sweep's
    is not kept (its check sizes come from the kernel's side too)."""
    if job.sweep is not None:
        return None
    facts = [
        scratch_reference.reference_text(
            job.reference_source if job.reference_source is not None else job.source
        ),
        job.runtime,
        job.mode,
        job.chip,
        job.devices,
        to_json_dict(job.options),
        to_json_dict(job.limits),
    ]
    return SCRATCH + hashlib.sha256(json.dumps(facts, sort_keys=True).encode()).hexdigest()
