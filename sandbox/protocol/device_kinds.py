"""The names a device goes by: what real hardware reports per chip, and what a run names its device
(the harness reports it; the host writes its own into the result, `sandbox.results.placement`)."""

from __future__ import annotations

import platform
import typing

from sandbox.protocol.chips import CHIP_TABLE, Chip

# What `jax.devices()[0].device_kind` says on real hardware, per chip (jax/_src/tpu_info.py accepts
# both spellings; hardware reports the first): how a native run knows which chip it really got.
NATIVE_DEVICE_KINDS: dict[Chip, tuple[str, ...]] = {
    "v5e": ("TPU v5 lite", "TPU v5e"),
    "v5p": ("TPU v5", "TPU v5p"),
    "v6e": ("TPU v6 lite", "TPU v6e"),
    "tpu7x": ("TPU7x",),
    "tpu8i": ("TPU8i",),
    "tpu8t": ("TPU8t",),
}


def device_kind_of(chip: str, *, on_chip: bool) -> str | None:
    """What a run on `chip` names its device: on the chip, the kind the hardware reports; simulated,
    the chip's kind in interpret mode on this machine's CPU (None for a name not in the table). The
    harness reports it, and the host writes its own in the result (`sandbox.results.placement`)."""
    if chip not in CHIP_TABLE:
        return None
    if on_chip:
        return NATIVE_DEVICE_KINDS[typing.cast(Chip, chip)][0]
    return f"{CHIP_TABLE[typing.cast(Chip, chip)].device_kind} (interpret mode on {platform.machine()} CPU)"


def chip_of_device_kind(kind: str) -> Chip | None:
    """The chip a real device of this kind is; None for a kind this playground does not offer."""
    return next((chip for chip, kinds in NATIVE_DEVICE_KINDS.items() if kind in kinds), None)
