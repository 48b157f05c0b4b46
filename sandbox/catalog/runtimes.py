"""Which JAX runtimes each catalog entry's worked solution passes on: `kernels_catalog/runtimes.toml`.

One table per entry, one row per runtime: the status the solution gets there and, when it does not
pass, the summary the user reads. It is written from a real run on every installed runtime and
checked by the same test (`tests/runtimes/test_catalog_on_runtimes.py`: `RECORD_RUNTIMES=1` writes
it), served by `GET /api/runtimes/catalog`, and each entry's README says why a runtime differs.
"""

from __future__ import annotations

import json
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from sandbox.catalog.entries import DEFAULT_ROOT
from sandbox.host.runtimes import version_key
from sandbox.protocol import RunResult, RunStatus

FILE_NAME = "runtimes.toml"
SUMMARY_CHARS = 300
HEADER = """\
# What each entry's worked solution gets on every JAX runtime (runtimes/*.txt): its status and, when it
# does not pass, the start of the summary a user reads. Written by a real run and checked by it:
#   RECORD_RUNTIMES=1 scripts/test --runtimes tests/runtimes/test_catalog_on_runtimes.py
"""


@dataclass(frozen=True)
class Outcome:
    status: RunStatus
    summary: str = ""  # "" for a pass

    @staticmethod
    def of(result: RunResult) -> Outcome:
        if result.status is RunStatus.PASSED:
            return Outcome(RunStatus.PASSED)
        return Outcome(result.status, result.summary[:SUMMARY_CHARS])

    def matches(self, result: RunResult) -> bool:
        return self == Outcome.of(result)


Record = dict[str, dict[str, Outcome]]


def load(root: Path = DEFAULT_ROOT) -> Record:
    """slug → runtime → outcome; {} when the file is missing."""
    path = root / FILE_NAME
    if not path.is_file():
        return {}
    data = tomllib.loads(path.read_text())
    return {
        slug: {runtime: Outcome(RunStatus(o["status"]), o.get("summary", "")) for runtime, o in rows.items()}
        for slug, rows in data.items()
    }


def dump(record: Mapping[str, Mapping[str, Outcome]]) -> str:
    """The file's text: entries in the given order, runtimes oldest first."""
    lines = [HEADER]
    for slug, rows in record.items():
        lines.append(f"[{slug}]")
        for runtime in sorted(rows, key=version_key):
            outcome = rows[runtime]
            fields = f"status = {json.dumps(str(outcome.status))}"
            if outcome.summary:
                fields += f", summary = {json.dumps(outcome.summary, ensure_ascii=False)}"
            lines.append(f"{json.dumps(runtime)} = {{ {fields} }}")
        lines.append("")
    return "\n".join(lines)
