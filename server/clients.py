"""Who is asking: a network address (the fairness unit) and, within it, a browser id.

The address is the peer's, unless the peer is a configured trusted proxy: then it is the last
address in `X-Forwarded-For` (or `Forwarded: for=`) that is not itself a trusted proxy, so a class
behind the school's reverse proxy is still told apart, while a client cannot choose its address by
sending the header itself. The browser id (`X-Playground-Client`, minted by the page) only
subdivides its address's share: an address that mints a new id per request gains nothing.
"""

from __future__ import annotations

import ipaddress
import re
from collections.abc import Iterable
from dataclasses import dataclass

Network = ipaddress.IPv4Network | ipaddress.IPv6Network
_BROWSER_ID = re.compile(r"[A-Za-z0-9_-]{1,64}")
_FORWARDED_FOR = re.compile(r'for="?\[?([^\]";,]+)', re.IGNORECASE)


@dataclass(frozen=True)
class Client:
    address: str
    browser: str = ""
    # A class member (`in_class_session`): the address is the class's owner (every class one address
    # started, together), the browser the student, and the class budget stands in for the per-address
    # cap (a room behind one school address is normal).
    in_class: bool = False

    @property
    def key(self) -> str:
        return f"{self.address}/{self.browser}" if self.browser else self.address


def in_class_session(class_id: str, student_id: str, owner: str) -> Client:
    """A student of a class, limited per student and by the class budget, not by the shared address.
    The budget, the rate and the place in the queue's round robin are its owner's (`owner`: who
    started the class, as the class store keeps it): two classes of one address get one share."""
    return Client(f"class:{owner}", f"{class_id}.{student_id}", in_class=True)


def parse_networks(text: str) -> tuple[Network, ...]:
    """`"10.0.0.0/8 127.0.0.1"` → networks; raises ValueError naming a bad entry."""
    return tuple(ipaddress.ip_network(part, strict=False) for part in text.split())


def identify(peer: str | None, headers: dict[str, str], trusted: Iterable[Network] = ()) -> Client:
    """The client behind a request from `peer` with these (lower-cased) headers."""
    trusted = tuple(trusted)
    address = _normal(peer) or "unknown"
    if trusted and _within(address, trusted):
        chain = _forwarded_chain(headers)
        for hop in reversed(chain):  # nearest first: the first hop we do not trust is the client
            address = hop
            if not _within(hop, trusted):
                break
    browser = headers.get("x-playground-client", "")
    return Client(address, browser if _BROWSER_ID.fullmatch(browser) else "")


def _forwarded_chain(headers: dict[str, str]) -> list[str]:
    """Addresses from the proxy headers, farthest first; malformed entries end the chain there."""
    if "forwarded" in headers:
        raw = _FORWARDED_FOR.findall(headers["forwarded"])
    else:
        raw = [part.strip() for part in headers.get("x-forwarded-for", "").split(",") if part.strip()]
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
    candidate = text.strip().strip("[]")
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
