"""`python -m server` as deployed decides who the client is by its own settings alone.

uvicorn's proxy-header handling, on by default, rewrites the peer from `X-Forwarded-For` whenever the
connection comes from 127.0.0.1: a local client (or a proxy that passes the header through) could pose
as a new address on every request and escape every per-address limit. With no trusted proxies set, the
peer is the client: 20 join-code lookups, each naming another address, are one address's, and the 6th
of them is refused when that address may make 5.
"""

from __future__ import annotations

import signal

import httpx

from tests.e2e.test_share_durability import free_port, start_server


def test_x_forwarded_for_from_an_untrusted_peer_names_no_one(tmp_path, monkeypatch):
    monkeypatch.setenv("PLAYGROUND_CLASS_JOINS_PER_MINUTE", "5")
    monkeypatch.delenv("PLAYGROUND_TRUSTED_PROXIES", raising=False)
    port = free_port()
    proc = start_server(tmp_path / "data", port)
    try:
        answers = [
            httpx.head(
                f"http://127.0.0.1:{port}/c/NOSUCHCODE{n}",
                headers={"X-Forwarded-For": f"203.0.113.{n}"},
                timeout=10,
            ).status_code
            for n in range(20)
        ]
    finally:
        proc.send_signal(signal.SIGTERM)
        proc.wait(timeout=30)
    assert answers[:5] == [404] * 5, answers
    assert set(answers[5:]) == {429}, answers
