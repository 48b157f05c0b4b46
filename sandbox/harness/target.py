"""The execution target inside the child: native TPU, or TPU interpret mode simulating a chosen chip.

Must run before user code is imported: Pallas reads the interpret setting when a kernel is built.
It also runs before any JAX backend exists, so the job's `JAX_PLATFORMS` decides where it runs:
`cpu` off a chip slot (JAX, imported in the warm pool on a TPU host, would otherwise start libtpu
and take a chip), `tpu,cpu` on one (a chip that fails to start is then an error, never a silent
fallback to the CPU). On a chip, the chip the user chose must be the one JAX reports.
TPU-only helpers (`emit_pipeline`, `get_tpu_info`) need a TPU device kind off-TPU, which the
`chip_context()` abstract mesh supplies around every call into user code. Its abstract device has the
TensorCores one JAX device of that chip spans (`ChipInfo.device_tensor_cores`: both of a megacore v5p,
one elsewhere; a TPU7x chip's two TensorCores are two JAX devices, and JAX's `get_tpu_info_for_chip`
refuses any other count for it), so `pltpu.TensorCoreMesh()` and `get_tpu_info().num_cores` see the
device as it is; `get_tpu_info().sparse_core` follows from the
device kind.

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
import re
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Literal

import jax
from jax.experimental.pallas import tpu as pltpu

from sandbox.harness import compat
from sandbox.harness.jaxapi import interpret_fixes, offline
from sandbox.harness.jaxapi.interpret import route_race_reports
from sandbox.protocol import Chip, InterpretOptions, Mode, Unavailable, Versions
from sandbox.protocol.chips import chip_info
from sandbox.protocol.device_kinds import chip_of_device_kind, device_kind_of

DEVICE_AXIS = "x"


class TargetError(Exception):
    """The requested target cannot run on this host (e.g. mode 'tpu' without a TPU)."""


class TpuStartError(TargetError):
    """This job's chips did not start (libtpu's own message says why)."""


class ChipBusyError(TpuStartError):
    """Another program holds this job's chips (libtpu lets one process own a chip)."""


def fault_of(exc: TargetError) -> Literal["request", "chip_busy"]:
    """The `error` event's fault for a target that cannot run: busy chips may be tried again."""
    return "chip_busy" if isinstance(exc, ChipBusyError) else "request"


# libtpu 0.0.50.1 on a v5e VM, within ~1.3 s of a second process starting: "ABORTED: The TPU is already
# in use by process with pid 3139. Not attempting to load libtpu.so in this process." (both processes
# share libtpu's lockfile), or, from a job whose temp directory is its own: "FAILED_PRECONDITION: TPU
# initialization failed: open(0): 16: Device or resource busy; Couldn't open iommu group 0".
_BUSY = re.compile(
    r"TPU is already in use by process with pid (\d+)|Device or resource busy|open iommu group"
)


@dataclass(frozen=True)
class Target:
    chip: Chip
    interpret: bool
    options: InterpretOptions
    devices: int = 1
    fixes: tuple[str, ...] = ()
    # Features this JAX version lacks (older runtimes), said in the result instead of failing the run.
    unavailable: tuple[Unavailable, ...] = ()

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
                info = chip_info(self.chip)
                device = jax.sharding.AbstractDevice(info.device_kind, info.device_tensor_cores, "tpu")
                stack.enter_context(jax.sharding.use_abstract_mesh(abstract.update(abstract_device=device)))
            yield

    def versions(self) -> Versions:
        if self.interpret:
            kind = device_kind_of(self.chip, on_chip=False) or self.chip
        else:
            kind = jax.devices()[0].device_kind
        return Versions(
            python=platform.python_version(),
            jax=jax.__version__,
            jaxlib=_dist_version("jaxlib") or "?",
            libtpu=offline.libtpu_version(),
            device_kind=kind,
            interpret_fixes=self.fixes,
            unavailable=self.unavailable,
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
    # Full tracebacks: the error translator cuts them to the user's lines itself, and JAX's filtered
    # ones end in advice ("Set JAX_TRACEBACK_FILTERING=off") a user here cannot follow.
    jax.config.update("jax_traceback_filtering", "off")
    fixes: tuple[str, ...] = ()
    unavailable: tuple[Unavailable, ...] = ()
    if interpret:
        params, unavailable = interpret_params(options)
        pltpu.set_tpu_interpret_mode(params)
        fixes = interpret_fixes.install(device_kind=chip_info(chip).device_kind)
    return Target(chip, interpret, options, devices, fixes, unavailable)


def _default_backend() -> str:
    platforms = os.environ.get("JAX_PLATFORMS")
    if platforms:
        # The pool imported JAX before this job's environment existed: apply it now, before the
        # first backend call (JAX reads the variable only at import).
        jax.config.update("jax_platforms", platforms)
    try:
        return jax.default_backend()
    except RuntimeError as exc:  # only with platforms named: a chip slot whose chips did not start
        raise start_error(str(exc)) from exc


def start_error(text: str) -> TpuStartError:
    """Why this job's chips did not start, from JAX's message: held by another program, or libtpu's own."""
    busy = _BUSY.search(text)
    if busy:
        holder = f" (pid {busy.group(1)})" if busy.group(1) else ""
        return ChipBusyError(
            f"the TPU is held by another program{holder}; one program at a time may use a chip, so this "
            "run waits for it"
        )
    return TpuStartError(f"the TPU did not start: {(text.splitlines() or [''])[0]}")


def _check_chip(chip: Chip, device_kind: str) -> None:
    real = chip_of_device_kind(device_kind)
    if real != chip:
        raise TargetError(
            f"this host's TPU is a {device_kind}"
            + (f" ({real})" if real else "")
            + f", not a {chip}: choose {real or 'its chip'} to run natively, or mode 'interpret' to "
            f"simulate a {chip} on the CPU"
        )


def interpret_params(options: InterpretOptions) -> tuple[pltpu.InterpretParams, tuple[Unavailable, ...]]:
    """The user's options as this JAX version's `InterpretParams`, and the ones it has no field for."""
    if options.detect_races:
        route_race_reports()
    return compat.interpret_params(pltpu.InterpretParams, options, jax.__version__)


def _dist_version(name: str) -> str | None:
    try:
        return importlib.metadata.version(name)
    except importlib.metadata.PackageNotFoundError:
        return None
