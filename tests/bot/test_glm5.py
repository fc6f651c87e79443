"""GLM-5, GLM-5.1 and GLM-5.2 end to end (glm_moe_dsa, llama.cpp's glm-dsa): DeepSeek V3.2's MLA latent cache plus
the DSA lightning indexer's keys (llama_kv_cache_dsa, one head of index_head_dim per token, K only), but only in the
layers whose indexer is full (GLM-5.2's indexer_types; every layer of GLM-5 and 5.1), and the NextN/MTP block in
the file but not loaded. Expected numbers are worked out here from the committed config.json copies and
llama.cpp's rules (src/models/glm-dsa.cpp, src/llama-model.cpp create_memory, src/llama-kv-cache-dsa.cpp at
0c1e57098)."""

from __future__ import annotations

from tests.groundtruth import llamacpp_rows


def test_the_measured_glm52_copy_caches_indexer_keys_in_its_full_layers_only() -> None:
    """llama.cpp's own log of the 7-layer GLM-5.2 copy (full, full, full, shared, shared, shared, full): the latent
    cache has 7 layers, the indexer cache 4."""
    rows = [r for r in llamacpp_rows() if r["arch_model"] == "GLM-5.2-7L16E"]
    assert rows
    for row in rows:
        latent, indexer = row["kv_caches"]
        assert (latent["layers"], indexer["layers"]) == (7, 4)
