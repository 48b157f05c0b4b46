"""Sandbox backends: ways to run one job in isolation, behind the `Backend` interface."""

from sandbox.backends.base import Backend, EventSink, backend_names, create_backend

__all__ = ["Backend", "EventSink", "backend_names", "create_backend"]
