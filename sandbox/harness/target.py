"""The execution target inside the child: native TPU, or TPU interpret mode simulating a chosen chip.

Must run before user code is imported: Pallas reads the interpret setting when a kernel is built.
It also runs before any JAX backend exists, so the job's `JAX_PLATFORMS` decides where it runs:
`cpu` off a chip slot (JAX, imported in the warm pool on a TPU host, would otherwise start libtpu
and take a chip), `tpu,cpu` on one (a chip that fails to start is then an error, never a silent
fallback to the CPU). On a chip, the chip the user chose must be the one JAX reports.
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
import os
import platform
from collections.abc import Iterator
from dataclasses import dataclass

import jax
from jax.experimental.pallas import tpu as pltpu

from sandbox.harness import interpret_fixes
from sandbox.protocol import Chip, InterpretOptions, Mode, Versions
from sandbox.protocol.chips import chip_info, chip_of_device_kind

DEVICE_AXIS = "x"


class TargetError(Exception):
    """The requested target cannot run on this host (e.g. mode 'tpu' without a TPU)."""


class TpuStartError(TargetError):
    """This job's chips did not start (libtpu's own message says why)."""


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
    has_tpu = _default_backend() == "tpu"
    if mode == "tpu" and not has_tpu:
        raise TargetError("mode 'tpu' was asked for, but this host has no TPU")
    if has_tpu and mode != "interpret":
        _check_chip(chip, jax.devices()[0].device_kind)
    if jax.device_count() < devices:
        raise TargetError(f"the job needs {devices} devices, but this host has {jax.device_count()}")
    interpret = mode == "interpret" or (mode == "auto" and not has_tpu)
    fixes: tuple[str, ...] = ()
    if interpret:
        pltpu.set_tpu_interpret_mode(interpret_params(options))
        fixes = interpret_fixes.install()
    return Target(chip=chip, interpret=interpret, options=options, devices=devices, fixes=fixes)


def _default_backend() -> str:
    platforms = os.environ.get("JAX_PLATFORMS")
    if platforms:
        # The pool imported JAX before this job's environment existed: apply it now, before the
        # first backend call (JAX reads the variable only at import).
        jax.config.update("jax_platforms", platforms)
    try:
        return jax.default_backend()
    except RuntimeError as exc:  # only with platforms named: a chip slot whose chips did not start
        raise TpuStartError(f"the TPU did not start: {str(exc).splitlines()[0]}") from exc


def _check_chip(chip: Chip, device_kind: str) -> None:
    real = chip_of_device_kind(device_kind)
    if real != chip:
        raise TargetError(
            f"this host's TPU is a {device_kind}"
            + (f" ({real})" if real else "")
            + f", not a {chip}: choose {real or 'its chip'} to run natively, or mode 'interpret' to "
            f"simulate a {chip} on the CPU"
        )


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
