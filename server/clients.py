"""Who is asking: a network address (the fairness unit) and, within it, a browser id.

The address is the peer's, unless the peer is a configured trusted proxy: then it is the last
address in `X-Forwarded-For` (or `Forwarded: for=`) that is not itself a trusted proxy, so a class
behind the school's reverse proxy is still told apart, while a client cannot choose its address by
sending the header itself. Where a request carries both headers and they name different clients,
one of them is the client's own invention (a proxy writes one kind and passes the other through), so
neither is believed: the request is the proxy's own. The browser id (`X-Playground-Client`, minted by
the page) only subdivides its address's share: an address that mints a new id per request gains nothing.

An IPv6 client is its /64 (`IPV6_PREFIX`): one subscriber holds a whole /64 at least and may send
from any of its 2**64 addresses, so a per-address cap counted per IPv6 address caps nothing. An
IPv4 address written as IPv6 (`::ffff:192.0.2.1`) is that IPv4 address.

A server on a unix socket (`PLAYGROUND_UDS`) has no network peer: every request comes from whatever
connected to the socket. Alone, all of them are one client ("unknown"); behind a reverse proxy on the
socket, `PLAYGROUND_TRUSTED_PROXIES` names it with the word `unix` (`UNIX_SOCKET`), and its forwarded
headers name each client as a TCP proxy's do.

A coarser unit, the client's network (`network_of`: an IPv4 /24, an IPv6 /48), counts only where many
addresses of one holder would otherwise pass for many people: the queue's kept places
(`server.queue.admission`). A /48 is what one site is routed (2**16 /64s), and a /24 the smallest
block one holder is routed in IPv4, so its addresses are one holder's or one provider's neighbours.
"""

from __future__ import annotations

import functools
import ipaddress
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass

Network = ipaddress.IPv4Network | ipaddress.IPv6Network
# In the trusted proxies: whoever connects over the server's unix socket (a request without a peer).
UNIX_SOCKET = "unix"
Proxy = Network | str
_BROWSER_ID = re.compile(r"[A-Za-z0-9_-]{1,64}")
_FORWARDED_FOR = re.compile(r'for="?\[?([^\]";,]+)', re.IGNORECASE)
IPV6_PREFIX = 64
IPV4_NETWORK_PREFIX = 24
IPV6_NETWORK_PREFIX = 48
CLASS_PREFIX = "class:"
OWNER_KEY_SEPARATOR = "."


@dataclass(frozen=True)
class Client:
    address: str
    browser: str = ""
    # A class member (`in_class_session`): the address is the class's owner (every class one address
    # started, together), the browser the student, and the class budget stands in for the per-address
    # cap (a room behind one school address is normal).
    in_class: bool = False
    # A class member's own network address (as its own runs count: `with_its_classes` for an address
    # that started classes): its class runs and its own runs count together against one cap.
    member: str = ""

    @property
    def holder(self) -> str:
        """The address whose cap this client's runs count against: a class member's own, else its own."""
        return self.member or self.address

    @property
    def key(self) -> str:
        return f"{self.address}/{self.browser}" if self.browser else self.address

    @functools.cached_property
    def network(self) -> str:
        """`network_of` its address, worked out once (the queue asks it of every active run)."""
        return network_of(self.address)


def in_class_session(class_id: str, student_id: str, owner: str, member: str = "") -> Client:
    """A student of a class, limited per student and by the class budget, not by the shared address.
    The budget, the rate and the place in the queue's round robin are its owner's (`owner`: who
    started the class, as the class store keeps it): two classes of one address get one share.
    `member`: the address the run came from (`Client.address` of the request), whose own runs and
    class runs count together (one address cannot hold its own cap and a class's budget beside it)."""
    return Client(class_group(owner), f"{class_id}.{student_id}", in_class=True, member=member)


def class_group(owner: str) -> str:
    """The queue's group of every class `owner` started (and of the owner's own runs)."""
    return f"{CLASS_PREFIX}{owner}"


def with_its_classes(client: Client, owner: str) -> Client:
    """A client whose address started classes (`owner`: their key, as the class store keeps it), as its
    own runs count: in the same address as its classes' runs, so the per-address cap, the class budget
    and the queue's round robin each see the two together (one address cannot hold its own cap and its
    classes' budget beside it)."""
    return Client(class_group(owner), client.browser)


