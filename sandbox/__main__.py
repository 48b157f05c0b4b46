"""`python -m sandbox run FILE [--entry SLUG] [--chip v5p] [--all-chips]`: one file through the harness.
With `--server URL`, through a playground server instead (`pallas_playground.Client`): the same report
and exit codes, its queue and sandbox; `--share` prints a link to the run's state and result.

`python -m sandbox tpu [--chips-per-slot N] [--no-probe]`: this machine's usable TPU chips, each chip
slot's device nodes and job environment, and what JAX sees on the first (docs/tpu-vm.md); exit 1
without a usable chip.
`python -m sandbox tune FILE [--entry SLUG] --chip v5e --size m=4096,k=4096,n=4096 --param bm=128,512
[--param ...] [--json]`: a sweep, one row per config (see `sandbox.jobs.sweeps`).
"""

from __future__ import annotations

import argparse
import contextlib
import dataclasses
import json
import signal
import sys
import threading
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

from sandbox.backends import Backend, backend_names, create_backend
from sandbox.backends.execute import execute
from sandbox.catalog.entries import Catalog, load_catalog
from sandbox.host import chipprobe, tpu_report
from sandbox.jobs import sweeps
from sandbox.jobs.build import JobError, make_job, make_sweep_job
from sandbox.limits import default_limits
from sandbox.protocol import CHIPS, InterpretOptions, RunResult, RunStatus, to_json_dict
from sandbox.results import measured
from sandbox.results.text_report import render


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="python -m sandbox", description=__doc__)
    sub = p.add_subparsers(dest="command", required=True)
    run = sub.add_parser("run", help="run one kernel file and print a report")
    run.add_argument("file", type=Path, help="a kernel file (catalog mode with --entry, else scratch mode)")
    run.add_argument("--entry", help="catalog entry slug to check against")
    run.add_argument("--chip", choices=CHIPS, default="v5p")
    run.add_argument(
        "--mode",
        choices=("auto", "interpret", "tpu", "both"),
        default="auto",
        help="both: on this machine's TPU and in the simulator, the two verdicts side by side",
    )
    run.add_argument(
        "--backend",
        default="local",
        type=_backend_name,
        help=f"{', '.join(backend_names())}, or remote:SOCKET (a running job-runner service)",
    )
    run.add_argument(
        "--detect-races",
        action=argparse.BooleanOptionalAction,
        default=None,
        help="run the race detector (default: the entry's choice, else off)",
    )
    run.add_argument(
        "--zero-memory",
        action=argparse.BooleanOptionalAction,
        default=None,
        help="uninitialised memory = 0 instead of NaN",
    )
    run.add_argument(
        "--eager-dma",
        action=argparse.BooleanOptionalAction,
        default=None,
        help="DMA execution mode 'eager' instead of 'on_wait'",
    )
    run.add_argument(
        "--oob-reads",
        choices=("raise", "uninitialized"),
        default=None,
        help="a read past a buffer raises, or returns the uninitialised fill (default: raise)",
    )
    run.add_argument(
        "--padded-bounds",
        action=argparse.BooleanOptionalAction,
        default=None,
        help="bounds of a buffer are its shape padded to the chip's tiles, not its shape",
    )
    run.add_argument(
        "--trace",
        action=argparse.BooleanOptionalAction,
        default=True,
        help="record the kernel trace of the first call (default: on)",
    )
    run.add_argument("--wall-seconds", type=float, default=None)
    run.add_argument(
        "--timing-budget", type=float, default=1.5, metavar="SECONDS", help="repeated timing runs, in total"
    )
    run.add_argument("--json", action="store_true", help="print the RunResult as JSON")
    run.add_argument(
        "--server", metavar="URL", help="run on this playground server (its queue and sandbox), not locally"
    )
    run.add_argument(
        "--share", action="store_true", help="with --server: print a link to the run and its result"
    )
    run.add_argument(
        "--all-chips", action="store_true", help="also check the TPU lowering for every chip, side by side"
    )
    run.add_argument(
        "--ir", choices=("jaxpr", "mosaic", "stablehlo"), help="print this IR of the --chip lowering check"
    )
    sub.add_parser("catalog", help="list the catalog entries")
    tpu = sub.add_parser("tpu", help="this host's TPU chips and the job runner's chip slots")
    tpu.add_argument("--chips-per-slot", type=int, default=1)
    tpu.add_argument(
        "--no-probe", action="store_true", help="do not open the chip with JAX (a probe takes 2-15 s)"
    )
    tune = sub.add_parser("tune", help="sweep kernel parameters: check, lower and estimate every config")
    tune.add_argument(
        "file",
        type=Path,
        help="catalog mode with --entry; else make_inputs(seed, **size), kernel(*inputs, **params)",
    )
    tune.add_argument("--entry", help="catalog entry slug (its [tune] table gives defaults)")
    tune.add_argument("--chip", choices=CHIPS, default="v5e", help="the chip to estimate and lower for")
    tune.add_argument("--size", help="target problem size, e.g. m=4096,k=4096,n=4096")
    tune.add_argument(
        "--param", action="append", default=[], metavar="NAME=V1,V2", help="a parameter and its values"
    )
    tune.add_argument("--check-size", help="correctness size before it is fitted to each config's blocks")
    tune.add_argument(
        "--bind",
        action="append",
        default=[],
        help="parameter=dimension pairs, e.g. bm=m,bk=k,bn=n (blocks that tile a dimension); repeatable",
    )
    tune.add_argument("--lower-for", default="", help="also lower for these chips, e.g. v5p,v6e")
    tune.add_argument("--mode", choices=("auto", "interpret", "tpu"), default="auto")
    tune.add_argument("--backend", choices=backend_names(), default="local")
    tune.add_argument(
        "--shards", type=int, default=1, help="split the configs over this many jobs run side by side"
    )
    tune.add_argument("--json", action="store_true", help='print {"configs": [...], ...} as JSON')
    tune.add_argument(
        "--measure",
        action="store_true",
        help="on a TPU host: time each correct config on the chip from profiler traces (device time and "
        "host dispatch apart) and record it beside its estimate (implies --mode tpu)",
    )
    tune.add_argument(
        "--record",
        type=Path,
        default=None,
        help=f"with --measure: the JSON-lines file measured configs are appended to ({measured.DEFAULT_PATH})",
    )
    return p


