"""The JSON contract of ``vram --json`` (shared/spec/cli-json.md): stable field names, bytes as integers."""

from __future__ import annotations

from typing import Any

from calc.errors import VramfitError
from calc.estimate import Answer
from calc.kv import naive_heads_and_dim
from calc.request import Request

CONTRACT_VERSION = 1


def request_json(request: Request, assumed: tuple[str, ...] = (), intent: str = "fit") -> dict[str, Any]:
    arch = request.model.architecture
    kv_heads, head_dim = naive_heads_and_dim(arch)
    from calc.estimate import model_weights  # the parameter count comes from the tensor list

    params = model_weights(request.model, request.quant).params
    return {
        "model": {
            "id": request.model.id,
            "name": request.model.name,
            "params": params,
            "layers": arch.n_layers,
            "kv_heads": kv_heads,
            "head_dim": head_dim,
            "context_length": arch.context_length,
            "source": request.model.source,
        },
        "quant": request.quant,
        "context": request.context,
        "users": request.users,
        "kv_cache": request.kv_cache.value,
        "engine": request.engine.value,
        "flash_attn": request.flash_attn_effective,
        "gpus": [
            {"id": c.gpu.id, "name": c.gpu.name, "count": c.count, "memory_bytes": c.gpu.memory_bytes}
            for c in request.gpus
        ],
        "n_ubatch": request.n_ubatch,
        "n_batch": request.n_batch,
        "intent": intent,
        "assumed": list(assumed),
    }


def answer_json(answer: Answer, lang: str, assumed: tuple[str, ...] = (), intent: str = "fit") -> dict[str, Any]:
    est = answer.estimate
    estimate: dict[str, Any] = est.model_dump(exclude_none=True)
    fits = [
        {
            "gpu": f.gpu,
            "name": f.name,
            "count": f.count,
            "memory_bytes": f.memory_bytes,
            "usable_bytes": f.usable_bytes,
            "verdict": f.verdict.value,
            "gpu_layers": f.gpu_layers,
            "layers": f.layers,
            "headroom_bytes": f.headroom_bytes,
            "total_bytes": f.total_bytes,
            "max_context": f.max_context,
            "tokens_per_second": f.tokens_per_second,
        }
        for f in answer.fits
    ]
    return {
        "lang": lang,
        "request": request_json(answer.request, assumed, intent),
        "estimate": estimate,
        "fits": fits,
    }


def error_json(error: VramfitError, message: str) -> dict[str, Any]:
    return {"error": {"code": error.code, "message": message, "suggestions": list(error.suggestions)}}
