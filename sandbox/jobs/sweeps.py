"""Sweeps on the host side (no JAX): the spec from what a caller asked, shards, merging, the verdict.

A sweep is one run to its caller. To use several sandbox slots it may be cut into shards (each a
job with `SweepSpec.only` naming its configs, dealt round-robin so every shard gets a mix); the
results of the shards merge back into one `SweepResult`. `verdict` gives the whole sweep a status
and a one-line summary; `rows` renders it for the CLI.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Iterable, Mapping, Sequence

from sandbox.catalog.entries import CatalogEntry
from sandbox.protocol import ConfigResult, Job, RunResult, RunStatus, SweepResult, SweepSpec
from sandbox.protocol.chips import Chip
from sandbox.protocol.sweep import ParamValue

MAX_CONFIGS = 64
MAX_PARAMS = 6
# What a sweep's names and values may be (issue 41, third round: a body of 10,000 size dimensions, a
# name of 10,000 characters, a NaN or 1e400 value and a size of -5 or 10**30 all became a sweep).
MAX_DIMS = 16
LONGEST_NAME = 64
LONGEST_TEXT = 64  # a string value
LARGEST_DIM = 2**31 - 1


class SweepError(ValueError):
    """The sweep request cannot be run (no parameters, too many configs, an unknown size name)."""


def parse_assignments(text: str) -> dict[str, int]:
    """`m=4096,k=4096` → {"m": 4096, "k": 4096}."""
    found: dict[str, int] = {}
    for part in filter(None, (p.strip() for p in text.split(","))):
        name, sep, value = part.partition("=")
        if not sep or not name.strip().isidentifier():
            raise SweepError(f"expected name=value, got {part!r}")
        try:
            found[name.strip()] = int(value)
        except ValueError:
            raise SweepError(f"{name.strip()}: {value!r} is not an integer") from None
    return found


def parse_bind(texts: Sequence[str]) -> dict[str, str]:
    """`["bm=m,bk=k", "bn=n"]` → {"bm": "m", "bk": "k", "bn": "n"}: every `--bind` given, none dropped.

    A parameter bound twice to different dimensions is refused (which one was meant?); a part that
    is not `param=dimension` is refused rather than skipped.
    """
    found: dict[str, str] = {}
    for part in filter(None, (p.strip() for text in texts for p in text.split(","))):
        name, sep, dim = (s.strip() for s in part.partition("="))
        if not sep or not name.isidentifier() or not dim.isidentifier():
            raise SweepError(f"expected parameter=dimension, got {part!r}")
        if found.get(name, dim) != dim:
            raise SweepError(f"{name} is bound to both {found[name]!r} and {dim!r}")
        found[name] = dim
    return found


def parse_param(text: str) -> tuple[str, tuple[ParamValue, ...]]:
    """`bm=128,512` → ("bm", (128, 512)); values are ints, floats, true/false or strings."""
    name, sep, values = text.partition("=")
    if not sep or not name.strip().isidentifier():
        raise SweepError(f"expected name=v1,v2,..., got {text!r}")
    parsed = tuple(_value(v.strip()) for v in values.split(",") if v.strip())
    if not parsed:
        raise SweepError(f"{name.strip()}: no values")
    return name.strip(), parsed


def _value(text: str) -> ParamValue:
    for kind in (int, float):
        try:
            return kind(text)
        except ValueError:
            pass
    return {"true": True, "false": False}.get(text.lower(), text)


def make_spec(
    entry: CatalogEntry | None,
    *,
    params: Mapping[str, Sequence[ParamValue]] | None = None,
    size: dict[str, int] | None = None,
    chips: Iterable[Chip] = (),
    check_size: dict[str, int] | None = None,
    bind: dict[str, str] | None = None,
) -> SweepSpec:
    """A validated spec; a catalog entry's `[tune]` table fills whatever the caller left out."""
    tune = entry.tune if entry is not None else None
    chosen = {k: tuple(v) for k, v in (params or (tune.values if tune else {})).items()}
    if not chosen:
        raise SweepError("name at least one parameter to sweep, with its values")
    if len(chosen) > MAX_PARAMS or any(not v for v in chosen.values()):
        raise SweepError(f"sweep 1 to {MAX_PARAMS} parameters, each with at least one value")
    target = dict(size or (tune.size if tune else {}))
    if not target:
        raise SweepError("give the target problem size, e.g. m=4096,k=4096,n=4096")
    spec = SweepSpec(
        params=chosen,
        size=target,
        chips=tuple(dict.fromkeys(chips)),
        check_size=dict(check_size or (tune.check if tune else {})),
        bind=dict(bind if bind is not None else (tune.bind if tune else {})),
    )
    if spec.total > MAX_CONFIGS:
        raise SweepError(f"{spec.total} configs; a sweep may have at most {MAX_CONFIGS}")
    _check_bounds(spec)
    unknown = sorted(set(spec.bind.values()) - set(target) - set(spec.check_size))
    if unknown:
        raise SweepError(f"parameters are bound to unknown size dimensions: {', '.join(unknown)}")
    return spec