def _backend_name(name: str) -> str:
    if name in backend_names() or name.startswith("remote:"):
        return name
    raise argparse.ArgumentTypeError(f"not a backend: {name!r}")


def _open_backend(name: str) -> Backend | None:
    """The backend `name`, or None after one line saying why it cannot start here (e.g. hardened on gVisor)."""
    from sandbox.backends.hardened import BackendUnavailable  # imported here: the jail's modules are big

    try:
        return create_backend(name)
    except BackendUnavailable as exc:
        print(
            f"error: the {name} backend cannot start on this machine: {exc}. "
            "`--backend local` runs jobs unjailed as this user (development only)",
            file=sys.stderr,
        )
        return None


# A job runs in a session of its own, so a command killed by `timeout` or a closed terminal would leave
# its job running (on a TPU host, holding the chip). For `run` (without --server) and `tune`, SIGTERM,
# SIGHUP and SIGINT cancel the jobs instead (each backend kills its job's process group) and the command
# exits with the cancelled run's report. A second signal leaves at once.
_STOPPED = threading.Event()


@contextlib.contextmanager
def _jobs_end_on_signals() -> Iterator[None]:
    """While jobs run here: the signals set `_STOPPED` (the jobs' cancel event); the handlers they had
    come back afterwards (main() also runs in-process, under pytest)."""

    def stop(signum: int, _frame: Any) -> None:
        if _STOPPED.is_set():
            raise KeyboardInterrupt
        _STOPPED.set()
        print(f"{signal.Signals(signum).name}: ending the job first", file=sys.stderr, flush=True)

    if threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = {sig: signal.signal(sig, stop) for sig in (signal.SIGTERM, signal.SIGHUP, signal.SIGINT)}
    try:
        yield
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)
        _STOPPED.clear()


