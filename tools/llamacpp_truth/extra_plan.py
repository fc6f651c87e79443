#!/usr/bin/env python3
"""run_truth.py with extra KV-formula checks for Gemma 4 E4B instead of the wide plan's base configs
(n_ctx padding, n_ubatch, FA off with streams, q4_0 / mixed K/V types, the training context, a tiny context).
usage: same arguments as run_truth.py with --plan wide --sweep-quant NONE"""
import run_truth

EXTRA = [
    dict(n_ctx=5000, type_k="f16", type_v="f16", flash_attn=True),
    dict(n_ctx=300, type_k="f16", type_v="f16", flash_attn=False),
    dict(n_ctx=8192, type_k="f16", type_v="f16", flash_attn=False, n_seq=4, kv_unified=False),
    dict(n_ctx=8192, type_k="f16", type_v="f16", flash_attn=False, n_seq=3, kv_unified=True),
    dict(n_ctx=8192, type_k="f16", type_v="f16", flash_attn=True, n_batch=1024, n_ubatch=1024),
    dict(n_ctx=8192, type_k="q4_0", type_v="q4_0", flash_attn=True),
    dict(n_ctx=8192, type_k="q8_0", type_v="f16", flash_attn=True),
    dict(n_ctx=10000, type_k="f16", type_v="f16", flash_attn=True, n_seq=3, kv_unified=False),
    dict(n_ctx=131072, type_k="f16", type_v="f16", flash_attn=True),
]
run_truth.plan_wide_base = lambda ctx_train: EXTRA
if __name__ == "__main__":
    run_truth.main()
