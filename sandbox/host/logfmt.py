"""Logs of the web server and the workers: human lines by default, JSON lines for a log pipeline,
and in both the id of the run a line is about (`run_context`), on every line written meanwhile."""

from __future__ import annotations

import contextlib
import contextvars
import json
import logging
import time
from collections.abc import Iterator
from typing import Literal

LogFormat = Literal["text", "json"]
_run_id: contextvars.ContextVar[str | None] = contextvars.ContextVar("run_id", default=None)
TEXT = "%(asctime)s %(levelname)s %(name)s%(run)s: %(message)s"


@contextlib.contextmanager
def run_context(run_id: str) -> Iterator[None]:
    """Every log line of this thread or task names `run_id` until the block ends."""
    token = _run_id.set(run_id)
    try:
        yield
    finally:
        _run_id.reset(token)


class RunIdFilter(logging.Filter):
    """Adds `run_id` (None outside a run) and `run` (" [run …]" or "") to every record."""

    def filter(self, record: logging.LogRecord) -> bool:
        run_id = getattr(record, "run_id", None) or _run_id.get()
        record.run_id = run_id
        record.run = f" [run {run_id}]" if run_id else ""
        return True


class JsonFormatter(logging.Formatter):
    """One JSON object per line: time (UTC, ISO 8601), level, logger, message, run_id, exception."""

    def format(self, record: logging.LogRecord) -> str:
        line = {
            "time": time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(record.created))
            + f".{int(record.msecs):03d}Z",
            "level": record.levelname,
            "logger": record.name,
            "message": record.getMessage(),
            "run_id": getattr(record, "run_id", None),
        }
        if record.exc_info:
            line["exception"] = self.formatException(record.exc_info)
        return json.dumps(line, ensure_ascii=False)


def configure(log_format: LogFormat = "text", level: int = logging.INFO) -> None:
    """Set up the root logger of this process (call once, at start-up)."""
    handler = logging.StreamHandler()
    handler.addFilter(RunIdFilter())
    handler.setFormatter(JsonFormatter() if log_format == "json" else logging.Formatter(TEXT))
    root = logging.getLogger()
    for old in list(root.handlers):
        root.removeHandler(old)
    root.addHandler(handler)
    root.setLevel(level)
