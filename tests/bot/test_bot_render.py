"""The card renderer against Discord's limits, the packed button state, and the real calculator behind the bot."""

from __future__ import annotations

import dataclasses
import os
import unicodedata

import discord
import pytest

from tests.fake_discord.backend import FakeBackend
from vramfit.bot.answering.cards import (
    AnyCard,
    Card,
    CompareCard,
    GpuFit,
    KvDifference,
    ModelChoice,
    ModelInfo,
    Overrides,
    Solution,
    Tip,
    WhatFitsCard,
)
from vramfit.bot.errors import AnswerError
from vramfit.bot.i18n import Lang
from vramfit.bot.render import limits
from vramfit.bot.render.embed import embed_as_text, render_card, render_error, render_math
from vramfit.bot.ui.buttons import CONTEXT_PRESETS, card_view
from vramfit.bot.ui.state import MAX_CUSTOM_ID, CardState

GIB = 1 << 30
LANGS: tuple[Lang, ...] = ("ko", "en")


def card_with(**changes: object) -> Card:
    card = FakeBackend().answer("llama3 8b 128k 3060", "en", {})
    return dataclasses.replace(card, **changes)  # type: ignore[arg-type]


def test_limits_builder_drops_low_priority_fields_first() -> None:
    builder = limits.EmbedBuilder(title="t" * 300, description="d" * 1000, footer="f" * 500)
    for i in range(30):
        builder.add_field(f"name {i}" * 40, "v" * 2000, priority=i % 7)
    embed = builder.build()
    assert limits.within_limits(embed) == []
    assert len(embed.title or "") == limits.TITLE and (embed.title or "").endswith("…")
    assert [(f.name or "")[:7] for f in embed.fields] == ["name 6n", "name 13", "name 20"]  # highest priority, in order
    absurd = limits.EmbedBuilder(title="t" * 300, description="d" * 5000, footer="f" * 3000)
    absurd.add_field("n", "v")
    assert limits.within_limits(absurd.build()) == []


def test_clamp_lines_cuts_whole_lines() -> None:
    text = limits.clamp_lines([f"line {i}" for i in range(500)], 100)
    assert len(text) <= 100 and text.endswith("\n…")
    assert all(line.startswith("line") or line == "…" for line in text.split("\n"))


@pytest.mark.parametrize("lang", LANGS)
def test_adversarial_card_stays_within_limits(lang: Lang) -> None:
    long_name = "@everyone **" + "Ü" * 500
    fits = tuple(
        GpuFit(f"gpu-{i}", long_name, 64, 80 * GIB, "no", 1, 200, -(10**15), segment=s, max_context=10**7)
        for i, s in enumerate(["consumer", "workstation", "datacenter", "apple", "laptop", "generic"] * 10)
    )
    card = card_with(
        model=ModelInfo("x" * 200, long_name, 10**15, 999, 128, 512, 4096),
        fits=fits,
        tips=tuple(Tip("quant", long_name, 10**15, "partial") for _ in range(50)),
        notes=("sliding_window",),
    )
    for named in (True, False):
        rendered = render_card(
            dataclasses.replace(
                card,
                named_gpus=named,
                fits=tuple(dataclasses.replace(f, verdict="fits") for f in fits) if not named else fits,
            ),
            lang,
        )
        assert limits.within_limits(rendered) == [], embed_as_text(rendered)[:500]
        assert "@everyone" not in embed_as_text(rendered)  # escaped: "@\u200beveryone"
    assert limits.within_limits(render_math(card, lang)) == []
    error = AnswerError("unknown_model", subject=long_name * 10, suggestions=[long_name] * 20)
    assert len(render_error(error, lang)) <= 2000


