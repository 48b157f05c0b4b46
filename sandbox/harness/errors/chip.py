"""Messages for what the TPU itself refuses or suffers: the compiler's scoped-VMEM limit, a halted core.

Recognised by the runtime's own error codes and names (stable across libtpu releases: E1001 is
XLA's documented error code), with the figures read from the compiler's sentence. Texts measured on
a TPU v5e with libtpu 0.0.50.1 (JAX 0.12.0.1), 2026-12-05:
- "RESOURCE_EXHAUSTED: E1001: CompileTimeScopedVmemOom: … Scoped allocation with size 80.00M and
  limit 16.00M exceeded scoped vmem limit by 64.00M. …"
- a kernel that halts the core: "RuntimeUnexpectedCoreHalt", and every later call of that process
  "The program continuator has halted unexpectedly" (each job has a process of its own, so the next
  run is unaffected).
"""

from __future__ import annotations

import re

from sandbox.harness.errors.facts import Message, Root

_SCOPED = re.compile(
    r"Scoped allocation with size (?P<size>[\d.]+[KMG]?) and limit (?P<limit>[\d.]+[KMG]?) exceeded "
    r"scoped vmem limit by (?P<over>[\d.]+[KMG]?)"
)
HALTED = ("RuntimeUnexpectedCoreHalt", "program continuator has halted")


def is_scoped_vmem_refusal(text: str) -> bool:
    """The compiler refused the kernel for its scoped VMEM: RESOURCE_EXHAUSTED like an allocation that
    failed, but nothing ran out of memory (the job's or the chip's HBM)."""
    return "E1001" in text or "CompileTimeScopedVmemOom" in text


def message(root: Root) -> Message | None:
    text = root.message
    if is_scoped_vmem_refusal(text):
        return scoped_vmem(text)
    if any(marker in text for marker in HALTED):
        return Message(
            "TpuCoreHalted",
            "the TPU core halted while running the kernel (RuntimeUnexpectedCoreHalt): the chip stopped it, "
            "most often for a DMA that was started and never waited for, a semaphore left signalled, or "
            "an access outside a buffer. Check that every .start() has its .wait() on the same "
            "semaphore before the kernel ends; the simulator (mode interpret, with race detection) "
            "names the copy that is left over",
        )
    return None


def scoped_vmem(text: str) -> Message:
    found = _SCOPED.search(text)
    sizes = (
        f"needs {_mib(found['size'])} of scoped VMEM, over the limit of {_mib(found['limit'])} by "
        f"{_mib(found['over'])}"
        if found
        else "needs more scoped VMEM than its limit"
    )
    return Message(
        "VmemLimitExceeded",
        f"the TPU compiler refused the kernel (E1001): it {sizes}. The count is every block's buffers "
        "(two each while pipelining), the scratch, and the compiler's own scratch on top. Use smaller "
        "blocks, or raise the limit with compiler_params=pltpu.CompilerParams(vmem_limit_bytes=...) "
        "up to the chip's VMEM",
    )


def _mib(value: str) -> str:
    """The compiler's `18.36M` (MiB) as `18.36 MiB`."""
    units = {"K": "KiB", "M": "MiB", "G": "GiB"}
    return f"{value[:-1]} {units[value[-1]]}" if value[-1] in units else f"{value} bytes"
