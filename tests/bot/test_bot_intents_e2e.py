"""End to end, with the real parser and calculator behind the bot: one question of each intent through the fake
Discord (``/vram`` text and mentions), the ``/vram-fit`` and ``/vram-compare`` commands, and their buttons.

Every assertion is on the JSON the bot sent. Expected numbers come from config numbers and GPU sizes written in
``tests/bot/test_intents.py`` (KV per token, hand formulas, totals from the estimate's components), not from the
solvers.
"""

from __future__ import annotations

import re
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from functools import cache
from typing import Any

from tests.bot.test_intents import (
    GIB,
    Row,
    expected_what_fits,
    kv_cache_bytes,
    kv_per_token,
    margin,
    pad,
    total_at,
    usable,
)
from tests.fake_discord import EPHEMERAL
from tests.fake_discord import payloads as p
from tests.fake_discord.harness import GUILD_ID, World, make_settings, run
from tests.fake_discord.sent import JSON, NO_PINGS, button, card_sum, custom_ids, embed_of, fields
from vramfit.bot.bot import GLOBAL


@cache
def backend() -> Any:
    from vramfit.bot.answering.service import CalcBackend

    return CalcBackend()


@asynccontextmanager
async def real_world(**options: Any) -> AsyncIterator[World]:
    """The fake Discord with the real backend; the bot waits as long as Discord's window allows before it defers (a
    "what fits" over the whole catalog can take more than the default 1.5 s on a busy machine)."""
    options.setdefault("settings", make_settings(defer_after_seconds=2.9))
    async with World.start(backend=backend().backend(), **options) as world:
        yield world


def gib(num_bytes: int, lang: str = "en") -> str:
    text = f"{num_bytes / GIB:,.1f}"
    return f"{text}GiB" if lang == "ko" else f"{text} GiB"


async def card_body(world: World, interaction: JSON) -> JSON:
    """The card the bot sent for ``interaction``: its reply, or, when the answer took longer than the bot waits
    before deferring (a busy machine; Discord's 3-second window), the edit of the deferred reply. Deferring itself is
    tested in test_bot_hostile.py; here only the card matters."""
    sent = await world.callback(interaction)
    if sent.json["type"] == 5:
        edit = await world.fake.wait_request(
            "PATCH", rf"/webhooks/\d+/{interaction['token']}/messages/@original", timeout=60
        )
        body: JSON = edit.json
    else:
        assert sent.json["type"] == 4
        body = sent.json["data"]
    return body


async def ask(world: World, query: str, locale: str = "en-US") -> JSON:
    body = await card_body(world, await world.slash(query, locale=locale))
    assert body["allowed_mentions"] == NO_PINGS and not (body.get("flags") or 0) & EPHEMERAL
    return body


async def command(world: World, name: str, options: dict[str, Any], locale: str = "en-US") -> tuple[JSON, JSON]:
    """Dispatch ``/<name>`` with ``options``; the interaction payload and the bot's card body."""
    payload = p.slash_command(
        app_id=world.fake.app_id,
        command_id=world.command_id,
        name=name,
        options=[p.command_option(k, v, 4 if isinstance(v, int) else 3) for k, v in options.items()],
        user_data=world.user,
        locale=locale,
        guild_id=GUILD_ID,
        channel=world.channel,
    )
    await world.fake.interaction(payload)
    return payload, await card_body(world, payload)


# -- one question of each intent --------------------------------------------------------------------------------------


def test_fit_from_slash_text() -> None:
    row = Row("llama3-8b 32k 3060", "llama-3-8b", "rtx-3060-12gb", context=32768)

    async def scenario() -> None:
        async with real_world() as world:
            embed = embed_of(await ask(world, row.q))
            assert embed["title"] == "Llama 3 8B · Q4_K_M · 32K context"
            summed = card_sum(embed)
            assert summed["kv"] == f"**{gib(kv_cache_bytes('llama-3-8b', 32768))}**" == "**4.0 GiB**"
            total = total_at(row)
            assert summed["total"] == f"**{gib(total)}**"
            verdict = f"✅ Runs on **GeForce RTX 3060 12GB** with {gib(12 * GIB - total)} to spare."
            assert verdict in embed["description"]

    run(scenario())


