"""The HTTP API fuzzed from its own OpenAPI document with schemathesis (its CLI, as a user of the
tool would run it): every operation, schema-valid and schema-violating inputs, stateful sequences
(create a run, read it, cancel it, follow its events), never a 5xx, and every response's status,
content type, body and headers as the document declares them.

Two checks are left out, for reasons of meaning, not of convenience:
- `positive_data_acceptance`: some schema-valid requests are rightly refused, because the rule
  cannot be said in JSON Schema (the entry must be in the catalog; a lesson step names a share or
  carries a source; a source is limited in bytes; text must be valid Unicode);
- `use_after_free`: `DELETE /api/runs/{id}` cancels a run; the cancelled run stays readable.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from server.app import create_app
from server.settings import Settings
from tests.api.fakes import FakeBackend
from tests.live import serving

pytestmark = pytest.mark.slow
EXCLUDED = ("positive_data_acceptance", "use_after_free")


# Examples per operation: the default run's budget (about a minute on two cores), and `--long`'s (CI;
# 25 took 150 s of the suite's ~15 minutes).
EXAMPLES, LONG_EXAMPLES = 8, 15


def test_every_operation_keeps_its_contract(tmp_path, pytestconfig):
    backend = FakeBackend()
    backend.release.set()  # runs that would block finish at once
    settings = Settings(
        data_dir=tmp_path,
        slots=1,
        queue_size=256,
        per_client_queue=10_000,
        per_address_queue=10_000,
        rate_per_minute=0,
        address_rate_per_minute=0,
        store_saves_per_minute=0,
        store_address_bytes_per_hour=0,
        class_joins_per_minute=0,
    )
    cli = shutil.which("schemathesis", path=str(Path(sys.executable).parent))
    assert cli, "schemathesis is a test dependency (pip install -e '.[test]')"
    examples = LONG_EXAMPLES if pytestconfig.getoption("--long") else EXAMPLES
    with serving(create_app(settings, backend=backend)) as url:
        run = subprocess.run(
            [
                cli, "run", f"{url}/openapi.json",
                "--checks", "all", "--exclude-checks", ",".join(EXCLUDED),
                "--mode", "all", "--max-examples", str(examples), "--seed", "20261203",
                "--generation-deterministic", "--workers", "1", "--no-color",
            ],
            capture_output=True,
            text=True,
            timeout=600,
        )  # fmt: skip
    summary = run.stdout[-6000:]
    assert run.returncode == 0, summary
    # Every operation was exercised: 13, 4 of /api/sweeps, 3 of lessons, 5 of runtimes and matrices, 15 of
    # classes (7 of a class's setup, door and people, 8 of a class while it runs), 3 of a share's notebook
    # and measurements.
    assert "Tested: 43" in summary, summary
