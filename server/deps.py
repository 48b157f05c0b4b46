"""Dependency aliases: the app's single objects, reached through `request.app.state`."""

from __future__ import annotations

from typing import Annotated

from fastapi import Depends, Request

from sandbox.catalog import Catalog
from server.runner import Runner
from server.settings import Settings


def _settings(request: Request) -> Settings:
    return request.app.state.settings


def _runner(request: Request) -> Runner:
    return request.app.state.runner


def _catalog(request: Request) -> Catalog:
    return request.app.state.catalog


def client_id(request: Request) -> str:
    """Who a run belongs to, for fairness: the browser's own id if it sent one, else its address."""
    given = request.headers.get("x-playground-client", "")[:64]
    host = request.client.host if request.client else "unknown"
    return f"{host}/{given}" if given else host


SettingsDep = Annotated[Settings, Depends(_settings)]
RunnerDep = Annotated[Runner, Depends(_runner)]
CatalogDep = Annotated[Catalog, Depends(_catalog)]
ClientDep = Annotated[str, Depends(client_id)]
