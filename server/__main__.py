"""`python -m server`: serve the playground on its embedded defaults (see `server.settings`)."""

from __future__ import annotations

import uvicorn

from sandbox.host import logfmt
from server.app import create_app
from server.settings import Settings


def main() -> None:
    settings = Settings()
    logfmt.configure(settings.log_format)
    settings.data_dir.mkdir(parents=True, exist_ok=True)
    # JSON logs: uvicorn's own loggers go through ours (log_config=None), so every line is JSON.
    log_config = None if settings.log_format == "json" else uvicorn.config.LOGGING_CONFIG
    uvicorn.run(
        create_app(settings), host=settings.host, port=settings.port, log_level="info", log_config=log_config
    )


if __name__ == "__main__":
    main()
