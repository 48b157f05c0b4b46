"""Time to the first verdict of `tiled_matmul` through HTTP, against the same kernel's first call in a notebook.

Usage: .venv/bin/python bench/e2e_latency.py [--repeats 5] [--sandbox hardened|local|auto]

Two headlines, because "the first verdict" depends on whether the reference's outputs are already known:
1. kept reference (this bench's first configuration): the catalog entry `tiled_matmul`, fresh runs
   (POST /api/runs with `fresh`, so no cached result) after a warm-up, so the server already keeps the
   entry's expected outputs and only the kernel's job runs;
2. reference computed: a scratch file of the same gridded f32 256³ matmul with its own `reference`, a
   new file each run (`as_new_file`), so its reference's job runs beside the kernel's on every run: what a
   first run of an entry on a fresh server, or any new file of one's own, costs.
Each is the time until the first case's verdict arrives over SSE, divided by the plain in-process first
call: a process with JAX imported and
the inputs made calls the kernel once under TPU interpret mode, without recording a trace (what a
notebook user runs). Both are measured in the same run of this script, interleaved (one notebook
call, then one HTTP run, `--repeats` times), because absolute times on a shared machine move with
its load; medians are reported, and the load before and after. On the hardened backend as root the
notebook call is also run with the jobs' CPU weight (`jobs_weight`), and that ratio printed too.

Then the separate checker's cost (`print_verdict_cost`; `--no-verdict-cost` skips it). Also printed:
every phase of the HTTP runs as the server measured it (`RunResult.phases`: queued,
reference, started, imported, compiled, first_verdict, done), when each SSE event arrived, the whole
run to `done`, and the in-process warm call and fresh process for scale. The server's first run is a
warm-up (it computes the entry's expected outputs once, or reads them from its reference store) and is
not counted.
"""

from __future__ import annotations

import argparse
import json
import os
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
from collections.abc import Callable
from pathlib import Path

from sandbox.limits import JOB_NICE

ROOT = Path(__file__).resolve().parent.parent
KERNEL = ROOT / "kernels_catalog" / "tiled_matmul" / "kernel.py"
IN_PROCESS = f"""
import time, json
t0 = time.perf_counter()
import jax, jax.numpy as jnp
from jax.experimental.pallas import tpu as pltpu
pltpu.set_tpu_interpret_mode(pltpu.InterpretParams())
ns = {{}}
exec(compile(open({str(KERNEL)!r}).read(), "kernel.py", "exec"), ns)
x = jax.random.normal(jax.random.key(0), (256, 256), jnp.float32)
y = jax.random.normal(jax.random.key(1), (256, 256), jnp.float32)
dev = jax.sharding.AbstractDevice("TPU v5p", 1, "tpu")
with jax.sharding.use_abstract_mesh(jax.sharding.AbstractMesh((), (), abstract_device=dev)):
    jax.block_until_ready(x + y)
    t1 = time.perf_counter()
    jax.block_until_ready(ns["matmul"](x, y))
    t2 = time.perf_counter()
    warm = []
    for _ in range(5):
        t = time.perf_counter(); jax.block_until_ready(ns["matmul"](x, y)); warm.append(time.perf_counter() - t)
print(json.dumps({{"process": t2 - t0, "first": t2 - t1, "warm": sorted(warm)[2]}}))
"""
# SSE events before the first verdict, in the order they come (case 1 is the verdict).
MILESTONES = ("running", "started", "versions", "imported", "compiled", "case", "trace", "lowering", "timing")
PHASES = ("queued", "reference", "started", "imported", "compiled", "first_verdict", "done")


def in_process(cgroup: Path | None = None) -> dict[str, float]:
    """The notebook's first call (no trace), in a fresh interpreter with JAX imported and inputs made;
    in `cgroup` at the jobs' nice value when given (see `jobs_weight`)."""

    def as_a_job() -> None:
        if cgroup is not None:
            (cgroup / "cgroup.procs").write_text(str(os.getpid()))
            os.nice(JOB_NICE)

    out = subprocess.run(
        [sys.executable, "-c", IN_PROCESS], capture_output=True, text=True, check=True, preexec_fn=as_a_job
    )
    return json.loads(out.stdout.strip().splitlines()[-1])


