"""What a share's kept result may say in its notebook's head and beside its measurements: only fields
the server checked, never a label the job's own process set (issue 41).

A kept result's estimate comes from the kernel job's process, which user code runs in: its chip
label, its bound and its seconds are that process's word. What is shown is the share's own chip (the
server validated it when the share was saved), the seconds only when they are a plausible number, the
bound only when it is one of the model's names, and nothing when the estimate names another chip.
"""

from __future__ import annotations

import math
import re
import typing
from dataclasses import dataclass
from typing import Any

from sandbox.protocol import RunStatus
from sandbox.protocol.chips import CHIPS, Chip
from sandbox.protocol.estimate import Bound

BOUNDS = frozenset(typing.get_args(Bound))
STATUSES = frozenset(s.value for s in RunStatus)
LONGEST_SECONDS = 3600.0
VERSION = re.compile(r"^[0-9A-Za-z.+-]{1,40}$")
# Markdown's and HTML's special characters: escaped with a backslash wherever text is interpolated.
MARKDOWN_SPECIALS = re.compile(r"([\\`*_{}\[\]()#+\-.!|<>&~=:\"'$%@])")


@dataclass(frozen=True)
class KeptEstimate:
    chip: Chip
    seconds: float
    bound: str | None


def estimate(result: dict[str, Any] | None, chip: str) -> KeptEstimate | None:
    """The kept estimate as the share's chip may show it, or None."""
    found = (result or {}).get("estimate")
    if not isinstance(found, dict) or chip not in CHIPS or found.get("chip") != chip:
        return None
    seconds = found.get("seconds")
    if isinstance(seconds, bool) or not isinstance(seconds, int | float):
        return None
    if not (math.isfinite(seconds) and 0 < seconds < LONGEST_SECONDS):
        return None
    bound = found.get("bound")
    return KeptEstimate(typing.cast(Chip, chip), float(seconds), bound if bound in BOUNDS else None)


def status(result: dict[str, Any] | None) -> str | None:
    """The kept result's status, if it is one the server makes."""
    found = (result or {}).get("status")
    return found if isinstance(found, str) and found in STATUSES else None


def version(text: Any) -> str | None:
    return text if isinstance(text, str) and VERSION.match(text) else None


def markdown_text(text: str) -> str:
    """`text` shown literally inside markdown (no markup, no HTML, one line)."""
    return MARKDOWN_SPECIALS.sub(r"\\\1", " ".join(text.split()))
