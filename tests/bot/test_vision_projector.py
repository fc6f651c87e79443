"""Images: "with images", "이미지도", ``--mmproj`` put the vision projector in the verdict, as llama.cpp's --fit counts
it (tools/server/server-context.cpp at 0c1e57098, PR #21489: the projector's tensors plus the compute buffer of its
warmup image, on the first GPU). The expected bytes are the published files' sizes and the published logs' buffers
that presets/models.toml cites (mmproj_source), written out here."""

from __future__ import annotations

import io
import json
import re
from typing import Any

import pytest

from tests.bot.cli_json import answer as ask
from tests.bot.cli_json import run_json
from tests.groundtruth import DATA, MIB
from vramfit.bot.answering.service import CalcBackend
from vramfit.bot.cli import run
from vramfit.bot.render.embed import embed_as_text, render_card
from vramfit.bot.ui.state import CardState
from vramfit.calc.presets import ModelPreset, load_catalog

# ggml-org/gemma-3-4b-it-GGUF mmproj-model-f16.gguf (Hugging Face LFS size), and its warmup compute buffer as
# llama.cpp logged it in ggml-org/llama.cpp#22790: "alloc_compute_meta: CUDA0 compute buffer size = 121.25 MiB"
GEMMA3_4B_MMPROJ = 851_251_104
GEMMA3_4B_COMPUTE = int(121.25 * MIB)
# unsloth/gemma-4-E4B-it-GGUF mmproj-F16.gguf, and the two warmup buffers llama.cpp's mtmd allocated for a projector of
# its shape (tests/data/groundtruth/llamacpp_mmproj.jsonl: the vision tower's 101.27 MiB, the audio conformer's 101.19)
GEMMA4_E4B_MMPROJ = 990_372_672
GEMMA4_E4B_COMPUTE = int((101.27 + 101.19) * MIB)


@pytest.mark.parametrize(
    ("question", "lang"),
    [
        ("gemma 3 4b with images on a 6gb card", "en"),
        ("젬마3 4b 6기가 그래픽카드에서 이미지도 돌아가?", "ko"),
        ("gemma 3 4b vision 6gb gpu", "en"),
    ],
)
def test_images_add_the_projector_and_its_compute_to_the_total(question: str, lang: str) -> None:
    with_images = ask(question, lang)
    plain = run_json("--lang", lang, "gemma 3 4b on a 6gb card")
    assert with_images["request"]["images"] is True and plain["request"]["images"] is False
    estimate = with_images["estimate"]
    assert estimate["vision_bytes"] == GEMMA3_4B_MMPROJ + GEMMA3_4B_COMPUTE
    assert estimate["vision_compute_bytes"] == GEMMA3_4B_COMPUTE
    assert estimate["total_bytes"] - plain["estimate"]["total_bytes"] == GEMMA3_4B_MMPROJ + GEMMA3_4B_COMPUTE
    fit, plain_fit = with_images["fits"][0], plain["fits"][0]
    assert plain_fit["headroom_bytes"] - fit["headroom_bytes"] == GEMMA3_4B_MMPROJ + GEMMA3_4B_COMPUTE
    assert fit["max_context"] < plain_fit["max_context"]  # the projector takes what the cache would have had


def test_the_flag_is_the_words_and_the_command_loads_the_projector_it_counted() -> None:
    flagged = run_json("gemma 4 e4b 3060", "--mmproj")
    worded = ask("gemma 4 e4b with images on a 3060")
    assert flagged["estimate"] == worded["estimate"]
    assert flagged["estimate"]["vision_bytes"] == GEMMA4_E4B_MMPROJ + GEMMA4_E4B_COMPUTE
    assert flagged["estimate"]["vision_compute_bytes"] == GEMMA4_E4B_COMPUTE
    out = io.StringIO()
    assert run(["gemma 4 e4b with images on a 3060"], out) == 0
    text = out.getvalue()
    assert "--mmproj mmproj-F16.gguf" in text
    assert "(202 MiB of it for the projector's compute buffers)" in text
    out = io.StringIO()
    assert run(["gemma 4 e4b on a 3060"], out) == 0
    assert "--mmproj" in out.getvalue() and "not in the total above" in out.getvalue()  # said, not counted


