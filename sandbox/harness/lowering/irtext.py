"""IR texts for the UI: location info turned into a line map, then capped (pure string work, no JAX).

The TPU lowering check shows three texts (jaxpr, Mosaic MLIR, StableHLO). Each carries its source
locations inline (`# kernel.py:12:4 (fn)` comments in a jaxpr; `loc(#loc3)` references and a
`#loc3 = loc(...)` alias table in MLIR). A learner needs the IR readable and "this line came from
line 12 of your kernel", so the locations are resolved into (IR line, source line) pairs and removed
from the text. Only locations in the user's file are kept: the harness's own paths are never shown.
"""

from __future__ import annotations

import re

from sandbox.protocol import IrText

MAX_IR_CHARS = 200_000

_ALIAS = re.compile(r"^(#loc\d*) = loc\((.*)\)$")
_ALIAS_REF = re.compile(r"#loc\d*")
# The pretty-printer's source column: `# file:line:col (function)`, or a bare `#` when unknown.
_JAXPR_COMMENT = re.compile(r"\s+#(?P<info>[^#]*)$")
_JAXPR_SOURCE = re.compile(r"^ ?(?P<file>\S+?):(?P<line>\d+)(?::\d+)?(?: \(.*\))?\s*$")
_MOSAIC_BODY = re.compile(r"(\\22body\\22: \\22)([A-Za-z0-9+/=]+)(\\22)")


def capped(text: str, source_lines: list[tuple[int, int]], limit: int = MAX_IR_CHARS) -> IrText:
    """Cut `text` at a line boundary within `limit` characters; keep the line map of what remains."""
    if len(text) <= limit:
        return IrText(text=text, truncated=False, total_chars=len(text), source_lines=tuple(source_lines))
    cut = text.rfind("\n", 0, limit)
    kept = text[: cut + 1 if cut >= 0 else limit]
    lines = kept.count("\n") + (0 if kept.endswith("\n") else 1)
    return IrText(
        text=kept,
        truncated=True,
        total_chars=len(text),
        source_lines=tuple((ir, src) for ir, src in source_lines if ir <= lines),
    )


def jaxpr_text(printed: str, filename: str) -> tuple[str, list[tuple[int, int]]]:
    """A jaxpr printed with `source_info=True`: drop the `# file:line` comments, map lines to `filename`."""
    out, pairs = [], []
    for number, line in enumerate(printed.splitlines(), start=1):
        comment = _JAXPR_COMMENT.search(line)
        if comment:
            line = line[: comment.start()]
            source = _JAXPR_SOURCE.match(comment["info"])
            if source and source["file"] == filename:
                pairs.append((number, int(source["line"])))
        out.append(line.rstrip())
    return "\n".join(out) + "\n", pairs


def mlir_text(printed: str, filename: str) -> tuple[str, list[tuple[int, int]]]:
    """MLIR printed with debug info: resolve every line's `loc(...)` to `filename`, then strip them."""
    aliases: dict[str, str] = {}
    body = []
    for line in printed.splitlines():
        match = _ALIAS.match(line)
        if match:
            aliases[match[1]] = match[2]
        else:
            body.append(line)
    quoted = f'"{filename}":'
    out, pairs = [], []
    for line in body:
        locations = _locations(line)
        text = _strip_locations(line, locations).rstrip()
        if not text:
            continue
        out.append(text)
        for start, end in locations:
            source = _first_in(line[start:end], aliases, quoted, depth=0)
            if source is not None:
                pairs.append((len(out), source))
                break
    return "\n".join(out) + "\n", pairs


def elide_mosaic_bodies(stablehlo: str) -> str:
    """The serialized Mosaic body in a `tpu_custom_call` is base64 bytecode: say what it is instead."""
    return _MOSAIC_BODY.sub(
        lambda m: f"{m[1]}<serialized Mosaic module, {len(m[2]):,} base64 chars: see the Mosaic IR>{m[3]}",
        stablehlo,
    )


def _locations(line: str) -> list[tuple[int, int]]:
    """Spans of every ` loc(...)` in a line, with balanced parentheses and quoted strings skipped."""
    spans = []
    start = line.find(" loc(")
    while start >= 0:
        end = _closing(line, start + len(" loc("))
        if end < 0:
            break
        spans.append((start, end + 1))
        start = line.find(" loc(", end + 1)
    return spans


def _closing(text: str, i: int) -> int:
    depth, quoted = 1, False
    while i < len(text):
        c = text[i]
        if quoted:
            if c == "\\":
                i += 1
            elif c == '"':
                quoted = False
        elif c == '"':
            quoted = True
        elif c == "(":
            depth += 1
        elif c == ")":
            depth -= 1
            if depth == 0:
                return i
        i += 1
    return -1


def _strip_locations(line: str, spans: list[tuple[int, int]]) -> str:
    parts, last = [], 0
    for start, end in spans:
        parts.append(line[last:start])
        last = end
    parts.append(line[last:])
    return "".join(parts)


def _first_in(text: str, aliases: dict[str, str], quoted: str, depth: int) -> int | None:
    """The line of the first location in the user's file, expanding alias references depth-first.

    MLIR writes `callsite(callee at caller)` and `name(child)`, so the first match is the innermost
    frame: the line in the user's code closest to the operation.
    """
    if depth > 64:
        return None
    position = 0
    while position < len(text):
        ref = _ALIAS_REF.search(text, position)
        file_at = text.find(quoted, position)
        if file_at >= 0 and (ref is None or file_at < ref.start()):
            digits = re.match(r"\d+", text[file_at + len(quoted) :])
            return int(digits[0]) if digits else None
        if ref is None:
            return None
        found = _first_in(aliases.get(ref[0], ""), aliases, quoted, depth + 1)
        if found is not None:
            return found
        position = ref.end()
    return None
