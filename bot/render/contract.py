"""The JSON contract of ``vram --json`` (docs/cli-json.md): stable field names, bytes as integers."""

from __future__ import annotations

from typing import Any

from vramfit.bot.answering.commands import card_commands
from vramfit.bot.answering.resolve import CompareResult, FitResult, IntentResult, SolveResult
from vramfit.bot.render.errors import error_repos
from vramfit.calc.errors import VramfitError
from vramfit.calc.kv import naive_heads_and_dim
from vramfit.calc.model_limits import beyond_trained_context
from vramfit.calc.ram_speed import RamSpeed
from vramfit.calc.request import Request
from vramfit.calc.results import Answer, Fit
from vramfit.calc.server_caches import ServerCaches
from vramfit.calc.weights import model_weights  # the parameter count comes from the tensor list

CONTRACT_VERSION = 1


def request_json(request: Request, assumed: tuple[str, ...] = (), intent: str = "fit") -> dict[str, Any]:
    arch = request.model.architecture
    kv_heads, head_dim = naive_heads_and_dim(arch)
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
            "context_limit": arch.context_limit,
            "source": request.model.source,
            **_checkpoint_json(request),
            **({"mmproj": request.model.mmproj} if request.model.mmproj else {}),
            **({"vision_encoder": True} if request.model.vision_encoder else {}),
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
        "kv_unified": request.kv_unified,
        "swa_full": request.swa_full,
        "n_batch": request.n_batch,
        "ram_bytes": request.ram_bytes,
        "ram_speed": _ram_speed_json(request.ram_speed),
        "reserved_bytes": request.reserved_bytes,
        "images": request.images,
        "mtp": request.mtp,
        **(
            {"draft": {"id": request.draft.id, "name": request.draft.name, "quant": request.draft_quant,
                       "kv_cache": request.draft_kv_cache.value, "draft_max": request.draft_max}}
            if request.draft is not None
            else {}
        ),
        "runner": request.runner,
        "checkpoint_kind": request.checkpoint_kind,
        "intent": intent,
        "assumed": list(assumed),
    }


def _checkpoint_json(request: Request) -> dict[str, Any]:
    """``request.model.checkpoint`` for a model read from a safetensors repo (docs/cli-json.md), else nothing."""
    checkpoint = request.model.checkpoint
    if checkpoint is None:
        return {}
    return {
        "checkpoint": {
            "file_type": checkpoint.file_type,
            "quant_method": checkpoint.quant_method,
            "params": checkpoint.params,
            "tensor_bytes": checkpoint.tensor_bytes,
            "tensors": checkpoint.tensor_count,
            "dtype_bytes": dict(sorted(checkpoint.dtype_bytes.items())),
            "dtype_params": dict(sorted(checkpoint.dtype_params.items())),
        }
    }


def fit_json(f: Fit) -> dict[str, Any]:
    return {
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
        "host_bytes": f.host_bytes,
        "ram_bytes": f.ram_bytes,
        "ram_usable_bytes": f.ram_usable_bytes,
        "ram_fits": f.ram_fits,
        "server_caches": server_caches_json(f.server_caches),
        "expert_offload": _expert_offload_json(f),
        "decode": f.decode.model_dump(mode="json") if f.decode is not None else None,
        "prefill": f.prefill.model_dump(mode="json") if f.prefill is not None else None,
        "pcie_gbs": f.pcie_gbs,
        "pcie_assumed": f.pcie_assumed,
        "ram_speed": _ram_speed_json(f.ram_speed),
        "ram_speed_assumed": f.ram_speed_assumed,
        "fit_default": _fit_default_json(f),
    }


def _fit_default_json(f: Fit) -> dict[str, Any] | None:
    """What llama-server's --fit picks for the plain command (docs/cli-json.md), or None."""
    choice = f.fit_default
    if choice is None:
        return None
    return {
        "command": "llama-server -m MODEL",
        "trained_context": choice.trained_context,
        "context": choice.context,
        "gpu_layers": choice.gpu_layers,
        "n_cpu_moe": choice.n_cpu_moe,
        "free_bytes": choice.free_bytes,
        "changed": choice.changed,
        "fits": choice.fits,
    }


def server_caches_json(caches: ServerCaches | None) -> dict[str, Any] | None:
    """llama-server's host caches as docs/cli-json.md documents them, or None (Ollama's runner, vLLM)."""
    if caches is None:
        return None
    return {
        "checkpoint_bytes": caches.checkpoint_bytes,
        "ctx_checkpoints": caches.ctx_checkpoints,
        "slots": caches.slots,
        "checkpoints_bytes": caches.checkpoints_bytes,
        "cache_ram_bytes": caches.cache_ram_bytes,
        "total_bytes": caches.total_bytes,
    }


