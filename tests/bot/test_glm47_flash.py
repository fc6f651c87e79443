"""GLM-4.7-Flash (glm4_moe_lite), which llama.cpp converts as deepseek2: MLA caches one latent of kv_lora_rank +
qk_rope_head_dim per token in each of the 47 trunk layers; the MTP block the converter appends is in the file (and
its parameter count) but neither loaded nor cached (conversion/glm.py Glm4MoeLiteModel, src/models/deepseek2.cpp at
0c1e57098). Worked out here from the committed config, checked against llama.cpp's measured load."""

from __future__ import annotations

import json
from typing import Any

import pytest

from tests.bot.cli_json import answer as ask
from tests.groundtruth import DATA, MIB, llamacpp_rows
from vramfit.calc.file_types import FileType
from vramfit.calc.hf_config import from_hf_config
from vramfit.calc.weights import weight_bytes

CONFIG: dict[str, Any] = json.loads((DATA / "configs" / "GLM-4.7-Flash.json").read_text(encoding="utf-8"))
ROWS = [row for row in llamacpp_rows() if row["arch_model"] == "GLM-4.7-Flash"]


def _kv_by_hand(context: int) -> int:
    """47 trunk layers × (kv_lora_rank 512 + rope 64) f16 values per token, K only (MLA)."""
    return CONFIG["num_hidden_layers"] * context * (CONFIG["kv_lora_rank"] + CONFIG["qk_rope_head_dim"]) * 2


@pytest.mark.parametrize(
    ("question", "lang", "context"),
    [("glm 4.7 flash 32k on a 4090", "en", 32768), ("지엘엠 4.7 플래시 32k 4090에서 돌아가?", "ko", 32768)],
)
def test_the_latent_of_the_trunk_layers_is_cached(question: str, lang: str, context: int) -> None:
    answer = ask(question, lang)
    assert answer["request"]["model"]["id"] == "glm-4.7-flash"
    assert answer["estimate"]["kv_cache_bytes"] == _kv_by_hand(context) == 1692 * MIB  # llama.cpp: 1692.00 MiB


def test_the_mtp_block_is_in_the_file_but_not_loaded() -> None:
    arch = from_hf_config(CONFIG)
    assert (arch.arch, arch.n_layers, arch.nextn_layers) == ("deepseek2", 47, 1)
    assert len(ROWS) == 13
    q4 = next(row for row in ROWS if row["quant"] == "Q4_K_M")
    weights = weight_bytes(arch, FileType.Q4_K_M)
    # llama.cpp's mapped weights (17,283.67 MiB) are the file's tensors less blk.47, the MTP block.
    assert round((weights.gpu_bytes + weights.host_bytes) / MIB, 2) == 17283.67  # untied: no second head
    assert q4["weights_buffers_mib"] == {"CPU_Mapped": 17283.67}
    assert weights.tensor_bytes == q4["model_size_api_bytes"] and q4["model_n_params_api"] == 31_221_488_576
