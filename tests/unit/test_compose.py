"""deploy/compose.yaml cannot be run here (no Docker engine): check its structure and that what it
passes to our own programs is what they accept."""

from __future__ import annotations

import re

import yaml

from sandbox.worker.__main__ import parse as parse_worker
from server.settings import Settings
from tests.unit.test_architecture import ROOT

COMPOSE = yaml.safe_load((ROOT / "deploy" / "compose.yaml").read_text())
SERVICES = COMPOSE["services"]
WEBS = [s for name, s in SERVICES.items() if name.startswith("web")]
WORKERS = [s for name, s in SERVICES.items() if name.startswith("worker")]


def test_the_documented_shape_redis_postgres_two_webs_two_workers():
    assert set(SERVICES) == {"redis", "postgres", "web1", "web2", "worker1", "worker2"}
    assert len({s["ports"][0].split(":")[0] for s in WEBS}) == 2


def test_images_are_pinned_and_redis_has_streams_with_consumer_groups():
    for name in ("redis", "postgres"):
        image = SERVICES[name]["image"]
        assert ":" in image and "latest" not in image, image
    major = int(re.match(r"redis:(\d+)", SERVICES["redis"]["image"]).group(1))  # type: ignore[union-attr]
    assert major >= 7


def test_web_settings_are_real_settings_pointing_at_the_services():
    for web in WEBS:
        env = web["environment"]
        unknown = [k for k in env if k.removeprefix("PLAYGROUND_").lower() not in Settings.model_fields]
        assert not unknown, unknown
        assert env["PLAYGROUND_REDIS_URL"] == "redis://redis:6379/0"
        assert (
            env["PLAYGROUND_DATABASE_URL"].startswith("postgresql://")
            and "@postgres:5432/" in env["PLAYGROUND_DATABASE_URL"]
        )
        assert web["command"] == ["python", "-m", "server"] and web["user"] != "0:0"
        assert {"redis", "postgres"} <= set(web["depends_on"])


def test_workers_take_arguments_the_worker_accepts_and_reach_only_the_queue():
    for worker in WORKERS:
        argv = worker["command"]
        assert worker["entrypoint"] == ["scripts/runner-entrypoint"] and argv[0] == "worker"
        assert 'exec python -m sandbox.worker "$@"' in (ROOT / "scripts" / "runner-entrypoint").read_text()
        args = parse_worker(argv[1:])
        assert (args.redis, args.pool, args.backend) == ("redis://redis:6379/0", "interpret", "hardened")
        assert worker["networks"] == ["queue"] and "ports" not in worker
        assert "ALL" in worker["cap_drop"] and worker["read_only"] is True
    assert COMPOSE["networks"]["queue"]["internal"] is True and COMPOSE["networks"]["db"]["internal"] is True
    assert "ports" not in SERVICES["redis"] and "ports" not in SERVICES["postgres"]


def test_the_operating_guide_points_at_the_compose_file():
    assert "deploy/compose.yaml" in (ROOT / "docs" / "operating.md").read_text()
