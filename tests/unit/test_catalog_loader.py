"""The catalog loader refuses a malformed entry with a message that names the file and the field."""

from collections.abc import Callable
from pathlib import Path

import pytest

from sandbox.catalog.entries import CatalogError, load_catalog, load_entry
from sandbox.protocol import RunStatus

ENTRY_TOML = """\
slug = "demo"
title = "Demo"
summary = "A demo entry."
level = "beginner"
concepts = ["pallas_call"]
entry_point = "double"
chips = ["v5p"]
docs = "https://docs.jax.dev/en/latest/pallas/index.html"

[[cases]]
name = "small"
dtype = "float32"
seed = 0
dims = { n = 8 }

[[cases]]
name = "big (TPU)"
dtype = "float32"
seed = 1
dims = { n = 4096 }
tpu_only = true

[wrong.halves]
expect = "mismatch"
why = "Multiplies by 0.5 instead of 2."
"""


def write_entry(root: Path, slug: str = "demo") -> Path:
    folder = root / slug
    (folder / "wrong").mkdir(parents=True)
    (folder / "entry.toml").write_text(ENTRY_TOML)
    (folder / "reference.py").write_text("def make_inputs(case): ...\ndef reference(x): return 2 * x\n")
    (folder / "kernel.py").write_text("def double(x): return 2 * x\n")
    (folder / "template.py").write_text(
        "def double(x):\n    # TODO: double x\n    raise NotImplementedError\n"
    )
    (folder / "README.md").write_text("Doubles its input.\n")
    (folder / "wrong" / "halves.py").write_text("def double(x): return 0.5 * x\n")
    return folder


def edit_toml(old: str, new: str) -> Callable[[Path], None]:
    def edit(folder: Path) -> None:
        path = folder / "entry.toml"
        text = path.read_text()
        assert old in text, old
        path.write_text(text.replace(old, new))

    return edit


def remove(name: str) -> Callable[[Path], None]:
    return lambda folder: (folder / name).unlink()


BROKEN = [
    ("missing entry_point", edit_toml('entry_point = "double"\n', ""), "entry.toml", "field 'entry_point'"),
    ("unknown level", edit_toml('"beginner"', '"expert"'), "entry.toml", "field 'level'"),
    ("slug is not the folder", edit_toml('slug = "demo"', 'slug = "other"'), "entry.toml", "field 'slug'"),
    ("unknown chip", edit_toml('chips = ["v5p"]', 'chips = ["v9"]'), "entry.toml", "field 'chips'"),
    ("no TPU-sized case", edit_toml("tpu_only = true\n", ""), "entry.toml", "field 'cases'"),
    (
        "case without dtype",
        edit_toml('dtype = "float32"\nseed = 0', "seed = 0"),
        "entry.toml",
        "field 'cases[0]'",
    ),
    (
        "wrong kernel without why",
        edit_toml('why = "Multiplies by 0.5 instead of 2."\n', ""),
        "entry.toml",
        "field 'wrong.halves.why'",
    ),
    (
        "unknown expected status",
        edit_toml('expect = "mismatch"', 'expect = "fails"'),
        "entry.toml",
        "field 'wrong.halves.expect'",
    ),
    (
        "wrong entry without a file",
        edit_toml("[wrong.halves]", '[wrong.ghost]\nwhy = "?"\n\n[wrong.halves]'),
        "entry.toml",
        "field 'wrong': no file for ['ghost']",
    ),
    ("no README", remove("README.md"), "README.md", "missing"),
    ("no wrong kernels", remove("wrong/halves.py"), "wrong", "known-wrong kernel"),
    ("invalid TOML", edit_toml('title = "Demo"', "title = Demo"), "entry.toml", "invalid TOML"),
]


def test_loader_accepts_the_well_formed_entry(tmp_path: Path) -> None:
    entry = load_entry(write_entry(tmp_path))
    assert (entry.slug, entry.entry_point, [c.name for c in entry.cases]) == (
        "demo",
        "double",
        ["small", "big (TPU)"],
    )
    assert [(w.name, w.expect) for w in entry.wrong] == [("halves", RunStatus.MISMATCH)]


@pytest.mark.parametrize(("breakage", "file", "field"), [b[1:] for b in BROKEN], ids=[b[0] for b in BROKEN])
def test_loader_rejects_a_malformed_entry_naming_file_and_field(
    tmp_path: Path, breakage: Callable[[Path], None], file: str, field: str
) -> None:
    folder = write_entry(tmp_path)
    breakage(folder)
    with pytest.raises(CatalogError) as info:
        load_entry(folder)
    message = str(info.value)
    assert str(folder / file) in message, message
    assert field in message, message


def test_loader_rejects_a_slug_listed_twice(tmp_path: Path) -> None:
    write_entry(tmp_path)
    (tmp_path / "catalog.toml").write_text('entries = ["demo", "demo"]\n')
    with pytest.raises(CatalogError, match=r"catalog\.toml: field 'entries'"):
        load_catalog(tmp_path)


# Their entry points take no keyword arguments: Tune has nothing to sweep.
UNTUNABLE = {"core_semaphore_signal", "ring_all_gather"}


def test_every_entry_with_a_tpu_case_is_tuned_at_that_size() -> None:
    for entry in load_catalog().entries:
        tpu = [c for c in entry.cases if c.tpu_only]
        if not tpu or entry.slug in UNTUNABLE:
            continue
        assert entry.tune is not None, f"{entry.slug}: no [tune] table"
        assert entry.tune.size == tpu[-1].dims, entry.slug
        assert all(len(v) >= 2 for v in entry.tune.values.values()), entry.slug
