"""Where in the user's files something happened: JAX's source records reduced to user lines.

JAX keeps three kinds of source records: a function's `func_src_info` ("<lambda> at kernel.py:29"),
an operation's `source_info` (a traceback captured when the op was traced), and plain Python
tracebacks. Each is reduced here to `Location`s in the user's files only (`kernel.py`,
`reference.py`), innermost first; frames of JAX, of the harness and of site-packages never leave.
"""

from __future__ import annotations

import dataclasses
import re
from typing import Any

_FUNC_AT = re.compile(r"^(?P<function>.*?) at (?P<file>.+):(?P<line>\d+)$")


@dataclasses.dataclass(frozen=True)
class Location:
    file: str
    line: int
    function: str = ""


def location_of_function_info(info: Any, files: tuple[str, ...]) -> Location | None:
    """`"<lambda> at kernel.py:29"` → Location, if the file is one of `files`."""
    match = _FUNC_AT.match(str(info or ""))
    if match is None or match["file"] not in files:
        return None
    return Location(match["file"], int(match["line"]), match["function"].split(".")[-1])


def location_of_function(fn: Any, files: tuple[str, ...]) -> Location | None:
    code = getattr(unwrap(fn), "__code__", None)
    if code is None or code.co_filename not in files:
        return None
    return Location(code.co_filename, code.co_firstlineno, code.co_name)


def unwrap(fn: Any) -> Any:
    """The user's function inside JAX's wrappers (BlockSpec keeps index maps in an `_IndexMapFunc`)."""
    seen = 0
    while hasattr(fn, "__wrapped__") and seen < 10:
        fn, seen = fn.__wrapped__, seen + 1
    return fn


def source_info_frames(source_info: Any, files: tuple[str, ...]) -> tuple[Location, ...]:
    """The user's frames of an op's `source_info` (a jaxlib Traceback), innermost first."""
    traceback = getattr(source_info, "traceback", None)
    frames = getattr(traceback, "frames", None) or ()
    found = []
    for frame in frames:
        file = getattr(frame, "file_name", "")
        if file in files:
            found.append(Location(file, int(frame.line_num), str(getattr(frame, "function_name", ""))))
    return tuple(found)


def source_info_location(source_info: Any, files: tuple[str, ...]) -> Location | None:
    frames = source_info_frames(source_info, files)
    return frames[0] if frames else None
