"""vLLM: reserve a share of the card, load the weights, profile activations, give the rest to the KV cache.

vLLM's memory is a budget, not a function of context (vllm/v1/worker/gpu_worker.py,
``determine_available_memory``): ``KV pool = gpu_memory_utilization × memory − weights − activation peak −
non-torch memory``, per GPU with tensor parallelism. A request fits when the pool holds ``users`` sequences of
``context`` tokens (16-token blocks); vLLM refuses to start when it cannot hold one full-length sequence.

Constants, fitted to the llm-d H100 profiles in tests/data/groundtruth/measured.jsonl (vLLM 0.11):

* gpu_memory_utilization 0.9 (the engine default the issue asks for; newer releases use 0.92).
* activation peak ≈ 4.8 bytes × max_num_batched_tokens (8192) × vocabulary: the profile run's f32 logits and
  their sampling copies dominate. Llama 3.1 8B 4.70 GiB (measured 4.76), Qwen3-0.6B 5.56 (5.56), gpt-oss-20b 7.37
  (7.38), Llama 3.3 70B 4.70 (4.84).
* non-torch memory (CUDA context, cuBLAS, NCCL): 0.13 GiB at TP 1, 0.54 GiB at TP ≥ 2.
"""

from __future__ import annotations

from vramfit.calc.architecture import Architecture
from vramfit.calc.engines.profile import EngineProfile
from vramfit.calc.errors import UnsupportedArchitectureError
from vramfit.calc.fit import Verdict
from vramfit.calc.kv import naive_kv_bytes, pad
from vramfit.calc.request import Engine, GpuChoice, KvType, Request
from vramfit.calc.results import Estimate, Fit
from vramfit.calc.weights import model_weights

MIB = 1 << 20
GPU_MEMORY_UTILIZATION = (9, 10)
MAX_NUM_BATCHED_TOKENS = 8192
ACTIVATION_BYTES_PER_TOKEN_PER_VOCAB = 4.8
NON_TORCH_BYTES_TP1 = 133 * MIB
NON_TORCH_BYTES_TP = 553 * MIB
BLOCK_SIZE = 16


def kv_dtype_bytes(kv_type: KvType) -> int:
    """vLLM stores KV in the model dtype ("auto", 2 bytes) or fp8; llama.cpp block types map to fp8."""
    return 2 if kv_type in (KvType.F32, KvType.F16, KvType.BF16) else 1


