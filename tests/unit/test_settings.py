import pytest
from pydantic import ValidationError

from server.settings import Settings
from tests.unit.test_architecture import ROOT


def test_defaults_need_no_configuration(monkeypatch):
    for key in list(__import__("os").environ):
        if key.startswith("PLAYGROUND_"):
            monkeypatch.delenv(key)
    settings = Settings()
    assert (settings.host, settings.port, str(settings.data_dir)) == ("127.0.0.1", 8000, "var")
    assert settings.sandbox == "auto" and settings.slots >= 1 and settings.queue_size >= 64


def test_environment_overrides(monkeypatch):
    monkeypatch.setenv("PLAYGROUND_PORT", "9001")
    monkeypatch.setenv("PLAYGROUND_WALL_SECONDS", "5.5")
    settings = Settings()
    assert settings.port == 9001 and settings.wall_seconds == 5.5


def test_unknown_settings_are_rejected():
    with pytest.raises(ValidationError):
        Settings(no_such_setting=1)


def test_every_setting_is_documented_in_the_operating_guide():
    readme = (ROOT / "docs" / "operating.md").read_text()
    missing = [
        f"PLAYGROUND_{name.upper()}"
        for name in Settings.model_fields
        if f"`PLAYGROUND_{name.upper()}`" not in readme
    ]
    assert not missing, f"docs/operating.md configuration table lacks {missing}"
