"""The latency buckets every run queue counts in (seconds), shared by the web server and the workers."""

from __future__ import annotations

BUCKETS: tuple[float, ...] = (0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 60.0, 120.0, 300.0)