@pytest.mark.parametrize("lang", LANGS)
def test_adversarial_intent_cards_stay_within_limits(lang: Lang) -> None:
    long_name = "@everyone **" + "Ü" * 500
    base = card_with(model=ModelInfo("x" * 200, long_name, 10**15, 999, 128, 512, 4096))
    assumptions = dataclasses.replace(base.assumptions, users=4096, context=10**7)
    rows = tuple(
        ModelChoice(f"m{i}", long_name, long_name, 10**15, "Q3_K_M", 10**15, -(10**15), "fits") for i in range(500)
    )
    what_fits = WhatFitsCard(lang, "gpu", long_name, 64, 80 * GIB, 80 * GIB * 64, assumptions, rows, "x" * 300)
    reasons = tuple(KvDifference(f, 10**9, 1) for f in ("head_dim", "kv_heads", "layers", "sliding_window", "mla"))
    compare = CompareCard(lang, base, base, (10**12, 1), reasons * 20)
    solved = dataclasses.replace(base, solution=Solution("max_context", str(10**7), long_name, 64))
    vllm = dataclasses.replace(base, assumptions=dataclasses.replace(base.assumptions, engine="vllm"))
    engines = dataclasses.replace(base, engines=(base, vllm))
    for card in (what_fits, compare, solved, engines, dataclasses.replace(what_fits, models=())):
        rendered = render_card(card, lang)
        assert limits.within_limits(rendered) == [], embed_as_text(rendered)[:500]
        assert "@everyone" not in embed_as_text(rendered)


def test_card_state_round_trip() -> None:
    card = card_with(gpus=(("rtx-3060-12gb", 2), ("rtx-4090", 1)))
    state = CardState.from_card(card, "ko")
    packed = state.encode()
    assert packed == "llama-3-8b:Q4_K_M:131072:1:f16:l:1:rtx-3060-12gb*2,rtx-4090*1:ko"
    assert CardState.decode(packed) == state
    assert CardState.decode(state.with_context(4096).encode() or "").context == 4096
    with pytest.raises(ValueError):
        CardState.decode("a:b:c")
    odd = dataclasses.replace(state, model="has:colon")
    assert odd.encode() is None
    # Other intents add a tenth field; fit cards (and ids posted before intents existed) have none.
    for intent, other, tail in (
        ("what_fits", "qwen", ":w+qwen"),
        ("what_fits", "", ":w"),
        ("compare", "gemma-2-9b", ":c+gemma-2-9b"),
        ("max_context", "", ":mc"),
        ("max_users", "", ":mu"),
        ("best_quant", "", ":bq"),
        ("engines", "", ":e"),
    ):
        other_state = dataclasses.replace(state, intent=intent, other=other)
        encoded = other_state.encode()
        assert encoded is not None and encoded.endswith(tail)
        assert CardState.decode(encoded) == other_state
    assert CardState.decode(packed).intent == "fit"
    with pytest.raises(ValueError):
        CardState.decode(packed + ":zz")
    mc = dataclasses.replace(state, intent="max_context")
    assert mc.with_context(8192).intent == "fit"  # another context is no longer the largest
    assert dataclasses.replace(state, intent="max_users").with_context(8192).intent == "max_users"
    assert dataclasses.replace(state, intent="compare", other="gemma-2-9b").overrides()["compare_model"] == (
        "gemma-2-9b"
    )


def test_view_has_buttons_only_when_state_fits() -> None:
    card = card_with()
    ids = [item.custom_id for item in card_view(card, "en").children]  # type: ignore[attr-defined]
    assert len(ids) == len(CONTEXT_PRESETS) + 4  # the contexts, language, math, chart, pin
    assert all(len(cid) <= MAX_CUSTOM_ID for cid in ids)
    too_long = card_with(gpus=tuple((f"some-very-long-gpu-id-{i}", 1) for i in range(4)))
    assert [i.custom_id for i in card_view(too_long, "en").children] == ["vf:pin:en"]  # type: ignore[attr-defined]
    assert card_view(card_with(stateful=False), "ko", pin=False).children == []


def test_no_gpu_named_lists_smallest_fits_by_segment() -> None:
    card = FakeBackend().answer("llama3 8b 8k", None, {})
    embed = render_card(card, "en")
    (field,) = [f for f in embed.fields if f.name == "Smallest GPUs that fit"]
    segments = [line.split(":", 1)[0] for line in (field.value or "").splitlines()]
    assert segments == ["Consumer", "Workstation", "Datacenter", "Apple Silicon"]
    assert all(line.count("**") <= 4 for line in (field.value or "").splitlines())  # two cards a segment
    assert embed.description == "Weights 4.5 GiB + KV 1.0 GiB + other 1.0 GiB = **6.5 GiB**"


# -- with the real calculator -----------------------------------------------------------------------------------------

