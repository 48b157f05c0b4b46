"""One list of event kinds: the protocol's, and everything that repeats it agrees with it.

The server forwards `FORWARDED_KINDS` (sandbox/backends/execute.py), the page listens for the kinds in
`api.js`, the progress log and the status line describe each, and the API docs list them. Before this
test they were four lists that disagreed (the page never listened for `progress` or `lowering`).
"""

from __future__ import annotations

import re
import typing
from pathlib import Path

from sandbox.backends.execute import FORWARDED, progress
from sandbox.protocol import (
    FORWARDED_KINDS,
    QUEUE_KINDS,
    RUN_STREAM_KINDS,
    SWEEP_STREAM_KINDS,
    EventKind,
)

ROOT = Path(__file__).resolve().parents[2]
JS = ROOT / "frontend" / "static" / "js"
API_DOC = ROOT / "README.md"


def js_list(name: str) -> list[str]:
    text = (JS / "api.js").read_text()
    found = re.search(rf"const {name} = \[(.*?)\];", text, re.S)
    assert found, f"api.js has no {name} list"
    return re.findall(r'"([a-z_]+)"', found.group(1))


def test_the_forwarded_kinds_are_protocol_kinds_and_the_queue_forwards_exactly_them():
    kinds = set(typing.get_args(EventKind))
    assert kinds >= FORWARDED_KINDS
    assert FORWARDED is FORWARDED_KINDS
    assert {k for k in kinds if progress(k, {}, 0.0) is not None} == FORWARDED_KINDS
    # What stays inside the job's own report: big payloads folded into the result, internal logs.
    assert kinds - FORWARDED_KINDS == {"trace", "estimate", "log", "done"}


def test_the_page_follows_exactly_the_kinds_the_server_streams():
    assert js_list("EVENT_KINDS") == list(RUN_STREAM_KINDS)
    assert js_list("SWEEP_EVENTS") == list(SWEEP_STREAM_KINDS)
    assert set(QUEUE_KINDS) <= set(RUN_STREAM_KINDS) & set(SWEEP_STREAM_KINDS)


def test_the_progress_log_and_the_status_line_describe_every_run_event():
    for module in ("progress.js", "runstatus.js"):
        text = (JS / module).read_text()
        described = set(re.findall(r'case "([a-z_]+)":', text))
        missing = set(RUN_STREAM_KINDS) - described - {"done"}
        assert not missing, f"{module} does not describe {sorted(missing)}"


def test_the_api_docs_list_every_run_event_in_the_stream_order():
    text = API_DOC.read_text()
    line = next(ln for ln in text.split("\n- ") if ln.startswith("`GET /api/runs/{id}/events`"))
    documented = re.findall(r"`([a-z_]+)`", line)
    assert [k for k in documented if k in RUN_STREAM_KINDS or k in FORWARDED_KINDS] == list(RUN_STREAM_KINDS)
