"""The run queue's refusals as problem details, for every route that submits to it."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator

from server.problems import ProblemError
from server.queue.admission import LIGHT_NETWORK_RUNS, LIGHT_RUNS
from server.queue.interface import (
    ClientBusyError,
    NoRunnerError,
    QueueFullError,
    QueueUnavailableError,
    RateLimitedError,
)


@contextlib.contextmanager
def queue_problems() -> Iterator[None]:
    """The queue's refusals as problem details: 503 with Retry-After for ours, 429 for the client's."""
    try:
        yield
    except QueueFullError as exc:
        raise ProblemError(
            503, "Queue full", full_detail(exc), headers={"Retry-After": str(exc.retry_after)}
        ) from exc
    except RateLimitedError as exc:
        raise ProblemError(
            429,
            "Rate limited",
            f"you started runs too quickly; try again in {exc.retry_after} s",
            headers={"Retry-After": str(exc.retry_after)},
        ) from exc
    except ClientBusyError as exc:
        raise ProblemError(
            429, "Too many runs", f"{exc}; wait for one to finish", headers={"Retry-After": "5"}
        ) from exc
    except NoRunnerError as exc:
        raise ProblemError(503, "No runner", str(exc), headers={"Retry-After": "30"}) from exc
    except QueueUnavailableError as exc:
        raise ProblemError(
            503,
            "Queue unavailable",
            f"the run queue cannot be reached right now; try again in {exc.retry_after} s",
            headers={"Retry-After": str(exc.retry_after)},
        ) from exc


def full_detail(exc: QueueFullError) -> str:
    """Why a run found no place, and when to try again."""
    kept = (
        f"; its last {exc.kept} places are kept for people with fewer than {LIGHT_RUNS} runs queued or "
        f"running (counted per network address, or per class) in a network (an IPv4 /24, an IPv6 /48) "
        f"with fewer than {LIGHT_NETWORK_RUNS}, and yours has more"
        if exc.kept
        else ""
    )
    return f"{exc.queued} runs are waiting{kept}; try again in {exc.retry_after} s"