calc_estimate = pytest.importorskip("vramfit.calc.estimate")


@pytest.fixture(scope="module")
def real() -> object:
    from vramfit.bot.answering.service import CalcBackend

    return CalcBackend()


GPU_SETS: list[tuple[tuple[str, int], ...]] = [(), (("rtx-3060-12gb", 1),), (("rtx-4090", 2),), (("h100-80gb", 8),)]


def test_every_preset_model_renders_within_limits(real: object) -> None:
    from vramfit.bot.answering.service import CalcBackend

    assert isinstance(real, CalcBackend)
    models = sorted(real.catalog.models)
    if os.environ.get("VRAMFIT_QUICK"):
        models = models[:5]
    gpu_sets = [g for g in GPU_SETS if all(real.catalog.find_gpu(i) for i, _ in g)]
    for model in models:
        for gpus in gpu_sets:
            card = real.answer("", None, {"model": model, "context": 32768, "gpus": gpus})
            for lang in LANGS:
                for embed in (render_card(card, lang), render_math(card, lang)):
                    assert limits.within_limits(embed) == [], (model, gpus, lang)
                state = CardState.from_card(card, lang)
                assert state.encode() is not None, (model, gpus)
                assert len(card_view(card, lang).children) == len(CONTEXT_PRESETS) + 4


def test_every_intent_card_renders_within_limits(real: object) -> None:
    """Solvers, engines side by side and comparisons for every preset model; what fits for every GPU set."""
    from vramfit.bot.answering.service import CalcBackend

    assert isinstance(real, CalcBackend)
    models = sorted(real.catalog.models)
    if os.environ.get("VRAMFIT_QUICK"):
        models = models[:5]
    gpu_sets = [g for g in GPU_SETS[1:] if all(real.catalog.find_gpu(i) for i, _ in g)]
    cards: list[tuple[object, AnyCard]] = []
    for i, model in enumerate(models):
        other = models[(i + 1) % len(models)]
        cards.append((model, real.answer("", None, {"model": model, "intent": "compare", "compare_model": other})))
        engines = {"model": model, "engines": True, "gpus": gpu_sets[0]}
        if real.catalog.models[model].architecture.recurrent_layers:
            # The vLLM profile does not model a hybrid model's state: both engines is an error, never a guess.
            with pytest.raises(AnswerError) as refused:
                real.answer("", None, engines)
            assert refused.value.code == "unsupported_architecture"
        else:
            cards.append((model, real.answer("", None, engines)))
        for intent in ("max_context", "max_users", "best_quant"):
            for gpus in gpu_sets:
                request: Overrides = {"model": model, "intent": intent, "gpus": gpus}  # type: ignore[typeddict-item]
                cards.append(((model, intent, gpus), real.answer("", None, request)))
    for gpus in gpu_sets:
        for context in CONTEXT_PRESETS:
            cards.append((gpus, real.answer("", None, {"intent": "what_fits", "gpus": gpus, "context": context})))
    for key, card in cards:
        for lang in LANGS:
            assert limits.within_limits(render_card(card, lang)) == [], (key, lang)
            if isinstance(card, Card):
                assert limits.within_limits(render_math(card, lang)) == [], (key, lang)
            state = CardState.from_card(card, lang)
            packed = state.encode()
            if packed is not None:
                assert CardState.decode(packed) == state
                assert all(len(item.custom_id) <= MAX_CUSTOM_ID for item in card_view(card, lang).children)  # type: ignore[attr-defined]
            else:
                assert isinstance(card, CompareCard), key  # only two long model ids overflow a custom_id


def test_intent_cards_recompute_from_their_state(real: object) -> None:
    """A button's packed state answers with the same card (what a press after a restart relies on)."""
    from vramfit.bot.answering.service import CalcBackend

    assert isinstance(real, CalcBackend)
    for question in (
        "what can I run on a 3060 at 32k",
        "which qwen models fit on a 4090",
        "llama3 8b vs gemma2 9b at 8k on a 3060",
        "how much context can llama 3.1 8b take on a 3060?",
        "3090에서 qwen2.5 14b 동시 사용자 몇 명까지?",
        "which quant for gemma 2 27b on a 4090 at 16k?",
        "llama 3.1 8b on a 4090, llama.cpp vs vllm",
        "llama 3.3 70b on a 4090 with 64gb ram",  # the RAM the question named is in the state ...
        "llama 3.1 8b on ollama 4090",  # ... and Ollama, whose defaults the answer follows
        "5090에 램 128기가로 qwen3 235b 올라마에서 돌아가?",
    ):
        card = real.answer(question, None, {})
        state = CardState.from_card(card, card.lang)
        packed = state.encode()
        assert packed is not None, question
        again = real.answer("", card.lang, CardState.decode(packed).overrides())
        assert again == card, question


