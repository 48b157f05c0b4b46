"""A catalog entry's expected outputs and inputs: kept on disk, and given to each kernel's job.

`sandbox.backends.checking` keeps what a catalog reference's job computed in memory, per backend.
This module adds what outlives the process and what the kernel's job is spared:
- **on disk** (`ReferenceStore`): one JSON file per key (entry, runtime, mode, chip, devices: the
  memory cache's key with the default runtime named, plus `FORMAT`), so a restarted server or a Redis worker does not run
  the reference's job again. Written only by the host process, after the reference's job (which never
  sees user code) ended well; a job's process can neither reach the directory (the hardened jail does
  not mount it) nor choose what is written. A file that cannot be read is ignored and replaced.
  Bounded by bytes: the least recently used files go first, a sweep's within a quarter of the store.
- **to the kernel's job** (`with_inputs`): each case's inputs, so it does not make them again
  (up to `GIVEN_INPUT_BYTES` in all; beyond, the job makes them as before).

A store is attached to a real backend by whoever creates it (`keep_on_disk`); test doubles have
none, so a fake backend's answers never reach the disk.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import logging
import os
import tempfile
import threading
import weakref
from dataclasses import replace
from pathlib import Path

from sandbox.backends import checking, kept_references
from sandbox.backends.base import Backend
from sandbox.backends.checking import Reference
from sandbox.backends.kept_references import nbytes_of
from sandbox.host.runtimes import RuntimeSet, discover
from sandbox.protocol import CaseInputs, Job, from_json_dict, to_json_dict
from sandbox.protocol.arrays import GIVEN_INPUT_BYTES
from sandbox.protocol.codec import DecodeError
from sandbox.protocol.events import CaseExpected
from sandbox.verdict import arrays
from sandbox.verdict.judge import Expected

log = logging.getLogger(__name__)

# Bumped when what a reference's job sends changes meaning: older files are then never read.
FORMAT = 2  # 2: outputs too large to send whole come with their sums (`verdict.digests`)
STORE_BYTES = 512 << 20
# A catalog sweep's file is named apart and kept within a quarter of the store: anyone can make new
# sweep specs at will, and they must not push the entries' own references off the disk.
SWEEP_FILE = "sweep-"


class ReferenceStore:
    """`default_runtime` names the JAX a job with `runtime == ""` runs on: the memory cache's key may
    say "" (one process, one default), a file must not (the default changes when JAX is upgraded)."""

    def __init__(self, directory: Path, default_runtime: str = "", max_bytes: int = STORE_BYTES) -> None:
        self.directory, self.default_runtime, self.max_bytes = directory, default_runtime, max_bytes
        self._lock = threading.Lock()

    def key(self, job: Job) -> str | None:
        key = kept_references.cache_key(job)
        if key is None or job.entry is None:
            return None  # a scratch file's reference is the user's code's: kept in memory only
        runtime = job.runtime or self.default_runtime
        digest = hashlib.sha256(f"{key}|{runtime}".encode()).hexdigest()
        return SWEEP_FILE + digest if job.sweep is not None else digest

    def path(self, key: str) -> Path:
        return self.directory / f"v{FORMAT}-{key}.json"

    def load(self, key: str, job: Job) -> Reference | None:
        """The kept reference for `key` (the tolerances are `job`'s entry's: they are part of the key)."""
        path = self.path(key)
        try:
            saved = json.loads(path.read_text())
            events = [from_json_dict(CaseExpected, e) for e in saved["cases"]]
            expected = {e.index: Expected.of(e) for e in events}
            of = int(saved["of"])
        except FileNotFoundError:
            return None
        except (OSError, ValueError, KeyError, TypeError, DecodeError, arrays.ChannelError) as exc:
            log.warning("reference file %s is unreadable (%s); it will be made again", path.name, exc)
            return None
        with contextlib.suppress(OSError):
            os.utime(path)  # recently used: the last to go
        tolerances = job.entry.tolerances if job.entry is not None else {}
        return Reference(expected, of=of, tolerances=tolerances, nbytes=nbytes_of(expected))

    def save(self, key: str, reference: Reference) -> None:
        cases = [to_json_dict(e.event) for _, e in sorted(reference.expected.items())]
        text = json.dumps({"format": FORMAT, "of": reference.of, "cases": cases})
        with self._lock:
            try:
                self.directory.mkdir(parents=True, exist_ok=True)
                with tempfile.NamedTemporaryFile("w", dir=self.directory, suffix=".tmp", delete=False) as f:
                    f.write(text)
                os.replace(f.name, self.path(key))  # readers see the whole file or none
                self._trim()
            except OSError as exc:
                log.warning("reference %s could not be kept on disk: %s", key[:12], exc)

    def _trim(self) -> None:
        """Least recently used first out: sweeps' files within their quarter, the entries' within the rest."""
        files = self.directory.glob("v*.json")
        sweeps: list[Path] = []
        entries: list[Path] = []
        for path in files:
            (sweeps if f"-{SWEEP_FILE}" in path.name else entries).append(path)
        quarter = self.max_bytes // 4
        for kept, budget in ((sweeps, quarter), (entries, self.max_bytes - quarter)):
            kept.sort(key=lambda p: p.stat().st_mtime)
            total = sum(p.stat().st_size for p in kept)
            for path in kept:
                if total <= budget:
                    break
                total -= path.stat().st_size
                path.unlink(missing_ok=True)


STORES: weakref.WeakKeyDictionary[Backend, ReferenceStore] = weakref.WeakKeyDictionary()


def keep_on_disk(backend: Backend, directory: Path | None) -> Backend:
    """Keep `backend`'s catalog references in `directory` (None: in memory only); returns `backend`."""
    if directory is not None:
        STORES[backend] = ReferenceStore(directory, default_runtime(backend))
    return backend


