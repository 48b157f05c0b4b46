"""Will it compile on a real TPU? Lower the user's function for a chip with interpret mode off.

Interpret mode accepts kernels the TPU compiler rejects (a BlockSpec mixing `pl.Element` with plain
dims, for one), so a pass in the simulator proves little. Off-TPU, the real Pallas → Mosaic lowering
still runs: with the interpret setting off and the chip's abstract mesh current,
`jax.jit(f).trace(*args).lower(lowering_platforms=("tpu",))` builds the StableHLO a TPU would get,
with one `tpu_custom_call` per kernel whose Mosaic module is serialized in `backend_config`. (`pl.lower_as_mlir`
returns that same StableHLO, via `jax.export`; the readable Mosaic text comes from decoding the serialized
body.) What only libtpu's compiler finds (its scoped-VMEM limit, E1001; Mosaic's own rules) it finds
here too where libtpu is installed: the kernel is then compiled for the chip off the chip
(`jaxapi.offline`), and its verdict is the compiler's own. Without libtpu, or for a chip it does not
know, the VMEM verdict is the playground's count (`chip_checks.vmem_refusal`).

Pallas reads the interpret setting when a kernel object is built (`pl.pallas_call(...)`,
`pl.kernel(...)`), normally while the user's function is traced. So the check traces a fresh
`jax.jit` of the raw user function under `force_tpu_interpret_mode(None)` (thread-local, restored
on exit; the setting is part of the jit cache key, so nothing traced for the simulator is reused). A
kernel object built at import time keeps the simulator's setting; that is detected and said.
"""

from __future__ import annotations

import base64
import contextlib
import dataclasses
import io
import json
import re
import time
import traceback
from collections.abc import Callable, Iterator, Sequence
from typing import Any

import jax
from jax.experimental.pallas import tpu as pltpu

from sandbox.harness import usercode
from sandbox.harness.jaxapi import compiler, offline
from sandbox.harness.lowering import chip_checks as chipcheck
from sandbox.harness.lowering import irtext, locate
from sandbox.harness.target import Target
from sandbox.protocol import Chip, ErrorInfo, IrText, LoweringCheck
from sandbox.protocol.chips import chip_info

MAX_MESSAGE_CHARS = 8_000
# `force_tpu_interpret_mode(None)`: under it, kernels are built with interpret mode off (the stubs
# type the parameter as InterpretParams only).
_INTERPRET_OFF: Any = None
_USER_LOCATION = re.compile(r'"' + re.escape(usercode.USER_FILE) + r'":(\d+)')


Explain = Callable[[BaseException, str], ErrorInfo]


def check(
    fn: Callable[..., Any],
    args: Sequence[Any],
    target: Target,
    chip: Chip,
    explain: Explain | None = None,
    *,
    ir: bool = True,
) -> LoweringCheck:
    """Lower `fn(*args)` for `chip`, read its IR and run the static chip checks on the traced kernel.

    `seconds` is the whole check: trace, lowering, IR texts and chip checks. `explain` turns the
    compiler's exception into the user's message (the harness's error translator); its line wins
    unless it has none, then the line the compiler's MLIR location names is kept. `ir=False` leaves
    the IR texts out (a sweep needs only the verdict); `args` may be `jax.ShapeDtypeStruct`s.
    """
    t0 = time.perf_counter()
    stage = _Stage()
    target = dataclasses.replace(target, chip=chip)
    compiled = Compiled()
    placed = _placed(args, target, compiled)
    error = _lower(fn, placed if placed is not None else args, target, stage, explain, placed is not None)
    if error is not None and placed is not None:  # a failure only off the simulator's mesh: lower as before
        stage, placed = _Stage(), None
        error = _lower(fn, args, target, stage, explain, False)
    texts = _Texts()
    warnings: tuple[str, ...] = ()
    if error is None and stage.lowered is not None and placed is not None:
        compiled = _compile(target, stage, explain)
        error = compiled.error
    if stage.jaxpr is not None:
        texts = _texts(stage) if ir else texts
        try:
            found = chipcheck.facts(stage.jaxpr)
            warnings = chipcheck.warnings(found, chip_info(chip))
            if error is None and stage.lowered is not None and compiled.verdict is None:
                error = _vmem_refusal(found, chip)
            elif compiled.verdict:
                # The count's warnings that the compiler would refuse the kernel are predictions; the
                # compiler has spoken.
                predicted = set(chipcheck.scoped_warnings(found, chip_info(chip)))
                if predicted & set(warnings) or chipcheck.vmem_refusal(found, chip_info(chip)):
                    compiled.note = (
                        "the playground's VMEM count said the compiler would refuse it; the compiler did not"
                    )
                warnings = tuple(w for w in warnings if w not in predicted)
        except Exception as exc:  # a jaxpr the checks do not know: say so, keep the lowering result
            texts.note = f"the static chip checks failed ({type(exc).__name__}: {str(exc)[:300]})"
    return LoweringCheck(
        chip=chip,
        lowers=None if stage.simulated else error is None,
        seconds=round(time.perf_counter() - t0, 4),
        error=error,
        jaxpr=texts.jaxpr,
        mosaic=texts.mosaic,
        stablehlo=texts.stablehlo,
        kernels=texts.kernels,
        warnings=warnings,
        note="; ".join(n for n in (_note(stage, texts, error), compiled.note) if n),
        compiled=compiled.verdict,
        compiler=compiled.by,
    )


