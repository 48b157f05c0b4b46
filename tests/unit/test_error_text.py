"""The error translator's pure parts: scrubbing paths and advice, naming regions and grid steps."""

import pytest

from sandbox.harness.errors.clean import callback_root, first_line, scrub
from sandbox.harness.errors.rules import grid_step, outside


def test_scrub_cuts_every_directory_and_the_filtering_advice():
    text = (
        "Block spec for args[0] in pallas_call k at /work/wt/tests/kernel.py:15 has block shape (8,)\n"
        "--------------------\n"
        "For simplicity, JAX has removed its internal frames from the traceback of the following "
        "exception. Set JAX_TRACEBACK_FILTERING=off to include these.\n"
        'File "/root/.venv/lib/python3.12/site-packages/jax/_src/core.py", line 3'
    )
    cleaned = scrub(text)
    assert "kernel.py:15" in cleaned and 'File "core.py", line 3' in cleaned
    for leak in ("/work", "/root", "site-packages", "JAX_TRACEBACK_FILTERING", "For simplicity"):
        assert leak not in cleaned


def test_callback_root_finds_the_exception_at_the_bottom_of_an_embedded_traceback():
    text = (
        "INTERNAL: CpuCallback error calling callback: Traceback (most recent call last):\n"
        '  File "x.py", line 1, in get\n'
        "IndexError: Out-of-bounds read of (0 0 hbm 101): reading [...] but buffer has shape (256, 256).\n"
    )
    assert callback_root(text) == (
        "IndexError",
        "Out-of-bounds read of (0 0 hbm 101): reading [...] but buffer has shape (256, 256).",
    )
    assert callback_root("ValueError: plain") is None


def test_first_line_is_capped():
    assert first_line("\n\nfirst\nsecond") == "first"
    assert first_line("x" * 1000, 10) == "x" * 9 + "…"


@pytest.mark.parametrize(
    ("region", "shape", "said"),
    [
        ((slice(256, 384), slice(0, 128)), (256, 256), "rows 256:384, past the array's 256 rows"),
        ((slice(0, 128), slice(128, 256)), (256, 128), "columns 128:256, past the array's 128 columns"),
        ((4, slice(0, 128)), (4, 128), "row 4, past the array's 4 rows"),
        (
            (slice(0, 1), slice(0, 8), slice(120, 136)),
            (2, 8, 128),
            "columns 120:136, past the array's 128 columns",
        ),
        (
            (slice(2, 3), slice(0, 8), slice(0, 128)),
            (2, 8, 128),
            "2:3 along axis 0, past the array's 2 along axis 0",
        ),
        ((slice(0, 8),), (4,), "elements 0:8, past the array's 4 elements"),
    ],
)
def test_outside_names_the_dimensions_a_region_leaves(region: tuple, shape: tuple, said: str):
    assert outside(region, shape) == said


def test_grid_steps_use_the_index_maps_names():
    assert grid_step(("i", "j", "k"), (0, 0, 1)) == "(i=0, j=0, k=1)"
    assert grid_step(("i",), (3,)) == "(i=3)"
    assert grid_step(("i", "j"), (1,)) == "(1,)"


def test_scrub_keeps_urls_whole_and_still_cuts_the_paths_beside_them():
    # It turned "file an issue at https://github.com/jax-ml/jax/issues/new/choose." into "https:choose.".
    text = (
        "Please file an issue at https://github.com/jax-ml/jax/issues/new/choose. "
        'File "/root/.venv/lib/python3.12/site-packages/jax/_src/core.py", line 3'
    )
    assert scrub(text) == (
        'Please file an issue at https://github.com/jax-ml/jax/issues/new/choose. File "core.py", line 3'
    )
