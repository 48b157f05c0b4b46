"""Sandbox backends: ways to run one job in isolation, behind the `Backend` interface."""

from sandbox.backends.base import (
    Backend,
    EventSink,
    UnsafeBindError,
    backend_names,
    capability_report,
    check_bind_allowed,
    create_backend,
    default_backend_name,
)

__all__ = [
    "Backend",
    "EventSink",
    "UnsafeBindError",
    "backend_names",
    "capability_report",
    "check_bind_allowed",
    "create_backend",
    "default_backend_name",
]
