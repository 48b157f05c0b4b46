"""`pallas_playground.Client` and `python -m sandbox run FILE --server URL` against a live server
(`tests.live.serving`) with the fake sandbox: typed results, events, cancellation, shares, the
server's problems as `PlaygroundError`, and the remote CLI's report and exit codes."""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Iterator

import pytest

from pallas_playground import Client, PlaygroundError
from sandbox.__main__ import main
from sandbox.protocol import RunResult, RunStatus
from server.app import create_app
from server.settings import Settings
from tests.api.fakes import FakeBackend
from tests.live import serving

SOURCE = "def matmul(x, y):\n    return x @ y\n"


@pytest.fixture(scope="module")
def live(tmp_path_factory) -> Iterator[tuple[str, FakeBackend]]:
    backend = FakeBackend()
    settings = Settings(data_dir=tmp_path_factory.mktemp("data"), slots=2, queue_size=8, rate_burst=100)
    with serving(create_app(settings, backend=backend)) as url:
        yield url, backend
    backend.release.set()


def test_a_run_comes_back_as_a_typed_result_with_its_events(live):
    url, backend = live
    kinds: list[str] = []
    finished = Client(url, client_id="tester").run(
        SOURCE,
        entry="tiled_matmul",
        chip="v6e",
        options={"detect_races": True},
        on_event=lambda e: kinds.append(e.kind),
    )
    assert isinstance(finished.result, RunResult) and finished.result.status is RunStatus.PASSED
    assert finished.result.chip == "v6e" and finished.result.options.detect_races is True
    assert kinds[0] == "queued" and kinds[-1] == "done" and "case" in kinds
    assert Client(url).get(finished.run_id).result == finished.result
    assert backend.jobs[-1].options.detect_races is True


def test_a_cancelled_run_ends_cancelled(live):
    url, _ = live
    client = Client(url)
    submitted = client.submit("block " + SOURCE)
    client.cancel(submitted.id)
    assert client.follow(submitted.id).status is RunStatus.CANCELLED


def test_refusals_are_playground_errors_with_the_problem(live):
    url, _ = live
    with pytest.raises(PlaygroundError) as refused:
        Client(url).submit(SOURCE, entry="no_such_entry")
    assert refused.value.status == 422 and "no_such_entry" in refused.value.detail
    with pytest.raises(PlaygroundError) as unknown:
        Client(url).follow("no-such-run")  # a refusal is not a broken stream: no retrying
    assert unknown.value.status == 404 and unknown.value.title == "Unknown run"
    with pytest.raises(PlaygroundError) as unreachable:
        Client("http://127.0.0.1:9").get("x")
    assert unreachable.value.status == 0


def test_a_share_keeps_the_run_and_has_a_notebook(live):
    url, _ = live
    client = Client(url)
    finished = client.run(SOURCE, entry="tiled_matmul", chip="v5e")
    link = client.share(SOURCE, entry="tiled_matmul", chip="v5e", run=finished.run_id)
    assert link.url == f"{url}/s/{link.id}"
    assert json.loads(client.notebook(link.id))["metadata"]["pallas_playground"]["share"] == link.id
    assert [e["slug"] for e in client.catalog()][:1] and client.entry("tiled_matmul")[
        "entry_point"
    ] == "matmul"


def test_the_remote_cli_prints_the_local_report_and_exit_codes(live, tmp_path, capsys):
    url, _ = live
    passing, crashing = tmp_path / "ok.py", tmp_path / "crash.py"
    passing.write_text(SOURCE)
    crashing.write_text("crash = 1\n" + SOURCE)  # the fake backend raises: an error result
    assert (
        main(["run", str(passing), "--entry", "tiled_matmul", "--chip", "v5e", "--server", url, "--share"])
        == 0
    )
    out, err = capsys.readouterr()
    assert out.startswith("[PASSED]") and "chip v5e" in out and f"shared: {url}/s/" in err
    assert main(["run", str(crashing), "--server", url, "--json"]) == 1
    assert json.loads(capsys.readouterr().out)["status"] == "error"
    assert (
        main(["run", str(passing), "--entry", "nope", "--server", url]) == 2
    )  # refused locally: no such entry
    assert main(["run", str(passing), "--chip", "v5e", "--mode", "tpu", "--server", url]) == 2
    assert "422 No TPU" in capsys.readouterr().err


def test_the_remote_cli_cancels_its_run_on_ctrl_c(live, tmp_path, capsys, monkeypatch):
    url, _ = live
    blocking = tmp_path / "block.py"
    blocking.write_text("block = 1\n" + SOURCE)
    interrupted = threading.Event()
    original = Client.follow

    def follow_then_interrupt(self, run_id, on_event=None):
        if not interrupted.is_set():
            interrupted.set()
            time.sleep(0.2)
            raise KeyboardInterrupt
        return original(self, run_id, on_event)

    monkeypatch.setattr(Client, "follow", follow_then_interrupt)
    assert main(["run", str(blocking), "--server", url]) == 1
    assert capsys.readouterr().out.startswith("[CANCELLED]")
