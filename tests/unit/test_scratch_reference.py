"""A scratch file's reference is kept across edits its reference's job cannot see, and only those:
the key (`reference_text`) read from files as learners edit them, and as someone would try to make
an edit invisible to it while the reference's job still runs the edited code."""

from __future__ import annotations

import pytest

from sandbox.backends.checking import reference_job
from sandbox.backends.scratch_reference import reference_text
from sandbox.jobs.build import make_job

FILE = """
import functools
import jax, jax.numpy as jnp
from jax.experimental import pallas as pl

SHAPE = (256, 256)

def make_inputs(seed):
    return (jax.random.normal(jax.random.key(seed), SHAPE),)

def body(x_ref, o_ref):
    o_ref[...] = jnp.tanh(x_ref[...]) * 2

@functools.partial(jax.jit, static_argnames=())
def kernel(x):
    return pl.pallas_call(body, out_shape=jax.ShapeDtypeStruct(x.shape, x.dtype))(x)

def _scale(y):
    return y * 2

def reference(x):
    return _scale(jnp.tanh(x))
"""


def same_reference(before: str, after: str) -> bool:
    assert before != after, "the edit changed nothing"
    return reference_text(before) == reference_text(after)


@pytest.mark.parametrize(
    "old, new",
    [
        ("jnp.tanh(x_ref[...]) * 2", "jnp.tanh(x_ref[...]) * 3"),  # the Pallas body
        ("(body, out_shape", "(body, grid=(1,), out_shape"),  # the pallas_call
        ("def body(x_ref, o_ref):\n    o_ref", "def body(x_ref, o_ref):\n    print('hi'); o_ref"),
        ("(x.shape, x.dtype))(x)\n", "(x.shape, x.dtype))(x)  # a comment\n"),
    ],
)
def test_editing_what_only_the_kernel_runs_keeps_the_reference(old, new):
    assert same_reference(FILE, FILE.replace(old, new))


@pytest.mark.parametrize(
    "old, new",
    [
        ("return y * 2", "return y * 3"),  # a helper the reference calls
        ("jnp.tanh(x))", "jnp.sin(x))"),  # the reference itself
        ("(256, 256)", "(128, 256)"),  # a constant make_inputs reads
        ("key(seed)", "key(seed + 1)"),  # make_inputs
        ("SHAPE = (256, 256)", "SHAPE = (256, 256)\nprint('imported')"),  # top-level code runs at import
        ("static_argnames=()", "static_argnames=('x',)"),  # a decorator's arguments run at import
        ("def kernel(x):", "def kernel(x=print('default')):"),  # so do defaults
        ("def reference(x):", "TOLERANCE = 1e-3\n\ndef reference(x):"),  # the job reads TOLERANCE
    ],
)
def test_editing_what_the_reference_job_runs_makes_it_again(old, new):
    assert not same_reference(FILE, FILE.replace(old, new))


REACHED = [
    # the reference calls the kernel: its body is the reference's too
    ("return _scale(jnp.tanh(x))", "return kernel(x)"),
    ("def reference(x):\n    return _scale(jnp.tanh(x))", "reference = kernel"),
    # code at import or in a default reaches it
    ("SHAPE = (256, 256)", "SHAPE = (256, 256)\nRESULTS = [kernel]"),
    ("def _scale(y):", "def _scale(y, f=lambda v: kernel(v)):"),
    # through a helper the reference calls, by name in a string, by attribute
    ("return y * 2", "return y * 2 if y is None else {'f': 'kernel'}['f'] and y * 2"),
    ("return y * 2", "return y * 2 + 0 * pl.body"),
    # a decorator that is not jax.jit may call what it decorates
    ("@functools.partial(jax.jit, static_argnames=())", "@print"),
    ("@functools.partial(jax.jit, static_argnames=())", "@jax.custom_jvp"),
    # `functools` rebound: the decorator is no longer known to be jit
    ("import functools\n", "import functools\nfunctools = functools\n"),
]


@pytest.mark.parametrize("old, new", REACHED)
def test_a_kernel_the_reference_job_can_reach_is_part_of_its_key(old, new):
    reached = FILE.replace(old, new)
    assert not same_reference(
        reached, reached.replace("jnp.tanh(x_ref[...]) * 2", "jnp.tanh(x_ref[...]) * 3")
    )


