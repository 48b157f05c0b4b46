"""`python -m sandbox run FILE [--entry SLUG] [--chip v5p] [--all-chips]`: one file through the harness.

`python -m sandbox tpu [--chips-per-slot N]`: this host's TPU chips, and each chip slot's device
nodes and environment, as the job runner would use them (the README's hardware checklist).
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import sys
import threading
from pathlib import Path

from sandbox.backends import backend_names, create_backend
from sandbox.catalog import load_catalog
from sandbox.classify import classify
from sandbox.jobenv import tpu_environment
from sandbox.jobs import JobError, make_job
from sandbox.limits import default_limits
from sandbox.protocol import CHIPS, InterpretOptions, RunStatus, to_json_dict
from sandbox.text_report import render
from sandbox.tpuhost import TpuHostError, discover, plan_slots


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="python -m sandbox", description=__doc__)
    sub = p.add_subparsers(dest="command", required=True)
    run = sub.add_parser("run", help="run one kernel file and print a report")
    run.add_argument("file", type=Path, help="a kernel file (catalog mode with --entry, else scratch mode)")
    run.add_argument("--entry", help="catalog entry slug to check against")
    run.add_argument("--chip", choices=CHIPS, default="v5p")
    run.add_argument("--mode", choices=("auto", "interpret", "tpu"), default="auto")
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
        "--all-chips", action="store_true", help="also check the TPU lowering for every chip, side by side"
    )
    run.add_argument(
        "--ir", choices=("jaxpr", "mosaic", "stablehlo"), help="print this IR of the --chip lowering check"
    )
    sub.add_parser("catalog", help="list the catalog entries")
    tpu = sub.add_parser("tpu", help="this host's TPU chips and the job runner's chip slots")
    tpu.add_argument("--chips-per-slot", type=int, default=1)
    return p


def _backend_name(name: str) -> str:
    if name in backend_names() or name.startswith("remote:"):
        return name
    raise argparse.ArgumentTypeError(f"not a backend: {name!r}")


def show_tpu(chips_per_slot: int) -> int:
    try:
        host = discover()
        if host is None:
            print("no TPU chips on this host (no PCI device of vendor 0x1ae0 with a known TPU id)")
            return 0
        slots = plan_slots(host, chips_per_slot)
    except TpuHostError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    print(f"{host.accelerator_type}: {len(host.chips)} {host.generation.chip} chips, {host.style} nodes")
    for i, chip in enumerate(host.chips):
        print(f"  chip {i}: {chip.pci_address} {' '.join(chip.nodes)}")
    for slot in slots:
        print(f"slot {slot.index}: {slot.describe()}; nodes {' '.join(slot.device_nodes)}")
        for key, value in tpu_environment(slot).items():
            print(f"  {key}={value}")
    return 0


def main(argv: list[str] | None = None) -> int:
    args = parser().parse_args(argv)
    catalog = load_catalog()
    if args.command == "tpu":
        return show_tpu(args.chips_per_slot)
    if args.command == "catalog":
        for e in catalog.entries:
            print(f"{e.slug:28} {e.level:13} {e.title}")
        return 0
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
    }
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
    backend = create_backend(args.backend)
    try:
        result = classify(job, backend.run(job, lambda event: None, threading.Event()))
    finally:
        backend.close()
    print(
        json.dumps(to_json_dict(result), indent=2) if args.json else render(result, ir=args.ir),
        end="\n" if args.json else "",
    )
    return 0 if result.status in (RunStatus.PASSED, RunStatus.RAN) else 1


if __name__ == "__main__":
    sys.exit(main())
