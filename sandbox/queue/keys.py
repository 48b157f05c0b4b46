"""Names shared by both sides of the Redis queue: the key prefix, the group, pools, a claimed run."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal

DEFAULT_PREFIX = "playground:"
GROUP = "workers"
INTERPRET_POOL = "interpret"
POOL_NAME = re.compile(r"[a-z0-9][a-z0-9-]{0,39}")


def tpu_pool(chip: str) -> str:
    """The pool of hosts with that chip kind (`tpu-v5e`; `tpu7x` names itself), where jobs run natively."""
    return chip if chip.startswith("tpu") else f"tpu-{chip}"


def pool_for(mode: str, chip: str, live_pools: set[str]) -> str:
    """Where a job goes: `tpu` and `both` modes to its chip's pool; `auto` there too when such a pool is live,
    else to the interpret pool (TPU interpret mode on any CPU); `interpret` always there."""
    native = tpu_pool(chip)
    if mode in ("tpu", "both") or (mode == "auto" and native in live_pools):
        return native
    return INTERPRET_POOL


def check_pool_name(name: str) -> str:
    if not POOL_NAME.fullmatch(name):
        raise ValueError(f"not a pool name: {name!r} (lower-case letters, digits and '-', like tpu-v5e)")
    return name


@dataclass(frozen=True)
class Claim:
    """What a worker's slot got from `lua.TAKE`: a run to execute (`run`), one lost too often to run
    again (`lost`), or a stale entry already cleared (`skip`)."""

    kind: Literal["run", "lost", "skip"]
    run_id: str
    entry_id: str
    attempt: int
    job: str