def jobs_weight() -> Path | None:
    """A CPU cgroup beside the hardened pools' (the same weight against the rest of the machine), so the
    notebook call competes for the CPU as a job does; None when not root or no CPU controller.

    On a shared machine every pool's jobs share one cgroup (`pallas-playground`), which the kernel's
    scheduler weighs as one task against every other process: with 20 processes running, a job gets a
    fraction of what a process outside gets. Then the ratio would measure the neighbours, not the
    playground; on a machine running only the playground the two conditions are the same.
    """
    from sandbox.jail import cgroup_layout
    from sandbox.jail.cgroups import BASE_NAME

    layout = cgroup_layout.detect()
    if os.geteuid() != 0 or layout.cpu is None:
        return None
    path = layout.cpu.here / BASE_NAME / f"notebook-{os.getpid()}"
    path.mkdir(parents=True, exist_ok=True)
    return path


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def http_run(base: str, run: dict[str, str] | None = None, status: str = "passed") -> dict[str, object]:
    """One fresh run: seconds from POST to each SSE event's first arrival, and the result's phases.
    `run`: the request's source and entry (default: the tiled_matmul solution) that must end `status`."""
    request_run = run or {"source": KERNEL.read_text(), "entry": "tiled_matmul"}
    body = json.dumps({**request_run, "fresh": True}).encode()
    request = urllib.request.Request(
        f"{base}/api/runs", data=body, headers={"content-type": "application/json"}
    )
    t0 = time.perf_counter()
    created = json.load(urllib.request.urlopen(request))
    seen: dict[str, float] = {"posted": time.perf_counter() - t0}
    with urllib.request.urlopen(base + created["events_url"]) as stream:
        for line in stream:
            if line.startswith(b"event: "):
                kind = line[7:].decode().strip()
                seen.setdefault(kind, time.perf_counter() - t0)
                if kind == "done":
                    break
    result = json.load(urllib.request.urlopen(base + created["url"]))["result"]
    if result["status"] != status:
        raise SystemExit(f"benchmark run ended {result['status']}, not {status}: {result['summary']}")
    return {"arrivals": seen, "phases": result.get("phases") or {}}  # older servers have none


def start_server(
    sandbox: str, data_dir: Path, slots: int | None = 1, tries: int = 600
) -> tuple[subprocess.Popen[bytes], str]:
    """A web server (`slots` None: its default) with no result cache, given `tries` tenths of a second
    to answer; other benchmarks use it too."""
    port = free_port()
    env = {
        **os.environ,
        "PLAYGROUND_PORT": str(port),
        "PLAYGROUND_SANDBOX": sandbox,
        "PLAYGROUND_DATA_DIR": str(data_dir),
        "PLAYGROUND_CACHE_SIZE": "0",
    }
    if slots is not None:
        env["PLAYGROUND_SLOTS"] = str(slots)
    return serve(env, port, "/api/health", tries=tries)


