"""The runtimes as files tell them (`sandbox.host.runtimes`): ordering, the default, the nearest, and where a
Pallas name exists; and the per-runtime constraint files themselves."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from sandbox.host.runtimes import Feature, RuntimeInfo, RuntimeSet, discover, own_jax, version_key, where

ROOT = Path(__file__).resolve().parents[2]


def runtime(name: str, names: dict[str, set[str]] | None = None) -> RuntimeInfo:
    return RuntimeInfo(
        name=name,
        jaxlib=name,
        python_version="3.12.1",
        libtpu=None,
        python=Path(f"/rt/{name}/venv/bin/python"),
        jail_prefix=Path(f"/rt/{name}"),
        features={"trace": Feature(name == "0.12.0.1", "…")},
        names={alias: frozenset(found) for alias, found in (names or {}).items()},
    )


THREE = RuntimeSet(
    (
        runtime("0.11.2", {"pltpu": {"TensorCoreMesh", "emit_pipeline"}, "pl": {"kernel"}}),
        runtime("0.12.0.1", {"pltpu": {"TensorCoreMesh", "emit_pipeline", "split_bits"}, "pl": {"kernel"}}),
        runtime(
            "0.10.2", {"pltpu": {"create_tensorcore_mesh", "emit_pipeline"}, "pl": {"kernel", "core_map"}}
        ),
    )
)


def test_versions_order_numerically():
    assert sorted(["0.9.2", "0.12.0.1", "0.10.2", "0.11.2"], key=version_key) == [
        "0.9.2",
        "0.10.2",
        "0.11.2",
        "0.12.0.1",
    ]


def test_the_newest_runtime_is_the_default_and_the_empty_name_means_it():
    assert THREE.names == ("0.12.0.1", "0.11.2", "0.10.2")
    assert THREE.default.name == "0.12.0.1" and THREE.get("") is THREE.default
    assert THREE.get("0.10.2") is not None and THREE.get("0.9.2") is None


@pytest.mark.parametrize(
    ("wanted", "nearest"),
    [
        ("0.11.1", "0.11.2"),
        ("0.9.2", "0.10.2"),
        ("0.13.0", "0.12.0.1"),
        ("0.12.0", "0.12.0.1"),
        ("0.10.2", "0.10.2"),
    ],
)
def test_a_missing_runtime_opens_on_the_nearest(wanted, nearest):
    assert THREE.nearest(wanted).name == nearest


def test_of_two_runtimes_a_minor_release_away_the_newer_is_nearest_whatever_the_patch():
    around = RuntimeSet((runtime("0.10.9"), runtime("0.12.0")))
    assert around.nearest("0.11.5").name == "0.12.0"
    assert around.nearest("0.10.0").name == "0.10.9"


def test_elsewhere_says_where_a_missing_name_exists():
    assert THREE.elsewhere("0.10.2") == {
        "pltpu.TensorCoreMesh": "0.11.2 and later",
        "pltpu.split_bits": "0.12.0.1",
    }
    assert THREE.elsewhere("0.12.0.1") == {
        "pl.core_map": "0.10.2",
        "pltpu.create_tensorcore_mesh": "0.10.2",
    }


@pytest.mark.parametrize(
    ("have", "text"),
    [
        (["0.11.2", "0.12.0.1"], "0.11.2 and later"),
        (["0.10.2", "0.11.2"], "0.11.2 and earlier"),
        (["0.10.2", "0.12.0.1"], "0.10.2 and 0.12.0.1"),
        (["0.11.2"], "0.11.2"),
    ],
)
def test_where_is_said_in_the_fewest_words(have, text):
    assert where(have, ["0.12.0.1", "0.10.2", "0.11.2"]) == text


def test_discover_reads_installed_runtimes_and_skips_the_unfinished(tmp_path):
    own = own_jax()
    assert own is not None
    done = tmp_path / ".0.11.2-abc"
    (done / "venv" / "bin").mkdir(parents=True)
    (done / "venv" / "bin" / "python").touch()
    (done / ".installed").write_text("abc\n")
    probe = {"jax": "0.11.2", "jaxlib": "0.11.2", "python": "3.12.1", "features": {"trace": {"available": False, "detail": "not available on jax 0.11.2"}}, "names": {"pltpu": ["TensorCoreMesh"]}}  # fmt: skip
    (done / "runtime.json").write_text(json.dumps(probe))
    (tmp_path / "0.11.2").symlink_to(done.name)
    (tmp_path / "0.9.2").mkdir()  # half installed: no stamp, no venv
    found = discover(tmp_path, own_python=Path("/venv/bin/python"))
    assert set(found.names) == {own, "0.11.2"}
    older = found.get("0.11.2")
    assert older is not None and older.jail_prefix == done.resolve()
    assert older.features["trace"] == Feature(False, "not available on jax 0.11.2")
    assert older.names == {"pltpu": frozenset({"TensorCoreMesh"})}
    mine = found.get(own)
    assert mine is not None and mine.jail_prefix is None and mine.python == Path("/venv/bin/python")


# -- the constraint files ---------------------------------------------------------------------------


def pins(path: Path) -> dict[str, str]:
    found = {}
    for line in path.read_text().splitlines():
        if line and not line.startswith("#"):
            name, version = line.split("==")
            found[re.sub(r"[-_.]+", "-", name.lower())] = version
    return found


FILES = sorted((ROOT / "runtimes").glob("*.txt"))


def test_there_are_three_runtimes_at_least_and_the_project_pin_is_the_newest():
    names = sorted((f.stem for f in FILES), key=version_key)
    assert len(names) >= 3, names
    assert names[-1] == pins(ROOT / "constraints.txt")["jax"]


@pytest.mark.parametrize("path", FILES, ids=lambda p: p.stem)
def test_a_runtime_file_pins_its_jax_exactly(path):
    found = pins(path)
    assert found["jax"] == found["jaxlib"] == path.stem
    assert {"numpy", "ml-dtypes", "pyseccomp", "libtpu"} <= set(found)


def test_the_newest_runtime_pins_what_the_project_pins():
    project = pins(ROOT / "constraints.txt")
    newest = pins(ROOT / "runtimes" / f"{project['jax']}.txt")
    assert {name: project[name] for name in newest} == newest
