"""The one translator between a raised exception and the `ErrorInfo` a user reads.

1. Find the root: a failure inside an interpreter callback reaches the harness as
   `JaxRuntimeError: INTERNAL: CpuCallback error …` with the real exception flattened into text; the
   interpreter monitor kept the exception object itself (and what the callback was doing).
2. Ask the rules, in order, for a message in the user's terms (`sandbox.harness.errors.rules` for
   what happens while a kernel runs, `…errors.chip` for what a real TPU refuses or suffers,
   `…errors.tracing` for what JAX raises while building it); a
   rule may also say which line to mark, and that the failure is a limitation of interpret mode.
3. Build the user's traceback from frames of the user's files only, ending at the marked line.
The full, untranslated text goes to `Translation.log` (the server log), never to the user.
"""

from __future__ import annotations

import builtins
import dataclasses
import difflib
import linecache
import traceback
import types
from typing import Any

from sandbox.harness.errors import chip, clean, rules, tracing
from sandbox.harness.errors.facts import Message, Root, Scene, user_frames
from sandbox.harness.monitor.source import Location
from sandbox.protocol import ErrorInfo

MAX_TRACEBACK_CHARS = 16_000
MAX_LOG_CHARS = 64_000


@dataclasses.dataclass(frozen=True)
class Translation:
    error: ErrorInfo
    log: str


def translate(exc: BaseException, phase: str, scene: Scene) -> Translation:
    failure = scene.monitor.take_failure() if scene.monitor is not None else None
    root = find_root(exc, failure.exception if failure else None, failure.context if failure else {})
    message = (
        rules.runtime(root, scene) or chip.message(root) or tracing.message(root, exc, scene) or _plain(root)
    )
    frames = user_frames(exc, root, scene.files)
    location = message.location or _blamed(frames)
    if isinstance(exc, SyntaxError) and exc.filename in scene.files and exc.lineno:
        location = Location(exc.filename, exc.lineno)
    error = ErrorInfo(
        type=message.type,
        message=clean.first_line(clean.scrub(message.text), 1_000),
        traceback=_traceback_text(
            frames[frames.index(location) :] if location in frames else frames, location, message
        ),
        line=location.line if location else None,
        phase=phase,
        limitation=message.limitation,
    )
    kept = scene.monitor.callback_log if scene.monitor is not None else []
    log = _log(exc, root, phase, list(kept))
    kept.clear()
    return Translation(error, log)


# Helpers whose whole job is to raise for their caller (an exercise template's `todo()` hole): the
# error belongs to the line that called them.
RAISING_HELPERS = frozenset({"todo"})


def _blamed(frames: tuple[Location, ...]) -> Location | None:
    """The user's line to mark: the innermost frame that is not a raising helper's."""
    return next((f for f in frames if f.function not in RAISING_HELPERS), frames[0] if frames else None)


def find_root(exc: BaseException, failed: BaseException | None, context: dict[str, Any]) -> Root:
    """The user's exception: the interpreter's recorded failure when `exc` is its echo, else `exc`."""
    text = str(exc)
    echoed = type(exc).__name__ in ("JaxRuntimeError", "XlaRuntimeError") or text.startswith(
        "Computation failed"
    )
    if failed is not None and (failed is exc or echoed):
        return Root(type(failed).__name__, clean.scrub(str(failed)), failed, context)
    if echoed:
        parsed = clean.callback_root(text)
        if parsed is not None:
            return Root(parsed[0], clean.scrub(parsed[1]), None, {})
    if isinstance(exc, SyntaxError):
        return Root("SyntaxError", exc.msg or "invalid syntax", exc, {})
    return Root(type(exc).__name__, clean.scrub(text), exc, {})


def _plain(root: Root) -> Message:
    text = clean.first_line(root.message) or root.type
    if root.type == "NameError" and isinstance(root.exception, NameError):
        text += _did_you_mean(root.exception)
    return Message(root.type, text)


def _did_you_mean(exc: NameError) -> str:
    name = getattr(exc, "name", None)
    frame = _innermost_frame(exc)
    if not name or frame is None:
        return ""
    known = [*frame.f_locals, *frame.f_globals, *dir(builtins)]
    close = difflib.get_close_matches(name, known, n=1)
    return f"; did you mean `{close[0]}`?" if close else ""


def _innermost_frame(exc: BaseException) -> types.FrameType | None:
    tb = exc.__traceback__
    frame = None
    while tb is not None:
        frame, tb = tb.tb_frame, tb.tb_next
    return frame


def _traceback_text(frames: tuple[Location, ...], location: Location | None, message: Message) -> str:
    """A traceback of the user's lines only, outermost first, ending at the marked line."""
    shown = list(reversed(frames))
    if location is not None and (
        not shown or shown[-1].line != location.line or shown[-1].file != location.file
    ):
        shown.append(location)
    lines = ["Traceback (most recent call last):\n"] if shown else []
    for loc in shown:
        lines.append(
            f'  File "{loc.file}", line {loc.line}' + (f", in {loc.function}" if loc.function else "") + "\n"
        )
        source = linecache.getline(loc.file, loc.line).strip()
        if source:
            lines.append(f"    {source}\n")
    lines.append(f"{message.type}: {clean.scrub(message.text)}\n")
    text = "".join(lines)
    if len(text) > MAX_TRACEBACK_CHARS:
        text = text[:MAX_TRACEBACK_CHARS] + "\n… (traceback truncated)\n"
    return text


def _log(exc: BaseException, root: Root, phase: str, callback_log: list[str]) -> str:
    parts = [f"phase: {phase}\n", *traceback.format_exception(exc)]
    parts += [f"\nJAX's callback log:\n{entry}\n" for entry in callback_log]
    if root.exception is not None and root.exception is not exc:
        parts += [
            "\nroot failure (kept by the interpreter monitor):\n",
            *traceback.format_exception(root.exception),
        ]
    if root.context:
        shown = {k: v for k, v in root.context.items() if k not in ("val",)}
        parts.append(f"\ncallback context: {shown!r}\n")
    text = "".join(parts)
    return text[:MAX_LOG_CHARS]
