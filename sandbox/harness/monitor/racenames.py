"""Race reports in the user's names: JAX's buffer keys ("('hbm', 101, 0, 0)") become the operand
they belong to ("`x_hbm`, input 1, f32[30, 128]"), as every other message of the monitor names them.

The race detector (jax 0.12.0.1) logs each race as text while the kernel runs, when the monitor's
book still knows which buffer an id is (after the kernel ends, the ids are reused). A logging
filter on the two loggers the detector writes to (its module's, for reads; the root logger, for
writes) rewrites the keys in place before any handler sees the record; `checks/races.py` shows a
key that names a ref (it has backticks, which JAX's keys never do) as it is. Buffers the book
cannot place (a `run_scoped` allocation) keep JAX's key.
"""

from __future__ import annotations

import logging
import re

from sandbox.harness.jaxapi.interpret import RACE_LOGGER
from sandbox.harness.monitor.book import Book

_KEY = re.compile(r"\('(?P<space>\w+)', (?P<id>\d+), (?P<device>\d+), (?P<core>\d+)\)")


class RaceNames(logging.Filter):
    def __init__(self, book: Book) -> None:
        super().__init__()
        self.book = book

    def filter(self, record: logging.LogRecord) -> bool:
        if isinstance(record.msg, str) and record.msg.startswith("RACE DETECTED"):
            record.msg = _KEY.sub(self._named, record.msg)
        return True

    def _named(self, match: re.Match[str]) -> str:
        named = self.book.buffer(match["space"], int(match["id"]), int(match["device"]))
        if named is None or named.operand is None:
            return match.group(0)
        # The detector's report puts the key in parentheses: the name may hold none of its own.
        return "(" + named.describe().replace(" (", ", ").replace(")", "") + ")"


def install(book: Book) -> RaceNames:
    names = RaceNames(book)
    for logger in (logging.getLogger(), logging.getLogger(RACE_LOGGER)):
        logger.addFilter(names)
    return names