def _expert_offload_json(f: Fit) -> dict[str, Any] | None:
    if f.expert_offload is None:
        return None
    plan: dict[str, Any] = f.expert_offload.model_dump(mode="json", exclude={"server_caches"})
    plan["server_caches"] = server_caches_json(f.expert_offload.server_caches)
    return plan


def _ram_speed_json(speed: RamSpeed | None) -> dict[str, Any] | None:
    """``{"kind": "ddr5", "mts": 5600, "channels": 2, "bandwidth_gbs": 89.6}`` (docs/cli-json.md), or None."""
    if speed is None:
        return None
    return {"kind": speed.kind, "mts": speed.mts, "channels": speed.channels, "bandwidth_gbs": speed.bandwidth_gbs}


def answer_json(answer: Answer, lang: str, assumed: tuple[str, ...] = (), intent: str = "fit") -> dict[str, Any]:
    est = answer.estimate
    estimate: dict[str, Any] = est.model_dump(exclude_none=True)
    if answer.request.model.mmproj:  # the vision projector, not in total_bytes (docs/cli-json.md)
        estimate["mmproj_bytes"] = answer.request.model.mmproj_bytes
    data: dict[str, Any] = {
        "lang": lang,
        "request": request_json(answer.request, assumed, intent),
        "estimate": estimate,
        "fits": [fit_json(f) for f in answer.fits],
    }
    request = answer.request
    if commands := card_commands(request, answer.fits[0]) if request.gpus and answer.fits else {}:
        data["commands"] = commands  # what the card prints, by program (docs/cli-json.md)
    if beyond_trained_context(answer.request.model.architecture, answer.request.context):
        data["warnings"] = ["beyond_trained_context"]
    return data


def result_json(result: IntentResult, lang: str, assumed: tuple[str, ...] = ()) -> dict[str, Any]:
    """The JSON answer for any intent: the fit contract, plus one key for the intent's own result."""
    if isinstance(result, FitResult):
        data = answer_json(result.answer, lang, assumed, "fit")
        if result.engines:
            data["engines"] = [answer_json(a, lang, assumed, "fit") for a in result.engines]
        return data
    if isinstance(result, SolveResult):
        data = answer_json(result.answer, lang, assumed, result.intent)
        data["solution"] = {
            "kind": result.intent,
            "value": result.value,
            "gpu": result.gpu.gpu.id,
            "count": result.gpu.count,
        }
        return data
    if isinstance(result, CompareResult):
        comparison = result.comparison
        return {
            "lang": lang,
            "request": request_json(result.a, assumed, "compare"),
            "estimate": comparison.a.model_dump(exclude_none=True),
            "fits": [fit_json(comparison.fit_a)] if comparison.fit_a is not None else [],
            "compare": {
                "request": request_json(result.b, assumed, "compare"),
                "estimate": comparison.b.model_dump(exclude_none=True),
                "fits": [fit_json(comparison.fit_b)] if comparison.fit_b is not None else [],
                "kv_bytes_per_token": [comparison.kv_per_token_a, comparison.kv_per_token_b],
                "reasons": [r.model_dump(mode="json") for r in comparison.reasons],
            },
        }
    request = request_json(result.template, assumed, "what_fits")
    request["model"] = None
    request["gpus"] = [
        {
            "id": result.gpu.gpu.id,
            "name": result.gpu.gpu.name,
            "count": result.gpu.count,
            "memory_bytes": result.gpu.gpu.memory_bytes,
        }
    ]
    return {
        "lang": lang,
        "request": request,
        "what_fits": [
            {
                "model": m.model,
                "name": m.name,
                "family": m.family,
                "params": m.params,
                "quant": m.quant,
                "verdict": m.fit.verdict.value,
                "total_bytes": m.fit.total_bytes,
                "headroom_bytes": m.fit.headroom_bytes,
            }
            for m in result.models
        ],
    }


def error_json(error: VramfitError, message: str) -> dict[str, Any]:
    data: dict[str, Any] = {"code": error.code, "message": message, "suggestions": list(error.suggestions)}
    if repos := error_repos(error):  # an unknown model: Hub repos that may be it (added 2026-12)
        data["repos"] = repos
    return {"error": data}
