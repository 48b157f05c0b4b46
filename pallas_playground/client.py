"""`Client(url)`: the playground's HTTP API (docs/api.md) as Python calls with typed results.

Refusals come back as `PlaygroundError` with the problem's status, title and detail (and the seconds
to wait, for 429 and 503); a kernel that fails is not an error but a `RunResult` with its status,
as the API has it.
"""

from __future__ import annotations

import http.client
import json
import time
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

from sandbox.protocol import RunResult, from_json_dict

STREAM_SECONDS = 90.0  # the server sends a keep-alive every 15 s; silence this long is a lost stream
RECONNECTS = 5


class PlaygroundError(Exception):
    """The server refused a request (RFC 9457 problem details), or could not be reached (status 0)."""

    def __init__(
        self, status: int, title: str, detail: str, retry_after: int | None = None, body: Any = None
    ):
        super().__init__(f"{status} {title}: {detail}" if status else detail)
        self.status, self.title, self.detail, self.retry_after, self.body = (
            status,
            title,
            detail,
            retry_after,
            body,
        )


@dataclass(frozen=True)
class Submitted:
    id: str
    state: str
    position: int | None


@dataclass(frozen=True)
class RunState:
    id: str
    state: str  # queued, running, done
    position: int | None
    result: RunResult | None


@dataclass(frozen=True)
class Event:
    """One event of a run's stream (`queued`, `running`, …, `done`); `id` resumes after it."""

    kind: str
    data: dict[str, Any]
    id: str | None = None


@dataclass(frozen=True)
class Finished:
    run_id: str
    result: RunResult


@dataclass(frozen=True)
class SharedLink:
    id: str
    url: str  # absolute