def _check_bounds(spec: SweepSpec) -> None:
    """Every name a Python identifier, every size a positive whole number, every value a plain one."""
    names = [*spec.params, *spec.size, *spec.check_size, *spec.bind, *spec.bind.values()]
    for name in names:
        if not (isinstance(name, str) and name.isidentifier() and len(name) <= LONGEST_NAME):
            raise SweepError(
                f"{str(name)[:40]!r} is not a name: parameters and size dimensions are Python "
                f"identifiers of at most {LONGEST_NAME} characters"
            )
    for where, dims in (("size", spec.size), ("check_size", spec.check_size)):
        if len(dims) > MAX_DIMS:
            raise SweepError(f"{where} has {len(dims)} dimensions; at most {MAX_DIMS}")
        for name, dim in dims.items():
            if isinstance(dim, bool) or not isinstance(dim, int) or not 1 <= dim <= LARGEST_DIM:
                raise SweepError(
                    f"{where} {name}={str(dim)[:40]}: a size is a whole number from 1 to {LARGEST_DIM:,}"
                )
    for name, values in spec.params.items():
        for value in values:
            if not _plain(value):
                raise SweepError(
                    f"{name}={str(value)[:40]}: a value is true/false, a whole number below 2**63, a finite "
                    f"number or a string of at most {LONGEST_TEXT} characters"
                )


def _plain(value: object) -> bool:
    if isinstance(value, bool):
        return True
    if isinstance(value, int):
        return abs(value) < 2**63
    if isinstance(value, float):
        return math.isfinite(value)
    return isinstance(value, str) and len(value) <= LONGEST_TEXT


def shards(spec: SweepSpec, count: int) -> list[SweepSpec]:
    """`count` specs that together cover every config once, dealt round-robin."""
    indices = list(range(spec.total))
    count = max(1, min(count, len(indices)))
    return [dataclasses.replace(spec, only=tuple(indices[i::count])) for i in range(count)]


def best(configs: Sequence[ConfigResult]) -> int | None:
    """The fastest "ok" config: by measured time when every ok config has one, else by estimate."""
    ok = [c for c in configs if c.status == "ok"]
    if ok and all(c.measured_seconds is not None for c in ok):
        return min(ok, key=lambda c: (c.measured_seconds or 0.0, c.index)).index
    timed = [c for c in ok if c.estimated_seconds is not None]
    return min(timed, key=lambda c: (c.estimated_seconds or 0.0, c.index)).index if timed else None


def gather(job: Job, configs: Sequence[ConfigResult]) -> SweepResult | None:
    """The `SweepResult` of one job (a whole sweep or one shard of it)."""
    if job.sweep is None:
        return None
    ordered = tuple(sorted(configs, key=lambda c: c.index))
    return SweepResult(
        chip=job.chip, spec=job.sweep, total=job.sweep.total, configs=ordered, best=best(ordered)
    )


def merge(parts: Sequence[SweepResult], spec: SweepSpec) -> SweepResult:
    """Shards' results as one: every config once, the best over all of them."""
    configs = {c.index: c for part in parts for c in part.configs}
    ordered = tuple(configs[i] for i in sorted(configs))
    chip = parts[0].chip if parts else "v5e"
    return SweepResult(
        chip=chip,
        spec=dataclasses.replace(spec, only=()),
        total=spec.total,
        configs=ordered,
        best=best(ordered),
    )


def shards_status(results: Sequence[RunResult]) -> RunStatus:
    """A sweep's shards together: RAN when every one finished (its verdict is the sweep's), else the
    first one's failure."""
    stopped = [
        r
        for r in results
        if r.sweep is None
        or r.status not in (RunStatus.PASSED, RunStatus.MISMATCH, RunStatus.ERROR)
        or r.error
    ]
    return stopped[0].status if stopped else RunStatus.RAN


