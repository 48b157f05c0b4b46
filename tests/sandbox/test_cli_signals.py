"""`python -m sandbox run` / `tune` stopped by a signal end their job first.

A job runs in a session of its own, so a command killed by `timeout` (SIGTERM) or a closed terminal
(SIGHUP) used to leave its job running: on the lent v5e, a `tune` stopped by `timeout` left its job
holding the chip, and the next program got "open(/dev/vfio/0): Device or resource busy"
(bench/tpu/README.md, 2026-12-06). Here the job and a process it started must be gone when the command
has exited, and the report says the run was cancelled.
"""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.sandbox.test_spine_local import alive

pytestmark = pytest.mark.slow
ROOT = Path(__file__).resolve().parents[2]

# At import: say its pid and a child's, then spin (the job's import phase never ends on its own).
SPINNER = """
import os, subprocess
child = subprocess.Popen(["sleep", "600"])
with open({pids!r}, "w") as f:
    f.write(f"{{os.getpid()}} {{child.pid}}")
while True:
    pass
"""


COMMANDS = {
    "run": ["run", "{file}", "--backend", "local", "--json"],
    "tune": ["tune", "{file}", "--param", "block=8,16", "--size", "m=64", "--backend", "local", "--json"],
}


@pytest.mark.parametrize(
    "command,sig",
    [("run", signal.SIGTERM), ("run", signal.SIGHUP), ("tune", signal.SIGTERM)],
    ids=lambda v: getattr(v, "name", v),
)
def test_a_signalled_command_ends_its_job_and_the_jobs_children(tmp_path, command, sig):
    pids_file = tmp_path / "pids"
    source = tmp_path / "spin.py"
    source.write_text(SPINNER.format(pids=str(pids_file)))
    argv = [sys.executable, "-m", "sandbox", *(a.format(file=source) for a in COMMANDS[command])]
    cli = subprocess.Popen(argv, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.monotonic() + 60
        while not (pids_file.exists() and len(pids_file.read_text().split()) == 2):
            assert time.monotonic() < deadline and cli.poll() is None, "the job never started"
            time.sleep(0.2)
        job, child = map(int, pids_file.read_text().split())
        cli.send_signal(sig)
        out, err = cli.communicate(timeout=30)
    finally:
        cli.kill()
    assert f"{sig.name}: ending the job first" in err
    assert json.loads(out)["status"] == "cancelled", out
    assert not alive(job) and not alive(child), "a process of the job outlived the command"
