"""`python -m server`: serve the playground on its embedded defaults (see `server.settings`)."""

from __future__ import annotations

import logging

import uvicorn

from server.app import create_app
from server.settings import Settings


def main() -> None:
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    settings = Settings()
    settings.data_dir.mkdir(parents=True, exist_ok=True)
    uvicorn.run(create_app(settings), host=settings.host, port=settings.port, log_level="info")


if __name__ == "__main__":
    main()
