"""The static chip checks as a table: kernel facts and a chip in, the warnings a user reads out."""

import pytest

from sandbox.harness.checks.memory import OnChip
from sandbox.harness.lowering.chip_checks import BlockUse, KernelFacts, MeshUse, vmem_refusal, warnings
from sandbox.protocol.chips import chip_info

MIB = 1 << 20


def block(shape, array, dtype="float32", bits=32, space="vmem") -> KernelFacts:
    return KernelFacts(blocks=(BlockUse("k", "inputs[0]", shape, array, dtype, bits, space),))


TABLE = [
    (
        "two TensorCores on v5e",
        KernelFacts(meshes=(MeshUse("body", "tensor_core", 2),)),
        "v5e",
        ["kernel 'body': TensorCoreMesh has num_cores=2, but a TPU v5e device has 1 TensorCore"],
    ),
    (
        "two TensorCores on v6e",
        KernelFacts(meshes=(MeshUse("body", "tensor_core", 2),)),
        "v6e",
        ["num_cores=2, but a TPU v6e device has 1 TensorCore"],
    ),
    ("two TensorCores on v5p", KernelFacts(meshes=(MeshUse("body", "tensor_core", 2),)), "v5p", []),
    (
        "two TensorCores on TPU7x: its chip's two are two JAX devices",
        KernelFacts(meshes=(MeshUse("body", "tensor_core", 2),)),
        "tpu7x",
        ["num_cores=2, but a TPU7x device has 1 TensorCore; its chip's 2 are 2 devices"],
    ),
    (
        "SparseCore on v5e",
        KernelFacts(meshes=(MeshUse("sc", "sparse_core", 1, 1),)),
        "v5e",
        ["kernel 'sc': a SparseCore mesh, but a TPU v5e has no SparseCore"],
    ),
    (
        "too many SparseCores on v6e",
        KernelFacts(meshes=(MeshUse("sc", "sparse_core", 4, 32),)),
        "v6e",
        ["num_cores=4, but a TPU v6e has 2 SparseCores", "num_subcores=32, but a TPU v6e SparseCore has 16"],
    ),
    ("SparseCore that fits v5p", KernelFacts(meshes=(MeshUse("sc", "sparse_core", 4, 16),)), "v5p", []),
    (
        "VMEM over v5p",
        KernelFacts(memory=OnChip(vmem_bytes=80 * MIB, kernels=1)),
        "v5p",
        ["VMEM: the kernel allocates 83,886,080 bytes, more than the 67,108,864 bytes of one TPU v5p"],
    ),
    ("the same VMEM fits v5e", KernelFacts(memory=OnChip(vmem_bytes=80 * MIB, kernels=1)), "v5e", []),
    (
        "SMEM over",
        KernelFacts(memory=OnChip(smem_bytes=2 * MIB, kernels=1)),
        "v6e",
        ["SMEM: the kernel allocates 2,097,152 bytes, more than the 1,048,576 bytes"],
    ),
    (
        "vmem_limit_bytes over the chip",
        KernelFacts(memory=OnChip(vmem_bytes=MIB), vmem_limits=(("k", 100 * MIB, MIB),)),
        "v5p",
        ["kernel 'k': vmem_limit_bytes=104,857,600 is more than the 67,108,864 bytes"],
    ),
    (
        "demand over vmem_limit_bytes",
        KernelFacts(memory=OnChip(vmem_bytes=40 * MIB), vmem_limits=(("k", 32 * MIB, 40 * MIB),)),
        "v5p",
        ["kernel 'k': allocates 41,943,040 bytes of VMEM, more than its vmem_limit_bytes=33,554,432"],
    ),
    (
        "over v5e's default scoped VMEM limit, no vmem_limit_bytes",
        KernelFacts(memory=OnChip(vmem_bytes=20 * MIB), unlimited=(("k", 20 * MIB),)),
        "v5e",
        [
            "kernel 'k': allocates 20,971,520 bytes of VMEM, more than the 16,777,216 bytes a TPU v5e "
            "kernel gets by default (its scoped VMEM limit): the TPU compiler refuses it"
        ],
    ),
    (
        "under v6e's default scoped VMEM limit",
        KernelFacts(memory=OnChip(vmem_bytes=20 * MIB), unlimited=(("k", 20 * MIB),)),
        "v6e",
        [],
    ),
    (
        "over TPU7x's default scoped VMEM limit",
        KernelFacts(memory=OnChip(vmem_bytes=40 * MIB), unlimited=(("k", 40 * MIB),)),
        "tpu7x",
        ["more than the 33,554,432 bytes a TPU7x kernel gets by default"],
    ),
    (
        "v5p's default is not published: not checked",
        KernelFacts(memory=OnChip(vmem_bytes=40 * MIB), unlimited=(("k", 40 * MIB),)),
        "v5p",
        [],
    ),
    (
        "over the chip itself: one warning, not two",
        KernelFacts(memory=OnChip(vmem_bytes=200 * MIB), unlimited=(("k", 200 * MIB),)),
        "v5e",
        ["VMEM: the kernel allocates 209,715,200 bytes, more than the 134,217,728 bytes"],
    ),
    ("f32 (8, 128) block", block((8, 128), (64, 256)), "v5e", []),
    (
        "f32 rows not a multiple of 8",
        block((4, 128), (64, 256)),
        "v5e",
        [
            "block (4, 128) of array (64, 256) float32: the second-to-last dimension 4 is neither a multiple "
            "of 8 nor the array's 64"
        ],
    ),
    (
        "lanes not a multiple of 128",
        block((8, 100), (64, 200)),
        "v5e",
        ["the last dimension 100 is neither a multiple of 128 nor the array's 200"],
    ),
    ("block equal to the whole array", block((4, 100), (4, 100)), "v5e", []),
    (
        "bf16 with 8 rows",
        block((8, 128), (64, 128), "bfloat16", 16),
        "v5e",
        ["8 rows is not a multiple of 16, the native (16, 128) tile of 16-bit data"],
    ),
    ("bf16 with 16 rows", block((16, 128), (64, 128), "bfloat16", 16), "v5e", []),
    (
        "int8 with 16 rows",
        block((16, 128), (64, 128), "int8", 8),
        "v5e",
        ["16 rows is not a multiple of 32, the native (32, 128) tile of 8-bit data"],
    ),
    ("leading dims are free", block((3, 8, 128), (9, 64, 128)), "v5e", []),
    ("HBM blocks are not tiled", block((4, 100), (64, 200), space="any"), "v5e", []),
    ("rank 1, a power of two", block((256,), (1024,)), "v5e", []),
    (
        "rank 1, odd size",
        block((200,), (1000,)),
        "v5e",
        [
            "a rank-1 block of 200 elements must be the whole array (1000), a multiple of 1024, or a power of "
            "two of at least 128"
        ],
    ),
    (
        "rank 1, bf16 needs 256",
        block((128,), (1024,), "bfloat16", 16),
        "v5e",
        ["power of two of at least 256"],
    ),
]


