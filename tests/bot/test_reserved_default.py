"""What a server's desktop share and an unsized display do to an answer: the server's figure comes off the GPU unless
the question says its own (bot.storage.defaults), and a display named without a figure is asked about, never
guessed (no published measurement gives the desktop's share: it depends on the screens and what is open)."""

from __future__ import annotations

import io

import pytest

from tests.bot.cli_json import run_json
from vramfit.bot.answering.service import CalcBackend
from vramfit.bot.cli import run
from vramfit.bot.storage.defaults import GuildDefaults
from vramfit.bot.storage.repository import GuildSettings
from vramfit.calc.presets import load_catalog


def test_the_servers_figure_applies_where_the_question_has_none() -> None:
    defaults = GuildDefaults.from_settings(GuildSettings(guild_id=1, reserved_mib=1536))
    assert defaults.apply("llama3 8b 3060", {}) == {"reserved_mib": 1536}
    assert defaults.apply("llama3 8b 3060 2gb already used", {}) == {}
    assert defaults.apply("llama3 8b 3060", {"reserved_mib": 512}) == {"reserved_mib": 512}


def test_the_answer_takes_the_servers_figure_off_the_gpu() -> None:
    service = CalcBackend(load_catalog())
    plain = service.answer("llama3 8b 32k 3060", "en", {})
    reduced = service.answer("llama3 8b 32k 3060", "en", {"reserved_mib": 1536})
    assert reduced.reserved_mib == 1536  # type: ignore[union-attr]
    assert plain.fits[0].headroom_bytes - reduced.fits[0].headroom_bytes == 1536 << 20  # type: ignore[union-attr]


@pytest.mark.parametrize(
    ("lang", "question", "asked"),
    [
        ("en", "llama 3 8b 3060, my monitor is connected to it", "say it (nvidia-smi's Memory-Usage"),
        ("ko", "라마3 8b 3060 모니터 연결돼 있어", "nvidia-smi의 Memory-Usage 값을"),
        ("en", "llama 3 8b 3060, my monitor is connected and 1.5gb already used", ""),
    ],
)
def test_a_display_without_a_figure_is_asked_about(lang: str, question: str, asked: str) -> None:
    out = io.StringIO()
    assert run(["--lang", lang, question], out) == 0
    if asked:
        assert asked in out.getvalue()
        assert run_json("--lang", lang, question)["request"]["reserved_bytes"] == 0  # nothing guessed
    else:
        assert "Memory-Usage" not in out.getvalue()
        assert run_json("--lang", lang, question)["request"]["reserved_bytes"] == 1536 << 20
