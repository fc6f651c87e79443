"""Catalogs and localized payloads: complete Korean, current catalogs, valid translated commands, locale formats."""

from __future__ import annotations

import asyncio
import re
from typing import Any

import discord
import pytest
from babel.messages.pofile import read_po

from tests.fake_discord.backend import FakeBackend
from tests.fake_discord.harness import make_settings
from vramfit.bot import catalogs
from vramfit.bot.i18n import (
    Tr,
    format_gib,
    format_number,
    format_tokens_short,
    lang_for_locale,
    lang_of_text,
    translate,
    translations,
)
from vramfit.bot.translator import VramTranslator

# Korean particles whose form depends on the previous syllable (or that read oddly after a Latin name).
# Particles whose form depends on the final sound of the word before them (받침): after a placeholder the right one
# cannot be chosen. 에, 에서, 의, 도, 만 and 까지 read the same after any word ("**{gpu}**에서 돌아가요").
PARTICLES = {
    "은", "는", "이", "가", "을", "를", "과", "와", "으로", "로", "이나", "나", "랑", "이랑", "이라", "라",
}  # fmt: skip
_AFTER_PLACEHOLDER = re.compile(r"\}(?:\*\*|`)?([가-힣]+)")


def ko_catalog() -> Any:
    with catalogs.po_path("ko").open("rb") as fp:
        return read_po(fp, locale="ko")


def test_catalogs_are_current() -> None:
    """``pybabel extract`` finds exactly the msgids of messages.pot and of every .po (``update --check``)."""
    problems = catalogs.problems()
    assert problems == [], "\n".join(problems) + "\nrun: make catalogs, then translate locales/ko"


def test_every_message_has_a_korean_translation() -> None:
    catalog = ko_catalog()
    assert catalogs.translation_problems(catalog) == []
    assert len([m for m in catalog if m.id]) > 50
    assert catalog.plural_forms == "nplurals=1; plural=0;"


def test_korean_copy_puts_no_particle_after_a_placeholder() -> None:
    assert [r for r in _AFTER_PLACEHOLDER.findall("**{gpu}**를 써요, {n}개, {x}에서") if r in PARTICLES] == ["를"]
    bad = []
    for message in ko_catalog():
        strings = message.string if isinstance(message.string, tuple | list) else (message.string,)
        for text in strings:
            for run in _AFTER_PLACEHOLDER.findall(text or ""):
                if run in PARTICLES:
                    bad.append(f"{text!r}: particle {run!r} right after a placeholder")
    assert bad == []


# 합니다체 endings: the Korean copy speaks one register, 해요체, as people write in a community server.
_FORMAL_ENDING = re.compile(r"(?:습|ㅂ|합|입|됩|갑|옵)?니다[.!]?|니까\?|십시오")


def test_korean_copy_speaks_one_register() -> None:
    formal = []
    for message in ko_catalog():
        strings = message.string if isinstance(message.string, tuple | list) else (message.string,)
        formal += [text for text in strings if text and _FORMAL_ENDING.search(text)]
    assert formal == []
    assert _FORMAL_ENDING.search("KV 캐시를 더 많이 씁니다.")  # the check itself catches the old form


def test_translate_and_plurals() -> None:
    assert translate("Weights", "ko") == "가중치"
    assert translate("Weights", "en") == "Weights"
    assert translate(
        "Lower the context to {value}: {total} of {usable}", "ko", value="16K", total="7.1GiB", usable="12.0GiB"
    ) == ("컨텍스트 줄이기 (16K): 12.0GiB 중 7.1GiB")  # no particle after the value (16K를/을)
    assert Tr("ko").ngettext("{n} user", "{n} users", 4) == "사용자 4명"
    assert Tr("en").ngettext("{n} user", "{n} users", 1) == "1 user"
    assert Tr("en").ngettext("{n} token", "{n} tokens", 45056) == "45,056 tokens"
    assert translations("ko") is translations("ko")  # compiled once


@pytest.mark.parametrize(
    ("locale", "lang"),
    [
        (discord.Locale.korean, "ko"),
        ("ko", "ko"),
        (discord.Locale.american_english, "en"),
        (discord.Locale.japanese, "en"),
        (None, "en"),
    ],
)
def test_lang_for_locale(locale: Any, lang: str) -> None:
    assert lang_for_locale(locale) == lang


