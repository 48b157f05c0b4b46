"""Who a request comes from: proxies are believed only when configured, browser ids only subdivide."""

import pytest

from server.clients import Client, identify, parse_networks

PROXY = parse_networks("10.0.0.5/32 10.1.0.0/16")


@pytest.mark.parametrize(
    ("peer", "headers", "trusted", "expected"),
    [
        ("203.0.113.7", {}, (), Client("203.0.113.7")),
        ("203.0.113.7", {"x-playground-client": "abc-123"}, (), Client("203.0.113.7", "abc-123")),
        # A client cannot pick its address: without a trusted proxy the header is ignored.
        ("203.0.113.7", {"x-forwarded-for": "198.51.100.1"}, (), Client("203.0.113.7")),
        ("203.0.113.7", {"x-forwarded-for": "198.51.100.1"}, PROXY, Client("203.0.113.7")),
        # Behind the school's proxy each student is told apart.
        ("10.0.0.5", {"x-forwarded-for": "192.0.2.44"}, PROXY, Client("192.0.2.44")),
        # The client's own X-Forwarded-For prefix is not believed: the nearest untrusted hop wins.
        ("10.0.0.5", {"x-forwarded-for": "6.6.6.6, 192.0.2.44, 10.1.2.3"}, PROXY, Client("192.0.2.44")),
        (
            "10.0.0.5",
            {"forwarded": 'for=192.0.2.60;proto=https, for="[2001:db8::1]:443"'},
            PROXY,
            Client("2001:db8::1"),
        ),
        ("10.0.0.5", {"x-forwarded-for": "not-an-ip"}, PROXY, Client("10.0.0.5")),
        ("10.0.0.5", {}, PROXY, Client("10.0.0.5")),
        # Browser ids that are not ids are dropped, not trusted.
        ("203.0.113.7", {"x-playground-client": "x" * 65}, (), Client("203.0.113.7")),
        ("203.0.113.7", {"x-playground-client": "a/b"}, (), Client("203.0.113.7")),
        (None, {}, (), Client("unknown")),
    ],
)
def test_identify(peer, headers, trusted, expected):
    assert identify(peer, headers, trusted) == expected


def test_a_client_key_includes_the_browser_only_when_there_is_one():
    assert Client("192.0.2.1", "b1").key == "192.0.2.1/b1"
    assert Client("192.0.2.1").key == "192.0.2.1"


def test_bad_proxy_settings_are_refused():
    with pytest.raises(ValueError):
        parse_networks("10.0.0.0/8 not-a-network")
