"""Text hygiene for anything a user will read: no internal paths, no advice they cannot follow.

JAX messages can embed absolute paths (a kernel's "at /…/kernel.py:15", a frame of site-packages),
its traceback-filtering note ("Set JAX_TRACEBACK_FILTERING=off …"), and, for a failure inside an
interpreter callback, a whole Python traceback as text ("CpuCallback error calling callback:
Traceback …"). `scrub` keeps file names but drops every directory; `callback_root` finds the
exception at the bottom of such a text when the interpreter monitor could not keep the object.
"""

from __future__ import annotations

import re

MAX_MESSAGE_CHARS = 600

_FILTER_NOTE = re.compile(
    r"-{5,}\s*\n?For simplicity, JAX has removed its internal frames[^\n]*\n?|"
    r"[^\n]*JAX_TRACEBACK_FILTERING[^\n]*\n?"
)
# An absolute path: a slash, then path characters, ending in a file or directory name; not the path
# of a web address (after "https:" or "http:"), which must survive: "file an issue at https://…".
_ABSOLUTE_PATH = re.compile(r"(?<![\w.])(?<!https:)(?<!https:/)(?<!http:)(?<!http:/)(/[\w.\-+@]+)+/?")
_EXCEPTION_LINE = re.compile(
    r"^(?P<type>[A-Za-z_][\w.]*(Error|Exception|Warning|Interrupt|Exit)): ?(?P<message>.*)$"
)


def scrub(text: str) -> str:
    """`text` without JAX's filtering advice, and with every absolute path cut to its last part."""
    text = _FILTER_NOTE.sub("", text)
    return _ABSOLUTE_PATH.sub(_last_part, text)


def _last_part(match: re.Match[str]) -> str:
    path = match.group(0).rstrip("/")
    return path.rsplit("/", 1)[-1] or path


def first_line(text: str, limit: int = MAX_MESSAGE_CHARS) -> str:
    lines = [line for line in text.strip().splitlines() if line.strip()]
    line = lines[0] if lines else ""
    return line if len(line) <= limit else line[: limit - 1] + "…"


def callback_root(text: str) -> tuple[str, str] | None:
    """(type, message) of the last exception in a traceback embedded in a message, if any."""
    if "Traceback (most recent call last)" not in text:
        return None
    found = None
    for line in text.splitlines():
        match = _EXCEPTION_LINE.match(line.strip())
        if match and not line.startswith(" "):
            found = (match["type"].rsplit(".", 1)[-1], match["message"])
    return found
