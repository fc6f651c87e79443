"""Hardware said in one breath, in either language, in any order: the GPUs, their count and the system RAM each
phrasing must give (written here by hand, never read from the code under test). A GPU's size right after its name is
the GPU's; a size after 램/RAM/DDR/메모리 is RAM; a machine named twice is one machine; a model's name never becomes
hardware ("MiniMax-M2" is no Apple M2)."""

from __future__ import annotations

import pytest

from vramfit.bot.parser import parse

GIB = 1 << 30

PHRASES: list[tuple[str, tuple[tuple[str, int], ...], int | None]] = [
    ("qwen3.5 35b a3b 4060ti 16gb 램 32기가 컨텍스트 32k 되나요", (("rtx-4060-ti-16gb", 1),), 32),
    ("3090 24gb 램 64gb gpt-oss-120b", (("rtx-3090", 1),), 64),
    ("qwen3 8b 16기가 4060ti에 램은 32", (("rtx-4060-ti-16gb", 1),), 32),
    ("qwen3 8b 2x 3090 24gb + 64gb ddr4", (("rtx-3090", 2),), 64),
    ("qwen3 8b 4x 5090 with 256gb ram", (("rtx-5090", 4),), 256),
    ("qwen3 32b m3 ultra 256gb", (("apple-m3-ultra-256gb", 1),), None),
    ("qwen3 32b 맥스튜디오 512기가", (("apple-m3-ultra-512gb", 1),), None),
    ("gpt-oss-120b on a Ryzen AI Max+ 395 (Strix Halo) 128GB", (("ryzen-ai-max-395-128gb", 1),), None),
    ("gpt-oss-120b on a Ryzen AI Max+ 395 (Strix Halo, 64GB)", (("ryzen-ai-max-395-64gb", 1),), None),
    ("qwen3 32b 스트릭스 할로 128", (("ryzen-ai-max-395-128gb", 1),), None),
    ("qwen3 32b dgx spark", (("dgx-spark", 1),), None),
    ("MiniMax-M2 on a mac studio 512gb", (("apple-m3-ultra-512gb", 1),), None),
    ("llama3 8b 3060 12gb with 32gb ram", (("rtx-3060-12gb", 1),), 32),
    ("llama3 8b 3060 8gb, 16gb ram", (("rtx-3060-8gb", 1),), 16),
    ("llama3 8b rtx 3060 12gb ram 64gb", (("rtx-3060-12gb", 1),), 64),
    ("llama3 8b 4090 and 64gb of ram", (("rtx-4090", 1),), 64),
    ("llama3 8b 4090 + 128gb ddr5", (("rtx-4090", 1),), 128),
    ("llama3 8b 2x4090 128gb ram", (("rtx-4090", 2),), 128),
    ("llama3 70b 3x 3090 and 96gb ram", (("rtx-3090", 3),), 96),
    ("llama3 8b 4060 ti 16gb 32gb ram", (("rtx-4060-ti-16gb", 1),), 32),
    ("llama3 8b 32gb ram 8gb vram", (("generic-8gb", 1),), 32),
    ("llama3 8b 3070 with 16 gb ram", (("rtx-3070", 1),), 16),
    ("llama3 8b 7900 xtx 64gb ram", (("rx-7900-xtx", 1),), 64),
    ("llama3 8b m2 max 64gb", (("apple-m2-max-64gb", 1),), None),
    ("llama3 8b m4 pro 48gb", (("apple-m4-pro-48gb", 1),), None),
    ("llama3 8b macbook pro m3 max 128gb", (("apple-m3-max-128gb", 1),), None),
    ("llama3 8b 5090 32gb ram 64gb ddr5-6000", (("rtx-5090", 1),), 64),
    ("llama3 8b on two 3090s with 128gb ram", (("rtx-3090", 2),), 128),
    ("llama3 8b 3060 12gb 64gb ddr4 3200", (("rtx-3060-12gb", 1),), 64),
    ("llama3 8b 3090 24gb, ram 64gb", (("rtx-3090", 1),), 64),
    ("llama3 8b 4070 super 12gb + 32gb ram", (("rtx-4070-super", 1),), 32),
    ("gpt-oss-120b 5090 ram 192gb", (("rtx-5090", 1),), 192),
    ("라마3 8b 3060 램 64기가", (("rtx-3060-12gb", 1),), 64),
    ("라마3 8b 3060 12기가 램 32기가", (("rtx-3060-12gb", 1),), 32),
    ("라마3 8b 3060 8기가에 램 16기가", (("rtx-3060-8gb", 1),), 16),
    ("라마3 8b 4090 두 장 램 128기가", (("rtx-4090", 2),), 128),
    ("라마3 8b 4090 2장에 램 128", (("rtx-4090", 2),), 128),
    ("라마3 8b 3090 24기가 램 64", (("rtx-3090", 1),), 64),
    ("라마3 8b 5090 램 96기가", (("rtx-5090", 1),), 96),
    ("라마3 8b 4060ti 16기가 램 32기가", (("rtx-4060-ti-16gb", 1),), 32),
    ("라마3 8b 4060ti 8기가 램은 16", (("rtx-4060-ti-8gb", 1),), 16),
    ("라마3 8b 램 64기가 3060", (("rtx-3060-12gb", 1),), 64),
    ("라마3 8b 램 32기가에 4070", (("rtx-4070", 1),), 32),
    ("라마3 8b 시스템 램 64기가 4090", (("rtx-4090", 1),), 64),
    ("라마3 8b 3060에 램 ddr4 64기가", (("rtx-3060-12gb", 1),), 64),
    ("라마3 8b 3090 2개 램 128기가", (("rtx-3090", 2),), 128),
    ("라마3 8b 맥미니 m4 pro 64기가", (("apple-m4-pro-64gb", 1),), None),
    ("라마3 8b 맥북 m3 max 128기가", (("apple-m3-max-128gb", 1),), None),
    ("라마3 8b 맥스튜디오 m2 울트라 192기가", (("apple-m2-ultra-192gb", 1),), None),
    ("라마3 8b 스트릭스 할로 128기가", (("ryzen-ai-max-395-128gb", 1),), None),
    ("라마3 8b 스트릭스 할로 64", (("ryzen-ai-max-395-64gb", 1),), None),
    ("라마3 8b 7900xtx 램 64", (("rx-7900-xtx", 1),), 64),
    ("라마3 8b 4090에 램 64기가 ddr5", (("rtx-4090", 1),), 64),
    ("라마3 8b 3060 12g 램32g", (("rtx-3060-12gb", 1),), 32),
    ("라마3 8b 3080 10기가 램 32기가", (("rtx-3080-10gb", 1),), 32),
    ("라마3 8b 4080 램 48기가", (("rtx-4080", 1),), 48),
    ("라마3 8b 4070ti 슈퍼 램 64기가", (("rtx-4070-ti-super", 1),), 64),
    ("라마3 8b 5060ti 16기가 램 32기가", (("rtx-5060-ti-16gb", 1),), 32),
    ("라마3 8b 3090 세 장 램 256기가", (("rtx-3090", 3),), 256),
    ("라마3 8b 디지엑스 스파크", (("dgx-spark", 1),), None),
    ("큐웬3 32b 4090 24기가 램 128기가 되나요", (("rtx-4090", 1),), 128),
    ("큐웬3 32b 3090 램 64 돌아가?", (("rtx-3090", 1),), 64),
    ("젬마3 27b 5090 32기가에 램 64기가", (("rtx-5090", 1),), 64),
    ("gpt-oss-120b 4090 하나에 램 128기가면?", (("rtx-4090", 1),), 128),
]


def test_the_table_is_half_korean_and_at_least_sixty() -> None:
    korean = [text for text, _, _ in PHRASES if any("\uac00" <= ch <= "\ud7a3" for ch in text)]
    assert len(PHRASES) >= 60 and len(korean) * 2 >= len(PHRASES)


@pytest.mark.parametrize(("text", "gpus", "ram_gb"), PHRASES, ids=[p[0] for p in PHRASES])
def test_hardware_in_one_breath(text: str, gpus: tuple[tuple[str, int], ...], ram_gb: int | None) -> None:
    parsed = parse(text)
    assert tuple((choice.gpu.id, choice.count) for choice in parsed.gpus) == gpus
    assert parsed.ram_bytes == (ram_gb * GIB if ram_gb is not None else None)
    assert parsed.model is not None and parsed.unparsed == ()