@pytest.mark.parametrize(
    ("question", "flags"),
    [
        ("llama 3.3 70b on a 4090 with 64gb ram", "1r64"),
        ("llama 3.1 8b on ollama 4090", "0o"),  # Ollama runs Llama without flash attention
        ("5090에 램 128기가로 qwen3 235b 올라마에서 돌아가?", "1r128o"),
        ("llama 3.1 8b on a 4090", "1"),  # nothing named: the field as before
        ("gpt-oss-120b on a 5090 with 64gb ddr4", "1r64sddr4-3200x2"),  # and the RAM's speed
        ("큐웬3 235b 5090 램 128기가 ddr5-6000 4채널", "1r128sddr5-6000x4"),
    ],
)
def test_a_buttons_state_keeps_the_ram_and_ollama(real: object, question: str, flags: str) -> None:
    from vramfit.bot.answering.service import CalcBackend
    from vramfit.calc.errors import VramfitError

    assert isinstance(real, CalcBackend)
    card = real.answer(question, None, {})
    packed = CardState.from_card(card, card.lang).encode()
    assert packed is not None and packed.split(":")[6] == flags
    pressed = real.answer("", card.lang, CardState.decode(packed).with_context(16384).overrides())
    assert pressed.assumptions.context == 16384  # type: ignore[union-attr]
    assert (pressed.ram_gb, pressed.runner) == (card.ram_gb, card.runner)  # type: ignore[union-attr]
    assert pressed.ram_speed == card.ram_speed  # type: ignore[union-attr]
    assert pressed.fits[0].ram_speed == card.fits[0].ram_speed  # type: ignore[union-attr]
    # An id posted before these flags existed still decodes, with neither.
    old = CardState.decode("llama-3-8b:Q4_K_M:8192:1:f16:l:1:rtx-4090*1:en")
    assert (old.ram_gb, old.runner) == (0, "")
    with pytest.raises(ValueError):
        CardState.decode("llama-3-8b:Q4_K_M:8192:1:f16:l:1r0:rtx-4090*1:en")  # 0 GB is no RAM size
    with pytest.raises(VramfitError):  # a speed no memory runs at, in a forged id: a clear error, not a card
        forged = CardState.decode("gpt-oss-120b:-:8192:1:f16:l:1r64sddr4-9999x2:rtx-5090*1:en")
        real.answer("", "en", forged.overrides())


def test_real_numbers_reach_the_card(real: object) -> None:
    from vramfit.bot.answering.service import CalcBackend
    from vramfit.calc.estimate import answer
    from vramfit.calc.request import GpuChoice, Request

    assert isinstance(real, CalcBackend)
    catalog = real.catalog
    request = Request(
        model=catalog.model("llama-3.1-8b").ref(), context=32768, gpus=(GpuChoice(gpu=catalog.gpu("rtx-3060-12gb")),)
    )
    expected = answer(request, tuple(catalog.gpus.values()))
    card = real.answer("", None, {"model": "llama-3.1-8b", "context": 32768, "gpus": (("rtx-3060-12gb", 1),)})
    assert card.estimate.total_bytes == expected.estimate.total_bytes
    assert card.fits[0].headroom_bytes == expected.fits[0].headroom_bytes
    embed = render_card(card, "en")
    total = f"{expected.estimate.total_bytes / GIB:,.1f} GiB"
    assert f"= **{total}** of 12.0 GiB" in (embed.description or "")
    with pytest.raises(AnswerError) as err:
        real.answer("", None, {"model": "no-such-model-anywhere"})
    assert err.value.code == "unknown_model"
    with pytest.raises(AnswerError) as err:
        real.answer("", None, {"model": "llama-3.1-8b", "quant": "Q9_Z"})
    assert err.value.code == "unknown_quant"


