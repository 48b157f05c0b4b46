"""A bounded cache of results of identical runs (same source, entry, chip, mode, options, limits, versions).

A hit is returned flagged with the original run's time and an opaque reference to it (`cache_ref`),
so its timings are never presented as a fresh measurement, and the original run's id (a capability:
whoever holds it may read and cancel that run) never reaches whoever submits the same job. Only outcomes that the code itself determines are cached: not timeouts, limits
or cancellations, which depend on the machine's load at the time.
"""

from __future__ import annotations

import base64
import collections
import dataclasses
import hashlib
import json
import time

from sandbox.backends.execute import reusable_result
from sandbox.protocol import Job, RunResult, to_json_dict


def cache_ref(run_id: str) -> str:
    """What a cached copy names its original run by: a one-way digest of the run's 128 random bits, so
    it tells two hits of one original apart from two of different ones, and opens nothing."""
    digest = hashlib.sha256(f"cached-from\n{run_id}".encode()).digest()
    return "c-" + base64.urlsafe_b64encode(digest[:12]).decode()


def job_key(job: Job, versions: str) -> str:
    identity = to_json_dict(dataclasses.replace(job, id=""))
    text = json.dumps({"job": identity, "versions": versions}, sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(text.encode()).hexdigest()


class ResultCache:
    def __init__(self, capacity: int) -> None:
        self.capacity = capacity
        self._items: collections.OrderedDict[str, tuple[str, float, RunResult]] = collections.OrderedDict()

    def get(self, key: str) -> RunResult | None:
        item = self._items.get(key)
        if item is None:
            return None
        self._items.move_to_end(key)
        run_id, at, result = item
        return dataclasses.replace(result, cached_from=cache_ref(run_id), cached_at=at, phases=None)

    def put(self, key: str, run_id: str, result: RunResult) -> None:
        if self.capacity <= 0 or not reusable_result(result):
            return
        self._items[key] = (run_id, time.time(), result)
        self._items.move_to_end(key)
        while len(self._items) > self.capacity:
            self._items.popitem(last=False)