def serve(
    env: dict[str, str], port: int, ready_path: str, tries: int = 600
) -> tuple[subprocess.Popen[bytes], str]:
    """`python -m server` with `env`, once `ready_path` answers on `port`: the process and its base URL.
    `PLAYGROUND_BENCH_TREE` in `env` runs another checkout's server (e.g. an older commit's export)."""
    tree = Path(env.get("PLAYGROUND_BENCH_TREE", ROOT))
    proc = subprocess.Popen(
        [sys.executable, "-m", "server"],
        env={k: v for k, v in env.items() if k != "PLAYGROUND_BENCH_TREE"},
        cwd=tree,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    base = f"http://127.0.0.1:{port}"
    for _ in range(tries):
        try:
            urllib.request.urlopen(f"{base}{ready_path}", timeout=1)
            return proc, base
        except OSError:
            time.sleep(0.1)
    proc.kill()
    raise SystemExit("the web server did not start")


# A scratch file with its own reference, and the same file without one (nothing to check: status `ran`).
WITH_REFERENCE = """
import jax, jax.numpy as jnp
from jax.experimental import pallas as pl

def make_inputs(seed):
    return (jax.random.normal(jax.random.key(seed), (256, 256)),)

def body(x_ref, o_ref):
    o_ref[...] = jnp.tanh(x_ref[...]) * 2

def kernel(x):
    return pl.pallas_call(body, out_shape=jax.ShapeDtypeStruct(x.shape, x.dtype))(x)

def reference(x):
    return jnp.tanh(x) * 2
"""
# A scratch file as a learner writes one: a gridded matmul (2 x 2 x 2 steps of 128-blocks, f32 256³).
MATMUL_WITH_REFERENCE = """
import functools
import jax, jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import tpu as pltpu

def make_inputs(seed):
    kx, ky = jax.random.split(jax.random.key(seed))
    return jax.random.normal(kx, (256, 256)), jax.random.normal(ky, (256, 256))

def body(x_ref, y_ref, o_ref, acc_ref):
    @pl.when(pl.program_id(2) == 0)
    def _():
        acc_ref[...] = jnp.zeros_like(acc_ref)

    acc_ref[...] += jnp.dot(
        x_ref[...], y_ref[...], preferred_element_type=jnp.float32, precision=jax.lax.Precision.HIGHEST
    )

    @pl.when(pl.program_id(2) == pl.num_programs(2) - 1)
    def _():
        o_ref[...] = acc_ref[...]

@jax.jit
def kernel(x, y):
    return pl.pallas_call(
        body,
        out_shape=jax.ShapeDtypeStruct((256, 256), x.dtype),
        grid=(2, 2, 2),
        in_specs=[pl.BlockSpec((128, 128), lambda i, j, k: (i, k)),
                  pl.BlockSpec((128, 128), lambda i, j, k: (k, j))],
        out_specs=pl.BlockSpec((128, 128), lambda i, j, k: (i, j)),
        scratch_shapes=[pltpu.VMEM((128, 128), jnp.float32)],
    )(x, y)

def reference(x, y):
    return jnp.dot(x, y, precision="highest")
"""
SCRATCH_FILES = {"one block, tanh": WITH_REFERENCE, "gridded matmul 256³": MATMUL_WITH_REFERENCE}


def as_new_file(source: str, n: int) -> str:
    """`source` as another file: a top-level line its reference's job runs (nothing of it is kept)."""
    return f"_FILE = {n}\n{source}"


def kernel_edited(source: str, n: int) -> str:
    """`source` with its Pallas body edited (a learner's next try): its reference's job is unchanged."""
    head, body = source.split("def body(", 1)
    signature, rest = body.split("\n", 1)
    return f"{head}def body({signature}\n    _try = {n}\n{rest}"


EDITS = {"a new file each run": as_new_file, "the kernel edited each run": kernel_edited}


def verdict_cost(
    sandbox: str, repeats: int, slots: int, source: str, edit: Callable[[str, int], str]
) -> tuple[float, float]:
    """Median seconds to `done` of a scratch file with its reference, and without, on `slots` slots,
    each run's file `edit(source, n)`: no run reuses another's result, and only what the edit leaves
    of the reference's job may be kept."""
    unchecked = source.split("def reference")[0]
    with tempfile.TemporaryDirectory() as tmp:
        proc, base = start_server(sandbox, Path(tmp), slots=slots)
        try:
            http_run(base, run={"source": source})  # warm the pool (and keep the unedited reference)
            pairs = [
                (
                    http_run(base, run={"source": edit(source, n)})["arrivals"]["done"],  # type: ignore[index]
                    http_run(base, run={"source": edit(unchecked, n)}, status="ran")["arrivals"]["done"],  # type: ignore[index]
                )
                for n in range(1, repeats + 1)
            ]
        finally:
            proc.terminate()
            proc.wait(10)
    return statistics.median(w for w, _ in pairs), statistics.median(o for _, o in pairs)


def print_verdict_cost(sandbox: str, repeats: int) -> None:
    """The separate checker's cost (issue 22): a scratch file with its own `reference` (a reference's
    job, then the checker, outside the kernel's process) against the same file without one,
    interleaved, through servers of one slot (the two jobs one after the other) and of two (the
    reference's job beside the kernel's when a slot is free); for a file run for the first time, and
    for a learner's next try (only the kernel edited: the reference kept from the try before)."""
    print("\nthe verdict's added cost (scratch file with its own reference vs the same file without one):")
    for name, source in SCRATCH_FILES.items():
        for how_edited, edit in EDITS.items():
            for slots, how in ((1, "one after the other"), (2, "the reference's job beside the kernel's")):
                checked, alone = verdict_cost(sandbox, repeats, slots, source, edit)
                added = checked - alone
                print(
                    f"  {name}, {how_edited}, {slots} slot(s), {how}: {checked:.3f} s checked, "
                    f"{alone:.3f} s unchecked: {added:+.3f} s ({added / checked:+.0%} of the checked run)"
                )


def median(values: list[float]) -> float:
    return statistics.median(values) if values else float("nan")


def report(
    local: list[dict[str, float]],
    runs: list[dict[str, object]],
    computed: list[dict[str, object]],
    backend: str,
    loads: str,
) -> None:
    first = [r["first"] for r in local]
    verdict = [r["arrivals"]["case"] for r in runs]  # type: ignore[index]
    done = [r["arrivals"]["done"] for r in runs]  # type: ignore[index]
    print(f"tiled_matmul f32 256³ on {backend}, {len(runs)} interleaved repeats, {os.cpu_count()} cores, "
          f"{time.strftime('%Y-%m-%d %H:%M')}; load average {loads}")  # fmt: skip
    for label, these in (
        ("kept reference (catalog entry, warm server)", runs),
        ("reference computed (a new scratch file each run)", computed),
    ):
        seconds = [r["arrivals"]["case"] for r in these]  # type: ignore[index]
        print(
            f"\nHEADLINE {label}: first verdict {median(seconds):.3f} s / plain in-process first call "
            f"{median(first):.3f} s = {median(seconds) / median(first):.2f}x  (medians; per repeat: "
            + ", ".join(f"{v / f:.2f}x" for v, f in zip(seconds, first, strict=True))
            + ")"
        )
    reference = [r["phases"].get("reference") or 0.0 for r in computed]  # type: ignore[attr-defined]
    print(
        f"  the difference: the reference's job, {median(reference):.3f} s median before the kernel's verdict "
        "can be judged (RunResult.phases['reference'])"
    )
    print(f"\n{'measurement':52} {'seconds':>9}")
    rows = {
        "in-process, warm call": median([r["warm"] for r in local]),
        "in-process, first call (compile + run, no trace)": median(first),
        "fresh process (import + compile + run)": median([r["process"] for r in local]),
        f"HTTP: POST → first verdict ({backend})": median(verdict),
        f"HTTP: POST → done, the full check ({backend})": median(done),
    }
    for name, seconds in rows.items():
        print(f"{name:52} {seconds:9.3f}")
    print("\nphases as the server measured them (RunResult.phases, median seconds):")
    for phase in PHASES:
        values = [r["phases"][phase] for r in runs if r["phases"].get(phase) is not None]  # type: ignore[index]
        if not values:
            continue
        print(f"  {phase:14} {median(values):7.3f}")
    print("SSE arrivals (median seconds from POST):")
    for kind in ("posted", *MILESTONES, "done"):
        values = [r["arrivals"][kind] for r in runs if kind in r["arrivals"]]  # type: ignore[operator,index]
        if values:
            print(f"  {kind:14} {median(values):7.3f}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--sandbox", default="hardened")
    parser.add_argument(
        "--server-tree", type=Path, help="run this checkout's server instead (a before figure)"
    )
    parser.add_argument("--no-verdict-cost", action="store_true", help="skip the separate checker's cost")
    args = parser.parse_args()
    if args.server_tree:
        os.environ["PLAYGROUND_BENCH_TREE"] = str(args.server_tree.resolve())
    before = "{:.2f} {:.2f} {:.2f}".format(*os.getloadavg())
    weighted = jobs_weight() if args.sandbox == "hardened" else None
    local: list[dict[str, float]] = []
    plain: list[dict[str, float]] = []
    runs: list[dict[str, object]] = []
    computed: list[dict[str, object]] = []
    with tempfile.TemporaryDirectory() as tmp:
        proc, base = start_server(args.sandbox, Path(tmp))
        try:
            http_run(base)  # warm-up: the pool, the entry's expected outputs
            for n in range(args.repeats):
                if weighted is not None:
                    plain.append(in_process())
                local.append(in_process(weighted))
                runs.append(http_run(base))
                computed.append(http_run(base, run={"source": as_new_file(MATMUL_WITH_REFERENCE, n)}))
            backend = json.load(urllib.request.urlopen(f"{base}/api/version"))["sandbox"]
        finally:
            proc.terminate()
            proc.wait(10)
            if weighted is not None:
                weighted.rmdir()
    after = "{:.2f} {:.2f} {:.2f}".format(*os.getloadavg())
    report(plain or local, runs, computed, backend, f"{before} before, {after} after")
    if weighted is not None:
        verdict = median([r["arrivals"]["case"] for r in runs])  # type: ignore[index]
        first = median([r["first"] for r in local])
        print(
            f"\nthe same notebook call with the jobs' CPU weight (a cgroup beside the pools', nice {JOB_NICE}): "
            f"{first:.3f} s, a ratio of {verdict / first:.2f}x"
        )
    if not args.no_verdict_cost:
        print_verdict_cost(args.sandbox, args.repeats)


if __name__ == "__main__":
    main()