def test_real_tips_when_the_gpu_is_short(real: object) -> None:
    from vramfit.bot.answering.service import CalcBackend

    assert isinstance(real, CalcBackend)
    card = real.answer("", None, {"model": "gemma-3-27b", "context": 131072, "gpus": (("rtx-4090", 1),)})
    assert card.fits[0].verdict in ("partial", "no")
    kinds = [t.kind for t in card.tips]
    assert "context" in kinds and len(kinds) <= 3
    # Only tips that make it run, cheapest in quality first: a q8_0 KV cache, a shorter context, a smaller quant.
    assert all(t.verdict in ("fits", "tight") for t in card.tips)
    order = ["kv_cache", "context", "quant", "gpus"]
    assert kinds == sorted(kinds, key=order.index)
    for tip in card.tips:
        assert tip.total_bytes <= tip.usable_bytes
        assert tip.total_bytes < card.estimate.total_bytes or tip.kind == "gpus"


@pytest.mark.parametrize(("kv", "noted"), [("q4_0", True), ("q5_1", True), ("iq4_nl", True), ("q8_0", False),
                                           ("f16", False)])  # fmt: skip
def test_a_low_bit_kv_cache_says_its_quality_cost(real: object, kv: str, noted: bool) -> None:
    """A KV cache of 4 or 5 bits a value says on the card, in both languages, and in the terminal, what it costs in
    quality with llama.cpp's rotation (on by default since PR #21038: q4_0 +0.22 % perplexity on Qwen3.5-4B, and long
    agentic tool use fails more; bot.render.labels.LOW_BIT_KV_NOTE); q8_0 and f16 say nothing."""
    import io

    from vramfit.bot.cli import run

    card = real.answer("", None, {"model": "llama-3.1-8b", "kv_cache": kv, "gpus": (("rtx-4060", 1),)})  # type: ignore[attr-defined]
    en = (render_card(card, "en").description or "").replace("\\_", "_")  # the embed escapes Markdown
    ko = (render_card(card, "ko").description or "").replace("\\_", "_")
    assert ("+0.22 % perplexity with q4_0 on Qwen3.5 4B" in en) is noted
    assert (f"A {kv} KV cache costs little quality" in en) is noted and ("agentic tool use" in en) is noted
    assert ("퍼플렉서티 +0.22 %" in ko) is noted and (f"{kv} KV 캐시는" in ko) is noted
    assert "+11 %" not in en  # the figure of a build before the rotation
    out = io.StringIO()
    assert run(["llama 3.1 8b on rtx 4060", "--kv-cache", kv, "--lang", "en"], out) == 0
    assert ("+0.22 % perplexity" in out.getvalue()) is noted


@pytest.mark.parametrize(("kv", "noted"), [("q8_0", True), ("q4_0", True), ("f16", False)])
def test_a_quantized_k_cache_on_an_attention_sink_model_says_to_keep_f16(real: object, kv: str, noted: bool) -> None:
    """gpt-oss's attention sinks are the exception to the rotation: at q8_0 K the top token differs at 1 position in
    4 (TheTom/llama-cpp-turboquant#305: 74.9 % the same), so q8_0 gets the warning too, and the general note is not
    said beside it."""
    import io

    from vramfit.bot.cli import run

    card = real.answer("", None, {"model": "gpt-oss-20b", "kv_cache": kv, "gpus": (("rtx-4060", 1),)})  # type: ignore[attr-defined]
    en = (render_card(card, "en").description or "").replace("\\_", "_")
    ko = (render_card(card, "ko").description or "").replace("\\_", "_")
    assert ("gpt-oss-20b uses attention sinks" in en) is noted and ("Keep the K cache in f16" in en) is noted
    assert ("어텐션 싱크" in ko) is noted
    assert "costs little quality" not in en
    out = io.StringIO()
    assert run(["gpt-oss-20b on rtx 4060", "--kv-cache", kv, "--lang", "en"], out) == 0
    assert ("uses attention sinks" in out.getvalue()) is noted


