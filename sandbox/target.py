"""The execution target inside the child: native TPU, or TPU interpret mode simulating a chosen chip.

Must run before user code is imported: Pallas reads the interpret setting when a kernel is built.
TPU-only helpers (`emit_pipeline`, `get_tpu_info`) need a TPU device kind off-TPU, which the
`chip_context()` abstract mesh supplies around every call into user code.
"""

from __future__ import annotations

import contextlib
import importlib.metadata
import platform
from collections.abc import Iterator
from dataclasses import dataclass

import jax
from jax.experimental.pallas import tpu as pltpu

from sandbox.chips import chip_info
from sandbox.protocol import Chip, InterpretOptions, Mode, Versions


class TargetError(Exception):
    """The requested target cannot run on this host (e.g. mode 'tpu' without a TPU)."""


@dataclass(frozen=True)
class Target:
    chip: Chip
    interpret: bool
    options: InterpretOptions

    @contextlib.contextmanager
    def chip_context(self) -> Iterator[None]:
        if not self.interpret:
            yield
            return
        device = jax.sharding.AbstractDevice(chip_info(self.chip).device_kind, 1, "tpu")
        with jax.sharding.use_abstract_mesh(jax.sharding.AbstractMesh((), (), abstract_device=device)):
            yield

    def versions(self) -> Versions:
        if self.interpret:
            kind = f"{chip_info(self.chip).device_kind} (interpret mode on {platform.machine()} CPU)"
        else:
            kind = jax.devices()[0].device_kind
        return Versions(
            python=platform.python_version(),
            jax=jax.__version__,
            jaxlib=_dist_version("jaxlib") or "?",
            libtpu=_dist_version("libtpu") or _dist_version("libtpu-nightly"),
            device_kind=kind,
        )


def configure(chip: Chip, mode: Mode, options: InterpretOptions) -> Target:
    has_tpu = jax.default_backend() == "tpu"
    if mode == "tpu" and not has_tpu:
        raise TargetError("mode 'tpu' was asked for, but this host has no TPU")
    interpret = mode == "interpret" or (mode == "auto" and not has_tpu)
    if interpret:
        pltpu.set_tpu_interpret_mode(interpret_params(options))
    return Target(chip=chip, interpret=interpret, options=options)


def interpret_params(options: InterpretOptions) -> pltpu.InterpretParams:
    return pltpu.InterpretParams(
        detect_races=options.detect_races,
        # Races are reported as findings of the run, not as a crash of the first racing access.
        on_race="warn",
        uninitialized_memory=options.uninitialized_memory,
        dma_execution_mode=options.dma_execution_mode,
        random_seed=options.random_seed,
    )


def _dist_version(name: str) -> str | None:
    try:
        return importlib.metadata.version(name)
    except importlib.metadata.PackageNotFoundError:
        return None