@pytest.mark.parametrize(
    ("question", "lang", "line"),
    [
        ("llama 3 8b with images on a 3060", "en", "this model takes no images"),
        ("라마3 8b 이미지도 3060", "ko", "이 모델은 이미지를 받지 않아요"),
        ("qwen3.5 27b with images on a 3090", "en", "vision projector is not known, so it is not in the total"),
    ],
)
def test_without_a_known_projector_nothing_is_guessed(question: str, lang: str, line: str) -> None:
    answer = ask(question, lang)
    assert answer["estimate"]["vision_bytes"] == 0
    out = io.StringIO()
    assert run(["--lang", lang, question], out) == 0
    assert line in out.getvalue()


def test_a_cards_buttons_keep_the_images() -> None:
    state = CardState(model="gemma-3-4b", quant="Q4_K_M", context=8192, users=1, kv_cache="f16", engine="llama.cpp",
                      flash_attn=True, gpus=(("rtx-3060-8gb", 1),), lang="ko", images=True)  # fmt: skip
    packed = state.encode()
    assert packed is not None and CardState.decode(packed) == state
    assert state.overrides().get("images") is True


def _preset(**fields: Any) -> dict[str, Any]:
    return {"id": "x", "name": "X", "source": "https://example.org", "config": {}, **fields}


def test_a_projector_without_its_source_is_refused() -> None:
    with pytest.raises(ValueError, match="mmproj_source"):
        ModelPreset(**_preset(mmproj="mmproj-F16.gguf", mmproj_bytes=1))
    with pytest.raises(ValueError, match="mmproj_source"):
        ModelPreset(**_preset(mmproj="mmproj-F16.gguf", mmproj_bytes=1, mmproj_source="read somewhere"))
    ModelPreset(**_preset(mmproj="mmproj-F16.gguf", mmproj_bytes=1, mmproj_source="https://example.org/list.json"))


def test_every_preset_projector_names_where_its_bytes_were_read() -> None:
    with_projector = [m for m in load_catalog().models.values() if m.mmproj]
    assert len(with_projector) >= 18
    for preset in with_projector:
        assert f"{preset.mmproj_bytes:,}" in preset.mmproj_source, preset.id  # the byte count as the source gave it
        if preset.mmproj_compute_bytes:  # the log lines quoted: one a context (Gemma 4 E's file makes two)
            quoted = [float(mib) for mib in re.findall(r"compute buffer size = ([0-9.]+) MiB", preset.mmproj_source)]
            assert quoted and preset.mmproj_compute_bytes == int(sum(quoted) * MIB), preset.id
    assert json.dumps([m.id for m in with_projector])  # ids serialise (the card's buttons carry them)


@pytest.mark.parametrize(
    ("question", "lang", "line"),
    [
        ("gemma 4 e4b on a 3060 with images", "en", "🖼️ Images: mmproj-F16.gguf +1.1 GiB, in the total\n"),
        ("젬마4 e4b 3060 이미지도", "ko", "🖼️ 이미지: mmproj-F16.gguf +1.1GiB, 합계에 포함\n"),
    ],
)
def test_the_discord_card_counts_the_projector(question: str, lang: str, line: str) -> None:
    """The bot's card (the answering service and the embed renderer the Discord app uses) says the projector is in."""
    card = CalcBackend().answer(question, lang, {})  # type: ignore[arg-type]
    assert card.images and card.estimate.vision_bytes == GEMMA4_E4B_MMPROJ + GEMMA4_E4B_COMPUTE  # type: ignore[union-attr]
    assert line in embed_as_text(render_card(card, lang))  # type: ignore[arg-type]


@pytest.mark.parametrize(("lang", "line"), [("en", "vLLM loads the vision encoder with the checkpoint"),
                                            ("ko", "vLLM은 체크포인트와 함께 비전 인코더를 올려요")])  # fmt: skip
def test_images_with_vllm_say_the_encoder_is_the_checkpoints(lang: str, line: str) -> None:
    """vLLM needs no mmproj file: its checkpoint carries the encoder, which the vLLM numbers do not size; said so, and
    the llama.cpp projector is not added."""
    question = "gemma 3 27b with images on an h100 with vllm"
    assert ask(question, lang)["estimate"]["vision_bytes"] == 0
    out = io.StringIO()
    assert run(["--lang", lang, question], out) == 0
    assert line in out.getvalue()
    card = CalcBackend().answer(question, lang, {})  # type: ignore[arg-type]
    assert line in embed_as_text(render_card(card, lang))  # type: ignore[arg-type]


