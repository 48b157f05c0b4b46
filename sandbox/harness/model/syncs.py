"""What a kernel body does to synchronise, as `cost.Program` events: DMA starts and waits, semaphore
signals and waits (a core barrier is a signal to the other core and a wait). A mixin of `walker.Walker`.
"""

from __future__ import annotations

import collections
from typing import Any

from sandbox.harness.jaxapi import core as jcore
from sandbox.harness.model.evaluate import (
    UNKNOWN,
    Ref,
    indexed_shape,
    indexer,
    inner,
    is_static,
    itemsize,
    read,
    size,
    sliced_elements,
)


class Synchronisation:
    """Program mode: each DMA or semaphore operation becomes an event (grid mode only notes `syncs`)."""

    sequential: bool
    syncs: bool
    core: int
    core_axes: frozenset[str]
    notes: set[str]
    events: list[tuple[Any, ...]]
    _static: dict[Any, tuple[Any, ...]]
    record: list[Any] | None

    def _remember(self, value: Any) -> None:
        raise NotImplementedError

    def _remember_indices(self, parts: Any, env: dict[Any, Any]) -> None:
        """Grid mode, finding iteration classes: the semaphore slots an operation uses."""
        for part in parts:
            if part is not None:
                index = indexer(getattr(part, "transforms", ()), env)
                for value in UNKNOWN_INDEX if index is None else index:
                    self._remember(value)

    def _unflatten(self, eqn: Any, tree_key: str, leaves: Any) -> Any:
        """An equation's unflattened arguments (refs, indexers over Vars), worked out once."""
        key = (id(eqn), tree_key)
        found = self._static.get(key)
        if found is None:
            found = (jcore.tree_unflatten(eqn.params[tree_key], leaves),)
            self._static[key] = found
        return found[0]

    def _sync(self) -> None:
        raise NotImplementedError

    def _read(self, env: dict[Any, Any], atom: Any) -> Any:
        raise NotImplementedError

    def _dma_start(self, eqn: Any, env: dict[Any, Any]) -> None:
        self.syncs = True
        if not self.sequential:
            self._remember_dma(eqn, env)
            return
        size_bytes, way, sem, send = self._dma(eqn, env)
        self._sync()
        # A remote copy also completes its send semaphore (`wait_send`); every device runs the same
        # program, so the copy a neighbour sends here lands when ours lands there (symmetry).
        self.events.append(("dma", size_bytes, sem, way, send if way == "ici" else None))

    def _dma_wait(self, eqn: Any, env: dict[Any, Any]) -> None:
        self.syncs = True
        if not self.sequential:
            self._remember_dma(eqn, env)
            return
        size_bytes, _, sem, send = self._dma(eqn, env)
        self._sync()
        self.events.append(("wait", send if eqn.params.get("is_wait_send") else sem, size_bytes))

    def _remember_dma(self, eqn: Any, env: dict[Any, Any]) -> None:
        """Grid mode, finding iteration classes: a DMA's semaphore slots and, if computed per step, its size."""
        if self.record is None:
            return
        size_bytes, parts = self._dma_static(eqn)
        self._remember_indices(parts[2:4], env)
        if size_bytes is None:
            count, known = sliced_elements(getattr(parts[1], "transforms", ()), env)
            self._remember(count if known else UNKNOWN)

    def _dma(self, eqn: Any, env: dict[Any, Any]) -> tuple[int, str, Any, Any]:
        static = self._dma_static(eqn)
        src, dst, dst_sem, src_sem, device = static[1]
        size_bytes = static[0] if static[0] is not None else self._dma_bytes(dst, env)
        way = self._way(self._ref(src, env), self._ref(dst, env))
        if device is not None:
            self.notes.add(
                "remote DMAs run over one ICI link at its one-way bandwidth plus a hop's latency; every "
                "device is assumed to run the same program in step (a ring's neighbours send at once)"
            )
            way = "ici"
        return size_bytes, way, self._sem(dst_sem, env), self._sem(src_sem, env)

    def _dma_bytes(self, dst: Any, env: dict[Any, Any]) -> int:
        """The bytes of a DMA whose size is computed per step (an `emit_pipeline` edge block)."""
        aval = inner(getattr(dst, "ref", dst).aval)
        count, known = sliced_elements(getattr(dst, "transforms", ()), env)
        if not known:
            self.notes.add("a DMA whose size the model cannot compute is costed at its whole buffer")
        return int(size(aval.shape) if count is UNKNOWN else count) * itemsize(aval.dtype)

    def _dma_static(self, eqn: Any) -> tuple[int | None, Any]:
        """(bytes copied, None if computed per step; the unflattened parts) of a DMA equation, worked
        out once."""
        tree = eqn.params["tree"]
        static = self._static.get(id(eqn))
        if static is None:
            avals = jcore.dma_unflatten(tree, [v.aval for v in eqn.invars])
            dst = avals[1]
            shape = indexed_shape(
                getattr(dst, "transforms", ()), tuple(inner(getattr(dst, "ref", dst)).shape)
            )
            parts = jcore.dma_unflatten(tree, eqn.invars)  # the same Vars at every step: unflattened once
            dtype = inner(getattr(dst, "ref", dst)).dtype
            static = (size(shape) * itemsize(dtype) if is_static(shape) else None, parts)
            self._static[id(eqn)] = static
        return static  # type: ignore[return-value]

    @staticmethod
    def _way(src: Ref | None, dst: Ref | None) -> str:
        src_hbm = src is None or src.space == "hbm"
        dst_hbm = dst is None or dst.space == "hbm"
        return {(True, False): "in", (False, True): "out", (True, True): "hbm"}.get((src_hbm, dst_hbm), "")

    @staticmethod
    def _ref(part: Any, env: dict[Any, Any]) -> Ref | None:
        value = read(env, getattr(part, "ref", part))
        return value if isinstance(value, Ref) else None

    def _sem(self, part: Any, env: dict[Any, Any]) -> Any:
        if part is None:
            return None
        ref = self._ref(part, env)
        index = indexer(getattr(part, "transforms", ()), env) or []
        return (ref.key if ref is not None else None, tuple(int(i) for i in index))

    def _semaphore_signal(self, eqn: Any, env: dict[Any, Any]) -> None:
        self.syncs = True
        sem, transforms, value, device, core_index = self._unflatten(eqn, "args_tree", eqn.invars)
        if not self.sequential:
            if self.record is not None:
                self._remember_indices([_Part(sem, transforms)], env)
                targets = list(device.values()) if isinstance(device, dict) else [device, core_index]
                for atom in [value, *targets]:
                    if atom is not None:
                        self._remember(read(env, atom) if not isinstance(atom, int) else atom)
            return
        target: Any = self.core
        if isinstance(device, dict):
            named = [self._read(env, v) for k, v in device.items() if k in self.core_axes]
            target = named[0] if named else UNKNOWN
        elif core_index is not None:
            target = self._read(env, core_index)
        if target is UNKNOWN or (device is not None and not isinstance(device, dict)):
            self.notes.add("a semaphore signal to another device is not modelled")
            return
        inc = self._read(env, value)
        key = self._sem(_Part(sem, transforms), env)
        self._sync()
        self.events.append(("signal", int(target), key, 1 if inc is UNKNOWN else int(inc)))

    def _semaphore_wait(self, eqn: Any, env: dict[Any, Any]) -> None:
        self.syncs = True
        sem, transforms, value, _ = self._unflatten(eqn, "args_tree", eqn.invars)
        if not self.sequential:
            if self.record is not None:
                self._remember_indices([_Part(sem, transforms)], env)
                self._remember(read(env, value))
            return
        count = self._read(env, value)
        self._sync()
        self.events.append(
            ("sem_wait", self._sem(_Part(sem, transforms), env), 1 if count is UNKNOWN else int(count))
        )


UNKNOWN_INDEX = (UNKNOWN,)  # a semaphore slot the model cannot compute: no iteration classes


class _Part(collections.namedtuple("_Part", "ref transforms")):
    """A semaphore and its indexing, shaped like the DMA parts `_sem` reads."""
