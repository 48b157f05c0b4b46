"""Messages for what the TPU itself refuses or suffers: the compiler's scoped-VMEM limit, a halted core.

Recognised by the runtime's own error codes and names (stable across libtpu releases: E1001 is
XLA's documented error code), with the figures read from the compiler's sentence. Texts measured on
a TPU v5e with libtpu 0.0.50.1 (JAX 0.12.0.1), 2026-12-05:
- "RESOURCE_EXHAUSTED: E1001: CompileTimeScopedVmemOom: … Scoped allocation with size 80.00M and
  limit 16.00M exceeded scoped vmem limit by 64.00M. …"
- over the chip's whole VMEM (libtpu 0.0.50.1 compiling for a TPU v5e on a host without one, 2026-12-06):
  "RESOURCE_EXHAUSTED: XLA:TPU compile permanent error. Ran out of memory in memory space vmem. Used
  256.00M of 128.00M vmem. Exceeded vmem capacity by 128.00M. …"
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
_CAPACITY = re.compile(
    r"Ran out of memory in memory space vmem\. Used (?P<size>[\d.]+[KMG]?) of (?P<limit>[\d.]+[KMG]?) vmem\. "
    r"Exceeded vmem capacity by (?P<over>[\d.]+[KMG]?)"
)
# The same for a single allocation past the chip's VMEM (a scratch; seen for a TPU v5p, same libtpu):
# "RESOURCE_EXHAUSTED: Allocation (size=75497472) would exceed memory (size=67108864) :: #allocation3
# [shape = 'f32[2304,8192]{1,0:T(8,128)}', space=vmem, …]"
_ALLOCATION = re.compile(
    r"Allocation \(size=(?P<size>\d+)\) would exceed memory \(size=(?P<limit>\d+)\)[^\n]*space=vmem"
)
HALTED = ("RuntimeUnexpectedCoreHalt", "program continuator has halted")


def is_scoped_vmem_refusal(text: str) -> bool:
    """The compiler refused the kernel for its scoped VMEM: RESOURCE_EXHAUSTED like an allocation that
    failed, but nothing ran out of memory (the job's or the chip's HBM)."""
    return (
        "E1001" in text
        or "CompileTimeScopedVmemOom" in text
        or _CAPACITY.search(text) is not None
        or _ALLOCATION.search(text) is not None
    )


def scoped_vmem_refusal(text: str) -> str:
    """The compiler's scoped-VMEM refusal in words with its figures (`scoped_vmem`), '' where `text`
    is no such refusal: one reading for the compile off the chip and the first run on one."""
    return scoped_vmem(text).text if is_scoped_vmem_refusal(text) else ""


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
    whole = _CAPACITY.search(text)
    single = _ALLOCATION.search(text)
    if single and not (found or whole):
        size, limit = int(single["size"]), int(single["limit"])
        return Message(
            "VmemLimitExceeded",
            f"the TPU compiler refused the kernel: one VMEM allocation of {size / 2**20:.2f} MiB is more "
            f"than the chip's {limit / 2**20:.2f} MiB of VMEM. Use smaller blocks or less scratch: no "
            "limit goes past the chip's VMEM",
        )
    if found:
        sizes = (
            f"(E1001): it needs {_mib(found['size'])} of scoped VMEM, over the limit of "
            f"{_mib(found['limit'])} by {_mib(found['over'])}"
        )
    elif whole:
        sizes = (
            f": it needs {_mib(whole['size'])} of VMEM, over the chip's {_mib(whole['limit'])} by "
            f"{_mib(whole['over'])}"
        )
    else:
        sizes = "(E1001): it needs more scoped VMEM than its limit"
    return Message(
        "VmemLimitExceeded",
        f"the TPU compiler refused the kernel {sizes}. The count is every block's buffers "
        "(two each while pipelining), the scratch, and the compiler's own scratch on top. "
        + (
            "Use smaller blocks or less scratch: no limit goes past the chip's VMEM"
            if whole and not found
            else "Use smaller blocks, or raise the limit with compiler_params=pltpu.CompilerParams("
            "vmem_limit_bytes=...) up to the chip's VMEM"
        ),
    )


def _mib(value: str) -> str:
    """The compiler's `18.36M` (MiB) as `18.36 MiB`."""
    units = {"K": "KiB", "M": "MiB", "G": "GiB"}
    return f"{value[:-1]} {units[value[-1]]}" if value[-1] in units else f"{value} bytes"
