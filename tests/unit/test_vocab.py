"""One source per vocabulary: the run statuses are `RunStatus` (sandbox/protocol/result.py); the page's
copy (frontend/static/js/vocab.js) is generated from it by scripts/vocab.py, and the server's other
spellings are derived from it."""

from __future__ import annotations

import re
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "scripts"))

import vocab  # noqa: E402

from sandbox.protocol import RunStatus  # noqa: E402
from sandbox.protocol.result import STATUS_WORDS  # noqa: E402
from server.classroom.progress import FAILING  # noqa: E402
from server.wire.classes import CellPublic  # noqa: E402

JS = ROOT / "frontend" / "static" / "js"


def test_the_pages_vocabulary_is_what_the_generator_writes():
    assert vocab.JS.read_text() == vocab.vocab_js(), (
        "run `python scripts/vocab.py --write` and commit vocab.js"
    )


def test_every_status_has_the_pages_words():
    text = vocab.vocab_js()
    for status in RunStatus:
        assert f'{status.value}: "{status.words}"' in text
        assert f'{status.value}: "{status.cell_words}"' in text


def test_the_server_derives_its_statuses_from_the_protocol():
    assert {"mismatch", "error", "timeout", "resource_limit", "rejected", "no_kernel"} == FAILING
    cell = CellPublic.model_json_schema()["properties"]["status"]["enum"]
    assert set(cell) == {s.value for s in RunStatus} | {"queued", "running", "lost", "editing"}


@pytest.mark.parametrize(
    "module", sorted(p for p in JS.glob("*.js") if p.name != "vocab.js"), ids=lambda p: p.name
)
def test_no_other_page_module_words_the_statuses(module):
    # A table of words keyed by status (`resource_limit: "..."`) belongs in vocab.js; a key or two (a
    # case's `passed: "true"`) is not a table.
    keyed = [s.value for s in RunStatus if re.search(rf'\b{s.value}: "', module.read_text())]
    assert len(keyed) < 3, keyed


def test_every_status_has_its_words_in_the_protocol():
    assert set(STATUS_WORDS) == set(RunStatus)
    assert all(words and cell for words, cell in STATUS_WORDS.values())
