"""What differs between the JAX versions the playground runs (its runtimes), as the harness meets it.

Which versions those are, and what each needs, is the adapter's table (`sandbox.harness.jaxapi.versions`);
this module turns the user's options into what the running version accepts:

- `InterpretParams`: fields a version's `InterpretParams` lacks are left out; an option the user set
  that has no field is reported as unavailable instead of failing the run. Where the version has
  `on_race` (0.12 on), races are reported as findings (`on_race="warn"`); before it the detector
  prints them, and the adapter routes those prints to the same log record
  (`jaxapi.interpret.route_race_reports`), so `checks.races.RaceLog` reads every version alike.
- The hooks pinned to one version's internals (the interpreter monitor, the kernel trace) say why
  they are off on the others; `went_without` adds that to the run's versions.

Checked by `tests/unit/test_interpret_options.py` against stand-ins for each version's shape, and,
under the `runtimes` marker, by real runs on every installed runtime.
"""

from __future__ import annotations

import dataclasses
from typing import Any

from sandbox.harness.jaxapi.versions import not_available
from sandbox.protocol import InterpretOptions, Unavailable, Versions

# The modules whose public names each runtime's probe indexes (`sandbox.harness.probe`), by the alias
# the index and `Job.elsewhere` use for them.
INDEXED = {
    "jax": "jax",
    "pl": "jax.experimental.pallas",
    "pltpu": "jax.experimental.pallas.tpu",
    "plsc": "jax.experimental.pallas.tpu_sc",
    "jax.sharding": "jax.sharding",
    "jax.lax": "jax.lax",
}
INDEXED_ALIAS = {module: alias for alias, module in INDEXED.items()}
_DEFAULTS = InterpretOptions()


def interpret_params(
    params_type: type, options: InterpretOptions, jax_version: str
) -> tuple[Any, tuple[Unavailable, ...]]:
    """`params_type(...)` with the user's options, keeping only the fields this version has.

    An option set away from its default on a version without its field is reported, not passed.
    """
    fields = {f.name for f in dataclasses.fields(params_type)}
    wanted: dict[str, Any] = {
        "detect_races": options.detect_races,
        "uninitialized_memory": options.uninitialized_memory,
        "dma_execution_mode": options.dma_execution_mode,
        "random_seed": options.random_seed,
        "out_of_bounds_reads": options.out_of_bounds_reads,
        "buffer_bounds": options.buffer_bounds,
    }
    missing = []
    for name in [n for n in wanted if n not in fields]:
        if wanted.pop(name) != getattr(_DEFAULTS, name):
            missing.append(Unavailable(f"interpret option {name}", not_available(jax_version)))
    if "on_race" in fields:
        # Races are reported as findings of the run, not as a crash of the first racing access.
        wanted["on_race"] = "warn"
    return params_type(**wanted), tuple(missing)


def went_without(versions: Versions, monitor: Any, capture: Any) -> Versions:
    """`versions` with the pinned hooks this run had to go without (the monitor, the trace) added."""
    missing = [
        Unavailable(feature, hook.reason)
        for feature, hook in (("interpreter monitor", monitor), ("kernel trace", capture))
        if hook is not None and not hook.available and hook.reason.startswith("not available")
    ]
    return (
        dataclasses.replace(versions, unavailable=(*versions.unavailable, *missing)) if missing else versions
    )
