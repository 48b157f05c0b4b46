"""Issue 41, a third round of held-out variants, over a real HTTP server (the fake sandbox).

A share's measurements listed newest first alone: two addresses of ten made-up lines each filled the
page and hid every real one.
"""

from __future__ import annotations

import json
from collections.abc import Iterator

import pytest

from server.app import create_app
from server.settings import Settings
from tests.api.test_class_live import ClassFake
from tests.api.test_heldout_variants import from_address, measurement
from tests.live import serving


@pytest.fixture(scope="module")
def server(tmp_path_factory) -> Iterator[str]:
    settings = Settings(
        data_dir=tmp_path_factory.mktemp("third"), slots=1, queue_size=64, rate_per_minute=0,
        store_saves_per_minute=0, trusted_proxies="127.0.0.1",
    )  # fmt: skip
    with serving(create_app(settings, backend=ClassFake())) as url:
        yield url


def _share(url: str, chip: str) -> str:
    with from_address(url, "10.43.0.1") as http:
        return http.post("/api/shares", json={"source": "x = 1\n", "chip": chip}).json()["id"]


def test_made_up_measurements_do_not_push_a_real_one_off_the_list(server):
    share = _share(server, "v5p")
    with from_address(server, "10.43.1.1") as owner:
        mine = owner.post(
            f"/api/shares/{share}/measurements", json={"line": measurement(share, device_seconds=0.0123)}
        )
    assert mine.status_code == 201, mine.text
    for n, flooder in enumerate(("10.43.2.1", "10.43.2.2")):
        with from_address(server, flooder) as http:
            for i in range(10):
                line = measurement(share, device_seconds=(n * 10 + i + 1) * 1e-4)
                assert http.post(f"/api/shares/{share}/measurements", json={"line": line}).status_code == 201
    with from_address(server, "10.43.3.1") as reader:
        first = reader.get(f"/api/shares/{share}/measurements").json()
        assert mine.json()["id"] in [m["id"] for m in first["measurements"]], first
        assert (len(first["measurements"]), first["total"], first["next_offset"]) == (20, 21, 20)
        rest = reader.get(f"/api/shares/{share}/measurements", params={"offset": 20}).json()
    assert rest["next_offset"] is None and len(rest["measurements"]) == 1
    seen = [m["id"] for m in first["measurements"] + rest["measurements"]]
    assert len(set(seen)) == 21


@pytest.mark.parametrize("offset", ["-1", "101", "1e3", "x", "9" * 40])
def test_a_measurements_page_out_of_range_is_a_problem_never_500(server, offset):
    share = _share(server, "v6e")
    with from_address(server, "10.43.4.1") as http:
        answer = http.get(f"/api/shares/{share}/measurements", params={"offset": offset})
    assert answer.status_code == 422 and answer.headers["content-type"].startswith("application/problem+json")


@pytest.mark.parametrize(
    ("changes", "field"),
    [
        ({"device_kind": "TPU v6 lite"}, "device_kind"),
        ({"device_kind": "TPU v5 lite\u202e"}, "device_kind"),
        ({"device_kind": "<img src=x onerror=alert(1)>"}, "device_kind"),
        ({"case": "f32\u202e652x652"}, "case"),
        ({"case": "c\n=HYPERLINK(1)"}, "case"),
        ({"case": "c\u200b"}, "case"),
        ({"case": ""}, "case"),
    ],
    ids=["another chip's kind", "kind with a bidi override", "kind of markup", "case with a bidi override",
         "case with a line break", "case with a zero-width space", "empty case"],
)  # fmt: skip
def test_a_measurement_whose_words_no_notebook_prints_is_refused(server, changes, field):
    share = _share(server, "tpu7x")
    with from_address(server, "10.43.6.1") as http:
        answer = http.post(f"/api/shares/{share}/measurements", json={"line": measurement(share, **changes)})
        assert answer.status_code == 422 and field in answer.text, answer.text
        assert http.get(f"/api/shares/{share}/measurements").json()["measurements"] == []


# -- a sweep's names and values are bounded before they become a sweep ----------------------------------

SWEPT = "def kernel(x, *, bm=128):\n    return x\n"


@pytest.mark.parametrize(
    ("body", "detail"),
    [
        ('{"params": {"bm": [NaN]}, "size": {"m": 256}}', "bm=nan"),
        ('{"params": {"bm": [1e400]}, "size": {"m": 256}}', "bm=inf"),
        ('{"params": {"bm": [1000000000000000000000000000000]}, "size": {"m": 256}}', "below 2**63"),
        ('{"params": {"bm": ["' + "x" * 65 + '"]}, "size": {"m": 256}}', "at most 64"),
        ('{"params": {"": [1]}, "size": {"m": 256}}', "not a name"),
        ('{"params": {"' + "b" * 65 + '": [1]}, "size": {"m": 256}}', "not a name"),
        ('{"params": {"bm": [128]}, "size": {"m": -5}}', "size m=-5"),
        ('{"params": {"bm": [128]}, "size": {"m": 0}}', "size m=0"),
        ('{"params": {"bm": [128]}, "size": {"m": 1000000000000000000000000000000}}', "whole number from 1"),
        ('{"params": {"bm": [128]}, "size": {"m": 256}, "check_size": {"m": -1}}', "check_size m=-1"),
        ('{"params": {"bm": [128]}, "size": {' + ", ".join(f'"d{i}": 1' for i in range(17)) + "}}", "at most 16"),
        ('{"params": {"bm": [128]}, "size": {"m 1": 256}}', "not a name"),
    ],
    ids=[
        "NaN", "1e400", "10**30 value", "65-char value", "empty name", "65-char name", "size -5", "size 0",
        "size 10**30", "check size -1", "17 dims", "dim with a space",
    ],
)  # fmt: skip
def test_a_sweep_of_absurd_names_or_values_is_refused(server, body, detail):
    content = '{"source": ' + json.dumps(SWEPT) + ', "chip": "v5e", ' + body[1:]
    with from_address(server, "10.43.5.1") as http:
        answer = http.post("/api/sweeps", content=content, headers={"Content-Type": "application/json"})
    assert answer.status_code == 422, answer.text
    assert answer.json()["title"] == "Invalid sweep" and detail in answer.json()["detail"], answer.text