def default_runtime(backend: Backend) -> str:
    """The JAX runtime a job that names none runs on: the backend's default, or this host's default."""
    runtimes: RuntimeSet = getattr(backend, "runtimes", None) or discover()
    return f"jax {runtimes.default.name} jaxlib {runtimes.default.jaxlib}"


def store_of(backend: Backend) -> ReferenceStore | None:
    try:
        return STORES.get(backend)
    except TypeError:  # cannot be held weakly: nothing is kept for it
        return None


def recall(backend: Backend, job: Job) -> bool:
    """Put `job`'s kept reference file into the backend's memory cache, unless it is there already;
    whether either had it (then there is nothing new to keep after the run)."""
    cache, key, store = kept_references.cache_of(backend), kept_references.cache_key(job), store_of(backend)
    if cache is None or key is None or store is None:
        return True  # nothing is kept on disk for this backend or this job
    if cache.get(key) is not None:
        return True
    file_key = store.key(job)
    found = store.load(file_key, job) if file_key is not None else None
    if found is not None:
        cache.put(key, found)
    return found is not None


def remember(backend: Backend, job: Job) -> None:
    """Keep on disk the reference the run's reference's job just computed (in the memory cache by now,
    if it ended well, its inputs counted in the cache's bound)."""
    store, reference = store_of(backend), checking.kept(backend, job)
    file_key = store.key(job) if store is not None else None
    if store is not None and reference is not None and file_key is not None:
        store.save(file_key, reference)


def with_inputs(job: Job, reference: object, *, reused: bool = False) -> Job:
    """`job` with every case's inputs from `reference`, when it is a computed `Reference` that has them
    all: kept (a catalog entry's) or computed just before (a scratch file's, in the run's own slot).
    Else unchanged: a reference still computing beside the kernel's job gives none.

    `reused`: the reference was kept from an earlier run, perhaps another user's. What its
    `make_inputs` printed then is that run's output, never this one's: such inputs are not given,
    and the kernel's job makes (and prints) its own."""
    if job.sweep is not None or not isinstance(reference, Reference) or not reference.expected:
        return job
    if reused and any(e.event.printed for e in reference.expected.values()):
        return job
    given = [CaseInputs(i, e.event.inputs, e.event.printed) for i, e in sorted(reference.expected.items())]
    if (
        any(not g.arrays for g in given)
        or sum(len(a.data) for g in given for a in g.arrays) > GIVEN_INPUT_BYTES
    ):
        return job
    return replace(job, inputs=tuple(given))