def verdict(sweep: SweepResult, status: RunStatus, summary: str) -> tuple[RunStatus, str]:
    """A finished sweep passes if any config is ok; a stopped one keeps its status and says how far it got."""
    counts = ", ".join(f"{n} {s.replace('_vmem', ' VMEM')}" for s, n in _counts(sweep.configs).items())
    size = ",".join(f"{k}={v}" for k, v in sweep.spec.size.items())
    head = f"swept {len(sweep.configs)} of {sweep.total} configs on {sweep.chip} at {size}"
    if status is not RunStatus.RAN:
        return status, f"{summary} ({head}: {counts or 'none judged'})"
    found = next((c for c in sweep.configs if c.index == sweep.best), None)
    if found is not None:
        return RunStatus.PASSED, f"{head}: {counts}; best {describe(found)}"
    unranked = next((c for c in sweep.configs if c.status == "unestimated"), None)
    if unranked is not None:
        why = unranked.reason.rpartition("no estimate: ")[2] or "the model gave none"
        return RunStatus.ERROR, f"{head}: {counts}; no correct config has an estimate to rank it by ({why})"
    if any(c.status == "wrong" for c in sweep.configs):
        return RunStatus.MISMATCH, f"{head}: {counts}; no config is both correct and accepted"
    return RunStatus.ERROR, f"{head}: {counts}; no config could be run"


def _counts(configs: Sequence[ConfigResult]) -> dict[str, int]:
    order = ("ok", "unestimated", "wrong", "error", "rejected", "over_vmem")
    found = {s: sum(1 for c in configs if c.status == s) for s in order}
    return {s: n for s, n in found.items() if n}


def params_text(params: dict[str, ParamValue]) -> str:
    return ", ".join(f"{k}={v}" for k, v in params.items())


def describe(config: ConfigResult) -> str:
    seconds = config.measured_seconds if config.measured_seconds is not None else config.estimated_seconds
    how = "measured" if config.measured_seconds is not None else "estimated"
    roofline = config.measured_roofline_fraction if how == "measured" else config.roofline_fraction
    fraction = f", {roofline:.0%} of roofline" if roofline is not None else ""
    if how == "measured" and config.faster_than_the_chip:
        fraction += " (faster than the chip's roofline: this timing missed part of the run)"
    e = config.estimate
    band = ""
    if how == "estimated" and e is not None and e.low_seconds is not None and e.high_seconds is not None:
        band = f" (a real chip: {_ms(e.low_seconds)} to {_ms(e.high_seconds)}, {e.validation.split(' (')[0]})"
    elif how == "estimated" and e is not None and e.validation:
        band = f" ({e.validation})"
    return f"{params_text(config.params)}: {how} {_ms(seconds)}{fraction}{band}{baseline_text(config)}"


def baseline_text(config: ConfigResult) -> str:
    """XLA's own op beside a config: measured against measured where the sweep timed both on the
    chip, else the model's estimate of each ("" where there is no baseline)."""
    xla = config.estimate.xla_seconds if config.estimate is not None else None
    measured = config.xla_measured_seconds
    if measured and config.measured_seconds:
        text = f"; XLA's own op measured at {_ms(measured)}, the kernel {config.measured_seconds / measured:.2f}x it"
        return text + (f" (estimated {_ms(xla)})" if xla else "")
    # On the chip, where XLA's op could not be timed, why (`measure.reference_device_time`'s words)
    not_timed = (
        f"; XLA's own op not timed on the chip ({config.xla_not_measured})" if config.xla_not_measured else ""
    )
    if not xla:
        return not_timed
    text = f"{not_timed}, estimated at {_ms(xla)}" if not_timed else f"; XLA's own op estimated at {_ms(xla)}"
    if config.estimated_seconds:
        text += f", the kernel's estimate {config.estimated_seconds / xla:.2f}x it"
    validation = config.estimate.xla_validation if config.estimate is not None else ""
    return text + (f" ({validation})" if validation else "")


def _ms(seconds: float | None) -> str:
    return "-" if seconds is None else f"{seconds * 1e3:.4g} ms"


def rows(sweep: SweepResult) -> list[str]:
    """One line per config, for the terminal."""
    names = list(sweep.spec.params)
    widths = {n: max([len(n), *(len(str(c.params.get(n, ""))) for c in sweep.configs)]) for n in names}
    head = "  ".join(n.rjust(widths[n]) for n in names)
    timed = any(c.measured_seconds is not None for c in sweep.configs)  # a measured column on a TPU
    measured_head = f"  {'measured':>11}" if timed else ""
    lines = [f"{head}  {'status':9}  {'estimate':>11}{measured_head}  {'roofline':>8}  {'VMEM':>9}  why"]
    for c in sweep.configs:
        cells = "  ".join(str(c.params.get(n, "")).rjust(widths[n]) for n in names)
        vmem = f"{c.vmem_bytes / 2**20:.1f} MiB" if c.vmem_bytes is not None else "-"
        fraction = f"{c.roofline_fraction:.0%}" if c.roofline_fraction is not None else "-"
        mark = "*" if c.index == sweep.best else " "
        measured = f"  {_ms(c.measured_seconds):>11}" if timed else ""
        lines.append(
            f"{cells}  {c.status:9}  {_ms(c.estimated_seconds):>11}{measured}  {fraction:>8}  {vmem:>9} "
            f"{mark}{c.reason}"
        )
    return lines
