"""The app factory: settings, catalog, sandbox backend and run queue, wired once per app.

The run queue is chosen once per app (`server.queue`): in this process with a local sandbox
backend (the embedded default), or Redis with runner workers elsewhere (`PLAYGROUND_REDIS_URL`).
"""

from __future__ import annotations

import contextlib
import logging
from collections.abc import AsyncIterator

from fastapi import FastAPI
from fastapi.middleware.gzip import GZipMiddleware

from sandbox.backends import (
    Backend,
    capability_report,
    check_bind_allowed,
    create_backend,
    default_backend_name,
)
from sandbox.backends.references import keep_on_disk
from sandbox.catalog.entries import load_catalog
from sandbox.host.runtimes import RuntimeSet
from server import problems
from server import runtimes as jax_runtimes
from server.bodylimit import BodyLimit
from server.classroom.room import create_classroom
from server.clients import parse_networks
from server.mcp import endpoint as mcp_endpoint
from server.queue import create_queue
from server.routes import apidocs, catalog, class_live, lessons, meta, notebooks, pages, runs, shares, sweeps
from server.routes import classes as class_routes
from server.routes import matrices as matrix_routes
from server.routes import runtimes as runtime_routes
from server.settings import Settings
from server.store.quota import StoreQuota
from server.streams import OpenStreams
from server.sweeps import SweepRegistry
from server.urlcheck import RefuseNul

log = logging.getLogger(__name__)


def resolve_backend(settings: Settings) -> tuple[str, str]:
    """The backend name to use and a note on why (the hardened one whenever the machine allows)."""
    if settings.sandbox != "auto":
        return settings.sandbox, "chosen by PLAYGROUND_SANDBOX"
    return default_backend_name(), f"best available on this machine: {capability_report()}"


def _real_backend(settings: Settings, name: str, runtimes: RuntimeSet) -> Backend:
    """The configured backend, keeping catalog references on disk (an injected test double never does)."""
    quota = {"cpu_cores": settings.job_cpu_cores} if settings.job_cpu_cores and name == "hardened" else {}
    backend = create_backend(name, runtimes, **quota)
    return keep_on_disk(backend, settings.reference_dir or settings.data_dir / "references")


def create_app(
    settings: Settings | None = None, *, backend: Backend | None = None, runtimes: RuntimeSet | None = None
) -> FastAPI:
    """`backend`, `runtimes`: injected for tests (default: the configured backend, the installed runtimes)."""
    settings = settings or Settings()
    catalog_ = load_catalog(settings.catalog_dir)
    # The JAX runtimes runs may ask for: those installed here (with Redis, the workers' hosts must
    # have the same set; `GET /api/runtimes` lists this server's).
    runtimes_ = runtimes or jax_runtimes.load(settings)
    if settings.redis_url:
        name, note = "workers", "jobs run on the runner workers of the Redis queue (python -m sandbox.worker)"
    else:
        name, note = (backend.name, "injected") if backend else resolve_backend(settings)
        # Before anything listens: the development backend never serves beyond this machine.
        check_bind_allowed(name, "localhost" if settings.uds is not None else settings.host)

    @contextlib.asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        queue = create_queue(settings, lambda: backend or _real_backend(settings, name, runtimes_))
        app.state.queue = queue
        app.state.classroom = create_classroom(settings)
        await queue.start()
        try:
            async with mcp_endpoint.serving(app):  # the MCP server's sessions (`/mcp`), when it is on
                yield
        finally:
            await app.state.sweeps.close(queue)  # before the queue: their shards are cancelled there
            await app.state.classroom.close()
            await queue.stop()
            # The share and lesson database, if a request opened it (server.deps).
            if (database := getattr(app.state, "database", None)) is not None:
                database.close()

    app = FastAPI(
        title="Pallas Playground",
        version="0.1.0",
        lifespan=lifespan,
        description="Run, check, time and share JAX Pallas TPU kernels.",
        # /docs and /redoc come from server.routes.apidocs, with their assets served here (offline).
        docs_url=None,
        redoc_url=None,
    )
    app.state.settings, app.state.catalog = settings, catalog_
    app.state.runtimes, app.state.matrices = runtimes_, jax_runtimes.Matrices()
    app.state.sweeps = SweepRegistry(settings.runs_kept)
    app.state.backend_name, app.state.backend_note = name, note
    app.state.trusted_proxies = parse_networks(settings.trusted_proxies)
    app.state.store_quota = StoreQuota(settings)
    app.state.streams = OpenStreams(settings.streams_per_address)
    problems.install(app)
    app.add_middleware(GZipMiddleware, minimum_size=1024)
    app.add_middleware(BodyLimit, limit=settings.body_bytes)
    app.add_middleware(RefuseNul)
    routers = (runs.router, catalog.router, meta.router, meta.metrics_router, shares.router, lessons.router)
    for router in (*routers, pages.router, apidocs.router):
        app.include_router(router)
    app.include_router(sweeps.router)  # a sweep ("Tune"): shard runs of the same queue
    app.include_router(runtime_routes.router)
    app.include_router(matrix_routes.router)
    app.include_router(class_routes.router)
    app.include_router(class_live.router)
    app.include_router(notebooks.router)  # a share's notebook and the measurements it brings back
    mcp_endpoint.install(app, settings)
    return app