@dataclasses.dataclass
class Compiled:
    """libtpu's verdict (None: not compiled), who gave it, and why it was not tried or what else to say."""

    verdict: bool | None = None
    by: str = ""
    error: ErrorInfo | None = None
    note: str = ""


def _placed(args: Sequence[Any], target: Target, compiled: Compiled) -> list[Any] | None:
    """The arguments on a `target.chip` device of libtpu's, to trace and lower with so that the lowering
    compiles (`offline.placed`), or None (and why, in `compiled.note`) where no compile can run here."""
    if target.devices > 1:
        compiled.note = "not compiled off the chip: the function runs over several devices"
        return None
    try:
        return offline.placed(target.chip, args)
    except offline.NotCompiled as exc:
        compiled.note = f"not compiled: {exc}" if offline.libtpu_version() else ""
        return None


def _compile(target: Target, stage: _Stage, explain: Explain | None) -> Compiled:
    """The chip's compiler on the lowered kernel: the chip's verdict, with its message when it refuses."""
    if chipcheck.over_devices(stage.jaxpr):
        return Compiled(note="not compiled off the chip: the function runs over several devices")
    with _quiet():
        done = offline.compile_lowered(target.chip, stage.lowered)
    by = f"{done.by}, for a {chip_info(target.chip).title}, off the chip ({done.seconds:.2f} s)"
    if done.refused is None:
        return Compiled(True, by)
    return Compiled(False, by, _explained(done.refused, "compile", explain))  # type: ignore[arg-type]


def _vmem_refusal(found: chipcheck.KernelFacts, chip: Chip) -> ErrorInfo | None:
    """The chip's compiler refuses a kernel over its scoped VMEM limit at compile time (E1001), after
    a lowering that succeeds: the check lowers but cannot compile off a TPU, so it says the refusal
    the count predicts, with the chip's error type (`errors.chip.scoped_vmem`)."""
    refusal = chipcheck.vmem_refusal(found, chip_info(chip))
    if refusal is None:
        return None
    return ErrorInfo(
        type="VmemLimitExceeded",
        message=(
            f"the TPU compiler would refuse the kernel (E1001 on a real {chip_info(chip).title}, predicted "
            f"from the playground's count): it {refusal}. Use smaller blocks, or raise the limit with "
            "compiler_params=pltpu.CompilerParams(vmem_limit_bytes=...) up to the chip's VMEM"
        ),
        traceback="",
        phase="compile",
    )


def _note(stage: _Stage, texts: _Texts, error: ErrorInfo | None) -> str:
    if stage.simulated:
        return (
            f"{stage.simulated} kernel(s) were built with interpret mode on (a `pl.pallas_call(...)` or "
            "`pl.kernel(...)` object made at import time keeps the setting it was made with), so the "
            "TPU lowering could not be checked; build the kernel inside the function"
        )
    if error is None and stage.lowered is not None and not texts.kernels and not texts.note:
        return "no Pallas kernel in the function: nothing for Mosaic to compile"
    return texts.note


@dataclasses.dataclass
class _Stage:
    """How far the check got: the traced jaxpr, then the lowered module."""

    jaxpr: Any = None
    lowered: Any = None
    simulated: int = 0  # kernels that kept interpret mode (built before the check switched it off)


@dataclasses.dataclass
class _Texts:
    jaxpr: IrText | None = None
    mosaic: IrText | None = None
    stablehlo: IrText | None = None
    kernels: int = 0
    note: str = ""


def _lower(
    fn: Callable[..., Any],
    args: Sequence[Any],
    target: Target,
    stage: _Stage,
    explain: Explain | None,
    placed: bool,
) -> ErrorInfo | None:
    """Trace and lower; what was reached goes into `stage`, a failure comes back as an ErrorInfo.
    `placed`: `args` are on a libtpu device of the chip (`offline.placed`), so the lowering is for it."""
    with target.chip_context(), _interpret_off(), _quiet():
        try:
            traced = jax.jit(fn).trace(*args)
        except Exception as exc:
            return _explained(exc, "trace for the TPU", explain)
        stage.jaxpr = traced.jaxpr
        stage.simulated = sum(
            1 for eqn in chipcheck.kernel_eqns(traced.jaxpr.jaxpr) if eqn.params.get("interpret")
        )
        if stage.simulated:
            return None
        try:
            stage.lowered = traced.lower() if placed else traced.lower(lowering_platforms=("tpu",))
        except Exception as exc:
            error = _explained(exc, "TPU lowering", explain)
            return error if error.line else dataclasses.replace(error, line=locate.line_of(exc, stage.jaxpr))
    return None


def _explained(exc: Exception, phase: str, explain: Explain | None) -> ErrorInfo:
    raw = _error(exc, phase)
    if explain is None:
        return raw
    translated = explain(exc, phase)
    return dataclasses.replace(translated, line=translated.line or raw.line)