def test_what_fits_from_slash_text() -> None:
    row = Row("what can I run on a 3060 at 32k", gpu="rtx-3060-12gb", context=32768)

    async def scenario() -> None:
        async with real_world() as world:
            body = await ask(world, row.q)
            embed = embed_of(body)
            assert embed["title"] == "What fits on GeForce RTX 3060 12GB · 32K context"
            assert embed["description"].startswith("Usable GPU memory: **12.0 GiB**\n")
            lines = [line for line in embed["description"].split("\n") if re.match(r"\d+\. ", line)]
            expected = expected_what_fits(row)
            assert len(lines) == len(expected) == 10
            for i, (line, (model, quant)) in enumerate(zip(lines, expected, strict=True), 1):
                name = backend().catalog.model(model).name
                total = total_at(Row(row.q, model, row.gpu, context=row.context), quant=quant)
                assert line == f"{i}. **{name}** · {quant} · {gib(total)} · {gib(12 * GIB - total)} free"
                assert 12 * GIB - total >= margin(12 * GIB)
            assert embed["footer"]["text"].startswith("Assumes context 32,768 · 1 user · KV cache f16 · llama.cpp")
            ids = custom_ids(body)
            assert "vf:ctx:8192:-:-:32768:1:f16:l:1:rtx-3060-12gb*1:en:w" in ids
            assert not any(cid.startswith("vf:math:") for cid in ids)  # no single model to show the math for

    run(scenario())