class Client:
    def __init__(self, url: str, *, client_id: str | None = None, timeout: float = 30.0) -> None:
        """`client_id`: the browser-like id this client's runs are counted under (`X-Playground-Client`)."""
        self.url, self.client_id, self.timeout = url.rstrip("/"), client_id, timeout

    # -- runs ------------------------------------------------------------------------------------

    def submit(
        self,
        source: str,
        *,
        entry: str | None = None,
        chip: str = "v5p",
        mode: str = "auto",
        options: dict[str, Any] | None = None,
        lower_chips: tuple[str, ...] | list[str] = (),
        runtime: str | None = None,
        fresh: bool = False,
    ) -> Submitted:
        """Queue a run (`POST /api/runs`); its result comes with `follow`."""
        body = {
            "source": source,
            "entry": entry,
            "chip": chip,
            "mode": mode,
            "options": {k: v for k, v in (options or {}).items() if v is not None},
            "lower_chips": list(lower_chips),
            "runtime": runtime,
            "fresh": fresh,
        }
        made = self._request("POST", "/api/runs", body)
        return Submitted(made["id"], made["state"], made.get("position"))

    def run(
        self, source: str, *, on_event: Callable[[Event], None] | None = None, **request: Any
    ) -> Finished:
        """Submit and follow to the end; the keyword arguments are `submit`'s."""
        submitted = self.submit(source, **request)
        return Finished(submitted.id, self.follow(submitted.id, on_event))

    def follow(self, run_id: str, on_event: Callable[[Event], None] | None = None) -> RunResult:
        """The run's result, once done; `on_event` sees each event on the way (a lost stream resumes
        after its last event id, then the run is read once more)."""
        after: str | None = None
        for _ in range(RECONNECTS):
            try:
                for event in self.events(run_id, after):
                    if on_event is not None:
                        on_event(event)
                    if event.kind == "done":
                        return from_json_dict(RunResult, event.data)
                    after = event.id or after
            except PlaygroundError as exc:
                if exc.status:  # the server refused (the run is unknown): following again will not help
                    raise
                time.sleep(1.0)
            except (OSError, http.client.HTTPException):  # the stream broke off: resume after the last event
                time.sleep(1.0)
        state = self.get(run_id)
        if state.result is None:
            raise PlaygroundError(0, "Lost", f"the events of run {run_id} could not be followed to its end")
        return state.result

    def events(self, run_id: str, after: str | None = None) -> Iterator[Event]:
        """The run's Server-Sent Events as they come (after the event id `after`)."""
        headers = {"Accept": "text/event-stream", **({"Last-Event-ID": after} if after else {})}
        response = self._open("GET", f"/api/runs/{_quote(run_id)}/events", None, headers, STREAM_SECONDS)
        with response:
            yield from _sse(response)

    def get(self, run_id: str) -> RunState:
        found = self._request("GET", f"/api/runs/{_quote(run_id)}")
        return _state(found)

    def cancel(self, run_id: str) -> RunState:
        """Cancel a queued or running run (`DELETE /api/runs/{id}`)."""
        return _state(self._request("DELETE", f"/api/runs/{_quote(run_id)}"))

    # -- shares, notebooks, the catalog ----------------------------------------------------------

    def share(
        self,
        source: str,
        *,
        entry: str | None = None,
        chip: str = "v5p",
        options: dict[str, Any] | None = None,
        run: str | None = None,
        runtime: str | None = None,
    ) -> SharedLink:
        """A link to this state (`POST /api/shares`); `run`: a finished run of it, kept with the link."""
        chosen = {k: v for k, v in (options or {}).items() if v is not None}
        body = {
            "source": source,
            "entry": entry,
            "chip": chip,
            "options": chosen,
            "run": run,
            "runtime": runtime,
        }
        made = self._request("POST", "/api/shares", body)
        return SharedLink(made["id"], self.url + made["url"])

    def notebook(self, share_id: str) -> str:
        """The share's notebook (.ipynb JSON text)."""
        with self._open(
            "GET", f"/api/shares/{_quote(share_id)}/notebook", None, {}, self.timeout
        ) as response:
            return response.read().decode()

    def add_measurement(self, share_id: str, line: str) -> dict[str, Any]:
        """Bring back the line the share's notebook printed (`POST /api/shares/{id}/measurements`)."""
        return self._request("POST", f"/api/shares/{_quote(share_id)}/measurements", {"line": line})

    def catalog(self) -> list[dict[str, Any]]:
        return self._request("GET", "/api/catalog")

    def entry(self, slug: str) -> dict[str, Any]:
        return self._request("GET", f"/api/catalog/{_quote(slug)}")

    # -- HTTP ------------------------------------------------------------------------------------

    def _request(self, method: str, path: str, body: Any = None) -> Any:
        with self._open(method, path, body, {"Accept": "application/json"}, self.timeout) as response:
            return json.loads(response.read() or b"null")

    def _open(self, method: str, path: str, body: Any, headers: dict[str, str], timeout: float) -> Any:
        data = None if body is None else json.dumps(body).encode()
        sent = {**headers, **({"Content-Type": "application/json"} if data is not None else {})}
        if self.client_id:
            sent["X-Playground-Client"] = self.client_id
        request = urllib.request.Request(self.url + path, data=data, method=method, headers=sent)
        try:
            return urllib.request.urlopen(request, timeout=timeout)
        except urllib.error.HTTPError as exc:
            raise _problem(exc) from None
        except (urllib.error.URLError, OSError) as exc:
            raise PlaygroundError(0, "Unreachable", f"cannot reach {self.url}: {exc}") from exc


def _sse(response: Any) -> Iterator[Event]:
    kind, event_id = "message", None
    data: list[str] = []
    for raw in response:
        line = raw.decode().rstrip("\r\n")
        if not line:
            if data:
                yield Event(kind, json.loads("\n".join(data)), event_id)
            kind, data, event_id = "message", [], None
        elif line.startswith("event:"):
            kind = line[6:].strip()
        elif line.startswith("data:"):
            data.append(line[5:].strip())
        elif line.startswith("id:"):
            event_id = line[3:].strip()


def _state(found: dict[str, Any]) -> RunState:
    result = found.get("result")
    return RunState(
        found["id"],
        found["state"],
        found.get("position"),
        from_json_dict(RunResult, result) if result else None,
    )


def _problem(exc: urllib.error.HTTPError) -> PlaygroundError:
    try:
        body = json.loads(exc.read() or b"{}")
    except ValueError:
        body = {}
    retry = exc.headers.get("Retry-After")
    return PlaygroundError(
        exc.code,
        str(body.get("title", exc.reason)),
        str(body.get("detail", "")),
        int(retry) if retry and retry.isdigit() else None,
        body,
    )


def _quote(part: str) -> str:
    return urllib.parse.quote(part, safe="")
