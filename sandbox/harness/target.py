"""The execution target inside the child: native TPU, or TPU interpret mode simulating a chosen chip.

Must run before user code is imported: Pallas reads the interpret setting when a kernel is built.
TPU-only helpers (`emit_pipeline`, `get_tpu_info`) need a TPU device kind off-TPU, which the
`chip_context()` abstract mesh supplies around every call into user code.

Multi-device jobs (`devices > 1`) also get the device mesh from `chip_context()`: a one-axis mesh
named `DEVICE_AXIS` over all devices, set as the current mesh (`jax.set_mesh`), so user code calls
`jax.shard_map(f, in_specs=..., out_specs=...)` without `mesh=`. Off-TPU the chip must ride on that
mesh's abstract mesh, or kernels inside `shard_map` see a CPU device again; the axis is `Auto` so
that unsharded inputs (the harness's) are resharded by `jit` on the way in.
"""

from __future__ import annotations

import contextlib
import importlib.metadata
import platform
from collections.abc import Iterator
from dataclasses import dataclass

import jax
from jax.experimental.pallas import tpu as pltpu

from sandbox.harness import interpret_fixes
from sandbox.protocol import Chip, InterpretOptions, Mode, Versions
from sandbox.protocol.chips import chip_info

DEVICE_AXIS = "x"


class TargetError(Exception):
    """The requested target cannot run on this host (e.g. mode 'tpu' without a TPU)."""


@dataclass(frozen=True)
class Target:
    chip: Chip
    interpret: bool
    options: InterpretOptions
    devices: int = 1
    fixes: tuple[str, ...] = ()

    @contextlib.contextmanager
    def chip_context(self) -> Iterator[None]:
        with contextlib.ExitStack() as stack:
            abstract = jax.sharding.AbstractMesh((), ())
            if self.devices > 1:
                mesh = jax.make_mesh(
                    (self.devices,), (DEVICE_AXIS,), axis_types=(jax.sharding.AxisType.Auto,)
                )
                stack.enter_context(jax.set_mesh(mesh))
                abstract = mesh.abstract_mesh
            if self.interpret:
                device = jax.sharding.AbstractDevice(chip_info(self.chip).device_kind, 1, "tpu")
                stack.enter_context(jax.sharding.use_abstract_mesh(abstract.update(abstract_device=device)))
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
            interpret_fixes=self.fixes,
        )


def configure(chip: Chip, mode: Mode, options: InterpretOptions, devices: int = 1) -> Target:
    has_tpu = jax.default_backend() == "tpu"
    if mode == "tpu" and not has_tpu:
        raise TargetError("mode 'tpu' was asked for, but this host has no TPU")
    if jax.device_count() < devices:
        raise TargetError(f"the job needs {devices} devices, but this host has {jax.device_count()}")
    interpret = mode == "interpret" or (mode == "auto" and not has_tpu)
    fixes: tuple[str, ...] = ()
    if interpret:
        pltpu.set_tpu_interpret_mode(interpret_params(options))
        fixes = interpret_fixes.install()
    return Target(chip=chip, interpret=interpret, options=options, devices=devices, fixes=fixes)


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