def test_compare_from_a_korean_mention() -> None:
    async def scenario() -> None:
        async with real_world() as world:
            question = await world.say("라마3 8B랑 젬마2 9B 비교")
            sent = await world.fake.wait_request("POST", r"/channels/\d+/messages")
            body = sent.json
            assert str(body["message_reference"]["message_id"]) == question["id"]
            embed = embed_of(body)
            assert embed["title"] == "Llama 3 8B 대 Gemma 2 9B · Q4_K_M · 컨텍스트 8K"
            # Gemma 2 9B: head size 256 vs 128 and 42 vs 32 layers, so far more KV cache per token.
            assert kv_per_token("gemma-2-9b") > 2 * kv_per_token("llama-3-8b")
            kv_a, kv_b = kv_cache_bytes("llama-3-8b", 8192), kv_cache_bytes("gemma-2-9b", 8192)
            # Per token at this context, as the single answer holds it: Gemma 2's sliding-window layers keep
            # 4,608 cells of the 8,192, so 262.5 KiB a token where the textbook formula says 336 KiB.
            assert (kv_b / 8192 / 1024, kv_per_token("gemma-2-9b") // 1024) == (262.5, 336)
            lines = embed["description"].split("\n")
            assert lines[0] == (
                "**Gemma 2 9B** 쪽이 **Llama 3 8B** 모델보다 KV 캐시를 훨씬 많이 써요. "
                "이유: 헤드 크기 256 대 128, 레이어 42개 대 32개. "
                f"교과서 공식으로는 토큰당 {kv_per_token('llama-3-8b') // 1024} KiB와 336 KiB예요."
            )
            diff = f"+{(kv_b - kv_a) / GIB:.1f}"
            assert lines[2] == (
                f"KV 캐시 **{kv_a / GIB:.1f}** 대 **{kv_b / GIB:.1f}**GiB ({diff}) · "
                f"토큰당 {kv_a // 8192 // 1024} 대 262.5 KiB"
            )
            assert [line.split(" ", 1)[0] for line in lines[1:5]] == ["가중치", "KV", "기타", "합계"]
            assert len(lines) + 2 <= 10  # with the title and the footer: ten lines (was 25)
            assert "vf:ctx:32768:llama-3-8b:Q4_K_M:8192:1:f16:l:1:-:ko:c+gemma-2-9b" in custom_ids(body)

    run(scenario())


def test_max_context_from_slash_text() -> None:
    row = Row("how much context can llama 3.1 8b take on a 3060?", "llama-3.1-8b", "rtx-3060-12gb")

    async def scenario() -> None:
        async with real_world() as world:
            body = await ask(world, row.q)
            embed = embed_of(body)
            first = embed["description"].split("\n")[0]
            match = re.fullmatch(
                r"📏 Largest context with every layer on \*\*GeForce RTX 3060 12GB\*\*: "
                r"\*\*([\d,]+) tokens(?: \((\d+)K\))?\*\*",
                first,
            )
            assert match is not None, first
            value = int(match[1].replace(",", ""))
            assert match[2] is None or value == int(match[2]) * 1024  # "(56K)" only for whole thousands of 1,024
            # The card at that number: KV = value × KV per token; it fits, 256 more tokens do not.
            per_token = kv_per_token("llama-3.1-8b")
            assert card_sum(embed)["kv"] == f"**{gib(per_token * value)}**"
            assert total_at(row, context=value) <= usable("rtx-3060-12gb")
            assert total_at(row, context=value + 256) > usable("rtx-3060-12gb")
            short = f"{value // 1024}K" if value % 1024 == 0 else f"{value:,}"
            assert embed["title"] == f"Llama 3.1 8B · Q4_K_M · {short} context"
            # The context buttons turn it into a plain fit card at the pressed context.
            cid = button(body, "vf:ctx:8192:")
            assert cid.endswith(":en:mc")
            message = next(m for m in world.fake.messages.values() if m.get("embeds") == body["embeds"])
            press = await world.press(message, cid)
            sent = await world.callback(press)
            assert sent.json["type"] == 7
            embed = embed_of(sent.json["data"])
            assert embed["title"] == "Llama 3.1 8B · Q4_K_M · 8K context"
            assert embed["description"].startswith("✅ Runs on **GeForce RTX 3060 12GB**")
            assert card_sum(embed)["kv"] == f"**{gib(per_token * 8192)}**"
            assert not any(cid.endswith(":mc") for cid in custom_ids(sent.json["data"]))

    run(scenario())


def test_max_users_in_korean() -> None:
    row = Row("3090에서 qwen2.5 14b 동시 사용자 몇 명까지?", "qwen2.5-14b", "rtx-3090")

    async def scenario() -> None:
        async with real_world() as world:
            embed = embed_of(await ask(world, row.q, locale="ko"))
            first = embed["description"].split("\n")[0]
            match = re.fullmatch(
                r"👥 컨텍스트 8K 기준 최대 동시 사용자 — \*\*GeForce RTX 3090\*\*: \*\*사용자 (\d+)명\*\*", first
            )
            assert match is not None, first
            users = int(match[1])
            per_user = kv_per_token("qwen2.5-14b") * 8192
            assert card_sum(embed)["kv"] == f"**{gib(per_user * users, 'ko')}**"
            assert total_at(row, users=users) <= usable("rtx-3090") < total_at(row, users=users + 1)
            assert embed["title"] == f"Qwen2.5 14B · Q4_K_M · 컨텍스트 8K · 사용자 {users}명"

    run(scenario())


def test_best_quant_from_slash_text() -> None:
    row = Row("which quant for gemma 2 27b on a 4090 at 16k?", "gemma-2-27b", "rtx-4090", context=16384)
    ladder = ("F16", "Q8_0", "Q6_K", "Q5_K_M", "Q5_K_S", "Q4_K_M", "Q4_K_S", "IQ4_XS", "Q3_K_L", "Q3_K_M")
    budget = usable("rtx-4090")
    expected = next(q for q in ladder if budget - total_at(row, quant=q) >= margin(budget))

    async def scenario() -> None:
        async with real_world() as world:
            embed = embed_of(await ask(world, row.q))
            # Gemma 2 was trained for 8,192 tokens (config.json), so 16k opens with that warning.
            assert embed["description"].startswith(
                "⚠️ Trained for 8,192 tokens: past that, answers degrade.\n"
                "🎯 Best quant that fits **GeForce RTX 4090** with room to spare: "
                f"**{expected}**\n✅ Runs with "  # the line above names the GPU
            )
            assert embed["title"] == f"Gemma 2 27B · {expected} · 16K context"
            assert card_sum(embed)["total"] == f"**{gib(total_at(row, quant=expected))}**"

    run(scenario())


def test_engines_side_by_side() -> None:
    async def scenario() -> None:
        async with real_world() as world:
            body = await ask(world, "llama 3.1 8b on a 4090, llama.cpp vs vllm")
            embed = embed_of(body)
            assert embed["title"] == "Llama 3.1 8B · Q4_K_M · 8K context · llama.cpp / vLLM"
            f = fields(embed)
            assert list(f) == ["llama.cpp", "vLLM"]
            kv = kv_cache_bytes("llama-3.1-8b", 8192)
            assert f"KV cache **{gib(kv)}**" in f["llama.cpp"]
            assert f"KV cache **{gib(pad(8192, 16) * kv_per_token('llama-3.1-8b'))}**" in f["vLLM"]
            # 90% of 24 GiB; the pool holds what weights, activations (4.8 × 8192 × 128256) and 133 MiB leave.
            reserved = 24 * GIB * 9 // 10
            lines = embed["description"].split("\n")
            assert lines[0].startswith("**llama.cpp**: ✅ Runs on **GeForce RTX 4090**")
            assert lines[1].startswith("**vLLM**: ✅ Runs on **GeForce RTX 4090**")
            note = lines[2]
            assert note.startswith(f"vLLM reserves 90% of the card ({gib(reserved)} of 24.0 GiB) when it starts")
            tokens = int(re.search(r"room for ([\d,]+) tokens", note)[1].replace(",", ""))  # type: ignore[index]
            weights = float(re.search(r"Weights \*\*([\d.]+) GiB", f["vLLM"])[1]) * GIB  # type: ignore[index]
            pool = reserved - weights - int(4.8 * 8192 * 128256) - 133 * (1 << 20)
            assert abs(tokens - pool / kv_per_token("llama-3.1-8b")) < 0.05 * GIB / kv_per_token("llama-3.1-8b")
            assert note.endswith(f"llama.cpp allocates only the KV cache this context needs ({gib(kv)}).")
            assert button(body, "vf:ctx:32768:").endswith(":en:e")

    run(scenario())


# -- /vram-fit and /vram-compare --------------------------------------------------------------------------------------


def test_commands_are_synced_with_korean_names() -> None:
    async def scenario() -> None:
        async with real_world(sync_to=GLOBAL) as world:
            put = world.fake.find("PUT", rf"/applications/{world.fake.app_id}/commands")
            commands = {c["name"]: c for c in put[0].json}
            fit, cmp = commands["vram-fit"], commands["vram-compare"]
            assert fit["name_localizations"] == {"ko": "vram-모델추천"}
            assert cmp["name_localizations"] == {"ko": "vram-비교"}
            assert fit["description_localizations"]["ko"].startswith("내 GPU에 맞는 모델은?")
            assert [o["name"] for o in fit["options"]] == ["gpu", "context", "users"]
            assert [o["name"] for o in cmp["options"]] == ["model_a", "model_b", "context", "quant", "gpu"]
            options = {o["name"]: o for o in cmp["options"]}
            assert options["model_a"]["name_localizations"] == {"ko": "모델1"}
            assert options["model_a"]["required"] and options["model_b"]["required"]
            assert options["model_a"]["autocomplete"] and options["gpu"]["autocomplete"]
            assert fit["options"][0]["autocomplete"] and fit["options"][0]["required"]
            for c in (fit, cmp):
                assert 1 <= len(c["description"]) <= 100 and len(c["description_localizations"]["ko"]) <= 100
                assert re.fullmatch(r"[-_\w]{1,32}", c["name_localizations"]["ko"])
                for o in c["options"]:
                    assert o["description_localizations"]["ko"] and len(o["description"]) <= 100

    run(scenario())


def test_vram_fit_command_buttons_rerender_in_place() -> None:
    async def scenario() -> None:
        async with real_world() as world:
            payload, body = await command(world, "vram-fit", {"gpu": "3060", "context": 32768}, locale="ko")
            embed = embed_of(body)
            assert embed["title"] == "맞는 모델: GeForce RTX 3060 12GB · 컨텍스트 32K"
            assert "1. **" in embed["description"] and "여유" in embed["description"]
            message = world.message_for(payload)

            press = await world.press(message, button(body, "vf:ctx:8192:"), locale="ko")
            sent = await world.callback(press)
            assert sent.json["type"] == 7  # edited in place
            body = sent.json["data"]
            embed = embed_of(body)
            assert embed["title"] == "맞는 모델: GeForce RTX 3060 12GB · 컨텍스트 8K"
            expected = expected_what_fits(Row("", gpu="rtx-3060-12gb"))
            names = [backend().catalog.model(m).name for m, _q in expected]
            listed = re.findall(r"^\d+\. \*\*(.+?)\*\* · (\S+) ·", embed["description"], flags=re.M)
            assert listed == [(n, q) for n, (_m, q) in zip(names, expected, strict=True)]

            press = await world.press(world.fake.messages[int(message["id"])], button(body, "vf:lang:en:"))
            body = (await world.callback(press)).json["data"]
            assert embed_of(body)["title"] == "What fits on GeForce RTX 3060 12GB · 8K context"

            # What fits needs a GPU it knows.
            _payload, error = await command(world, "vram-fit", {"gpu": "rtx 9999"}, locale="ko")
            assert error["flags"] & EPHEMERAL and error["content"].startswith("찾을 수 없는 GPU")

    run(scenario())


def test_vram_compare_command_and_context_button() -> None:
    async def scenario() -> None:
        async with real_world() as world:
            options = {"model_a": "llama-3.1-8b", "model_b": "qwen2.5-7b", "context": 32768, "gpu": "rtx-3060-12gb"}
            payload, body = await command(world, "vram-compare", options)
            embed = embed_of(body)
            assert embed["title"] == "Llama 3.1 8B vs Qwen2.5 7B · Q4_K_M · 32K context · GeForce RTX 3060 12GB"
            # Llama 3.1 8B: 8 KV heads vs Qwen2.5 7B's 4, and 32 vs 28 layers.
            assert kv_per_token("llama-3.1-8b") == 128 * 1024 and kv_per_token("qwen2.5-7b") == 56 * 1024
            lines = embed["description"].split("\n")
            assert lines[0] == (
                "**Llama 3.1 8B** needs far more KV cache than **Qwen2.5 7B**: 8 vs 4 KV heads and 32 vs 28 layers."
            )
            kv_a, kv_b = kv_cache_bytes("llama-3.1-8b", 32768), kv_cache_bytes("qwen2.5-7b", 32768)
            assert lines[2].startswith(f"KV cache **{kv_a / GIB:.1f}** vs **{kv_b / GIB:.1f}** GiB")
            assert lines[2].endswith(" · 128 vs 56 KiB per token")
            assert lines[-1].startswith(("✅ fits", "⚠️ tight fit")) and " vs " in lines[-1]
            assert embed["title"].endswith(" · GeForce RTX 3060 12GB")
            message = world.message_for(payload)

            press = await world.press(message, button(body, "vf:ctx:131072:"))
            sent = await world.callback(press)
            assert sent.json["type"] == 7
            embed = embed_of(sent.json["data"])
            assert embed["title"] == "Llama 3.1 8B vs Qwen2.5 7B · Q4_K_M · 128K context · GeForce RTX 3060 12GB"
            lines = embed["description"].split("\n")
            kv_a, kv_b = kv_cache_bytes("llama-3.1-8b", 131072), kv_cache_bytes("qwen2.5-7b", 131072)
            assert lines[2].startswith(f"KV cache **{kv_a / GIB:.1f}** vs **{kv_b / GIB:.1f}** GiB")
            assert lines[-1].startswith(("❌ doesn't fit", "🟧 "))

            _payload, error = await command(world, "vram-compare", {"model_a": "lamma-9000", "model_b": "qwen2.5-7b"})
            assert error["flags"] & EPHEMERAL and error["content"].startswith("I don't know the model **lamma-9000**")

    run(scenario())


def test_new_commands_autocomplete() -> None:
    async def scenario() -> None:
        async with real_world() as world:
            for name, option, typed, expected in (
                ("vram-compare", "model_b", "gemma2 9", ("Gemma 2 9B", "gemma-2-9b")),
                ("vram-fit", "gpu", "3060", ("GeForce RTX 3060 12GB", "rtx-3060-12gb")),
            ):
                sent = await world.autocomplete(name, option, typed)
                assert sent["type"] == 8
                choices = [(c["name"], c["value"]) for c in sent["data"]["choices"]]
                assert expected in choices

    run(scenario())


def test_what_fits_without_a_gpu_asks_for_one() -> None:
    async def scenario() -> None:
        async with real_world() as world:
            body = await world.ask("what can I run?", locale="ko")
            assert body["flags"] & EPHEMERAL
            assert body["content"].startswith("어떤 GPU인가요?")

    run(scenario())