def main(argv: list[str] | None = None) -> int:
    args = parser().parse_args(argv)
    catalog = load_catalog()
    if args.command == "tpu":
        return tpu_report.show(args.chips_per_slot, probe=None if args.no_probe else chipprobe.probe)
    if args.command == "catalog":
        for e in catalog.entries:
            print(f"{e.slug:28} {e.level:13} {e.title}")
        return 0
    if args.command == "tune":
        with _jobs_end_on_signals():
            return _tune(args, catalog)
    entry = None
    if args.entry:
        entry = catalog.get(args.entry)
        if entry is None:
            print(f"unknown entry {args.entry!r}; known: {', '.join(catalog.slugs)}", file=sys.stderr)
            return 2
    given = {
        "detect_races": args.detect_races,
        "uninitialized_memory": None if args.zero_memory is None else ("zero" if args.zero_memory else "nan"),
        "dma_execution_mode": None if args.eager_dma is None else ("eager" if args.eager_dma else "on_wait"),
        "out_of_bounds_reads": args.oob_reads,
        "buffer_bounds": None
        if args.padded_bounds is None
        else ("padded" if args.padded_bounds else "logical"),
    }
    if args.server:
        return _run_remote(args, {k: v for k, v in given.items() if v is not None})
    asked = args.mode
    args.mode, why = tpu_report.resolve_auto(args.mode, args.chip)
    if asked == "auto":
        print(tpu_report.auto_line(args.mode, args.chip, why), file=sys.stderr)
    if asked == "both" and (refused := tpu_report.both_refused(args.chip)):
        print(f"error: {refused}", file=sys.stderr)
        return 2
    defaults = entry.options if entry is not None else InterpretOptions()
    options = dataclasses.replace(defaults, **{k: v for k, v in given.items() if v is not None})
    limits = default_limits(**({"wall_seconds": args.wall_seconds} if args.wall_seconds else {}))
    try:
        job = make_job(
            args.file.read_text(),
            entry=entry,
            chip=args.chip,
            mode=args.mode,
            options=options,
            limits=limits,
            timing_budget_seconds=args.timing_budget,
            lower_chips=CHIPS if args.all_chips else (),
            trace=args.trace,
        )
    except (JobError, OSError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    backend = _open_backend(args.backend)
    if backend is None:
        return 2
    try:
        with _jobs_end_on_signals():
            result = execute(backend, job, _STOPPED, _ignore).result
    finally:
        backend.close()
    return _report(result, args)


def _report(result: RunResult, args: argparse.Namespace) -> int:
    """Print the report (or the JSON) and return the exit code."""
    print(
        json.dumps(to_json_dict(result), indent=2) if args.json else render(result, ir=args.ir),
        end="\n" if args.json else "",
    )
    # Anything but a clean verdict fails: a mismatch, an error, a limit, and a kernel that is correct in
    # the simulator but rejected by the TPU compiler (`rejected`). A kernel the simulator cannot run
    # exits 3: not a verdict on the kernel. Mode `both` fails unless the simulator's verdict is the chip's.
    if result.status is RunStatus.UNSUPPORTED:
        return 3
    if result.both is not None and not result.both.agree:
        return 1
    return 0 if result.status in (RunStatus.PASSED, RunStatus.RAN) else 1


def _run_remote(args: argparse.Namespace, options: dict[str, Any]) -> int:
    """The run on a playground server: submitted, followed (the queue's word on stderr), cancelled on
    Ctrl+C, optionally shared; a refused request exits 2 with the server's problem."""
    from pallas_playground import Client, PlaygroundError

    client = Client(args.server)
    source = args.file.read_text()
    request = {"entry": args.entry, "chip": args.chip, "mode": args.mode, "options": options}
    try:
        run = client.submit(source, **request, lower_chips=CHIPS if args.all_chips else ())
        try:
            result = client.follow(run.id, _say_queue)
        except KeyboardInterrupt:
            client.cancel(run.id)
            result = client.follow(run.id)
        code = _report(result, args)
        if args.share:
            link = client.share(source, entry=args.entry, chip=args.chip, options=options, run=run.id)
            print(f"shared: {link.url}", file=sys.stderr)
    except (PlaygroundError, OSError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    return code


def _say_queue(event: Any) -> None:
    """The queue's position and the start of the run, on stderr (stdout is the report)."""
    if event.kind == "queued" and event.data.get("position"):
        print(f"queued at position {event.data['position']}", file=sys.stderr)
    elif event.kind == "running":
        print("running", file=sys.stderr)


def _tune(args: argparse.Namespace, catalog: Catalog) -> int:
    if args.measure:
        args.mode, why = tpu_report.resolve_auto("auto", args.chip)
        if args.mode != "tpu":
            print(f"error: --measure times configs on this machine's TPU, but {why}", file=sys.stderr)
            return 2
    else:
        args.mode, _ = tpu_report.resolve_auto(args.mode, args.chip)
    entry = catalog.get(args.entry) if args.entry else None
    if args.entry and entry is None:
        print(f"unknown entry {args.entry!r}; known: {', '.join(catalog.slugs)}", file=sys.stderr)
        return 2
    try:
        params = dict(sweeps.parse_param(p) for p in args.param)
        spec = sweeps.make_spec(
            entry,
            params=params or None,
            size=sweeps.parse_assignments(args.size) if args.size else None,
            chips=[c for c in args.lower_for.split(",") if c],
            check_size=sweeps.parse_assignments(args.check_size) if args.check_size else None,
            bind=sweeps.parse_bind(args.bind) if args.bind else None,
        )
        source = args.file.read_text()
        jobs = [
            make_sweep_job(source, part, entry=entry, chip=args.chip, mode=args.mode)
            for part in sweeps.shards(spec, args.shards)
        ]
    except (sweeps.SweepError, JobError, OSError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    backend = _open_backend(args.backend)
    if backend is None:
        return 2
    try:
        with ThreadPoolExecutor(len(jobs)) as pool:
            results = list(pool.map(lambda job: execute(backend, job, _STOPPED, _ignore).result, jobs))
    finally:
        backend.close()
    sweep = sweeps.merge([r.sweep for r in results if r.sweep is not None], spec)
    status, summary = sweeps.verdict(
        sweep, sweeps.shards_status(results), "; ".join(r.summary for r in results)
    )
    if args.json:
        print(json.dumps({"status": status.value, "summary": summary, **to_json_dict(sweep)}, indent=2))
    else:
        print("\n".join([*sweeps.rows(sweep), summary]))
    if args.measure:
        _record(args, spec.size, sweep.configs, results)
    return 0 if status is RunStatus.PASSED else 1


def _record(args: argparse.Namespace, size: dict[str, int], configs: Any, results: list[RunResult]) -> None:
    """Append each measured config, beside its estimate, to the --record file (see results.measured)."""
    versions = next((r.versions for r in results if r.versions is not None), None)
    found = measured.records(
        configs,
        chip=args.chip,
        file=str(args.file),
        entry=args.entry,
        size=size,
        jax_version=versions.jax if versions else "",
        device=versions.device_kind if versions else "",
        libtpu=versions.libtpu if versions else None,
        commit=measured.playground_commit(),
    )
    path = args.record or measured.DEFAULT_PATH
    measured.append(path, found)
    print(f"recorded {len(found)} measured config(s) beside their estimates in {path}", file=sys.stderr)


def _ignore(kind: str, data: dict[str, Any]) -> None:
    """The CLI prints the final report only; live events are not shown."""


if __name__ == "__main__":
    sys.exit(main())
