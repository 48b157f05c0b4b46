"""Who a request comes from: proxies are believed only when configured, browser ids only subdivide."""

import hashlib

import pytest

from server.clients import Client, identify, in_class_session, network_of, owner_key, parse_networks

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
            Client("2001:db8::/64"),
        ),
        ("10.0.0.5", {"x-forwarded-for": "not-an-ip"}, PROXY, Client("10.0.0.5")),
        ("10.0.0.5", {}, PROXY, Client("10.0.0.5")),
        # Browser ids that are not ids are dropped, not trusted.
        ("203.0.113.7", {"x-playground-client": "x" * 65}, (), Client("203.0.113.7")),
        ("203.0.113.7", {"x-playground-client": "a/b"}, (), Client("203.0.113.7")),
        (None, {}, (), Client("unknown")),
        # An IPv6 client is its /64 (issue 41): any address of it is the same client.
        ("2001:db8:0:7::1", {}, (), Client("2001:db8:0:7::/64")),
        ("2001:db8:0:7:ffff:ffff:ffff:ffff", {}, (), Client("2001:db8:0:7::/64")),
        ("10.0.0.5", {"x-forwarded-for": "2001:db8:0:7::beef"}, PROXY, Client("2001:db8:0:7::/64")),
        ("10.0.0.5", {"x-forwarded-for": "[2001:db8:0:7::beef]:8443"}, PROXY, Client("2001:db8:0:7::/64")),
        # An IPv4 address written as IPv6 is that address.
        ("::ffff:192.0.2.44", {}, (), Client("192.0.2.44")),
        ("10.0.0.5", {"x-forwarded-for": "::ffff:192.0.2.44"}, PROXY, Client("192.0.2.44")),
        # Both headers, naming different clients: one is the client's own; the request is the proxy's.
        (
            "10.0.0.5",
            {"x-forwarded-for": "192.0.2.44", "forwarded": "for=198.51.100.9"},
            PROXY,
            Client("10.0.0.5"),
        ),
        (
            "10.0.0.5",
            {"x-forwarded-for": "198.51.100.9", "forwarded": "for=192.0.2.44"},
            PROXY,
            Client("10.0.0.5"),
        ),
        # Both, naming the same client (a proxy that writes both): that client.
        (
            "10.0.0.5",
            {"x-forwarded-for": "192.0.2.44", "forwarded": "for=192.0.2.44"},
            PROXY,
            Client("192.0.2.44"),
        ),
    ],
)
def test_identify(peer, headers, trusted, expected):
    assert identify(peer, headers, trusted) == expected


def test_addresses_of_one_ipv6_subscriber_are_one_client_for_every_limit():
    """Per-address caps (queue, joins, lookups, saves, measurements) all count `Client.address`."""
    seen = {identify(f"2001:db8:1:2:{i:x}::{i:x}", {}).address for i in range(1, 500)}
    assert seen == {"2001:db8:1:2::/64"}
    assert identify("2001:db8:1:3::1", {}).address != identify("2001:db8:1:2::1", {}).address


def test_a_client_key_includes_the_browser_only_when_there_is_one():
    assert Client("192.0.2.1", "b1").key == "192.0.2.1/b1"
    assert Client("192.0.2.1").key == "192.0.2.1"


def test_bad_proxy_settings_are_refused():
    with pytest.raises(ValueError):
        parse_networks("10.0.0.0/8 not-a-network")


def test_a_proxys_own_forwarded_for_line_after_the_clients_is_read_too():
    """A proxy (HAProxy's `option forwardfor`) may add its `X-Forwarded-For` as a line after the
    client's own; reading only the first line believed the client's."""
    from starlette.requests import Request

    from server.deps import header_fields

    lines = [(b"x-forwarded-for", b"6.6.6.6"), (b"x-forwarded-for", b"192.0.2.44"), (b"host", b"p")]
    headers = header_fields(Request({"type": "http", "headers": lines}))
    assert identify("10.0.0.5", headers, PROXY) == Client("192.0.2.44")


@pytest.mark.parametrize(
    ("address", "network"),
    [
        ("192.0.2.77", "192.0.2.0/24"),
        ("2001:db8:1:2::/64", "2001:db8:1::/48"),  # a subscriber's /64, as `identify` gives it
        ("2001:db8::/32", "2001:db8::/32"),  # already wider: itself
        ("unknown", "unknown"),
    ],
)
def test_a_clients_network_is_its_ipv4_24_or_its_ipv6_48(address, network):
    assert network_of(address) == network == Client(address).network


def test_class_owners_of_one_network_share_a_network_and_nothing_else():
    def digest(text: str) -> str:
        return hashlib.sha256(text.encode()).hexdigest()

    one, two, other = (owner_key(a, digest) for a in ("192.0.2.1", "192.0.2.200", "198.51.100.1"))
    assert len({one, two, other}) == 3 and "192" not in one  # kept as digests
    members = [in_class_session("c", "s", key) for key in (one, two, other)]
    assert members[0].network == members[1].network != members[2].network
    assert members[0].network != members[0].address  # a network, not one owner
    assert network_of(f"class:{digest('x')[:24]}") == f"class:{digest('x')[:24]}"  # an older key


def test_a_request_over_the_unix_socket_is_believed_only_when_the_socket_is_a_trusted_proxy():
    forwarded = {"x-forwarded-for": "203.0.113.7, 10.0.0.5"}  # a TCP proxy of ours in between, too
    assert identify(None, forwarded, parse_networks("unix 10.0.0.0/8")).address == "203.0.113.7"
    assert identify(None, forwarded, parse_networks("10.0.0.0/8")).address == "unknown"
    assert identify(None, forwarded).address == "unknown"
    assert identify("192.0.2.1", forwarded, parse_networks("unix")).address == "192.0.2.1"  # a TCP peer
