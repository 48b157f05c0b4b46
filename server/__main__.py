"""`python -m server`: serve the playground on its embedded defaults (see `server.settings`)."""

from __future__ import annotations

import socket
from pathlib import Path
from typing import Any

import uvicorn

from sandbox.host import logfmt
from server.app import create_app
from server.settings import Settings

# Who the client is is the app's decision alone (`PLAYGROUND_TRUSTED_PROXIES`, `server.deps`): uvicorn's
# own proxy-header handling, on by default, would rewrite the peer from X-Forwarded-For whenever it is
# 127.0.0.1, so a local client could pose as any address before the app looked.
UVICORN_OPTIONS: dict[str, Any] = {"proxy_headers": False}


def main() -> None:
    settings = Settings()
    logfmt.configure(settings.log_format)
    settings.data_dir.mkdir(parents=True, exist_ok=True)
    # JSON logs: uvicorn's own loggers go through ours (log_config=None), so every line is JSON.
    log_config = None if settings.log_format == "json" else uvicorn.config.LOGGING_CONFIG
    where: dict[str, Any] = {"host": settings.host, "port": settings.port}
    if settings.uds is not None:
        # A stale socket file of a server that is gone would make the bind fail.
        if settings.uds.is_socket() and not _answers(settings.uds):
            settings.uds.unlink()
        where = {"uds": str(settings.uds)}
    uvicorn.run(create_app(settings), **where, **UVICORN_OPTIONS, log_level="info", log_config=log_config)


def _answers(path: Path) -> bool:
    """Whether a server listens on the unix socket `path` (then it is not ours to remove)."""
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as probe:
        try:
            probe.connect(str(path))
        except OSError:
            return False
    return True


if __name__ == "__main__":
    main()
