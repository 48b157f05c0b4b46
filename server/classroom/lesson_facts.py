"""What a class reads of its lesson revision, worked out once per process: the chip each step runs
on, the scratch steps whose file writes a Pallas kernel (`judging`), and those whose file defines a
`reference` (`lesson_check`).

Every view of a class (the teacher's grid, each student's live page, every class run's admission
and watch) needs these facts, and reading them parses each step's file. Parsed on every view, a
lesson of 30 steps of 64 KiB cost the web server 7.6 s of CPU per view, so a few open class pages
and a hand raised every second took the server's threads and a stranger's save waited 2.8 s (issue
41, fifth round). A lesson revision never changes (a revision is a new number), so the facts are
kept per (database, lesson, revision), a bounded number of them, least recently used first out.
Parsing never fails the view either: a file nested too deep for the parser is a file that writes no
kernel (its reference's job says what is wrong with it, in the user's terms).
"""

from __future__ import annotations

import collections
import threading
from dataclasses import dataclass

from sandbox.backends.checking import defines_reference
from server.classroom.judging import kernel_steps
from server.store.classes import ClassSession, ClassStore
from server.store.lessons import lesson_store

KEPT = 512


@dataclass(frozen=True)
class LessonFacts:
    """`chips[k - 1]`: step k's chip; `kernel_steps` and `reference_steps`: 1-based step numbers."""

    chips: tuple[str, ...] = ()
    kernel_steps: frozenset[int] = frozenset()
    reference_steps: frozenset[int] = frozenset()


Key = tuple[str, str, int]
_kept: collections.OrderedDict[Key, LessonFacts] = collections.OrderedDict()
_lock = threading.Lock()  # read from the worker threads the routes hand store calls to
# One reader parses a revision; the class's other pages, opened at the same moment, wait for it
# rather than each parsing it again (twenty pages were twenty times the CPU).
_reading: dict[Key, threading.Lock] = {}


def lesson_facts(store: ClassStore, session: ClassSession) -> LessonFacts:
    """The facts of the class's lesson revision (none for a lesson that is gone)."""
    key = (store.database.salt, session.lesson, session.revision)
    with _lock:
        found = _kept.get(key)
        if found is not None:
            _kept.move_to_end(key)
            return found
        reading = _reading.setdefault(key, threading.Lock())
    with reading:
        with _lock:
            found = _kept.get(key)
        if found is None:
            found = _read(store, session, key)
        with _lock:
            _reading.pop(key, None)
        return found


def _read(store: ClassStore, session: ClassSession, key: Key) -> LessonFacts:
    lesson = lesson_store(store.database).get(session.lesson, session.revision)
    if lesson is None:
        return LessonFacts()  # not kept: a lesson is never deleted, so this is a passing failure
    steps = lesson.record.steps
    facts = LessonFacts(
        chips=tuple(s.chip for s in steps),
        kernel_steps=kernel_steps([(s.entry, s.source) for s in steps]),
        reference_steps=frozenset(
            k for k, s in enumerate(steps, 1) if s.entry is None and defines_reference(s.source)
        ),
    )
    with _lock:
        _kept[key] = facts
        while len(_kept) > KEPT:
            _kept.popitem(last=False)
    return facts
