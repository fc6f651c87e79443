#!/usr/bin/env python3
"""Quantize a GGUF with llama.cpp's own quantizer (llama_model_quantize) and print
a JSON line with the quantizer's log.

usage: quantize_worker.py IN.gguf OUT.gguf QUANT_NAME [NTHREAD]
"""

import contextlib
import ctypes
import json
import sys

import llama_cpp as L

FTYPES = {
    "F16": L.LLAMA_FTYPE_MOSTLY_F16,
    "Q8_0": L.LLAMA_FTYPE_MOSTLY_Q8_0,
    "Q6_K": L.LLAMA_FTYPE_MOSTLY_Q6_K,
    "Q5_K_M": L.LLAMA_FTYPE_MOSTLY_Q5_K_M,
    "Q4_K_M": L.LLAMA_FTYPE_MOSTLY_Q4_K_M,
    "Q4_0": L.LLAMA_FTYPE_MOSTLY_Q4_0,
    "Q3_K_M": L.LLAMA_FTYPE_MOSTLY_Q3_K_M,
    "Q2_K": L.LLAMA_FTYPE_MOSTLY_Q2_K,
    "IQ4_XS": L.LLAMA_FTYPE_MOSTLY_IQ4_XS,
    # llama-quantize's MXFP4_MOE: 3-D expert tensors MXFP4, everything else Q8_0 (the gpt-oss release form)
    "MXFP4_MOE": getattr(L, "LLAMA_FTYPE_MOSTLY_MXFP4_MOE", 38),
}

LOG = []


@L.llama_log_callback
def _cb(level, text, user_data):
    with contextlib.suppress(Exception):
        LOG.append(text.decode("utf-8", "replace"))


def main():
    src, dst, q = sys.argv[1], sys.argv[2], sys.argv[3]
    nthread = int(sys.argv[4]) if len(sys.argv) > 4 else 2
    L.llama_log_set(_cb, ctypes.c_void_p(0))
    L.llama_backend_init()
    p = L.llama_model_quantize_default_params()
    p.nthread = nthread
    p.ftype = FTYPES[q]
    rc = L.llama_model_quantize(src.encode(), dst.encode(), ctypes.byref(p))
    log = "".join(LOG)
    print(json.dumps({"rc": int(rc), "quant": q, "log": log}))


if __name__ == "__main__":
    main()
