"""Every setting of the playground, in one object (environment prefix `PLAYGROUND_`).

Built by the app factory, never at import time. Zero configuration serves on 127.0.0.1:8000 with
SQLite under `var/` and the best sandbox this machine supports. Every field is documented in the
configuration table in docs/operating.md (a test checks that).
"""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Literal

from pydantic import Field, field_validator
from pydantic_settings import BaseSettings, SettingsConfigDict

from sandbox import limits
from sandbox.catalog.entries import DEFAULT_ROOT
from sandbox.host import tpuhost
from sandbox.protocol import CHIPS, Chip
from server.clients import parse_networks

# One `frame-ancestors` source: any site, a keyword, a scheme, or an origin (maybe `*.` subdomains).
FRAME_SOURCE = re.compile(
    r"\*|'self'|'none'|https?:|https?://(\*\.)?[A-Za-z0-9-]+(\.[A-Za-z0-9-]+)*(:([0-9]{1,5}|\*))?"
)


class Settings(BaseSettings):
    model_config = SettingsConfigDict(env_prefix="PLAYGROUND_", extra="forbid")

    host: str = Field("127.0.0.1", description="Address to bind.")
    port: int = Field(8000, description="Port to bind.")
    uds: Path | None = Field(
        None,
        description="Serve on this unix socket instead of `PLAYGROUND_HOST`:`PLAYGROUND_PORT` (a TPU VM without "
        "TCP, or behind a reverse proxy). uvicorn makes the socket 0666: put it in a directory that only those "
        "who may use the playground can enter.",
    )
    data_dir: Path = Field(Path("var"), description="Where the share database and other state live.")
    reference_dir: Path | None = Field(
        None,
        description="Where catalog entries' expected outputs and inputs are kept between restarts, per "
        "entry, JAX runtime, chip and mode (default: `references` under `PLAYGROUND_DATA_DIR`; 512 MiB, "
        "least recently used first out).",
    )
    catalog_dir: Path = Field(DEFAULT_ROOT, description="The kernel catalog folder.")
    sandbox: str = Field(
        "auto",
        description="Sandbox backend: `auto` (best available), `hardened`, `local`, or `remote:SOCKET` "
        "(the job-runner service, `python -m sandbox.backends.service`).",
    )
    slots: int = Field(
        default_factory=lambda: os.cpu_count() or 1, description="Runs executed at once (default: CPU cores)."
    )
    job_cpu_cores: float | None = Field(
        None,
        description="CPU quota of one job on the hardened backend, in cores (default: every core of the host: "
        "a job alone may use an idle machine, jobs running together share the cores by equal weights, and "
        "`PLAYGROUND_CPU_SECONDS` bounds what one job takes in all).",
        gt=0,
    )
    queue_size: int = Field(
        64, description="Runs that may wait in the queue; beyond it: 503 with Retry-After."
    )
    queue_reserve: int | None = Field(
        None,
        description="The queue's last places, kept for people with few runs: once `queue_size` minus these "
        "wait, a run joins only if its network address (or, for a class, its classes' owner) has fewer than "
        "2 runs queued or running (503 with Retry-After otherwise; default: a quarter of `queue_size`; "
        "0: none kept).",
        ge=0,
    )
    per_client_queue: int = Field(
        8, description="Runs one browser may have queued or running at once (429 beyond)."
    )
    per_address_queue: int = Field(
        24,
        description="Runs one network address may have queued or running at once, however many browser "
        "ids it uses (429 beyond).",
    )
    cache_size: int = Field(256, description="Results of identical runs kept for reuse (0: no cache).")
    rate_per_minute: float = Field(30, description="Runs per minute one browser may start (0: unlimited).")
    rate_burst: int = Field(10, description="Runs one browser may start at once before the rate applies.")
    address_rate_per_minute: float = Field(
        90,
        description="Runs per minute one network address may start, all its browsers together (0: unlimited).",
    )
    address_rate_burst: int = Field(
        30, description="Runs one network address may start at once before its rate applies."
    )
    class_queue: int = Field(
        64,
        description="Runs the class sessions one address started may have queued or running at once, "
        "all their students together, and never more than half of `queue_size` (429 beyond); their "
        "members are not held to `per_address_queue`.",
    )
    class_rate_per_minute: float = Field(
        600,
        description="Runs per minute one class session may start, all its students together (0: unlimited).",
    )
    class_rate_burst: int = Field(
        90, description="Runs one class session may start at once before its rate applies."
    )
    class_students: int = Field(
        200,
        description="Students one class session may have at once (joins beyond get 409; removed ones do "
        "not count).",
        ge=1,
    )
    streams_per_address: int = Field(
        1024,
        description="Event streams (a run's, a sweep's, a class's) one network address may hold open at "
        "once in one server process (429 with Retry-After beyond; room for a class of 200 behind one "
        "school address, each student following a run or two; 0: unlimited).",
        ge=0,
    )
    class_joins_per_minute: int = Field(
        120,
        description="Joins of any class one network address may make in any 60 seconds, and as many "
        "join-code lookups (`/c/{code}`, GET or HEAD) (429 with Retry-After beyond; a room behind one "
        "school address joins at once; 0: unlimited).",
        ge=0,
    )
    trusted_proxies: str = Field(
        "",
        description="Reverse proxies whose `X-Forwarded-For` / `Forwarded` headers name the client, as "
        "space-separated addresses or networks (`10.0.0.5 10.1.0.0/16`), and `unix` for a proxy connecting "
        "over `PLAYGROUND_UDS`; empty: the peer is the client (on a unix socket: one client for all).",
    )
    runs_kept: int = Field(500, description="Finished runs kept in memory for `GET /api/runs/{id}`.")
    runs_kept_bytes: int = Field(
        256 << 20,
        description="Bytes the finished runs kept in memory may hold together (their results and event "
        "logs); beyond it, or beyond `runs_kept`, the address holding the most loses its oldest run.",
    )
    store_saves_per_minute: float = Field(
        20, description="Shares and lesson saves per minute one network address may make (0: unlimited)."
    )
    store_saves_burst: int = Field(
        20,
        description="Shares and lesson saves one network address may make at once before its rate applies.",
    )
    store_address_bytes_per_hour: int = Field(
        64 << 20,
        description="Bytes of new shares and lessons one network address may store per hour (a budget that "
        "refills over the hour; content already stored costs nothing; 0: unlimited).",
    )
    store_bytes: int = Field(
        4 << 30,
        description="Bytes all shares and lessons together may take in the database; beyond it saves get "
        "507 (existing links keep working; 0: unlimited).",
    )
    mcp: bool = Field(
        True, description="Serve the MCP server at `/mcp` (tools for kernel-writing agents); false: 404."
    )
    mcp_calls_per_minute: float = Field(
        60,
        description="MCP tool calls per minute one network address may make (0: unlimited); the runs "
        "they start also count against the address's run limits.",
    )
    mcp_calls_burst: int = Field(20, description="MCP tool calls one network address may make at once.")
    redis_url: str = Field(
        "",
        description="The shared run queue (`redis://host:6379/0`, Redis >= 7): runs, events, limits and the "
        "result cache live there and runner workers on any host execute them; empty: the in-process queue.",
    )
    redis_prefix: str = Field(
        "playground:", description="Prefix of every Redis key (several playgrounds may share one Redis)."
    )
    runs_ttl: int = Field(
        3600, description="With Redis: seconds a finished run and its events stay readable.", ge=1
    )
    worker_grace_seconds: float = Field(
        60.0,
        description="With Redis: how long a pool may be without a live worker before its waiting and "
        "running runs are ended with an error (new runs for it get 503 at once).",
    )
    database_url: str = Field(
        "",
        description="Shares and lessons in PostgreSQL (`postgresql://user@host/db`); empty: SQLite under "
        "the data directory.",
    )
    log_format: Literal["text", "json"] = Field(
        "text", description="`text`: human lines; `json`: one JSON object per line, with the run id."
    )
    wall_seconds: float = Field(limits.WALL_SECONDS, description="Wall-clock limit per run, in seconds.")
    cpu_seconds: int = Field(limits.CPU_SECONDS, description="CPU-time limit per run, in seconds.")
    memory_bytes: int = Field(limits.MEMORY_BYTES, description="Memory limit per run, in bytes.")
    output_bytes: int = Field(limits.OUTPUT_BYTES, description="Bytes of stdout and of stderr kept per run.")
    source_bytes: int = Field(limits.SOURCE_BYTES, description="Largest accepted source, in bytes.")
    body_bytes: int = Field(
        4 << 20,
        description="Largest accepted request body, in bytes (a lesson carries up to 30 sources); refused "
        "with 413 as it streams in, never read whole first.",
    )
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
    runtimes_dir: Path | None = Field(
        None,
        description="Where `scripts/install-runtimes` put the older JAX runtimes (empty: "
        "/opt/pallas-playground-runtimes as root, else ~/.cache/pallas-playground/runtimes).",
    )
    tpu: Literal["auto", "yes", "no"] | Chip = Field(
        "auto",
        description="Whether this host has a TPU, and which chip: `auto` (its TPU chips as sysfs shows "
        "them, as the job runner finds them), `no`, a chip (`v5e`, `v5p`, `v6e`, `tpu7x`, `tpu8i`, `tpu8t`), or `yes` "
        "(a TPU whose chip the runner checks).",
    )

    @field_validator("trusted_proxies")
    @classmethod
    def _networks(cls, value: str) -> str:
        parse_networks(value)  # raises ValueError naming the entry that is not an address or network
        return value

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
            return self.tpu != "no"
        try:
            return tpuhost.host_chip() is not None
        except tpuhost.TpuHostError:
            return True  # chips of a kind this playground does not know: the runner says why

    def tpu_chip(self) -> Chip | None:
        """This host's TPU chip, when known: a native run on another chip is refused up front."""
        if self.tpu in CHIPS:
            return self.tpu  # type: ignore[return-value]
        if self.tpu != "auto":
            return None
        try:
            return tpuhost.host_chip()
        except tpuhost.TpuHostError:
            return None
