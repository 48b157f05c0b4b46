"""What JAX itself sees on a chip slot: a probe process with exactly a job's environment.

Discovery (`sandbox.host.tpuhost`) reads sysfs and /dev; whether libtpu then opens the chip is known
only by trying, in a fresh process (a failed start can poison the process that tried). The probe
prints one JSON line: the device kinds JAX reports, or the error that stopped it. `read_probe` turns
that (or a crash) into a `ProbeResult`; tests replay recorded answers through it.
"""

from __future__ import annotations

import json
import re
import subprocess
import time
from collections.abc import Mapping
from dataclasses import dataclass

PROBE = (
    "import json\n"
    "try:\n"
    "    import jax\n"
    "    kinds = [d.device_kind for d in jax.devices()]\n"
    "    print('PROBE ' + json.dumps({'kinds': kinds, 'platform': jax.default_backend()}))\n"
    "except Exception as exc:\n"
    "    print('PROBE ' + json.dumps({'error': f'{type(exc).__name__}: {exc}'}))\n"
)
PROBE_SECONDS = 120.0  # opening a v5e took 2-11 s on the lent VM; a metadata-server wait is ~29 s a key
# libtpu's two answers for a chip another process holds (recorded on the lent v5e; see harness.target).
_BUSY = re.compile(
    r"TPU is already in use by process with pid (\d+)|Device or resource busy|open iommu group"
)


@dataclass(frozen=True)
class ProbeResult:
    device_kinds: tuple[str, ...] = ()
    platform: str = ""
    error: str = ""
    busy: bool = False  # the chip is held by another process
    busy_pid: int | None = None  # which one, when libtpu says
    seconds: float = 0.0

    @property
    def ok(self) -> bool:
        return not self.error and self.platform == "tpu"

    def describe(self) -> str:
        if self.ok:
            counts: dict[str, int] = {}
            for kind in self.device_kinds:
                counts[kind] = counts.get(kind, 0) + 1
            seen = ", ".join(f"{n} × {kind}" for kind, n in counts.items())
            return f"JAX sees {seen} ({self.seconds:.1f} s to open)"
        if self.busy:
            holder = f" (pid {self.busy_pid})" if self.busy_pid is not None else ""
            return f"the chip is held by another program{holder}; jobs wait for it"
        if not self.error:
            return f"JAX started on {self.platform or 'no platform'}, not the TPU"
        return f"JAX could not open the chip: {self.error}"


def probe(python: str, env: Mapping[str, str], timeout: float = PROBE_SECONDS) -> ProbeResult:
    """Open the slot's chips once, as a job would (`env` from `jobenv.job_environment`)."""
    started = time.monotonic()
    try:
        done = subprocess.run(
            [python, "-I", "-c", PROBE], env=dict(env), capture_output=True, text=True, timeout=timeout
        )
    except subprocess.TimeoutExpired:
        return ProbeResult(error=f"no answer within {timeout:.0f} s", seconds=time.monotonic() - started)
    return read_probe(done.stdout, done.stderr, done.returncode, time.monotonic() - started)


def read_probe(stdout: str, stderr: str, returncode: int, seconds: float = 0.0) -> ProbeResult:
    """The probe's answer from its output: its JSON line, else the end of what it printed."""
    line = next((x for x in reversed(stdout.splitlines()) if x.startswith("PROBE ")), None)
    if line is None:
        tail = " | ".join(stderr.strip().splitlines()[-3:]) or f"exit code {returncode}"
        return ProbeResult(error=f"the probe died ({tail[-600:]})", seconds=seconds)
    answer = json.loads(line[len("PROBE ") :])
    error = str(answer.get("error", ""))
    busy = _BUSY.search(error)
    return ProbeResult(
        device_kinds=tuple(answer.get("kinds", ())),
        platform=str(answer.get("platform", "")),
        error=error.splitlines()[0][:600] if error else "",
        busy=busy is not None,
        busy_pid=int(busy.group(1)) if busy and busy.group(1) else None,
        seconds=seconds,
    )