MMPROJ_ROWS = [json.loads(line) for line in (DATA / "groundtruth" / "llamacpp_mmproj.jsonl").open(encoding="utf-8")]


@pytest.mark.parametrize(
    ("text_model", "published_mib"),
    [("Gemma-3-4B", 121.25),  # ggml-org/llama.cpp#22790: "alloc_compute_meta: CUDA0 compute buffer size = 121.25 MiB"
     ("Qwen3.5-4B", 223.30)],  # ggml-org/llama.cpp#22673: "alloc_compute_meta: CUDA0 compute buffer size = 223.30 MiB"
)  # fmt: skip
def test_the_measuring_script_gives_the_published_projector_buffers(text_model: str, published_mib: float) -> None:
    """tools/llamacpp_truth/measure_mmproj.py loads an all-zero projector with llama.cpp's own mtmd on the CPU: its
    warmup compute buffer is what the published CUDA logs printed for the real files, so the script's other rows
    stand for files no log was published of."""
    (row,) = [r for r in MMPROJ_ROWS if r["text_model"] == text_model]
    assert row["compute_buffer_mib"] == published_mib


@pytest.mark.parametrize("row", MMPROJ_ROWS, ids=lambda r: "+".join(r["presets"]))
def test_every_measured_projector_buffer_is_its_presets(row: dict[str, Any]) -> None:
    """Each row's buffer is what its presets count (Gemma 3's SigLIP 121.25 MiB, Qwen3.5's small tower 223.30 MiB and
    its large one 248.10 MiB, whatever the text width, Pixtral 64.62 MiB, Gemma 4 150.63 MiB; Gemma 4 E's file holds
    a vision tower and an audio conformer, which mtmd loads as two contexts with a buffer each, 101.27 + 101.19 MiB),
    and the Qwen3.5, Pixtral, Gemma 4 and Llama 4 (19.89 MiB) projectors written from their configs' towers weigh
    what the published files do, less their headers (under 0.05 MiB; Gemma 4 E's 1,411 tensor records and its 880
    one-float clip bounds, each padded to 32 bytes, make 0.10 MiB)."""
    for preset_id in row["presets"]:
        preset = load_catalog().models[preset_id]
        buffers = row["compute_buffer_mib"] + row.get("audio_compute_buffer_mib", 0)
        assert preset.mmproj_compute_bytes == int(buffers * MIB), preset_id
        if row["projector"] != "gemma3":  # the Gemma 3 files hold 1.3 MiB more than the converter writes
            header = 0.11 if "audio_compute_buffer_mib" in row else 0.05
            assert 0 < preset.mmproj_bytes / MIB - row["model_size_mib"] < header, preset_id  # the file adds its header


@pytest.mark.parametrize(
    ("preset", "question"),
    [("gemma-3-12b", "gemma 3 12b on a 3060 with images"), ("gemma-3-27b", "gemma 3 27b on a 4090 with images"),
     ("qwen3.5-9b", "qwen3.5 9b on a 3060 with images"), ("qwen3.5-2b", "qwen3.5 2b vision 6gb gpu"),
     ("mistral-small-3.2-24b", "mistral small 3.2 on a 4090 with images"),
     ("gemma-4-31b", "gemma 4 31b on 2x 4090 with images"), ("gemma-4-e4b", "gemma 4 e4b on a 3060 with images"),
     ("gemma-4-e2b", "젬마4 e2b 이미지도 3060에서 돌아가?")],
)  # fmt: skip
def test_a_measured_projector_buffer_is_in_the_total(preset: str, question: str) -> None:
    """The answer counts the measured warmup buffers beside the projector file (both of Gemma 4 E's contexts)."""
    (row,) = [r for r in MMPROJ_ROWS if preset in r["presets"]]
    measured = int((row["compute_buffer_mib"] + row.get("audio_compute_buffer_mib", 0)) * MIB)
    answer = ask(question, "en")
    assert answer["request"]["model"]["id"] == preset
    assert answer["estimate"]["vision_compute_bytes"] == measured
    assert answer["estimate"]["vision_bytes"] == load_catalog().models[preset].mmproj_bytes + measured
