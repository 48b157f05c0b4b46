"""Every setting of the playground, in one object (environment prefix `PLAYGROUND_`).

Built by the app factory, never at import time. Zero configuration serves on 127.0.0.1:8000 with
SQLite under `var/` and the best sandbox this machine supports. Every field is documented in the
README's configuration table (a test checks that).
"""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Literal

from pydantic import Field, field_validator
from pydantic_settings import BaseSettings, SettingsConfigDict

from sandbox import limits
from sandbox.catalog import DEFAULT_ROOT

# One `frame-ancestors` source: any site, a keyword, a scheme, or an origin (maybe `*.` subdomains).
FRAME_SOURCE = re.compile(
    r"\*|'self'|'none'|https?:|https?://(\*\.)?[A-Za-z0-9-]+(\.[A-Za-z0-9-]+)*(:([0-9]{1,5}|\*))?"
)


class Settings(BaseSettings):
    model_config = SettingsConfigDict(env_prefix="PLAYGROUND_", extra="forbid")

    host: str = Field("127.0.0.1", description="Address to bind.")
    port: int = Field(8000, description="Port to bind.")
    data_dir: Path = Field(Path("var"), description="Where the share database and other state live.")
    catalog_dir: Path = Field(DEFAULT_ROOT, description="The kernel catalog folder.")
    sandbox: str = Field(
        "auto",
        description="Sandbox backend: `auto` (best available), `hardened`, `local`, or `remote:SOCKET` "
        "(the job-runner service, `python -m sandbox.backends.service`).",
    )
    slots: int = Field(
        default_factory=lambda: os.cpu_count() or 1, description="Runs executed at once (default: CPU cores)."
    )
    queue_size: int = Field(
        64, description="Runs that may wait in the queue; beyond it: 503 with Retry-After."
    )
    per_client_queue: int = Field(
        8, description="Runs one client may have queued or running at once (429 beyond)."
    )
    cache_size: int = Field(256, description="Results of identical runs kept for reuse (0: no cache).")
    rate_per_minute: float = Field(30, description="Runs per minute one client may start (0: unlimited).")
    rate_burst: int = Field(10, description="Runs one client may start at once before the rate applies.")
    runs_kept: int = Field(500, description="Finished runs kept in memory for `GET /api/runs/{id}`.")
    wall_seconds: float = Field(limits.WALL_SECONDS, description="Wall-clock limit per run, in seconds.")
    cpu_seconds: int = Field(limits.CPU_SECONDS, description="CPU-time limit per run, in seconds.")
    memory_bytes: int = Field(limits.MEMORY_BYTES, description="Memory limit per run, in bytes.")
    output_bytes: int = Field(limits.OUTPUT_BYTES, description="Bytes of stdout and of stderr kept per run.")
    source_bytes: int = Field(limits.SOURCE_BYTES, description="Largest accepted source, in bytes.")
    timing_budget_seconds: float = Field(1.0, description="Time spent on repeated timing runs per job.")
    share_salt: str = Field(
        "",
        description="Salt mixed into share and lesson ids; empty: one is generated once and kept in the "
        "share database.",
    )
    embed_origins: str = Field(
        "*",
        description="Sites that may show `/embed/{id}` in a frame (CSP `frame-ancestors`): `*` (any), "
        "`'none'`, or space-separated origins such as `https://course.example.edu`.",
    )
    tpu: Literal["auto", "yes", "no"] = Field(
        "auto", description="Whether this host has a TPU (`auto`: look for TPU device nodes)."
    )

    @field_validator("embed_origins")
    @classmethod
    def _frame_sources(cls, value: str) -> str:
        sources = value.split()
        wrong = [s for s in sources if not FRAME_SOURCE.fullmatch(s)]
        if not sources or wrong:
            raise ValueError(
                f"not an origin: {' '.join(wrong) or 'nothing'}; give `*`, `'none'`, or origins like "
                "`https://course.example.edu`, separated by spaces"
            )
        if "'none'" in sources and len(sources) > 1:
            raise ValueError("`'none'` forbids every site, so it cannot be combined with origins")
        return " ".join(sources)

    def has_tpu(self) -> bool:
        if self.tpu != "auto":
            return self.tpu == "yes"
        return any(Path(p).exists() for p in ("/dev/accel0", "/dev/vfio/0"))
