"""What differs between the JAX versions the playground runs (its runtimes), in one place.

The harness is written for the newest runtime (jax 0.12.0.1). Where an older runtime has the same
feature under another shape, this module bridges it; where it lacks a feature, `Features` says so
in the words a user reads ("not available on jax 0.10.2"), and the run goes on without it.

- `InterpretParams`: `on_race` arrived in 0.12; before it the race detector `print`s each report
  (to the user's stdout) and carries on, which is what `on_race="warn"` does with a log record. So
  on those versions the detector module's `print` is routed to the same log record
  (`route_race_reports`), and `checks.races.RaceLog` reads reports from every version alike.
- Fields a version's `InterpretParams` lacks are left out; an option the user set that has no
  field is reported as unavailable instead of failing the run.
- The hooks pinned to jax 0.12.0.1's internals (the interpreter monitor, the kernel trace, the
  interpret-mode fixes) guard themselves; `pinned()` is the sentence they give on other versions.

Everything here is checked by `tests/unit/test_compat.py` against stand-ins for each version's shape,
and, under the `runtimes` marker, by real runs on every installed runtime.
"""

from __future__ import annotations

import dataclasses
import logging
from typing import Any

from sandbox.protocol import InterpretOptions, Unavailable, Versions

# The version the harness's JAX-internal hooks are written against (monitor, trace, fixes).
PINNED = "0.12.0.1"
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
RACE_PREFIX = "RACE DETECTED"
_DEFAULTS = InterpretOptions()


def not_available(jax_version: str, what: str = "") -> str:
    """The one phrase for a missing feature: "not available on jax 0.10.2" (and why, if given)."""
    return f"not available on jax {jax_version}" + (f" ({what})" if what else "")


def pinned(jax_version: str, feature: str) -> str:
    """Why a hook written against jax 0.12.0.1's internals is off on another version."""
    return not_available(
        jax_version, f"the playground's {feature} hooks are written for jax {PINNED}'s internals"
    )


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


def route_race_reports(module: Any, logger: logging.Logger | None = None) -> bool:
    """On a version whose race detector prints its reports, log them instead (as `on_race="warn"`
    does); True if the module was changed. Idempotent."""
    if getattr(module, "print", None) is _log_race_report:
        return True
    if not hasattr(module, "RaceDetectionState") or hasattr(module.RaceDetectionState, "on_race"):
        return False
    module.print = _log_race_report  # the module's own name lookup finds this before the builtin
    return True


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


def _log_race_report(*args: Any, **kwargs: Any) -> None:
    text = " ".join(str(a) for a in args)
    if text.startswith(RACE_PREFIX):
        # The root logger, where jax 0.12 logs write races too: `RaceLog` listens there.
        logging.getLogger().warning("%s", text.rstrip("\n"))
    else:
        print(*args, **kwargs)