@contextlib.contextmanager
def _interpret_off() -> Iterator[None]:
    # Keep Mosaic's source locations inside the serialized module, so the decoded Mosaic text maps
    # back to kernel.py lines.
    with pltpu.force_tpu_interpret_mode(_INTERPRET_OFF), compiler.keep_mosaic_locations():
        yield


@contextlib.contextmanager
def _quiet() -> Iterator[None]:
    # Tracing again runs the user's Python again: its prints were already shown once, by the real run.
    with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
        yield


def _error(exc: Exception, phase: str) -> ErrorInfo:
    """The compiler's message, and the user's line: from the traceback, the JAX op's recorded call site
    (`__cause__`), or an MLIR location in the message."""
    frames: list[traceback.FrameSummary] = []
    seen: set[int] = set()
    chained: BaseException | None = exc
    while chained is not None and id(chained) not in seen and not frames:
        seen.add(id(chained))
        frames = [f for f in traceback.extract_tb(chained.__traceback__) if f.filename == usercode.USER_FILE]
        chained = chained.__cause__ or chained.__context__
    text = "".join(traceback.format_exception_only(type(exc), exc))
    if len(text) > MAX_MESSAGE_CHARS:
        text = text[:MAX_MESSAGE_CHARS] + "\n… (message truncated)\n"
    line = frames[-1].lineno if frames else None
    if line is None:
        match = _USER_LOCATION.search(str(exc))
        line = int(match[1]) if match else None
    head = ["Traceback (most recent call last):\n", *traceback.format_list(frames)] if frames else []
    first = (str(exc).strip() or type(exc).__name__).splitlines()[0][:500]
    return ErrorInfo(
        type=type(exc).__name__, message=first, traceback="".join(head) + text, line=line, phase=phase
    )


def _texts(stage: _Stage) -> _Texts:
    """The three IR texts; a failure to print or decode one is our problem, so it becomes a note."""
    texts = _Texts()
    try:
        printed = stage.jaxpr.jaxpr.pretty_print(source_info=True)
        texts.jaxpr = irtext.capped(*irtext.jaxpr_text(printed, usercode.USER_FILE))
        if stage.lowered is None:
            return texts
        printed = stage.lowered.as_text(debug_info=True)
        texts.stablehlo = irtext.capped(
            *irtext.mlir_text(irtext.elide_mosaic_bodies(printed), usercode.USER_FILE)
        )
        bodies = _mosaic_bodies(stage.lowered.compiler_ir("stablehlo"))
        texts.kernels = len(bodies)
        if bodies:
            texts.mosaic = _mosaic_text(bodies)
    except Exception as exc:
        texts.note = f"could not render the IR ({type(exc).__name__}: {str(exc)[:300]})"
    return texts


def _mosaic_bodies(module: Any) -> list[tuple[str, bytes]]:
    """(kernel name, serialized Mosaic bytecode) of every `tpu_custom_call` in a StableHLO module."""
    found: list[tuple[str, bytes]] = []

    def walk(op: Any) -> None:
        for region in op.regions:
            for block in region.blocks:
                for inner in block.operations:
                    body = _tpu_custom_call(inner.operation)
                    if body is not None:
                        found.append(body)
                    walk(inner.operation)

    walk(module.operation)
    return found


def _tpu_custom_call(op: Any) -> tuple[str, bytes] | None:
    from jaxlib.mlir import ir

    if op.name != "stablehlo.custom_call":
        return None
    attrs = op.attributes
    if ir.StringAttr(attrs["call_target_name"]).value != "tpu_custom_call":
        return None
    config = json.loads(ir.StringAttr(attrs["backend_config"]).value)
    name = ir.StringAttr(attrs["kernel_name"]).value if "kernel_name" in attrs else "?"
    return name, base64.b64decode(config["custom_call_config"]["body"])


def _mosaic_text(bodies: list[tuple[str, bytes]]) -> IrText:
    parts: list[str] = []
    pairs: list[tuple[int, int]] = []
    for index, (name, body) in enumerate(bodies, start=1):
        header = f"// kernel {index} of {len(bodies)}: {name}\n"
        text, lines = irtext.mlir_text(_decode_mosaic(body), usercode.USER_FILE)
        offset = sum(p.count("\n") for p in parts) + 1
        parts += [header, text]
        pairs += [(ir_line + offset, source) for ir_line, source in lines]
    return irtext.capped("".join(parts), pairs)


def _decode_mosaic(body: bytes) -> str:
    """The serialized (versioned, `stable_mosaic.*`) bytecode back to readable Mosaic MLIR."""
    from jaxlib.mlir import ir, passmanager
    from jaxlib.mosaic.python import tpu

    context = compiler.ir_context()
    tpu.register_dialect(context)
    context.allow_unregistered_dialects = True  # the serialized ops are `stable_mosaic.*` until decoded
    with context:
        module = ir.Module.parse(body)
        passmanager.PassManager.parse("builtin.module(mosaic-serde{serialize=false})").run(module.operation)
        context.allow_unregistered_dialects = False
        return str(module.operation.get_asm(enable_debug_info=True))
