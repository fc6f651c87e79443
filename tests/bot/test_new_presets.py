"""Questions naming the presets added for the models people ask about, in Korean and English."""

from __future__ import annotations

import pytest

from vramfit.bot.parser import parse
from vramfit.calc.presets import load_catalog

CATALOG = load_catalog()

QUESTIONS = [
    ("kimi k2 on 8x h200", "kimi-k2-instruct", "en"),
    ("키미 k2 8x h200에서 돌아가?", "kimi-k2-instruct", "ko"),
    ("deepseek v3.1 8x h200", "deepseek-v3.1", "en"),
    ("딥시크 v3.1 h200 8장", "deepseek-v3.1", "ko"),
    ("qwen3 coder 30b 32k 4090", "qwen3-coder-30b-a3b", "en"),
    ("큐웬3 코더 30b 4090에서 돼?", "qwen3-coder-30b-a3b", "ko"),
    ("qwen3 coder 480b on 8x h200", "qwen3-coder-480b-a35b", "en"),
    ("exaone 4 1.2b on a 3060", "exaone-4.0-1.2b", "en"),
    ("엑사원4 1.2b 3060에서 돌아가?", "exaone-4.0-1.2b", "ko"),
    ("devstral small 32k 4090", "devstral-small-2507-24b", "en"),
    ("데브스트랄 스몰 4090", "devstral-small-2507-24b", "ko"),
    ("command r7b 3060", "command-r7b-12-2024", "en"),
    ("커맨드 r7b 3060 되나요", "command-r7b-12-2024", "ko"),
    ("qwen3.5 9b 32k 3060", "qwen3.5-9b", "en"),
    ("qwen3.5:9b on a 3060", "qwen3.5-9b", "en"),
    ("큐웬3.5 9b 32k 3060에서 돌아가?", "qwen3.5-9b", "ko"),
    ("qwen3.5 2b 8k 3060", "qwen3.5-2b", "en"),
    ("qwen3.5:2b on a 3060", "qwen3.5-2b", "en"),
    ("큐웬 3.5 2b 3060에서 돌아가?", "qwen3.5-2b", "ko"),
    ("lfm2 1.2b 32k 3060", "lfm2-1.2b", "en"),
    ("lfm2:1.2b on a 3060", "lfm2-1.2b", "en"),
    ("리퀴드 lfm2 1.2b 3060에서 돼?", "lfm2-1.2b", "ko"),
    ("exaone 4.0 32b 32k 4090", "exaone-4.0-32b", "en"),
    ("exaone4 32b on a 4090", "exaone-4.0-32b", "en"),
    ("엑사원 4.0 32b 4090에서 돌아가?", "exaone-4.0-32b", "ko"),
    ("엑사원4 32b 4090 되나요", "exaone-4.0-32b", "ko"),
]


# Questions that named an existing preset before these were added and must keep their answer.
NOT_STOLEN = [
    ("exaone 32b 3090", "exaone-3.5-32b"),
    ("엑사원 32b 3090 두 개", "exaone-3.5-32b"),
    ("exaone 4 1.2b 3060", "exaone-4.0-1.2b"),
    ("lfm2 700m 3060", "lfm2-700m"),
    ("qwen3.5 4b 3060", "qwen3.5-4b"),
    ("큐웬3.5 27b 4090", "qwen3.5-27b"),
    ("qwen3 8b 3060", "qwen3-8b"),
]


@pytest.mark.parametrize(("question", "model"), NOT_STOLEN, ids=[q[0] for q in NOT_STOLEN])
def test_the_new_aliases_take_no_existing_question(question: str, model: str) -> None:
    assert parse(question, CATALOG).model == model


@pytest.mark.parametrize(("question", "model", "lang"), QUESTIONS, ids=[q[0] for q in QUESTIONS])
def test_a_question_names_the_new_preset(question: str, model: str, lang: str) -> None:
    parsed = parse(question, CATALOG)
    assert parsed.model == model
    assert parsed.lang == lang
    assert parsed.gpus, "the GPU was read too"


def _kv_bytes(question: str) -> int:
    import io
    import json

    from vramfit.bot.cli import run

    out = io.StringIO()
    assert run(["--json", question], out) == 0, out.getvalue()
    return int(json.loads(out.getvalue())["estimate"]["kv_cache_bytes"])


def test_kv_caches_of_new_presets_from_their_config_json() -> None:
    # Qwen3 Coder 30B-A3B: 48 layers x 4 KV heads x head_dim 128, K and V, f16 (2 bytes), 32,768 cells.
    assert _kv_bytes("qwen3 coder 30b 32k 4090") == 48 * 4 * 128 * 2 * 2 * 32768
    # Kimi K2 (MLA): one latent of kv_lora_rank 512 + qk_rope_head_dim 64 per token and layer, K only, 61 layers.
    assert _kv_bytes("kimi k2 8k on 8x h200") == (512 + 64) * 61 * 2 * 8192
    # EXAONE 4.0 1.2B: every layer full attention (layer_types), 30 x 8 x 64, K and V, 8,192 cells.
    assert _kv_bytes("exaone 4 1.2b 8k 3060") == 30 * 8 * 64 * 2 * 2 * 8192


GPU_QUESTIONS = [
    ("llama 3.3 70b on h20", "h20", 1),
    ("deepseek r1 8x mi355x", "mi355x", 8),
    ("gpt-oss 120b mi325x", "mi325x", 1),
    ("qwen3 32b arc pro b60", "arc-pro-b60", 1),
    ("라마3.1 70b rtx pro 5000에서 돌아가?", "rtx-pro-5000-blackwell", 1),
]


@pytest.mark.parametrize(("question", "gpu", "count"), GPU_QUESTIONS, ids=[q[0] for q in GPU_QUESTIONS])
def test_a_question_names_the_new_gpu(question: str, gpu: str, count: int) -> None:
    parsed = parse(question, CATALOG)
    assert [(c.gpu.id, c.count) for c in parsed.gpus] == [(gpu, count)]


@pytest.mark.parametrize(
    ("question", "gpu", "usable_gib"),
    [
        # AMD: "The AMD Ryzen AI Max+ 395 (128GB) processor with 96GB of Variable Graphics Memory".
        ("Ryzen AI Max+ 395 128gb llama 3.3 70b", "ryzen-ai-max-395-128gb", 96),
        ("스트릭스 헤일로에서 라마3.3 70b 돌아가?", "ryzen-ai-max-395-128gb", 96),
        # macOS lets Metal wire three quarters of a Mac's memory above 36 GB: 512 × 3/4.
        ("mac studio m3 ultra 512gb deepseek r1", "apple-m3-ultra-512gb", 384),
    ],
)
def test_unified_memory_machines_offer_their_gpu_share(question: str, gpu: str, usable_gib: int) -> None:
    import io
    import json

    from vramfit.bot.cli import run

    out = io.StringIO()
    assert run(["--json", question], out) == 0, out.getvalue()
    (fit,) = json.loads(out.getvalue())["fits"]
    assert fit["gpu"] == gpu
    assert fit["usable_bytes"] == usable_gib << 30
    assert fit["headroom_bytes"] == fit["usable_bytes"] - fit["total_bytes"]