def test_lang_of_text() -> None:
    assert lang_of_text("라마3 8B 32k 3060 돌아가?") == "ko"
    assert lang_of_text("llama3 8b on a 3060") == "en"


def test_number_formats() -> None:
    gib = 1 << 30
    assert format_gib(9.5 * gib, "en") == "9.5 GiB"
    assert format_gib(9.5 * gib, "ko") == "9.5GiB"
    assert format_gib(1234.56 * gib, "en") == "1,234.6 GiB"
    assert format_gib(0, "ko") == "0.0GiB"
    assert format_number(131072, "ko") == "131,072"
    assert format_number(4.891, "en", digits=2) == "4.89"
    assert [format_tokens_short(n) for n in (4096, 8192, 131072, 1 << 20, 20000)] == [
        "4K",
        "8K",
        "128K",
        "1M",
        "20,000",
    ]


# -- the command payload Discord receives ------------------------------------------------------------------------------

NAME_MAX, DESCRIPTION_MAX, CHOICE_MAX = 32, 100, 100


def valid_name(name: str) -> bool:
    """Discord's ``^[-_\\p{L}\\p{N}\\p{sc=Deva}\\p{sc=Thai}]{1,32}$``, lowercase where the script has case."""
    return 1 <= len(name) <= NAME_MAX and all(ch.isalnum() or ch in "-_" for ch in name) and name == name.lower()


async def translated_payloads() -> list[dict[str, Any]]:
    from vramfit.bot.bot import VramBot
    from vramfit.bot.exts.vram import Vram

    vram_bot = VramBot(make_settings(), FakeBackend().backend())  # never logged in: nothing to close
    translator = VramTranslator()
    await vram_bot.tree.set_translator(translator)
    await vram_bot.add_cog(Vram(vram_bot))
    return [await c.get_translated_payload(vram_bot.tree, translator) for c in vram_bot.tree.get_commands()]


def walk_options(options: list[dict[str, Any]]) -> list[dict[str, Any]]:
    out = []
    for option in options:
        out.append(option)
        out.extend(walk_options(option.get("options", [])))
    return out


def test_translated_command_payloads_are_valid() -> None:
    payloads = asyncio.run(translated_payloads())
    assert [p["name"] for p in payloads] == ["vram"]
    checked = 0
    for command in payloads:
        items = [command, *walk_options(command.get("options", []))]
        for item in items:
            names = [item["name"], *(item.get("name_localizations") or {}).values()]
            descriptions = [item["description"], *(item.get("description_localizations") or {}).values()]
            assert all(valid_name(n) for n in names), names
            assert all(1 <= len(d) <= DESCRIPTION_MAX for d in descriptions), descriptions
            assert set(item.get("name_localizations") or {}) <= {"ko"}
            assert "ko" in (item.get("description_localizations") or {}), f"{item['name']} has no Korean description"
            for choice in item.get("choices", []):
                for name in [choice["name"], *(choice.get("name_localizations") or {}).values()]:
                    assert 1 <= len(name) <= CHOICE_MAX
                assert len(item["choices"]) <= 25
            checked += 1
        option_names = [o["name_localizations"].get("ko", o["name"]) for o in command["options"]
                        if o.get("name_localizations")]  # fmt: skip
        assert len(option_names) == len(set(option_names)), "Korean option names must be unique"
    assert checked >= 10


def test_translator_only_answers_for_korean() -> None:
    async def check() -> None:
        translator = VramTranslator()
        await translator.load()
        context: Any = discord.app_commands.TranslationContext(
            discord.app_commands.TranslationContextLocation.other, None
        )
        string = discord.app_commands.locale_str("context")
        assert await translator.translate(string, discord.Locale.korean, context) == "컨텍스트"
        assert await translator.translate(string, discord.Locale.japanese, context) is None
        unknown = discord.app_commands.locale_str("not in the catalog")
        assert await translator.translate(unknown, discord.Locale.korean, context) is None

    asyncio.run(check())
