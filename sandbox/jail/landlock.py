"""Landlock through its three syscalls (ctypes): a read-only view, TCP denied, signals scoped.

Landlock restricts even root, and is inherited by every process the job forks. What a ruleset
handles but no rule allows is denied. `EXECUTE` is handled and never granted, so `execve` fails
everywhere while `dlopen` keeps working. The rights a kernel does not know (older ABI) are left out,
and `restrict()` says which layers that dropped, so the capability report can name them.
"""

from __future__ import annotations

import ctypes
import errno
import os
from collections.abc import Iterable
from dataclasses import dataclass

# x86_64 and aarch64 share these numbers (they are in the unified syscall table).
_SYS_CREATE_RULESET, _SYS_ADD_RULE, _SYS_RESTRICT_SELF = 444, 445, 446
_CREATE_RULESET_VERSION = 1
_RULE_PATH_BENEATH = 1

EXECUTE = 1 << 0
WRITE_FILE = 1 << 1
READ_FILE = 1 << 2
READ_DIR = 1 << 3
_DIR_WRITE = sum(1 << b for b in range(4, 13))  # remove, make char/dir/reg/sock/fifo/block/sym
REFER = 1 << 13  # ABI 2
TRUNCATE = 1 << 14  # ABI 3
IOCTL_DEV = 1 << 15  # ABI 5
_FILE_RIGHTS = EXECUTE | WRITE_FILE | READ_FILE | TRUNCATE | IOCTL_DEV

NET_BIND_TCP, NET_CONNECT_TCP = 1 << 0, 1 << 1  # ABI 4
SCOPE_ABSTRACT_UNIX, SCOPE_SIGNAL = 1 << 0, 1 << 1  # ABI 6

READ_ONLY = READ_FILE | READ_DIR
READ_WRITE = READ_ONLY | WRITE_FILE | _DIR_WRITE | REFER | TRUNCATE


class LandlockError(OSError):
    """Landlock could not be applied (the job must then not run)."""


class _RulesetAttr(ctypes.Structure):
    _fields_ = (("fs", ctypes.c_uint64), ("net", ctypes.c_uint64), ("scoped", ctypes.c_uint64))


class _PathBeneath(ctypes.Structure):
    _pack_ = 1
    _fields_ = (("allowed", ctypes.c_uint64), ("parent_fd", ctypes.c_int32))


_libc = ctypes.CDLL(None, use_errno=True)
_libc.syscall.restype = ctypes.c_long


def _syscall(*args: object) -> int:
    result = _libc.syscall(*args)
    if result < 0:
        err = ctypes.get_errno()
        raise LandlockError(err, os.strerror(err))
    return int(result)


def abi() -> int:
    """The kernel's Landlock ABI version; 0 when Landlock is absent or disabled."""
    try:
        return _syscall(ctypes.c_long(_SYS_CREATE_RULESET), None, ctypes.c_size_t(0), _CREATE_RULESET_VERSION)
    except LandlockError as exc:
        if exc.errno in (errno.ENOSYS, errno.EOPNOTSUPP):
            return 0
        raise


def _fs_rights(version: int) -> int:
    rights = EXECUTE | WRITE_FILE | READ_FILE | READ_DIR | _DIR_WRITE
    if version >= 2:
        rights |= REFER
    if version >= 3:
        rights |= TRUNCATE
    if version >= 5:
        rights |= IOCTL_DEV
    return rights


@dataclass(frozen=True)
class Policy:
    """What stays reachable: read-only trees, read-write trees (scratch), device files (read,
    write and ioctl: a TPU's device nodes need all three) and trees whose directories may be
    listed but whose files stay closed (a TPU job lists /dev)."""

    read_only: tuple[str, ...]
    read_write: tuple[str, ...]
    devices: tuple[str, ...] = ()
    listable: tuple[str, ...] = ()


def restrict(policy: Policy) -> tuple[str, ...]:
    """Apply `policy` to this thread (and all it forks); returns the layers this kernel lacks."""
    version = abi()
    if version < 1:
        raise LandlockError(errno.EOPNOTSUPP, "Landlock is not available on this kernel")
    handled = _fs_rights(version)
    attr = _RulesetAttr(
        fs=handled,
        net=NET_BIND_TCP | NET_CONNECT_TCP if version >= 4 else 0,
        scoped=SCOPE_ABSTRACT_UNIX | SCOPE_SIGNAL if version >= 6 else 0,
    )
    ruleset = _syscall(
        ctypes.c_long(_SYS_CREATE_RULESET), ctypes.byref(attr), ctypes.c_size_t(ctypes.sizeof(attr)), 0
    )
    try:
        _allow(ruleset, policy.read_only, READ_ONLY & handled)
        _allow(ruleset, policy.read_write, READ_WRITE & handled)
        _allow(ruleset, policy.devices, (READ_FILE | WRITE_FILE | TRUNCATE | IOCTL_DEV) & handled)
        _allow(ruleset, policy.listable, READ_DIR & handled)
        _syscall(ctypes.c_long(_SYS_RESTRICT_SELF), ruleset, 0)
    finally:
        os.close(ruleset)
    missing = []
    if version < 4:
        missing.append("TCP bind/connect (Landlock ABI < 4)")
    if version < 6:
        missing.append("signal and abstract-socket scoping (Landlock ABI < 6)")
    return tuple(missing)


def _allow(ruleset: int, paths: Iterable[str], rights: int) -> None:
    for path in paths:
        try:
            fd = os.open(path, os.O_PATH | os.O_CLOEXEC)
        except FileNotFoundError:
            continue  # not in this view: nothing to allow
        try:
            allowed = rights if os.path.isdir(path) else rights & _FILE_RIGHTS
            rule = _PathBeneath(allowed=allowed, parent_fd=fd)
            _syscall(ctypes.c_long(_SYS_ADD_RULE), ruleset, _RULE_PATH_BENEATH, ctypes.byref(rule), 0)
        finally:
            os.close(fd)
