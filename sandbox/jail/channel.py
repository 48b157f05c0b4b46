"""The narrow channel between the backend and the pool: JSON messages on a SOCK_SEQPACKET socket.

A message is one JSON object (bounded size); a job's pipes travel with its `run` message as
SCM_RIGHTS. The job's source never crosses this channel: the backend writes it straight into the
job's stdin pipe, so the pool (whose heap every later job inherits) never holds a user's code.
"""

from __future__ import annotations

import json
import os
import socket
import struct
from typing import Any

MAX_MESSAGE = 64 * 1024
MAX_FDS = 8


class ChannelError(OSError):
    """The peer sent something that is not a protocol message."""


def pair() -> tuple[socket.socket, socket.socket]:
    return socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)


def send(sock: socket.socket, message: dict[str, Any], fds: tuple[int, ...] = ()) -> None:
    data = json.dumps(message, separators=(",", ":")).encode()
    if len(data) > MAX_MESSAGE:
        raise ChannelError(f"message of {len(data)} bytes exceeds {MAX_MESSAGE}")
    socket.send_fds(sock, [data], list(fds))


def recv(sock: socket.socket) -> tuple[dict[str, Any] | None, list[int]]:
    """The next message and the fds that came with it; (None, []) once the peer has gone."""
    data, fds, flags, _ = socket.recv_fds(sock, MAX_MESSAGE, MAX_FDS)
    if flags & (socket.MSG_TRUNC | socket.MSG_CTRUNC):
        _close_all(fds)
        raise ChannelError("truncated message")
    if not data:
        _close_all(fds)
        return None, []
    try:
        message = json.loads(data)
    except ValueError as exc:
        _close_all(fds)
        raise ChannelError(f"not JSON: {exc}") from exc
    if not isinstance(message, dict):
        _close_all(fds)
        raise ChannelError("not a JSON object")
    return message, fds


def peer_uid(sock: socket.socket) -> int:
    creds = sock.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED, struct.calcsize("3i"))
    return int(struct.unpack("3i", creds)[1])


def _close_all(fds: list[int]) -> None:
    for fd in fds:
        os.close(fd)
