"""A kernel's program carried out of the user's process and run again where no user code runs: `jax.export`.

A class run's kernel job on a chip serializes the program of the case it timed (`export_for_tpu`);
the host's rerun job (`sandbox.harness.rerun`) loads those bytes (`load_program`) and runs them. The
bytes come from a process the user controls, so loading checks, before anything is compiled:

- it is a `jax.export` artifact for the TPU, for one device, with no effects;
- its inputs are the case's (shapes and dtypes, argument by argument, no keyword arguments);
- every operation of its StableHLO is plain StableHLO (or `func`, `chlo`, `sdy`, `mhlo`), never one that
  talks to the host (`infeed`, `outfeed`, `send`, `recv`), and every custom call is a Pallas kernel
  (`tpu_custom_call`, the Mosaic module the chip runs) and nothing else: a custom call can name any
  native function registered in the process (a Python callback among them), so an allow-list, not a
  deny-list; and at least one is there (a program without a kernel is not a kernel's).

What is left to trust is the parsers of the artifact (flatbuffers, MLIR bytecode) and libtpu's Mosaic
compiler, which every kernel job on a chip runs anyway (SECURITY.md, "The class board").
"""

from __future__ import annotations

import base64
import binascii
from collections.abc import Callable, Sequence
from typing import Any

import jax
import numpy as np

from sandbox.harness.jaxapi.compiler import ir_context

# The one custom call a kernel's program may make: a Pallas TPU kernel (Mosaic).
KERNEL_CALL = "tpu_custom_call"
DIALECTS = ("stablehlo.", "func.", "chlo.", "sdy.", "mhlo.", "builtin.")
HOST_OPS = frozenset({"stablehlo.infeed", "stablehlo.outfeed", "stablehlo.send", "stablehlo.recv"})
# A program's serialized bytes (a Mosaic kernel is tens of KB; a program that carries its answer as a
# constant, far more): past it, no rerun. In base64 inside its rerun job, it stays under what the job
# runner service reads of one job (`sandbox.backends.service.MAX_JOB_BYTES`, 4 MiB).
PROGRAM_BYTES = 2 << 20


class ProgramRefused(ValueError):
    """The exported program is not one the host runs; the message says why, in the user's words."""


def export_for_tpu(fn: Callable[..., Any], args: Sequence[Any]) -> str:
    """`fn` (jitted) on `args`, exported for the TPU and serialized: base64 text, or `ProgramRefused`."""
    try:
        exported = jax.export.export(jax.jit(fn), platforms=("tpu",))(*args)
        data = bytes(exported.serialize())
    except ImportError as exc:  # `flatbuffers`, which serialization needs, is missing from this runtime
        raise ProgramRefused(f"this runtime cannot serialize programs ({exc})") from exc
    except Exception as exc:  # what jax.export refuses (mutable refs, callbacks, …): said, not raised on
        raise ProgramRefused(
            f"jax.export could not export it: {type(exc).__name__}: {_first_line(exc)}"
        ) from exc
    if len(data) > PROGRAM_BYTES:
        raise ProgramRefused(f"its exported program is {len(data):,} bytes (the limit is {PROGRAM_BYTES:,})")
    return base64.b64encode(data).decode("ascii")


def load_program(text: str, inputs: Sequence[Any]) -> Callable[..., Any]:
    """The program in `text` (as `export_for_tpu` wrote it), checked (see the module doc) for `inputs`:
    a callable taking them; `ProgramRefused` if anything is off."""
    try:
        data = base64.b64decode(text, validate=True)
    except (binascii.Error, ValueError) as exc:
        raise ProgramRefused("the program is not base64 text") from exc
    if not data or len(data) > PROGRAM_BYTES:
        raise ProgramRefused(f"the program is {len(data):,} bytes (the limit is {PROGRAM_BYTES:,})")
    try:
        exported = jax.export.deserialize(bytearray(data))
    except Exception as exc:
        raise ProgramRefused(f"the program could not be read: {type(exc).__name__}") from exc
    _check_signature(exported, inputs)
    _check_operations(exported.mlir_module())
    return exported.call


def _check_signature(exported: Any, inputs: Sequence[Any]) -> None:
    if tuple(exported.platforms) != ("tpu",) or exported.nr_devices != 1:
        raise ProgramRefused(
            f"the program is for {list(exported.platforms)} on {exported.nr_devices} device(s), "
            "not for one TPU"
        )
    if exported.ordered_effects or exported.unordered_effects:
        raise ProgramRefused("the program has side effects (a callback to the host)")
    if exported.in_tree != jax.tree_util.tree_structure((tuple(range(len(inputs))), {})):
        raise ProgramRefused("the program takes other arguments than the case's inputs")
    want = [(tuple(np.shape(x)), np.dtype(x.dtype)) for x in inputs]
    got = [(tuple(a.shape), np.dtype(a.dtype)) for a in exported.in_avals]
    if got != want:
        raise ProgramRefused(f"the program takes {_avals(got)}, not the case's {_avals(want)}")


def _check_operations(module_text: str) -> None:
    from jax._src.lib.mlir import ir

    refused: list[str] = []
    kernels = 0

    def visit(op: Any) -> Any:
        nonlocal kernels
        name = op.name
        if name == "stablehlo.custom_call":
            target = ir.StringAttr(op.attributes["call_target_name"]).value
            if target == KERNEL_CALL:
                kernels += 1
            else:
                refused.append(f"custom call {target[:80]!r}")
        elif name in HOST_OPS or not name.startswith(DIALECTS):
            refused.append(f"operation {name[:80]!r}")
        return ir.WalkResult.ADVANCE

    with ir_context():
        try:
            module = ir.Module.parse(module_text)
        except Exception as exc:
            raise ProgramRefused(
                f"the program's StableHLO could not be parsed: {type(exc).__name__}"
            ) from exc
        module.operation.walk(visit)
    if refused:
        raise ProgramRefused(
            "the program may call Pallas kernels (tpu_custom_call) and StableHLO only, not "
            + ", ".join(sorted(set(refused))[:5])
        )
    if kernels == 0:
        raise ProgramRefused("the program has no Pallas kernel (no tpu_custom_call)")


def _avals(avals: list[tuple[tuple[int, ...], np.dtype]]) -> str:
    return "(" + ", ".join(f"{dtype.name}{list(shape)}" for shape, dtype in avals) + ")"


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()
    return text[0][:300] if text else ""
