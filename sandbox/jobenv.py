"""The one builder of a job's environment: what every backend hands to the job child.

A job never inherits the server's environment (it may hold secrets, and JAX reads many variables);
it gets a fixed base plus the few host settings that tune the CPU math library, then what the job
itself needs. Backends call `base_environment` once (the hardened pool receives it in its config)
and `job_environment` per job.
"""

from __future__ import annotations

from collections.abc import Mapping

# Host settings a job may inherit: they only tune OpenBLAS for this CPU.
PASS_THROUGH = ("OPENBLAS_CORETYPE", "OPENBLAS_L2_SIZE")


def base_environment(host: Mapping[str, str], *, home: str) -> dict[str, str]:
    """Every job's environment before job-specific settings: a fixed PATH, home, temp and locale."""
    env = {k: host[k] for k in PASS_THROUGH if k in host}
    env.update(PATH="/usr/bin:/bin", HOME=home, TMPDIR=home, LANG="C.UTF-8")
    return env


def job_environment(base: Mapping[str, str], *, devices: int) -> dict[str, str]:
    """`base` plus what this job needs: simulated CPU devices for a multi-device job."""
    env = dict(base)
    if devices > 1:
        # Read when JAX initialises its CPU backend: user code cannot change it later.
        env["XLA_FLAGS"] = f"--xla_force_host_platform_device_count={devices}"
    return env
