"""What the error rules work from: the scene of a run, the root exception, and a rule's answer."""

from __future__ import annotations

import dataclasses
import traceback
from typing import Any

from sandbox.harness.monitor.core import Monitor
from sandbox.harness.monitor.source import Location, source_info_frames
from sandbox.protocol.chips import ChipInfo


@dataclasses.dataclass(frozen=True)
class Scene:
    """What the rules may consult besides the exception."""

    files: tuple[str, ...]
    monitor: Monitor | None = None
    chip: ChipInfo | None = None
    devices: int = 1
    jax_version: str = ""
    # Pallas names this JAX lacks and where they exist among the installed runtimes (`Job.elsewhere`).
    elsewhere: dict[str, str] = dataclasses.field(default_factory=dict)


@dataclasses.dataclass(frozen=True)
class Root:
    """The exception the user's code actually caused, with whatever the interpreter knew about it."""

    type: str
    message: str  # scrubbed, possibly several lines
    exception: BaseException | None
    context: dict[str, Any]


@dataclasses.dataclass(frozen=True)
class Message:
    type: str
    text: str
    location: Location | None = None  # the line to mark, when the rule knows better than the frames
    limitation: bool = False


def user_frames(exc: BaseException, root: Root, files: tuple[str, ...]) -> tuple[Location, ...]:
    """The user's frames that led to the error, innermost first.

    An op that failed while the kernel ran carries the traceback of the line that traced it
    (`source_info`, or JAX's `JaxStackTraceBeforeTransformation` cause); a Python error carries its
    own traceback.
    """
    source_info = root.context.get("source_info")
    dma = root.context.get("dma")
    if source_info is None and dma is not None:
        source_info = getattr(dma, "source_info", None)
    frames = source_info_frames(source_info, files)
    if frames:
        return frames
    for candidate in _chain(root.exception, exc):
        found = tuple(
            Location(f.filename, f.lineno or 0, f.name)
            for f in reversed(traceback.extract_tb(candidate.__traceback__))
            if f.filename in files
        )
        if found:
            return found
    return ()


def _chain(*excs: BaseException | None) -> list[BaseException]:
    seen: list[BaseException] = []
    for exc in excs:
        while exc is not None and all(exc is not s for s in seen):
            seen.append(exc)
            exc = exc.__cause__ or exc.__context__
    return seen
