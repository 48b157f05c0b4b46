"""Conformance rows kept as files in `conformance/` (each file's docstring names the JAX tests it rebuilds).

These follow JAX's tests of PRNG keys (`tpu_pallas_random_test.py`), async copy futures
(`tpu_pallas_async_test.py`), ref views, scopes and DMAs (`tpu_pallas_test.py`) and SparseCore
accumulating copies (`tpu_sparsecore_pallas_test.py`), most of which JAX's own interpret mode cannot
run; the harness's fixes (`sandbox/harness/jaxapi/fixes/`) do.
"""

from __future__ import annotations

from tests.sandbox.conformance_kernels import Conformance

RANDOM = "tpu_pallas_random_test.py::"
ASYNC = "tpu_pallas_async_test.py::"
SPARSECORE = "tpu_sparsecore_pallas_test.py::"
TPU = "tpu_pallas_test.py::"

FILE_ROWS = (
    Conformance(
        "prng_keys",
        RANDOM + "test_seeded_reproducibility",
        also=(
            "test_prng_non_vreg_shape_output",
            "test_stateful_sample",
            "test_stateless_sample",
            "test_fold_in",
            "test_key_data",
            "test_output_physical_key",
        ),
    ),
    Conformance(
        "prng_layouts",
        RANDOM + "test_key_in_core_map",
        also=("test_squeezed_blockspec", "test_pallas_matches_jax_threefry", "test_block_invariance"),
    ),
    Conformance(
        "futures",
        ASYNC + "test_basic_async_copy",
        also=(
            "test_multiple_async_copy",
            "test_async_slice",
            "test_async_dynamic_slice",
            "test_multi_async_dynamic_slice",
            "test_copy_in_a_loop",
            "test_staggered_copy_in_a_loop",
            "test_full_copy_in_a_loop",
            "test_staggered_full_copy_in_a_loop",
        ),
    ),
    Conformance(
        "futures_more",
        ASYNC + "test_basic_stateful_async_copy",
        also=(
            "test_multiple_stateful_async_copy",
            "test_basic_stateful_async_slice",
            "test_basic_async_copy_into_vmem",
            "test_multiple_async_copy_into_vmem",
        ),
    ),
    Conformance(
        "futures_remote",
        ASYNC + "test_basic_remote_copy",
        also=("test_multi_remote_copy", "test_basic_collective_permute_loop"),
    ),
    Conformance(
        "ref_transforms",
        TPU + "test_load_bitcasted_ref",
        also=(
            "test_store_bitcasted_ref",
            "test_dma_reshaped_ref",
            "test_store_reshaped_ref",
            "test_multiple_ref_transforms",
        ),
    ),
    Conformance(
        "dma_scopes",
        TPU + "test_empty_ref_allocation",
        also=(
            "test_run_scoped_can_return_scalar_values",
            "test_run_scoped_can_return_vector_values",
            "test_run_scoped_can_return_padded_vector_values",
            "test_nested_scoped_allocation",
            "test_can_wait_on_semaphore",
            "test_can_wait_on_semaphore_array",
            "test_can_read_semaphore",
            "test_output_dma_semaphore_ref",
            "test_hbm_hbm_grid_dma",
            "test_hbm_vmem_dma",
            "test_vmem_hbm_dma",
            "test_vmem_hbm_vmem_dma",
            "test_set_dma_priority",
        ),
    ),
    Conformance(
        "select_and_dynamic_dma",
        TPU + "test_select_ref",
        also=(
            "test_select_ref_smem_index",
            "test_select_ref_nested",
            "test_simple_tile_aligned_dynamic_size_dma",
        ),
    ),
    Conformance(
        "pipeline_modes",
        TPU + "test_two_input_vadd",
        also=("test_block_reduction_with_non_immediate_revisit",),
    ),
    Conformance(
        "sc_subcores",
        SPARSECORE + "test_gather_add",
        also=("test_scatter_add", "test_shared_scratch", "test_fetch_and_add"),
        chip="tpu7x",
    ),
)