def kv_bytes_per_token_per_gpu(arch: Architecture, kv_type: KvType, tp: int) -> int:
    """Full-attention page bytes per token on one GPU (vllm/v1/kv_cache_interface.py)."""
    size = kv_dtype_bytes(kv_type)
    total = 0
    for il, heads in enumerate(arch.n_kv_heads):
        if not heads:
            continue
        if arch.is_mla:
            total += arch.head_dim_k * size  # one latent, replicated on every rank
        else:
            head_k, head_v = arch.layer_head_dims(il)
            total += max(1, heads // tp) * (head_k + head_v) * size
    return total


def activation_bytes(arch: Architecture) -> int:
    return int(ACTIVATION_BYTES_PER_TOKEN_PER_VOCAB * MAX_NUM_BATCHED_TOKENS * arch.vocab_size)


def non_torch_bytes(tp: int) -> int:
    return NON_TORCH_BYTES_TP1 if tp == 1 else NON_TORCH_BYTES_TP


def _reserved_per_gpu(request: Request, choice: GpuChoice | None) -> int:
    if choice is None:
        return 0
    num, den = GPU_MEMORY_UTILIZATION
    return choice.gpu.memory_bytes * num // den


def models(arch: Architecture) -> bool:
    """False for architectures this profile does not model: vLLM sizes a hybrid model's Mamba/linear-attention
    state in its own page layout, which is not written here yet."""
    return not arch.recurrent_layers


def _modelled(arch: Architecture) -> Architecture:
    """The architecture, or an error for one whose memory this profile does not model (:func:`models`)."""
    if not models(arch):
        raise UnsupportedArchitectureError(
            f"vramfit's vLLM profile does not model the recurrent state of {arch.arch!r} yet; try llama.cpp",
            subject=arch.arch,
            field="engine",
        )
    return arch


def needed_kv_bytes(request: Request, tp: int) -> int:
    """KV for ``users`` sequences of ``context`` tokens, in whole blocks, summed over GPUs."""
    arch = _modelled(request.model.architecture)
    per_token = kv_bytes_per_token_per_gpu(arch, request.kv_cache, tp) * tp
    return request.users * pad(request.context, BLOCK_SIZE) * per_token


def estimate(request: Request, gpu_count: int | None = None, backend: str | None = None) -> Estimate:
    """Memory by component on ``gpu_count`` GPUs with tensor parallelism (``backend`` does not change it)."""
    tp = gpu_count if gpu_count is not None else (request.gpus[0].count if request.gpus else 1)
    choice = request.gpus[0] if request.gpus else None
    arch = request.model.architecture
    weights = model_weights(request.model, request.quant, Engine.VLLM)
    kv = needed_kv_bytes(request, tp)
    activation = activation_bytes(arch) * tp
    runtime = non_torch_bytes(tp) * tp
    reserved = _reserved_per_gpu(request, choice) * tp
    pool_tokens = None
    if choice is not None:
        pool_tokens = kv_pool_tokens(request, choice.gpu.memory_bytes, tp)
    return Estimate(
        file_bytes=weights.file_bytes,
        weights_bytes=weights.tensor_bytes,  # vLLM keeps the embeddings on the GPU too
        host_bytes=0,
        kv_cache_bytes=kv,
        kv_cache_naive_bytes=naive_kv_bytes(arch, request.context, request.users, request.kv_cache),
        compute_bytes=activation,
        runtime_bytes=runtime,
        total_bytes=weights.tensor_bytes + kv + activation + runtime,
        params=weights.params,
        bits_per_weight=round(weights.tensor_bytes * 8 / max(weights.params, 1), 3),
        kv_k_bytes=kv if arch.is_mla else kv // 2,
        kv_v_bytes=0 if arch.is_mla else kv - kv // 2,
        kv_cells=request.context * request.users,
        kv_swa_cells=0,
        kv_type_v=request.kv_cache.value,
        gpu_count=tp,
        vllm_reserved_bytes=reserved or None,
        vllm_kv_pool_tokens=pool_tokens,
    )


def kv_pool_tokens(request: Request, memory_bytes: int, tp: int) -> int:
    """Tokens the KV pool holds on ``tp`` GPUs of ``memory_bytes`` each (0 when weights do not fit)."""
    arch = _modelled(request.model.architecture)
    weights = model_weights(request.model, request.quant, Engine.VLLM)
    num, den = GPU_MEMORY_UTILIZATION
    budget = memory_bytes * num // den - weights.tensor_bytes // tp - activation_bytes(arch) - non_torch_bytes(tp)
    per_token = kv_bytes_per_token_per_gpu(arch, request.kv_cache, tp)
    if budget <= 0 or per_token <= 0:
        return 0
    return budget // per_token // BLOCK_SIZE * BLOCK_SIZE


def fit(request: Request, choice: GpuChoice, with_max_context: bool = True) -> Fit:
    """The verdict is the KV pool's: it holds every user's full context, one sequence (tight), or not one."""
    tp = choice.count
    est = estimate(request.model_copy(update={"gpus": (choice,)}), tp)
    pool = kv_pool_tokens(request, choice.gpu.memory_bytes, tp)
    wanted = request.users * pad(request.context, BLOCK_SIZE)
    n_layers = request.model.architecture.n_layers + 1
    if pool >= wanted:
        verdict = Verdict.FITS
    elif pool >= pad(request.context, BLOCK_SIZE):
        verdict = Verdict.TIGHT  # starts, but fewer users than asked can hold a full context at once
    else:
        verdict = Verdict.NO  # vLLM refuses: max_model_len exceeds what the KV cache can hold
    if request.reserved_bytes and choice.gpu.memory_bytes - request.reserved_bytes < _reserved_per_gpu(request, choice):
        # vLLM's start-up check (vllm/v1/worker/gpu_worker.py): "Free memory on device ... is less than desired GPU
        # memory utilization": what other programs hold must leave gpu_memory_utilization x the card free.
        verdict = Verdict.NO
    reserved = _reserved_per_gpu(request, choice) * tp
    max_ctx = None
    if with_max_context:
        max_ctx = min(pool // request.users // BLOCK_SIZE * BLOCK_SIZE, request.model.architecture.context_limit)
        max_ctx = max_ctx or None
    return Fit(
        gpu=choice.gpu.id,
        name=choice.gpu.name,
        count=tp,
        memory_bytes=choice.gpu.memory_bytes,
        usable_bytes=reserved,
        verdict=verdict,
        gpu_layers=n_layers if verdict != Verdict.NO else 0,
        layers=n_layers,
        headroom_bytes=reserved - est.total_bytes,
        total_bytes=est.total_bytes,
        max_context=max_ctx,
        tokens_per_second=None,
    )


def total_bytes(request: Request, gpu_count: int, backend: str) -> int:
    return estimate(request, gpu_count, backend).total_bytes


def runs_on_gpu(request: Request, choice: GpuChoice) -> bool:
    """True when the KV pool holds one full-length sequence per user."""
    return fit(request, choice, False).verdict == Verdict.FITS


PROFILE = EngineProfile(
    estimate=estimate,
    total_bytes=total_bytes,
    fit=fit,
    runs_on_gpu=runs_on_gpu,
    fits_with_margin=runs_on_gpu,
    models=models,
)