@pytest.mark.parametrize(
    ("gpu", "en_said", "ko_said"),
    [
        # CUDA: flash attention copies one global layer's q8_0 K and V to f16, 2 × 131,072 × 16 × 128 × 2 B = 1 GiB;
        # with the queries (4 · 512 · 32 · 128 B = 8 MiB) an attention stage of 1,032 MiB, 906 MiB over the
        # feed-forward stage (3 · 4 · 512 · 21,504 B = 126 MiB) that was the largest with f16, both above the same
        # five hidden states and masks (llama-server b11434's graph, calc.server_graph)
        ("rtx-4090", "(next to no quality loss, 906 MiB more for flash attention's buffers):",
         "(q8_0, 품질 손실 거의 없음, 플래시 어텐션 버퍼 906MiB 추가):"),
        ("apple-m4-max-36gb", "(next to no quality loss, no larger buffers):",  # Metal makes no such copy
         "(q8_0, 품질 손실 거의 없음, 버퍼 증가 없음):"),
    ],
)  # fmt: skip
def test_the_q8_0_kv_tip_says_its_quality_and_buffer_cost(real: object, gpu: str, en_said: str, ko_said: str) -> None:
    """The tip to quantize the cache to q8_0 says its quality cost and the buffers it adds, in both languages."""
    card = real.answer("", None, {"model": "gemma-3-27b", "context": 131072, "gpus": ((gpu, 1),)})  # type: ignore[attr-defined]
    assert any(t.kind == "kv_cache" and t.value == "q8_0" for t in card.tips)
    en = (render_card(card, "en").description or "").replace("\\_", "_")  # the embed escapes Markdown
    ko = (render_card(card, "ko").description or "").replace("\\_", "_")
    assert f"Quantize the KV cache to q8_0 {en_said}" in en
    assert f"KV 캐시 양자화 {ko_said}" in ko


@pytest.mark.parametrize(
    ("question", "said"),
    [("qwen3 14b on m2", ("Apple M2 8GB", "Apple M2 16GB, Apple M2 24GB")),
     ("qwen3 14b on a 3060", ("GeForce RTX 3060 12GB", "GeForce RTX 3060 8GB")),
     ("qwen3 14b on m2 16gb", None),  # the size was given
     ("qwen3 14b on a 4090", None)],  # one size only
)  # fmt: skip
def test_a_gpu_named_without_its_memory_size_says_which_size_answered(
    real: object, question: str, said: tuple[str, str] | None
) -> None:
    """ "M2" alone is answered for its most common size; "show the math" (both languages), the terminal and a button's
    recomputed card say which, with the other sizes it is sold in (presets/gpus.toml: apple-m2 is sold with 8, 16 or
    24 GB; the RTX 3060 with 12 or 8). The default card's verdict names the size; it has no row to spare."""
    import io

    from vramfit.bot.cli import run

    card = real.answer(question, None, {})  # type: ignore[attr-defined]
    en = render_math(card, "en").footer.text or ""
    ko = render_math(card, "ko").footer.text or ""
    out = io.StringIO()
    assert run([question, "--lang", "en"], out) == 0
    assumed = out.getvalue().splitlines()[-1]
    if said is None:
        assert card.gpu_variant is None and "the most common size" not in en + assumed and "가장 흔한" not in ko
        return
    gpu, others = said
    assert card.gpu_variant == (gpu, tuple(others.split(", ")))
    sentence = f"{gpu}, the most common size of the GPU named (also sold: {others})"
    assert en.startswith(sentence) and assumed.startswith("Assumed: ") and assumed.endswith(sentence)
    assert ko.startswith(f"{gpu}: 말씀하신 GPU의 가장 흔한 구성 (다른 구성: {others})")
    state = CardState.from_card(card, "en")
    again = real.answer("", "en", CardState.decode(state.encode() or "").overrides())  # type: ignore[attr-defined]
    assert again.gpu_variant == card.gpu_variant


def test_real_autocomplete(real: object) -> None:
    from vramfit.bot.answering.service import CalcBackend

    assert isinstance(real, CalcBackend)
    models = real.suggest_models("llama3.1")
    assert models and all("llama" in v for _, v in models[:3])
    assert len(real.suggest_models("")) == 25
    assert ("GeForce RTX 3060 12GB", "rtx-3060-12gb") in real.suggest_gpus("3060")


