"""An entry's `[options]`: loaded and validated by the catalog, applied by make_job unless the caller chooses."""

from pathlib import Path

import pytest

from sandbox.catalog.entries import CatalogError, load_catalog, load_entry
from sandbox.jobs.build import make_job
from sandbox.protocol import InterpretOptions
from tests.unit.test_catalog_loader import write_entry


def with_options(tmp_path: Path, table: str) -> Path:
    folder = write_entry(tmp_path)
    toml = folder / "entry.toml"
    toml.write_text(toml.read_text().replace("[[cases]]", f"[options]\n{table}\n\n[[cases]]", 1))
    return folder


def test_entry_without_options_gets_the_global_defaults(tmp_path: Path):
    assert load_entry(write_entry(tmp_path)).options == InterpretOptions()


def test_options_table_becomes_the_entry_defaults(tmp_path: Path):
    entry = load_entry(with_options(tmp_path, 'detect_races = true\ndma_execution_mode = "eager"'))
    assert entry.options == InterpretOptions(detect_races=True, dma_execution_mode="eager")


@pytest.mark.parametrize(
    ("table", "field"),
    [
        ('detect_races = "yes"', "field 'options.detect_races' must be a bool"),
        ("random_seed = 1.5", "field 'options.random_seed' must be a int"),
        ('uninitialized_memory = "garbage"', "field 'options'"),
        ("colour = true", "unknown fields"),
    ],
)
def test_malformed_options_are_rejected_naming_the_field(tmp_path: Path, table: str, field: str):
    folder = with_options(tmp_path, table)
    with pytest.raises(CatalogError) as info:
        load_entry(folder)
    assert str(folder / "entry.toml") in str(info.value) and field in str(info.value)


def test_make_job_applies_entry_defaults_unless_the_caller_chooses(tmp_path: Path):
    entry = load_entry(with_options(tmp_path, 'detect_races = true\nuninitialized_memory = "zero"'))
    assert make_job("", entry=entry).options == entry.options
    chosen = InterpretOptions(random_seed=7, dma_execution_mode="eager")
    assert make_job("", entry=entry, options=chosen).options == chosen


def test_the_server_merges_what_the_user_set_over_the_entry(tmp_path: Path):
    from server.convert import interpret_options
    from server.wire.schemas import RunOptions

    entry = load_entry(with_options(tmp_path, 'detect_races = true\nuninitialized_memory = "zero"'))
    merged = interpret_options(RunOptions(random_seed=7), entry.options)
    assert merged == InterpretOptions(detect_races=True, uninitialized_memory="zero", random_seed=7)
    # The user can switch off what the entry turns on.
    assert not interpret_options(RunOptions(detect_races=False), entry.options).detect_races


def test_scratch_jobs_take_the_options_as_given():
    assert make_job("").options == InterpretOptions()
    assert make_job("", options=InterpretOptions(detect_races=True)).options.detect_races


def test_race_condition_demo_runs_with_the_race_detector():
    entry = load_catalog().get("race_condition_demo")
    assert entry is not None and entry.options.detect_races
    assert make_job(entry.solution_source, entry=entry, chip="v5p").options.detect_races
