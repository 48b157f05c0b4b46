"""What a kernel body's loads and stores of its refs cost the walk (`walker.Walker`'s mixin): a VMEM load
or store is its value's vregs in the load or store unit (masked ones too: `pltpu.load` / `pltpu.store`
with `mask=`); an SMEM read is a scalar operation whose value the walk looks up where it knows the ref's
contents (scalar-prefetched tables, program mode's own writes)."""

from __future__ import annotations

from typing import Any

import numpy as np

from sandbox.harness.model.barriers import Barriers
from sandbox.harness.model.evaluate import UNKNOWN, Ref, indexer, size
from sandbox.harness.model.ops import memory_cost, padded_elements


class MemoryAccess(Barriers):
    """`get`, `swap`, their masked forms and `addupdate` on VMEM and SMEM refs."""

    sequential: bool
    record: list[Any] | None
    sublanes: int
    lanes: int

    def _read(self, env: dict[Any, Any], atom: Any) -> Any:
        raise NotImplementedError

    def _vector(self, eqn: Any, wait: int) -> None:
        raise NotImplementedError

    def _scalar(self) -> None:
        raise NotImplementedError

    def _work(self, kind: str | None, flops: float, units: Any, wait: int = -1) -> None:
        raise NotImplementedError

    def _unflatten(self, eqn: Any, tree_key: str, leaves: Any) -> Any:
        raise NotImplementedError

    def _get(self, eqn: Any, env: dict[Any, Any]) -> None:
        ref = self._read(env, eqn.invars[0])
        out = eqn.outvars[0]
        if isinstance(ref, Ref) and ref.space == "smem":
            env[out] = self._lookup(ref, self._unflatten(eqn, "tree", eqn.invars[1:]), env)
            self._scalar()
        else:
            self._vector(eqn, self._load_code(ref, out))

    def _lookup(self, ref: Ref, transforms: Any, env: dict[Any, Any]) -> Any:
        index = indexer(transforms, env)
        if ref.values is None or index is None or len(index) != ref.values.ndim:
            return UNKNOWN
        arrays = [np.asarray(i).astype(np.int64) for i in index]
        if any(((a < 0) | (a >= n)).any() for a, n in zip(arrays, ref.values.shape, strict=True)):
            return UNKNOWN
        found = np.asarray(ref.values[tuple(arrays)])
        return found.item() if self.sequential and found.ndim == 0 else found

    def _swap(self, eqn: Any, env: dict[Any, Any]) -> None:
        ref, value = self._read(env, eqn.invars[0]), self._read(env, eqn.invars[1])
        if not (isinstance(ref, Ref) and ref.space == "smem"):
            self._vector_store(eqn, ref, eqn.invars[1])
            return
        self._scalar()
        if self.record is not None:
            self.record.append(UNKNOWN)  # SMEM state that changes per step: no iteration classes
            return
        index = indexer(self._unflatten(eqn, "tree", eqn.invars[2:]), env)
        if eqn.outvars:
            env[eqn.outvars[0]] = self._lookup(ref, self._unflatten(eqn, "tree", eqn.invars[2:]), env)
        if not self.sequential or ref.values is None or index is None or value is UNKNOWN:
            ref.values = None  # per-step SMEM state is not tracked in grid mode
            return
        ref.values = ref.values.copy()
        ref.values[tuple(int(i) for i in index)] = value

    def _vector_store(self, eqn: Any, ref: Any, value: Any) -> None:
        """A store of the vector `value` (a Var) to VMEM: its vregs (packed dtypes fill them deeper)."""
        stored = value.aval
        if eqn.outvars:  # the value it replaces
            self._load_code(ref, eqn.outvars[0])
        wait = self._store_code(ref, value)
        if size(stored.shape) > 1:
            stores = memory_cost(stored.shape, stored.dtype, self.sublanes, self.lanes)
            self._work(None, 0, {"store": stores}, wait)

    def _masked_swap(self, eqn: Any, env: dict[Any, Any]) -> None:
        """`pltpu.store(ref, value, mask=...)`: a store of the value's vregs with a lane mask (the v5e's
        `vst.msk`, one per vreg in the compiler's listing of ragged paged attention), not vector work."""
        ref = self._read(env, eqn.invars[0])
        if isinstance(ref, Ref) and ref.space == "smem":  # SMEM state it changes is not tracked
            self._scalar()
            if self.record is not None:
                self.record.append(UNKNOWN)
                return
            ref.values = None
            return
        _, _, value, _ = self._unflatten(eqn, "args_tree", eqn.invars)  # ref, its transforms, value, mask
        self._vector_store(eqn, ref, value)

    def _masked_load(self, eqn: Any, env: dict[Any, Any]) -> None:
        """`pltpu.load(ref, mask=...)`: a load of the result's vregs, as `get`."""
        ref = self._read(env, eqn.invars[0])
        if isinstance(ref, Ref) and ref.space == "smem":
            env[eqn.outvars[0]] = UNKNOWN
            self._scalar()
            return
        self._vector(eqn, self._load_code(ref, eqn.outvars[0]))

    def _addupdate(self, eqn: Any, env: dict[Any, Any]) -> None:
        ref = self._read(env, eqn.invars[0])
        if isinstance(ref, Ref) and ref.space == "smem":
            if self.record is not None:
                self.record.append(UNKNOWN)
                return
            ref.values = None
        else:
            added = eqn.invars[1].aval  # a load, an add and a store
            moved = memory_cost(added.shape, added.dtype, self.sublanes, self.lanes)
            wait = self._store_code(ref, eqn.invars[1], add=True)
            adds = float(padded_elements(added.shape, self.sublanes, lanes=self.lanes))
            self._work(None, 0, {"load": moved, "alu": adds, "store": moved}, wait)
