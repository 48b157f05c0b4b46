"""Dependency aliases: the app's single objects, reached through `request.app.state`."""

from __future__ import annotations

import threading
from typing import Annotated

from fastapi import Depends, Request

from sandbox.catalog.entries import Catalog
from sandbox.host.runtimes import RuntimeSet
from server import versions
from server.classroom.room import Classroom
from server.clients import Client, identify, with_its_classes
from server.queue.interface import RunQueue
from server.runtimes import Matrices
from server.settings import Settings
from server.store.choice import open_configured
from server.store.classes import ClassStore, class_store
from server.store.lessons import LessonStore, lesson_store
from server.store.quota import StoreQuota
from server.store.shares import ShareStore, share_store
from server.store.sqlite import RecordDatabase
from server.streams import OpenStreams
from server.sweeps import SweepRegistry
from server.wire.schemas import VersionInfo

_opening = threading.Lock()


def _settings(request: Request) -> Settings:
    return request.app.state.settings


def _runner(request: Request) -> RunQueue:
    return request.app.state.queue


def _catalog(request: Request) -> Catalog:
    return request.app.state.catalog


def _database(request: Request) -> RecordDatabase:
    """The share and lesson database, opened on first use (the app closes it when it stops)."""
    state = request.app.state
    database: RecordDatabase | None = getattr(state, "database", None)
    if database is None:
        with _opening:
            database = getattr(state, "database", None)
            if database is None:
                settings = state.settings
                database = state.database = open_configured(settings)
    return database


def _versions(request: Request) -> VersionInfo:
    state = request.app.state
    return versions.running(state.settings, state.backend_name, state.backend_note)


def _runtimes(request: Request) -> RuntimeSet:
    return request.app.state.runtimes


def _matrices(request: Request) -> Matrices:
    return request.app.state.matrices


def _sweeps(request: Request) -> SweepRegistry:
    return request.app.state.sweeps


def _shares(request: Request) -> ShareStore:
    return share_store(_database(request))


def _lessons(request: Request) -> LessonStore:
    return lesson_store(_database(request))


def _classes(request: Request) -> ClassStore:
    return class_store(_database(request))


def _client(request: Request) -> Client:
    """Who a run belongs to, for fairness: a network address and, within it, the browser's own id."""
    peer = request.client.host if request.client else None
    return identify(peer, header_fields(request), request.app.state.trusted_proxies)


def header_fields(request: Request) -> dict[str, str]:
    """The request's headers, each field's lines joined as one (RFC 9110 5.3): a proxy may add its
    `X-Forwarded-For` as a line of its own after the client's, and `dict(request.headers)` keeps only
    the first line, the one the client wrote."""
    return {key: ", ".join(request.headers.getlist(key)) for key in request.headers}


def _run_client(request: Request) -> Client:
    """Who a run counts against: the requester, or, where its address started classes, that address
    as its classes' owner (`with_its_classes`)."""
    client = _client(request)
    owner = _classes(request).owner_key_if_teacher(client.address)
    return client if owner is None else with_its_classes(client, owner)


def _streams(request: Request) -> OpenStreams:
    return request.app.state.streams


def _quota(request: Request) -> StoreQuota:
    return request.app.state.store_quota


def _classroom(request: Request) -> Classroom:
    return request.app.state.classroom


SettingsDep = Annotated[Settings, Depends(_settings)]
QueueDep = Annotated[RunQueue, Depends(_runner)]
CatalogDep = Annotated[Catalog, Depends(_catalog)]
ClientDep = Annotated[Client, Depends(_client)]
RunClientDep = Annotated[Client, Depends(_run_client)]
SharesDep = Annotated[ShareStore, Depends(_shares)]
LessonsDep = Annotated[LessonStore, Depends(_lessons)]
ClassesDep = Annotated[ClassStore, Depends(_classes)]
VersionsDep = Annotated[VersionInfo, Depends(_versions)]
RuntimesDep = Annotated[RuntimeSet, Depends(_runtimes)]
MatricesDep = Annotated[Matrices, Depends(_matrices)]
SweepsDep = Annotated[SweepRegistry, Depends(_sweeps)]
DatabaseDep = Annotated[RecordDatabase, Depends(_database)]
QuotaDep = Annotated[StoreQuota, Depends(_quota)]
StreamsDep = Annotated[OpenStreams, Depends(_streams)]
ClassroomDep = Annotated[Classroom, Depends(_classroom)]


# The same objects for code that has the request but is not a route (the MCP server's tools).
client_of = _client
run_client_of = _run_client
classes_of = _classes
classroom_of = _classroom