def test_real_assumptions_footer_in_both_languages(real: object) -> None:
    card = real.answer("", None, {"model": "qwen2.5-7b", "users": 4, "kv_cache": "q8_0"})  # type: ignore[attr-defined]
    en = render_card(card, "en").footer.text or ""
    ko = render_card(card, "ko").footer.text or ""
    assert en == "estimate · Q4_K_M · KV q8_0 · llama.cpp" and ko == "추정치 · Q4_K_M · KV q8_0 · llama.cpp"
    # Every setting, the unit and the version are in "show the math"'s footer.
    math_en, math_ko = (render_math(card, lang).footer.text or "" for lang in ("en", "ko"))
    assert "KV cache q8_0" in math_en and "flash attention on" in math_en and "1 GiB = 2³⁰ bytes" in math_en
    assert "KV 캐시 q8_0" in math_ko and "플래시 어텐션 켬" in math_ko and "vramfit " in math_ko
    assert "4 users" in (render_card(card, "en").title or "") and "사용자 4명" in (render_card(card, "ko").title or "")


def test_one_error_type_carries_code_subject_reason_and_suggestions() -> None:
    from vramfit.calc.errors import BadNumberError, VramfitError

    raised = AnswerError("too_complex", "took too long", subject="llama " * 3, reason="ambiguous", suggestions=["a"])
    assert isinstance(raised, VramfitError)
    assert (raised.code, raised.subject, raised.reason, raised.suggestions) == (
        "too_complex", "llama llama llama ", "ambiguous", ["a"])  # fmt: skip
    calc_error = BadNumberError("not a size or count: -5", number="-5")
    assert (calc_error.code, calc_error.subject, calc_error.reason) == ("bad_number", "-5", "")


PHONE_QUESTIONS = [
    "llama3 8b 32k on a 3060", "라마3 8B 32k 3060에서 돌아가?", "qwen3.5 9b 32k 3060", "gemma 4 31b on a 4090",
    "llama 3.3 70b on a 4090", "라마3.3 70b 4090 램 64기가", "gpt-oss-120b on a 5090 with 64GB RAM",
    "qwen3 30b a3b 64k 4060 ti 16gb", "mistral small 24b q8_0 2x 3090", "deepseek r1 on 8x h100",
    "phi-4 16k rtx 4070 laptop", "큐웬3 235b 5090 램 128기가",
]  # fmt: skip


def rendered_lines(embed: object) -> list[str]:
    """What a phone shows: the title, the description, each field's name and value, the footer."""
    assert isinstance(embed, discord.Embed)
    lines = [embed.title or "", *(embed.description or "").splitlines()]
    for field in embed.fields:
        lines += [field.name or "", *(field.value or "").splitlines()]
    return [*lines, embed.footer.text or ""]


@pytest.mark.parametrize("lang", ["en", "ko"])
@pytest.mark.parametrize("question", PHONE_QUESTIONS)
def test_the_default_card_reads_on_a_phone_in_ten_lines(real: object, question: str, lang: Lang) -> None:
    card = real.answer(question, lang, {})  # type: ignore[attr-defined]
    lines = rendered_lines(render_card(card, lang))
    assert len(lines) <= 10, "\n".join(lines)
    assert "\n" not in lines[-1]  # a footer of one line
    tips = [f for f in render_card(card, lang).fields if f.name in ("What would help", "해결 방법")]
    assert all(len((f.value or "").splitlines()) <= 3 for f in tips)


def _phone_rows(text: str, width: int = 40) -> int:
    """Rows ``text`` takes on a phone ~40 Latin letters wide: words wrapped whole, a Hangul syllable two columns,
    Markdown's ``**`` and backticks not drawn (the test's own count, not the renderer's)."""
    rows = 0
    for line in text.splitlines() or [""]:
        rows += 1
        used = 0
        for word in line.replace("**", "").replace("`", "").split(" "):
            size = sum(2 if unicodedata.east_asian_width(ch) in "WF" else 1 for ch in word)
            if used and used + 1 + size > width:
                rows, used = rows + 1, 0
            elif used:
                used += 1
            while size > width:  # a word longer than a row breaks where the row ends
                rows, size = rows + 1, size - width
            used += size
    return rows


