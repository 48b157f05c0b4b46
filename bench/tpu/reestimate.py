"""The time model's estimate of each config timed on the chip, as the model stands today.

A record in `v5e/tune.jsonl` keeps the estimate the model gave when the config was timed (history: it
is never rewritten). The bands an estimate shows and the docs' tables are of the model as it is, so
`python bench/tpu/tpu_records.py --write` estimates every timed config again, exactly as a sweep's job
does at its target size (`sandbox.harness.sweep`: the same inputs, the same bound kernel, the same
model), into `v5e/estimates.jsonl`; `tests/unit/test_tpu_records.py` re-estimates a sample and fails when
the file is not today's model.
"""

from __future__ import annotations

import importlib.util
import json
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import Any

from sandbox.catalog.entries import load_catalog
from sandbox.harness import sweep_plan, usercode
from sandbox.harness.model.estimate import chip_context, estimate_jaxpr, known_values, target_inputs, trace
from sandbox.harness.model.runs import xla_costing
from sandbox.harness.target import Target
from sandbox.jobs import sweeps
from sandbox.protocol import InterpretOptions, SweepSpec, chip_info

ROOT = Path(__file__).resolve().parents[2]


@dataclass(frozen=True)
class Timed:
    """A timed sweep's pieces: its spec, kernel, inputs at a size, and XLA's own op beside it."""

    spec: SweepSpec
    kernel: Callable[..., Any]
    make_inputs: Callable[[dict[str, int]], Any]
    mutable: tuple[int, ...]
    baseline: Callable[..., Any] | None


def where(row: dict[str, Any]) -> str:
    """What names a timed sweep: its file and size."""
    return json.dumps([row["file"], row["size"]], sort_keys=True)


def key(row: dict[str, Any]) -> str:
    """What names a timed config: its file, size and params."""
    return json.dumps([row["file"], row["size"], row["params"]], sort_keys=True)


class Estimator:
    """Estimates configs on one chip; each file is imported once, each size's inputs made once."""

    def __init__(self, chip: str = "v5e") -> None:
        self.chip = chip_info(chip)  # type: ignore[arg-type]
        self.catalog = load_catalog()
        self._modules: dict[str, ModuleType] = {}
        self._inputs: dict[str, Any] = {}

    def plan(self, row: dict[str, Any]) -> Timed:
        """What a record's sweep ran, loaded as its job loads it (`sandbox.harness.sweep`)."""
        entry = self.catalog.get(row["entry"]) if row.get("entry") else None
        spec = sweeps.make_spec(
            entry, params={k: [v] for k, v in row["params"].items()}, size=row["size"], chips=[]
        )
        if entry is not None:
            kernel = getattr(self._module(row["file"]), entry.entry_point)
            reference = self._module(row["file"].replace("kernel.py", "reference.py"))
            make = sweep_plan.catalog_inputs(entry, reference.make_inputs, spec)
            return Timed(spec, kernel, make, entry.mutable_inputs, reference.reference)
        module = self._module(row["file"])
        make = sweep_plan.scratch_inputs(module.make_inputs)
        return Timed(spec, module.kernel, make, (), usercode.xla_baseline(module))

    def estimate(self, row: dict[str, Any]) -> dict[str, Any]:
        """{"key", "estimated_seconds", "bound", "roofline_seconds"} of a record's config, by today's model (the
        roofline: its flops at the MXU's peak, its bytes at HBM bandwidth, whichever is longer; a program's
        bytes those its copies move where fewer than its operands')."""
        timed = self.plan(row)
        args = self._target_args(row, timed)
        fn = sweep_plan.bound(timed.kernel, row["params"], timed.mutable)
        closed = trace(fn, args, chip_context(self.chip))
        found = estimate_jaxpr(closed, known_values(args), self.chip, timeline=False)
        return {
            "key": key(row),
            "estimated_seconds": found.seconds,
            "bound": found.bound,
            "roofline_seconds": found.roofline_seconds,
        }

    def estimate_baseline(self, row: dict[str, Any]) -> dict[str, Any]:
        """{"where", "xla_estimated_seconds", "kind", "model_seconds", "model_kind"}: XLA's own op at a
        sweep's size costed as the sweep's job costs it (`model.runs.xla_costing`: by libtpu's cost
        analysis where its kind runs in several passes and libtpu is here; None where it cannot be costed),
        and as a host without libtpu costs it (the model's costing alone)."""
        timed = self.plan(row)
        if timed.baseline is None:
            return {"where": where(row), "xla_estimated_seconds": None, "kind": None}
        args = self._target_args(row, timed)
        target = Target(chip=self.chip.name, interpret=True, options=InterpretOptions())
        seconds, kind = xla_costing(timed.baseline, args, target)
        model, model_kind = xla_costing(timed.baseline, args, target, compiled=False)
        return {
            "where": where(row),
            "xla_estimated_seconds": seconds,
            "kind": kind or None,
            "model_seconds": model,
            "model_kind": model_kind or None,
        }

    def _target_args(self, row: dict[str, Any], timed: Timed) -> Any:
        if where(row) not in self._inputs:
            self._inputs[where(row)] = target_inputs(lambda: tuple(timed.make_inputs(timed.spec.size)))
        return self._inputs[where(row)]

    def _module(self, path: str) -> ModuleType:
        if path not in self._modules:
            spec = importlib.util.spec_from_file_location(f"timed_{len(self._modules)}", ROOT / path)
            assert spec is not None and spec.loader is not None
            module = importlib.util.module_from_spec(spec)
            spec.loader.exec_module(module)
            self._modules[path] = module
        return self._modules[path]
