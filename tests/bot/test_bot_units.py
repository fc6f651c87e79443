"""Settings, cooldowns, start-up and the command-line entry point."""

from __future__ import annotations

import logging
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

import vramfit.bot.process as entry
from tests.fake_discord.backend import FakeBackend
from tests.fake_discord.harness import run
from tests.fake_discord.server import FakeDiscord
from vramfit.bot.bot import GLOBAL, extensions
from vramfit.bot.cooldowns import UserCooldown
from vramfit.bot.settings import Settings

SECRET = "MTIz.secret-token-value"


def test_settings_from_env_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("DISCORD_TOKEN", "VRAMFIT_OWNER_IDS", "VRAMFIT_LOG_LEVEL", "VRAMFIT_COOLDOWN_RATE"):
        monkeypatch.delenv(name, raising=False)
    env = tmp_path / ".env"
    env.write_text(f"DISCORD_TOKEN={SECRET}\nVRAMFIT_OWNER_IDS=12, 34\nVRAMFIT_LOG_LEVEL=debug\n", encoding="utf-8")
    settings = Settings(_env_file=env)
    assert settings.discord_token is not None
    assert settings.discord_token.get_secret_value() == SECRET
    assert settings.owner_ids == frozenset({12, 34})
    assert settings.log_level == "DEBUG"
    assert SECRET not in repr(settings) and SECRET not in str(settings.safe_summary())
    assert settings.safe_summary()["discord_token"] == "set"
    monkeypatch.setenv("VRAMFIT_COOLDOWN_RATE", "2")
    assert Settings(_env_file=env).cooldown_rate == 2


def test_settings_without_token() -> None:
    settings = Settings(_env_file=None, discord_token=None)
    assert settings.discord_token is None
    assert settings.safe_summary()["discord_token"] == "missing"


def test_user_cooldown() -> None:
    now = [1000.0]
    cooldown = UserCooldown(2, 10.0, clock=lambda: now[0])
    assert cooldown.hit(1) is None and cooldown.hit(1) is None
    retry = cooldown.hit(1)
    assert retry is not None and 9.9 < retry <= 10.0
    assert cooldown.hit(2) is None  # per user
    now[0] += 10.5
    assert cooldown.hit(1) is None


def test_extensions_are_discovered() -> None:
    assert extensions() == [
        f"vramfit.bot.exts.{name}"
        for name in ("admin", "autoanswer", "buttons", "logs", "questions", "server_settings", "vram")
    ]  # fmt: skip


@pytest.fixture
def root_logging() -> Iterator[None]:
    """``main`` configures the root logger: put it back afterwards."""
    root = logging.getLogger()
    handlers, level = list(root.handlers), root.level
    yield
    root.handlers[:] = handlers
    root.setLevel(level)


@pytest.mark.usefixtures("root_logging")
def test_main_refuses_to_start_without_a_token(
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    monkeypatch.delenv("DISCORD_TOKEN", raising=False)
    monkeypatch.delenv("VRAMFIT_DISCORD_TOKEN", raising=False)
    monkeypatch.chdir(Path(__file__).parent)  # no .env here
    with caplog.at_level(logging.INFO):
        assert entry.main([]) == 2
    assert "DISCORD_TOKEN is not set" in caplog.text


@pytest.mark.usefixtures("root_logging")
def test_main_never_logs_the_token(monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture) -> None:
    monkeypatch.setenv("DISCORD_TOKEN", SECRET)
    monkeypatch.chdir(Path(__file__).parent)
    calls: list[dict[str, Any]] = []

    async def fake_run(settings: Settings, *, sync_to: int | None, sync_only: bool) -> None:
        calls.append({"sync_to": sync_to, "sync_only": sync_only})
        logging.getLogger("vramfit.bot").info("settings object: %r", settings)

    monkeypatch.setattr(entry, "run", fake_run)
    with caplog.at_level(logging.DEBUG):
        assert entry.main(["--sync", "--guild", "42"]) == 0
        assert entry.main(["--sync-only"]) == 0
        assert entry.main([]) == 0
    assert calls == [
        {"sync_to": 42, "sync_only": False},
        {"sync_to": GLOBAL, "sync_only": True},
        {"sync_to": None, "sync_only": False},
    ]
    assert SECRET not in caplog.text


def test_sync_only_syncs_and_exits(monkeypatch: pytest.MonkeyPatch) -> None:
    """``python -m vramfit.bot --sync-only``: REST login and one PUT of the commands, no gateway connection."""
    monkeypatch.setattr("vramfit.bot.answering.service.default_backend", lambda: FakeBackend().backend())

    async def scenario() -> None:
        async with FakeDiscord() as fake:
            with fake.patch_client():
                settings = Settings(_env_file=None, discord_token=SECRET, database_path=":memory:")
                await entry.run(settings, sync_to=GLOBAL, sync_only=True)
            assert [(r.method, r.path) for r in fake.requests] == [
                ("GET", "/users/@me"),
                ("GET", "/oauth2/applications/@me"),
                ("PUT", f"/applications/{fake.app_id}/commands"),
            ]
            assert fake.identifies == []
            assert "vram" in {c["name"] for c in fake.global_commands}

    run(scenario())


@pytest.mark.usefixtures("root_logging")
@pytest.mark.parametrize(
    ("failure", "status", "words"),
    [
        ("gateway 4004", 2, "code 4004"),
        ("login 500", 1, "Discord answered 500"),
        ("settings store", 1, "Cannot open the settings database"),
    ],
)
def test_start_up_failures_end_in_one_log_line(
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture, failure: str, status: int, words: str
) -> None:
    from types import SimpleNamespace

    import discord

    from vramfit.bot.storage import StorageError

    errors: dict[str, BaseException] = {
        "gateway 4004": discord.ConnectionClosed(SimpleNamespace(close_code=4004), shard_id=0),  # type: ignore[arg-type]
        "login 500": discord.DiscordServerError(
            SimpleNamespace(status=500, reason="Internal Server Error"),
            {"message": "oops", "code": 0},  # type: ignore[arg-type]
        ),
        "settings store": StorageError("disk I/O error"),
    }

    async def failing_run(settings: Settings, *, sync_to: int | None, sync_only: bool) -> None:
        raise errors[failure]

    monkeypatch.setenv("DISCORD_TOKEN", SECRET)
    monkeypatch.chdir(Path(__file__).parent)
    monkeypatch.setattr(entry, "run", failing_run)
    with caplog.at_level(logging.INFO):
        assert entry.main([]) == status
    failures = [r for r in caplog.records if r.levelno >= logging.ERROR]
    assert len(failures) == 1 and failures[0].exc_info is None
    assert words in failures[0].getMessage()