@pytest.mark.parametrize("lang", ["en", "ko"])
def test_every_gallery_card_fits_twelve_phone_rows_and_a_one_row_footer(real: object, lang: Lang) -> None:
    """Issue 25: cards of 7–9 lines wrapped to 12–19 rows at a phone's width, plus a 3–5-row footer."""
    from vramfit.bot.render.gallery import QUESTIONS

    for pair in QUESTIONS:
        question = pair[0] if lang == "en" else pair[1]
        embed = render_card(real.answer(question, lang, {}), lang)  # type: ignore[attr-defined]
        rows = _phone_rows(embed.title or "") + _phone_rows(embed.description or "")
        rows += sum(_phone_rows(f.name or "") + _phone_rows(f.value or "") for f in embed.fields)
        assert rows <= 12, (question, rows, embed_as_text(embed))
        assert _phone_rows(embed.footer.text or "") == 1, (question, embed.footer.text)


def test_the_phone_row_count_wraps_words_and_counts_hangul_twice() -> None:
    assert _phone_rows("a" * 40) == 1 and _phone_rows("a" * 41) == 2 and _phone_rows("가" * 20) == 1
    assert _phone_rows("가" * 21) == 2 and _phone_rows("word " * 7 + "wordx") == 1
    assert _phone_rows("word " * 7 + "wordxy") == 2 and _phone_rows("a" * 81) == 3
    assert _phone_rows("**bold**") == 1 and _phone_rows("one\ntwo") == 2


@pytest.mark.parametrize("lang", ["en", "ko"])
@pytest.mark.parametrize(
    "question",
    ["gemma 4 31b vs qwen3.5 27b on a 4090", "llama 3.1 8b vs gemma 2 9b 32k on a 3060", "deepseek v3 vs llama 3.1 70b",
     "qwen3 30b a3b vs qwen3 32b 64k on 2x 3090", "llama 3.1 8b vs qwen2.5 7b"],
)  # fmt: skip
def test_the_compare_card_is_ten_lines_with_the_real_cache_per_token(real: object, question: str, lang: Lang) -> None:
    """Issue 25: the compare card took 22–25 lines and compared Gemma 4 31B at the textbook 880 KiB per token."""
    card = real.answer(question, lang, {})  # type: ignore[attr-defined]
    assert isinstance(card, CompareCard)
    lines = rendered_lines(render_card(card, lang))
    assert len(lines) <= 10, "\n".join(lines)
    tokens = card.a.assumptions.context * card.a.assumptions.users
    per_token = [c.estimate.kv_cache_bytes / tokens / 1024 for c in (card.a, card.b)]
    shown = [f"{kib:,.0f}" if kib == int(kib) else f"{kib:,.1f}" for kib in per_token]
    assert any(f"{shown[0]} vs {shown[1]} KiB" in line or f"{shown[0]} 대 {shown[1]} KiB" in line for line in lines)
    assert not any(" −0.0" in line or "(−0.0)" in line for line in lines)


def test_the_gallery_prints_twenty_cards_in_each_language(capsys: pytest.CaptureFixture[str]) -> None:
    from vramfit.bot.render import gallery

    assert gallery.main(["ko"]) == 0
    out = capsys.readouterr().out
    assert out.count("\n> ") + out.startswith("> ") == len(gallery.QUESTIONS) == 20
    assert "에서 돌아가요" in out and "Runs on" not in out


@pytest.mark.parametrize(
    ("num_bytes", "lang", "shown"),
    [
        (0, "en", "±0.0 GiB"),
        (-1, "en", "±0.0 GiB"),  # before: "−0.0 GiB" (the compare card's overhead row)
        (-(1 << 30) // 25, "en", "±0.0 GiB"),  # −0.04 GiB rounds to nothing
        ((1 << 30) // 10 + 1, "en", "+0.1 GiB"),
        (-2 << 30, "en", "−2.0 GiB"),
        (-1, "ko", "±0.0GiB"),
    ],
)
def test_signed_sizes_never_read_minus_zero(num_bytes: int, lang: str, shown: str) -> None:
    from vramfit.bot.i18n import Tr
    from vramfit.bot.render.labels import signed_gib

    assert signed_gib(Tr(lang), num_bytes) == shown  # type: ignore[arg-type]