@pytest.mark.parametrize(
    ("facts", "chip", "expected"), [row[1:] for row in TABLE], ids=[row[0] for row in TABLE]
)
def test_chip_warnings(facts, chip, expected):
    found = warnings(facts, chip_info(chip))
    assert len(found) == len(expected), found
    for text, want in zip(found, expected, strict=True):
        assert want in text


def test_a_sweep_refuses_what_the_compiler_would_for_its_vmem():
    """Tune's `over_vmem`: over the chip, or over its default scoped limit without vmem_limit_bytes."""
    v5e = chip_info("v5e")
    over_chip = KernelFacts(memory=OnChip(vmem_bytes=200 * MIB), unlimited=(("k", 200 * MIB),))
    assert vmem_refusal(over_chip, v5e) == "needs 200.0 MiB of VMEM; a TPU v5e has 128 MiB"
    scoped = KernelFacts(memory=OnChip(vmem_bytes=33 * MIB), unlimited=(("k", 33 * MIB),))
    assert vmem_refusal(scoped, v5e) == (
        "needs 33.0 MiB of VMEM; a TPU v5e kernel gets 16 MiB by default (kernel 'k' sets no "
        "pltpu.CompilerParams(vmem_limit_bytes=...))"
    )
    assert vmem_refusal(scoped, chip_info("v5p")) is None  # its default is not published
    raised = KernelFacts(memory=OnChip(vmem_bytes=33 * MIB), vmem_limits=(("k", 64 * MIB, 33 * MIB),))
    assert vmem_refusal(raised, v5e) is None
