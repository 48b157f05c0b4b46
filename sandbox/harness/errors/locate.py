"""Finding the line a learner should look at, when the traceback points at the whole call.

A mistake in a `pl.pallas_call(...)` argument (a BlockSpec, the dimension semantics) is raised while
JAX builds the kernel, and Python reports the line where the call expression starts. The argument
itself is a few lines below: `keyword_line` finds it in the user's source with `ast`. Objects JAX
was holding when it raised (the `BlockSpec` being converted, the kernel body) are read from the
frames of the exception's traceback (`frame_local`).
"""

from __future__ import annotations

import ast
import linecache
import types
from typing import Any

from sandbox.harness.monitor.source import Location, location_of_function


def keyword_line(file: str, line: int, keyword: str) -> int | None:
    """The line of `keyword=` inside the call expression that covers `line` of `file`."""
    source = "".join(linecache.getlines(file))
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return None
    calls = [
        node
        for node in ast.walk(tree)
        if isinstance(node, ast.Call) and node.lineno <= line <= (node.end_lineno or node.lineno)
    ]
    for call in sorted(calls, key=lambda n: (n.end_lineno or n.lineno) - n.lineno, reverse=True):
        for node in ast.walk(call):
            if isinstance(node, ast.keyword) and node.arg == keyword:
                return node.value.lineno
    return None


def subscripted(file: str, line: int, store: bool) -> str | None:
    """The name indexed on `line` (`o_ref` of `o_ref[...] = v`; with `store` False, a read like `x[...]`)."""
    try:
        tree = ast.parse("".join(linecache.getlines(file)))
    except SyntaxError:
        return None
    for node in ast.walk(tree):
        if not (isinstance(node, ast.Subscript) and isinstance(node.value, ast.Name)):
            continue
        if node.lineno == line and isinstance(node.ctx, ast.Store) == store:
            return node.value.id
    return None


def frames(exc: BaseException) -> list[types.FrameType]:
    """The frames of `exc`'s traceback, outermost first."""
    found = []
    tb = exc.__traceback__
    while tb is not None:
        found.append(tb.tb_frame)
        tb = tb.tb_next
    return found


def frame_local(exc: BaseException | None, name: str) -> Any:
    """The innermost value of local variable `name` along `exc`'s traceback (None if absent)."""
    if exc is None:
        return None
    for frame in reversed(frames(exc)):
        if name in frame.f_locals:
            return frame.f_locals[name]
    return None


def function_named(exc: BaseException | None, name: str, files: tuple[str, ...]) -> Location | None:
    """Where a function called `name` (a local of some frame of `exc`) is defined in the user's files."""
    if exc is None:
        return None
    short = name.rsplit(".", 1)[-1]
    for frame in reversed(frames(exc)):
        for value in list(frame.f_locals.values()):
            fn = getattr(value, "func", value)  # functools.partial(kernel, ...) too
            if getattr(fn, "__name__", None) == short:
                found = location_of_function(fn, files)
                if found is not None:
                    return found
    return None
