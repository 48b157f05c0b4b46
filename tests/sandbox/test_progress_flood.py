"""A kernel flooding schema-valid progress events, in the hardened jail as deployed (#28 point 3): the
run passes, and what `sandbox.backends.execute` forwards of it (what every queue keeps while the run is
kept) stays within the per-event and per-run caps."""

from __future__ import annotations

import json
import threading

import pytest

from sandbox.backends import capability_report, default_backend_name
from sandbox.backends.execute import PROGRESS_BYTES, PROGRESS_CHARS, RUN_BYTES, execute
from sandbox.jobs.build import make_job
from sandbox.limits import default_limits
from sandbox.protocol import RunStatus
from tests.backends import hardened_suite_backend
from tests.sandbox.hostile_corpus import CORPUS_LIMITS, PASSING_KERNEL
from tests.sandbox.hostile_programs import PROGRESS_FLOOD

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(
        default_backend_name() != "hardened",
        reason=f"the hardened backend cannot run here: {capability_report()}",
    ),
]
PRELUDE = "import json, os, sys\n"


def test_a_progress_flood_passes_and_forwards_little():
    backend = hardened_suite_backend()
    source = PRELUDE + PROGRESS_FLOOD + PASSING_KERNEL
    job = make_job(source, limits=default_limits(**CORPUS_LIMITS), timing_budget_seconds=0.02)
    forwarded: list[tuple[str, dict]] = []
    finished = execute(backend, job, threading.Event(), lambda kind, data: forwarded.append((kind, data)))
    assert finished.result.status == RunStatus.PASSED, finished.result.summary
    assert "flooded" in finished.result.stdout
    progress = [data for kind, data in forwarded if kind == "progress"]
    assert len(progress) >= 11 and max(len(p["case"]) for p in progress) <= PROGRESS_CHARS
    sizes = [len(json.dumps(data)) for _, data in forwarded]
    assert sum(sizes) <= RUN_BYTES and sum(len(json.dumps(p)) for p in progress) <= PROGRESS_BYTES
    assert sum(sizes) < 64 << 10, sum(sizes)  # 44 MiB written; a few kB forwarded