def parse_networks(text: str) -> tuple[Proxy, ...]:
    """`"10.0.0.0/8 127.0.0.1 unix"` → networks (and `UNIX_SOCKET`); raises ValueError naming a bad entry."""
    return tuple(
        UNIX_SOCKET if part == UNIX_SOCKET else ipaddress.ip_network(part, strict=False)
        for part in text.split()
    )


def identify(peer: str | None, headers: dict[str, str], trusted: Iterable[Proxy] = ()) -> Client:
    """The client behind a request from `peer` (None: over the unix socket) with these (lower-cased)
    headers."""
    proxies = tuple(trusted)
    networks = tuple(p for p in proxies if not isinstance(p, str))
    address = _normal(peer) or "unknown"
    by_proxy = UNIX_SOCKET in proxies if peer is None else bool(networks) and _within(address, networks)
    if by_proxy:
        named = {_client_in(address, chain, networks) for chain in _forwarded_chains(headers)}
        address = named.pop() if len(named) == 1 else address
    browser = headers.get("x-playground-client", "")
    return Client(subscriber(address), browser if _BROWSER_ID.fullmatch(browser) else "")


def subscriber(address: str) -> str:
    """The unit per-address limits count: an IPv4 address, or an IPv6 address's /64."""
    try:
        ip = ipaddress.ip_address(address)
    except ValueError:
        return address
    if isinstance(ip, ipaddress.IPv6Address):
        if ip.ipv4_mapped is not None:
            return str(ip.ipv4_mapped)
        return str(ipaddress.IPv6Network((ip, IPV6_PREFIX), strict=False))
    return str(ip)


def network_of(address: str) -> str:
    """The network a `Client.address` belongs to: an IPv4 /24 or an IPv6 /48. A class group's is its
    owner's (`owner_key`: the network's digest before the dot); any other key is its own network."""
    if address.startswith(CLASS_PREFIX):
        return CLASS_PREFIX + address.removeprefix(CLASS_PREFIX).split(OWNER_KEY_SEPARATOR)[0]
    try:
        net = ipaddress.ip_network(address, strict=False)
    except ValueError:
        return address
    prefix = IPV4_NETWORK_PREFIX if net.version == 4 else IPV6_NETWORK_PREFIX
    return str(net.supernet(new_prefix=prefix)) if net.prefixlen > prefix else str(net)


def owner_key(address: str, digest: Callable[[str], str]) -> str:
    """The key a class owner's `address` is kept by (`digest`: a salted hash, so no address is kept):
    its network's digest, then its own, so `network_of` finds the network of a class group."""
    return f"{digest(network_of(address))[:8]}{OWNER_KEY_SEPARATOR}{digest(address)[:24]}"


def _client_in(peer: str, chain: list[str], trusted: tuple[Network, ...]) -> str:
    """The nearest hop of `chain` that is not a trusted proxy (the peer when the chain is empty)."""
    address = peer
    for hop in reversed(chain):  # nearest first: the first hop we do not trust is the client
        address = hop
        if not _within(hop, trusted):
            break
    return address


def _forwarded_chains(headers: dict[str, str]) -> list[list[str]]:
    """Each proxy header's addresses, farthest first."""
    chains = []
    if "forwarded" in headers:
        chains.append(_chain(_FORWARDED_FOR.findall(headers["forwarded"])))
    if "x-forwarded-for" in headers:
        chains.append(
            _chain([part.strip() for part in headers["x-forwarded-for"].split(",") if part.strip()])
        )
    return chains


def _chain(raw: list[str]) -> list[str]:
    """Addresses farthest first; malformed entries end the chain there."""
    chain: list[str] = []
    for item in raw:
        normal = _normal(item)
        if normal is None:
            chain = []  # everything before a forged or garbled hop is untrustworthy
            continue
        chain.append(normal)
    return chain


def _normal(text: str | None) -> str | None:
    if not text:
        return None
    candidate = text.strip()
    if candidate.startswith("[") and "]" in candidate:  # "[2001:db8::1]:443": IPv6 with a port
        candidate = candidate[1 : candidate.index("]")]
    if candidate.count(":") == 1 and "." in candidate:  # IPv4 with a port
        candidate = candidate.split(":")[0]
    try:
        return str(ipaddress.ip_address(candidate))
    except ValueError:
        return None


def _within(address: str, networks: tuple[Network, ...]) -> bool:
    try:
        ip = ipaddress.ip_address(address)
    except ValueError:
        return False
    return any(ip in net for net in networks)
