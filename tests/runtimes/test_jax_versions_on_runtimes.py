"""The adapter's version table says of each installed runtime what its real JAX shows: whether the
pinned fixes install, whether the chip's arithmetic does, whether its race detector prints."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from sandbox.harness.jaxapi.versions import support
from sandbox.host.runtimes import RuntimeSet

pytestmark = [pytest.mark.runtimes]

ROOT = Path(__file__).resolve().parents[2]
SHOW = """
import dataclasses, json
import jax
from sandbox.harness.jaxapi import interpret, interpret_fixes
fields = {f.name for f in dataclasses.fields(interpret.interpret_params_type())}
print(json.dumps({"jax": jax.__version__, "on_race": "on_race" in fields, "fixes": interpret_fixes.install()}))
"""


def test_the_version_table_matches_every_runtimes_jax(runtimes: RuntimeSet):
    for runtime in runtimes.runtimes:
        shown = subprocess.run(
            [str(runtime.python), "-c", SHOW],
            cwd=ROOT,
            capture_output=True,
            text=True,
            timeout=120,
            check=True,
            env={"JAX_PLATFORMS": "cpu", "PATH": "/usr/bin:/bin"},
        )
        real = json.loads(shown.stdout.splitlines()[-1])
        row = support(real["jax"])
        assert real["jax"] == runtime.name
        assert row.internals == ("sparsecore_axis_index" in real["fixes"]), real
        assert row.chip_arithmetic == ("mxu_precision" in real["fixes"]), real
        assert row.prints_races == (not real["on_race"]), real
