"""The next layer's weights all-gathered on a SparseCore while the TensorCore does this layer's matmul.

A sharded model multiplies with this layer's weights while the next layer's are gathered from all
devices. The two are independent, so they are two kernels in one `jit`: a ring all-gather on the
SparseCore's scalar subcore (`plsc.ScalarSubcoreMesh`) and a tiled matmul on the TensorCore. XLA
may then run them at the same time; nothing in the TensorCore kernel waits for the gather.
Docs: https://docs.jax.dev/en/latest/pallas/tpu/sparsecore.html#overlapping-tensorcore-and-sparsecore
"""

import functools

import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import tpu as pltpu
from jax.experimental.pallas import tpu_sc as plsc
from jax.sharding import PartitionSpec as P

AXIS = "x"  # the device mesh the playground sets as the current mesh has this one axis


def _precision(ref):
    """f32 operands at HIGHEST, as in the worked solution (the bug here is elsewhere)."""
    return jax.lax.Precision.HIGHEST if ref.dtype == jnp.float32 else None


def all_gather_kernel(w_hbm, o_hbm, copy_sem, send_sem, recv_sems, ready_sem):
    me, n = jax.lax.axis_index(AXIS), jax.lax.axis_size(AXIS)
    right, left = jax.lax.rem(me + 1, n), jax.lax.rem(me + n - 1, n)
    del copy_sem
    # The ring_all_gather protocol, on the SparseCore: neighbours ready, then N-1 hops to the right.
    pl.semaphore_signal(ready_sem, device_id={AXIS: left})
    pl.semaphore_signal(ready_sem, device_id={AXIS: right})
    pl.semaphore_wait(ready_sem, 2)

    @pl.loop(0, n - 1)
    def _(step):
        slot = jax.lax.rem(me + n - step, n)
        hop = pltpu.make_async_remote_copy(
            o_hbm.at[0, slot], o_hbm.at[0, slot], send_sem, recv_sems.at[step], device_id={AXIS: right}
        )
        hop.start()
        hop.wait_send()
        hop.wait_recv()


def matmul_kernel(x_hbm, w_hbm, o_hbm, acc_ref, *, bm, bn, bk):
    def step(x_ref, w_ref, o_ref):
        @pl.when(pl.program_id(2) == 0)
        def _():
            acc_ref[...] = jnp.zeros_like(acc_ref)

        acc_ref[...] += jnp.dot(
            x_ref[...], w_ref[...], preferred_element_type=jnp.float32, precision=_precision(x_ref)
        )

        @pl.when(pl.program_id(2) == pl.num_programs(2) - 1)
        def _():
            o_ref[...] = acc_ref[...].astype(o_ref.dtype)

    (m, k), n = x_hbm.shape, w_hbm.shape[1]
    pltpu.emit_pipeline(
        step,
        grid=(m // bm, n // bn, k // bk),
        in_specs=[
            pl.BlockSpec((bm, bk), lambda i, j, kk: (i, kk)),
            pl.BlockSpec((bk, bn), lambda i, j, kk: (kk, j)),
        ],
        out_specs=pl.BlockSpec((bm, bn), lambda i, j, kk: (i, j)),
    )(x_hbm, w_hbm, o_hbm)


def _layer_step(x, w, w_next, *, bm, bn, bk):
    n = jax.lax.axis_size(AXIS)
    gathered = pl.kernel(  # SparseCore: the next layer's weights, from every device
        all_gather_kernel,
        out_type=jax.ShapeDtypeStruct((1, n, *w_next.shape[1:]), w_next.dtype),
        mesh=plsc.ScalarSubcoreMesh(axis_name="sc", num_cores=1),
        scratch_types=[pltpu.SemaphoreType.DMA] * 2
        + [pltpu.SemaphoreType.DMA((n - 1,)), pltpu.SemaphoreType.REGULAR],
    )(w_next)
    y = pl.kernel(  # TensorCore: this layer's matmul; it never reads `gathered`
        functools.partial(matmul_kernel, bm=bm, bn=bn, bk=bk),
        out_type=jax.ShapeDtypeStruct((x.shape[1], w.shape[1]), x.dtype),
        mesh=pltpu.TensorCoreMesh(axis_name="core", num_cores=1),
        scratch_types=[pltpu.VMEM((bm, bn), jnp.float32)],
    )(x[0], w)
    return y[None], gathered


@functools.partial(jax.jit, static_argnames=["bm", "bn", "bk"])
def layer_step(x, w, w_next, *, bm=128, bn=128, bk=128):
    """Per device d: y[d] = x[d] @ w, and gathered[d] = all of w_next (device d holds w_next[d])."""
    if x.shape[2] % bk or x.shape[1] % bm or w.shape[1] % bn:
        raise ValueError(f"matmul shapes must divide into blocks: {x.shape=} {w.shape=} {bm=} {bn=} {bk=}")
    return jax.shard_map(
        functools.partial(_layer_step, bm=bm, bn=bn, bk=bk),
        in_specs=(P(AXIS), P(), P(AXIS)),
        out_specs=(P(AXIS), P(AXIS)),
        check_vma=False,
    )(x, w, w_next)
