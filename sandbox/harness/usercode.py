"""Load user (and reference) source as modules, and turn their exceptions into an `ErrorInfo`.

Sources are registered with `linecache` under stable file names, so tracebacks show the user's own
lines; the traceback is trimmed to frames in those files (plus the exception itself), because a
learner needs "line 12 of your kernel", not forty frames of JAX internals.
"""

from __future__ import annotations

import linecache
import sys
import traceback
import types

from sandbox.protocol import ErrorInfo

USER_FILE = "kernel.py"
REFERENCE_FILE = "reference.py"
MAX_TRACEBACK_CHARS = 16_000


def load_module(name: str, source: str, filename: str) -> types.ModuleType:
    """Compile and execute `source` as a fresh module registered in sys.modules."""
    linecache.cache[filename] = (len(source), None, source.splitlines(keepends=True), filename)
    module = types.ModuleType(name)
    module.__file__ = filename
    sys.modules[name] = module
    exec(compile(source, filename, "exec"), module.__dict__)
    return module


def error_info(exc: BaseException, phase: str, files: tuple[str, ...] = (USER_FILE,)) -> ErrorInfo:
    frames = [f for f in traceback.extract_tb(exc.__traceback__) if f.filename in files]
    line = frames[-1].lineno if frames else None
    if isinstance(exc, SyntaxError) and exc.filename in files:
        line = exc.lineno
    lines = ["Traceback (most recent call last):\n", *traceback.format_list(frames)] if frames else []
    lines += traceback.format_exception_only(type(exc), exc)
    text = "".join(lines)
    if len(text) > MAX_TRACEBACK_CHARS:
        text = text[:MAX_TRACEBACK_CHARS] + "\n… (traceback truncated)\n"
    return ErrorInfo(
        type=type(exc).__name__,
        message=_first_line(exc),
        traceback=text,
        line=line,
        phase=phase,
    )


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip() or type(exc).__name__
    first = text.splitlines()[0]
    return first[:500]
