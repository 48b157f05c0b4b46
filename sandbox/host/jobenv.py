"""The one builder of a job's environment: what every backend hands to the job child.

A job never inherits the server's environment (it may hold secrets, and JAX reads many variables);
it gets a fixed base plus the few host settings that tune the CPU math library, then what the job
itself needs: the platform it runs on and, on a chip slot, the topology libtpu reads. Backends call
`base_environment` once (the hardened pool receives it in its config) and `job_environment` per job.
"""

from __future__ import annotations

from collections.abc import Mapping

from sandbox.host.tpuhost import TpuSlot

# Host settings a job may inherit: they only tune OpenBLAS for this CPU.
PASS_THROUGH = ("OPENBLAS_CORETYPE", "OPENBLAS_L2_SIZE")
# libtpu's default for the first process of a host; slot i uses the default + i, so that no two
# slots of one host share a port even if they ever share a network namespace (today each job has
# its own, and seccomp denies sockets: see `tpu_environment`).
TPU_PROCESS_PORT = 8476
# glibc keeps up to 8 malloc arenas per core, each reserving 64 MiB of address space: on a 13-core
# TPU VM that alone can pass a job's address-space limit (`Limits.memory_bytes`), and a CPU job there
# died by SIGABRT inside XLA's compile. Two arenas bound it on any host.
MALLOC_ARENAS = "2"
TPU_LOG_DIR = "/tmp/tpu_logs"  # the job's scratch: libtpu's logs go where the job can write


def base_environment(host: Mapping[str, str], *, home: str) -> dict[str, str]:
    """Every job's environment before job-specific settings: a fixed PATH, home, temp and locale."""
    env = {k: host[k] for k in PASS_THROUGH if k in host}
    env.update(PATH="/usr/bin:/bin", HOME=home, TMPDIR=home, LANG="C.UTF-8", MALLOC_ARENA_MAX=MALLOC_ARENAS)
    return env


def job_environment(base: Mapping[str, str], *, devices: int, tpu: TpuSlot | None = None) -> dict[str, str]:
    """`base` plus what this job needs: the chips of its slot, or the CPU and its simulated devices.

    A job without a chip slot is pinned to the CPU platform (the harness applies `JAX_PLATFORMS`
    before any backend call), so that on a TPU host an interpret job never starts libtpu: JAX
    imported in the warm pool would otherwise try the TPU first and take a chip.
    """
    env = dict(base)
    if tpu is not None:
        env.update(tpu_environment(tpu))
        return env
    env["JAX_PLATFORMS"] = "cpu"
    if devices > 1:
        # Read when JAX initialises its CPU backend: user code cannot change it later.
        env["XLA_FLAGS"] = f"--xla_force_host_platform_device_count={devices}"
    return env


def tpu_environment(slot: TpuSlot) -> dict[str, str]:
    """What libtpu reads to run one process on exactly the chips of `slot`, without asking anyone.

    Sources: ray `python/ray/_private/accelerators/tpu.py` (visible chips and per-host bounds for a
    subset of a host's chips), torch_xla `torch_xla/_internal/tpu.py` (`configure_topology`: one
    process per chip, its port in the address list), jax `jax/_src/cloud_tpu_init.py` (what JAX
    sets on a TPU VM: `jax_platforms='tpu,cpu'`; `TPU_SKIP_MDS_QUERY` only when it finds no chip),
    and notes/tpu-vm.md (measured: libtpu 0.0.50.1 refuses a `TPU_PROCESS_PORT` missing from
    `TPU_PROCESS_ADDRESSES`, and without `TPU_SKIP_MDS_QUERY` waits ~29 s per metadata key).

    - `TPU_SKIP_MDS_QUERY=1` plus the full topology: jobs have no network, so the metadata server
      must never be asked; everything it would answer is given here.
    - one host, one process: host and process bounds 1,1,1; the slot's chips form the box of chips
      per host and per process.
    - `TPU_VISIBLE_CHIPS` (and the older `TPU_VISIBLE_DEVICES`) name the slot's chips; the jail
      passes only their device nodes, so the variables select and the jail confines.
    - the process port: distinct per slot and listed in the addresses. Sockets stay denied to jobs
      (seccomp): a single-process slice has no peer to talk to (measured on a v5e VM under gVisor,
      where no TCP socket can be made at all: a one-chip slot started and ran).
    - no runtime metrics server (`TPU_RUNTIME_METRICS_PORTS` empty, as that VM sets it): with a port
      libtpu 0.0.50.1 failed to start there ("Failed to start Runtime Metric Service on address:
      [::]:8431"), and a job has no network for anyone to read it.
    """
    port = TPU_PROCESS_PORT + slot.index
    box = ",".join(map(str, slot.box))
    chips = ",".join(map(str, slot.chips))
    return {
        "JAX_PLATFORMS": "tpu,cpu",
        "TPU_SKIP_MDS_QUERY": "1",
        "TPU_ACCELERATOR_TYPE": slot.accelerator_type,
        "TPU_WORKER_ID": "0",
        "TPU_WORKER_HOSTNAMES": "localhost",
        "TPU_HOST_BOUNDS": "1,1,1",
        "TPU_CHIPS_PER_HOST_BOUNDS": box,
        "TPU_PROCESS_BOUNDS": "1,1,1",
        "TPU_CHIPS_PER_PROCESS_BOUNDS": box,
        "TPU_VISIBLE_CHIPS": chips,
        "TPU_VISIBLE_DEVICES": chips,
        "TPU_PROCESS_PORT": str(port),
        "TPU_PROCESS_ADDRESSES": f"localhost:{port}",
        "TPU_RUNTIME_METRICS_PORTS": "",
        "TPU_LOG_DIR": TPU_LOG_DIR,
    }