@pytest.mark.parametrize(
    "prefix",
    [
        "jax = __import__('jax')\n",  # jax bound twice
        "jax.jit = lambda f: f(1) or f\n",  # jax.jit replaced
        "functools.partial = lambda *a, **k: (lambda f: f(1))\n",
        "from functools import *\n",
        "import sys\n",
        "g = globals\n",
        "x = getattr\n",
        "import inspect\n",
        "SOURCE = open(__file__).read()\n",  # the kernel's text, as data
        "import os\n",
    ],
)
def test_a_file_that_could_reach_the_kernel_unseen_is_kept_whole(prefix):
    tricky = prefix + FILE
    assert not same_reference(tricky, tricky.replace("jnp.tanh(x_ref[...]) * 2", "jnp.tanh(x_ref[...]) * 3"))


def test_a_function_bound_twice_is_kept_whole():
    twice = FILE + "\ndef body(x_ref, o_ref):\n    o_ref[...] = x_ref[...]\n"
    assert not same_reference(twice, twice.replace("jnp.tanh(x_ref[...]) * 2", "jnp.tanh(x_ref[...]) * 3"))


def test_words_in_docstrings_do_not_stop_the_kernel_from_being_left_out():
    documented = '"""Compile the kernel, open the docs: getattr, globals and sys are words here."""\n' + FILE
    assert same_reference(
        documented, documented.replace("jnp.tanh(x_ref[...]) * 2", "jnp.tanh(x_ref[...]) * 3")
    )


def test_a_file_that_does_not_parse_is_its_own_key():
    broken = FILE + "\ndef oops(:\n"
    assert reference_text(broken) == broken
    assert not same_reference(broken, broken.replace("jnp.tanh(x_ref[...]) * 2", "jnp.tanh(x_ref[...]) * 3"))


def test_a_kernel_that_changes_how_many_lines_it_spans_makes_the_reference_again():
    # The reference's job can read its own line numbers (a traceback's frames): they are in the key.
    longer = FILE.replace("def kernel(x):\n", "def kernel(x):\n    # a comment, and a blank line\n\n")
    assert not same_reference(FILE, longer)
    assert reference_text(longer).count("\n") == longer.count("\n")


SECRET = "KERNEL_ONLY_7f3a"
# Issue 41, item 3: references that read the kernel's code without a name the slicer knows.
INDIRECT = {
    "pkgutil": "import pkgutil\nREAD = lambda: pkgutil.resolve_name('__main__:ker' + 'nel')\n",
    "traceback": "import traceback\nREAD = lambda: traceback.extract_stack()\n",
    "setattr": "import jax\nobject.__setattr__(jax, 'jit', lambda f: f)\n",
}


@pytest.mark.parametrize("prefix", INDIRECT.values(), ids=INDIRECT.keys())
def test_the_reference_job_is_given_no_kernel_body(prefix):
    tricky = prefix + FILE.replace("jnp.tanh(x_ref[...]) * 2", f"jnp.tanh(x_ref[...]) * len({SECRET!r})")
    given = reference_text(tricky)
    assert SECRET not in given  # whatever it reads of itself, the kernel's body is not there
    assert "def reference(x):\n    return _scale(jnp.tanh(x))" in given
    assert given.count("\n") == tricky.count("\n")
    assert same_reference(tricky, tricky.replace(SECRET, "another"))
    assert reference_job(make_job(tricky)).source == given  # what the job gets is what is keyed


def test_a_body_that_starts_with_a_decorated_function_is_cut_from_its_decorator():
    source = (
        "import jax\n"
        "from jax.experimental import pallas as pl\n"
        "def make_inputs(seed):\n    return ()\n"
        "def reference():\n    return 1\n"
        "def steps_kernel(o_ref):\n"
        "    @pl.when(pl.program_id(0) == 0)\n"
        "    def _():\n"
        "        o_ref[...] = 0\n"
        "def kernel():\n    return steps_kernel\n"
    )
    text = reference_text(source)
    compile(text, "kernel.py", "exec")  # it parses: no decorator left above `pass`
    assert "o_ref[...] = 0" not in text and "@pl.when" not in text
    assert len(text.splitlines()) == len(source.splitlines())
