"""llama.cpp's memory: weights as its quantizer lays them out, the KV cache as ``llama_kv_cache`` allocates it, the
recurrent state of hybrid models as ``llama_memory_recurrent`` does, the CUDA compute buffers and runtime, on whole
or partly offloaded GPUs.

The rules themselves live one concept a module (:mod:`calc.kv`, :mod:`calc.recurrent`, :mod:`calc.compute`,
:mod:`calc.runtime`, :mod:`calc.fit`, :mod:`calc.weights`); this profile adds them up per request and GPU choice,
and caches the GPU-independent parts, since the solvers probe one request shape many times.
"""

from __future__ import annotations

import threading
from functools import lru_cache
from typing import NamedTuple

from vramfit.calc.architecture import Architecture
from vramfit.calc.attention_flops import attention_flops_per_token
from vramfit.calc.compute import (
    SERVER_AUTO_SLOTS,
    ComputeBuffers,
    compute_buffers,
    flash_attn_reserved_bytes,
    offloaded_compute_bytes,
    output_stage_bytes,
    server_outputs,
)
from vramfit.calc.engines.profile import EngineProfile
from vramfit.calc.expert_offload import expert_layers, smallest_expert_split
from vramfit.calc.families import family_of
from vramfit.calc.fit import Verdict, layers_that_fit, tight_margin, whole_verdict
from vramfit.calc.fit_params import (
    FIT_MIN_CONTEXT,
    FIT_TARGET_BYTES,
    FitDefault,
    fitted_context,
)
from vramfit.calc.gpu import Gpu, Segment, Vendor
from vramfit.calc.host_memory import ASSUMED_RAM_BYTES, host_bytes, usable_ram
from vramfit.calc.kv import KvCache, kv_cache, naive_kv_bytes
from vramfit.calc.ram_speed import ASSUMED_RAM_SPEED
from vramfit.calc.recurrent import recurrent_state
from vramfit.calc.request import Engine, GpuChoice, KvType, Request
from vramfit.calc.results import DecodeEstimate, Estimate, ExpertOffload, Fit
from vramfit.calc.runtime import runtime_bytes
from vramfit.calc.search import largest_context
from vramfit.calc.server_caches import ServerCaches, checkpoint_bytes, server_caches
from vramfit.calc.server_graph import sized as server_graph_sized
from vramfit.calc.speed import (
    BytesPerToken,
    DecodeSpeed,
    RoutedExperts,
    active_bytes,
    decode_speed,
    streamed_prefill_speed,
)
from vramfit.calc.weights import model_weights

# architecture, context, users, KV type, flash attention, n_ubatch, unified KV, full-size SWA cache
_KvShape = tuple[Architecture, int, int, KvType, bool, int, bool, bool]


def _kv_shape(request: Request) -> _KvShape:
    """What of a request the KV cache depends on, in :func:`_kv_cached`'s order (and part of :func:`_parts`' key)."""
    return (
        request.model.architecture,
        request.context,
        request.users,
        request.kv_cache,
        request.flash_attn_effective,
        request.n_ubatch,
        request.kv_unified,
        request.swa_full,
    )


def request_kv(request: Request) -> KvCache:
    return _kv_cached(*_kv_shape(request))


@lru_cache(maxsize=1024)  # bounded: the solvers probe many one-off contexts
def _kv_cached(
    arch: Architecture,
    context: int,
    users: int,
    kv: KvType,
    flash_attn: bool,
    n_ubatch: int,
    unified: bool,
    swa_full: bool,
) -> KvCache:
    """The KV cache does not depend on the weight format: "what fits" and "best quant" try several formats of one
    request, and share this."""
    return kv_cache(
        arch, context, users, kv, flash_attn=flash_attn, n_ubatch=n_ubatch, unified=unified, swa_full=swa_full
    )


class _Parts:
    """The GPU-independent pieces of a llama.cpp footprint, computed once per request shape."""

    def __init__(self, request: Request) -> None:
        self.arch = request.model.architecture
        self.weights = model_weights(request.model, request.quant)
        self.kv = request_kv(request)
        self.state = recurrent_state(self.arch, request.users)
        self.naive_kv = naive_kv_bytes(self.arch, request.context, request.users, request.kv_cache)
        self.per_layer = tuple(
            w + k + r
            for w, k, r in zip(self.weights.layer_bytes, self.kv.layer_bytes, self.state.layer_bytes, strict=True)
        )
        self.flash_attn = request.flash_attn_effective
        self.n_ubatch = request.n_ubatch
        # llama-server reserves one output a slot (calc.compute.server_outputs); where its b11434 graph is sized
        # (calc.server_graph.sized) the buffer is that graph's, elsewhere the library default's (every token's), as
        # for Ollama's runner and for a log of a build before the limit (n_outputs_max 0)
        drafting = request.draft_max if (request.draft or request.mtp) else 0
        outputs = server_outputs(request.users, drafting) if request.n_outputs_max is None else request.n_outputs_max
        limited = server_graph_sized(self.arch) and request.runner != "ollama" and outputs > 0
        self.n_outputs: int | None = outputs if limited else None
        # llama-server's host caches (calc.server_caches); Ollama's runner keeps neither
        self.checkpoint: int | None = None
        if request.runner != "ollama":
            self.checkpoint = checkpoint_bytes(self.arch, self.kv, self.state, users=request.users,
                                               swa_full=request.swa_full, context=request.context)  # fmt: skip
        self.users = request.users
        self.ram_speed = request.ram_speed or ASSUMED_RAM_SPEED
        self.ram_speed_assumed = request.ram_speed is None
        # The answer's prompt is the context asked for, read from an empty cache (its time to first token).
        self.prompt_attention_flops = attention_flops_per_token(self.arch, request.context, n_ubatch=request.n_ubatch)
        self._compute: dict[tuple[int, bool, int], ComputeBuffers] = {}

    def flash_copy(self, backend: str) -> int:
        """What the backend's flash attention reserves beside its output (calc.compute.flash_attn_reserved_bytes)."""
        return flash_attn_reserved_bytes(self.arch, self.kv, backend, self.n_ubatch)

    def compute(self, gpu_count: int, output_on_gpu: bool = True, backend: str = "cuda") -> ComputeBuffers:
        dequant = self.flash_copy(backend)
        key = (gpu_count, output_on_gpu, dequant)
        if key not in self._compute:
            self._compute[key] = compute_buffers(
                self.arch,
                self.kv.full_cells,
                n_ubatch=self.n_ubatch,
                flash_attn=self.flash_attn,
                gpu_count=gpu_count,
                output_on_gpu=output_on_gpu,
                flash_attn_copy_bytes=dequant,
                n_outputs=self.n_outputs,
                cache=self.kv,
                n_seqs=self.users,
            )
        return self._compute[key]

    def offloaded_compute(self, *, cpu_layers: bool, cpu_experts: bool, backend: str = "cuda") -> int:
        """The GPU's compute buffer (one GPU) with layers, or routed experts, left on the CPU
        (:func:`calc.compute.offloaded_compute_bytes`)."""
        return offloaded_compute_bytes(
            self.arch,
            self.kv.full_cells,
            n_ubatch=self.n_ubatch,
            flash_attn=self.flash_attn,
            cpu_kv_layer_bytes=max(self.kv.layer_bytes, default=0) if cpu_layers else 0,
            output_on_gpu=not cpu_layers,
            output_weight_bytes=self.weights.output_bytes,
            cpu_expert_tensor_bytes=self.weights.largest_expert_tensor_bytes if cpu_experts else 0,
            flash_attn_copy_bytes=self.flash_copy(backend),
        )


_PARTS_CACHE: dict[tuple[object, ...], _Parts] = {}
_PARTS_CACHE_SIZE = 512
_PARTS_LOCK = threading.Lock()  # the bot calls the calculator from several worker threads


def _parts(request: Request) -> _Parts:
    gguf = id(request.model.gguf) if request.model.gguf is not None else None
    # the KV cache's, the weights', the speed's, and what sets the outputs the compute buffer reserves
    outputs = (request.n_outputs_max, request.runner, bool(request.draft or request.mtp), request.draft_max)
    key = (*_kv_shape(request), gguf, request.quant, request.ram_speed, *outputs)
    with _PARTS_LOCK:
        parts = _PARTS_CACHE.get(key)
        if parts is None:
            if len(_PARTS_CACHE) >= _PARTS_CACHE_SIZE:
                _PARTS_CACHE.pop(next(iter(_PARTS_CACHE)))
            parts = _PARTS_CACHE[key] = _Parts(request)
    return parts


def _gpu_backend(request: Request) -> str:
    return request.gpus[0].gpu.backend if request.gpus else "cuda"


def estimate(request: Request, gpu_count: int | None = None, backend: str | None = None) -> Estimate:
    """Memory by component for ``gpu_count`` devices (default: the first named GPU's count, else 1)."""
    count = gpu_count if gpu_count is not None else (request.gpus[0].count if request.gpus else 1)
    backend = backend or _gpu_backend(request)
    parts = _parts(request)
    weights, kv = parts.weights, parts.kv
    compute = parts.compute(count, backend=backend)
    runtime = runtime_bytes(backend, count)
    vision = vision_bytes(request)
    draft = draft_parts(request, count, backend)
    mtp = mtp_bytes(request, count, backend)
    total = weights.gpu_bytes + kv.total_bytes + parts.state.total_bytes + compute.gpu_bytes + runtime + vision
    total += draft.total + mtp
    return Estimate(
        file_bytes=weights.file_bytes,
        weights_bytes=weights.gpu_bytes,
        host_bytes=weights.host_bytes,
        kv_cache_bytes=kv.total_bytes,
        kv_cache_naive_bytes=parts.naive_kv,
        compute_bytes=compute.gpu_bytes,
        runtime_bytes=runtime,
        total_bytes=total,
        params=weights.params,
        bits_per_weight=round(weights.tensor_bytes * 8 / max(weights.params, 1), 3),
        kv_k_bytes=kv.k_bytes,
        kv_v_bytes=kv.v_bytes,
        kv_cells=kv.full_cells,
        kv_swa_cells=kv.swa_cells,
        kv_type_v=kv.type_v.value,
        gpu_count=count,
        recurrent_state_bytes=parts.state.total_bytes,
        effective_params=weights.params - parts.arch.embedding_table_params
        if parts.arch.per_layer_input_size
        else None,
        vision_bytes=vision,
        vision_compute_bytes=request.model.mmproj_compute_bytes if vision else 0,
        draft_bytes=draft.total,
        mtp_bytes=mtp,
        mtp_head_bytes=mtp_cost(request, count, backend),
        flash_attn_copy_bytes=compute.flash_attn_copy_bytes,
        draft_weights_bytes=draft.weights,
        draft_kv_bytes=draft.kv,
        draft_compute_bytes=draft.compute,
    )


class DraftParts(NamedTuple):
    """A draft model's share of the GPUs: weights, KV cache (with any recurrent state), compute buffer."""

    weights: int = 0
    kv: int = 0
    compute: int = 0

    @property
    def total(self) -> int:
        return self.weights + self.kv + self.compute


def draft_request(request: Request) -> Request | None:
    """The draft model's own load as llama.cpp 0c1e57098 makes it, or None without one.

    common/speculative.cpp common_base_params_to_speculative copies the main params (flash attention, n_batch,
    n_ubatch, n_parallel as n_seq_max, kv_unified, swa_full) and takes the draft's own model, -ngld (default -1: every
    layer on the GPU) and -ctkd/-ctvd (default f16, common.h); common_speculative_init_result gives its one context,
    shared by every slot, ``cparams.n_ctx = llama_n_ctx(ctx_tgt)``: the main context's whole size. So the draft holds
    as many cells, in as many streams, as the main cache."""
    if request.draft is None:
        return None
    return request.model_copy(
        update={
            "model": request.draft,
            "quant": request.draft_quant,
            "kv_cache": request.draft_kv_cache,
            "draft": None,
            "images": False,
        }
    )


def mtp_usable(request: Request) -> bool:
    """Whether llama.cpp 0c1e57098 can draft with this file's own MTP blocks: the file carries them and the
    architecture builds an MTP graph (src/models/<arch>.cpp, LLM_GRAPH_TYPE_DECODER_MTP)."""
    arch = request.model.architecture
    return arch.nextn_layers > 0 and family_of(arch.arch).mtp_graph


def mtp_bytes(request: Request, gpu_count: int, backend: str = "cuda") -> int:
    """What ``--spec-type draft-mtp`` adds, as llama.cpp 0c1e57098 allocates it (measured: llamacpp_draft.jsonl):
    the MTP blocks, which load_mtp brings in (skipped otherwise, TENSOR_SKIP); a second context on the same weights
    whose cache holds only those layers, for the main context's whole size, f16 unless -ctkd/-ctvd
    (common/speculative.cpp); the main context's recurrent state kept 1 + n_rs_seq times where the architecture rolls
    it back (llm_arch_supports_rs_rollback; n_rs_seq = --spec-draft-n-max, common.h need_n_rs_seq); and the MTP
    context's compute buffer, taken as the main context's (the same graph reserve for one micro-batch and the
    output head: 521.02 MiB beside 521.02 on CPU for Qwen3.5 0.8B at 32K)."""
    return mtp_cost(request, gpu_count, backend) if request.mtp else 0


def mtp_cost(request: Request, gpu_count: int, backend: str = "cuda") -> int:
    """:func:`mtp_bytes` whether or not the request drafts with the head: what it would add (0: no usable head)."""
    if not mtp_usable(request):
        return 0
    parts = _parts(request)
    arch = parts.arch
    cache = _kv_cached(arch, request.context, request.users, request.draft_kv_cache, request.flash_attn_effective,
                       request.n_ubatch, request.kv_unified, request.swa_full)  # fmt: skip
    full_layers = [b for il, b in enumerate(cache.layer_bytes) if b and not arch.layer_is_swa(il)]
    mtp_cache = max(full_layers, default=0) * arch.nextn_layers
    snapshots = parts.state.total_bytes * request.draft_max if family_of(arch.arch).rs_rollback else 0
    return parts.weights.mtp_bytes + mtp_cache + snapshots + parts.compute(gpu_count, backend=backend).gpu_bytes


def draft_parts(request: Request, gpu_count: int, backend: str = "cuda") -> DraftParts:
    """What the draft model adds on the GPUs (llama.cpp's --fit adds the same three, common/fit.cpp add_extra_memory:
    model, context and compute of the draft measured at the main context's size). One CUDA context serves both."""
    draft = draft_request(request)
    if draft is None:
        return DraftParts()
    parts = _parts(draft)
    return DraftParts(
        weights=parts.weights.gpu_bytes,
        kv=parts.kv.total_bytes + parts.state.total_bytes,
        compute=parts.compute(gpu_count, backend=backend).gpu_bytes,
    )


def vision_bytes(request: Request) -> int:
    """The vision projector when images are sent: llama-server loads it on the first GPU (mmproj offload is on by
    default, common.h mmproj_use_gpu) and its --fit adds mtmd_get_memory_usage, the projector's tensors plus the
    compute buffer reserved for a warmup image, to that device's margin (tools/server/server-context.cpp, PR #21489;
    0c1e57098). The file's bytes stand for its tensors (the header is a few KiB); the compute buffer where a published
    log measured it."""
    if not request.images:
        return 0
    return request.model.mmproj_bytes + request.model.mmproj_compute_bytes


def total_bytes(request: Request, gpu_count: int, backend: str) -> int:
    """``estimate(...).total_bytes`` without building the whole answer (the solvers call this many times)."""
    parts = _parts(request)
    return (
        parts.weights.gpu_bytes
        + parts.kv.total_bytes
        + parts.state.total_bytes
        + parts.compute(gpu_count, backend=backend).gpu_bytes
        + runtime_bytes(backend, gpu_count)
        + vision_bytes(request)
        + draft_parts(request, gpu_count, backend).total
        + mtp_bytes(request, gpu_count, backend)
    )


def fit(request: Request, choice: GpuChoice, with_max_context: bool = True) -> Fit:
    """Verdict, layers on the GPU and headroom for one GPU choice (and the largest context that runs there)."""
    gpu, count = choice.gpu, choice.count
    parts = _parts(request)
    arch = parts.arch
    runtime = runtime_bytes(gpu.backend, count)
    total = total_bytes(request, count, gpu.backend)
    usable = usable_bytes(request, choice)
    n_layers = arch.n_layers + 1  # llama.cpp counts the output layer
    verdict = whole_verdict(total, usable)
    gpu_layers = n_layers
    if verdict is None and gpu.is_unified:
        # Unified memory (a Mac, Strix Halo, DGX Spark): the CPU's layers would sit in the same memory the GPU's
        # share is cut from, and there is no host link to stream them over; what does not fit the share does not
        # run (the answer says what would: a smaller quant, a shorter context, a raised wired limit on a Mac).
        verdict, gpu_layers = Verdict.NO, 0
    if verdict is None:
        if count == 1:
            fixed = parts.offloaded_compute(cpu_layers=True, cpu_experts=False, backend=gpu.backend) + runtime
        else:  # a layer split over several GPUs with the rest on the CPU: the full-offload rule, output on the CPU
            fixed = parts.compute(count, output_on_gpu=False, backend=gpu.backend).gpu_bytes + runtime
        # the projector and the draft model (-ngld is its own) stay on the GPU whatever -ngl says
        fixed += vision_bytes(request) + draft_parts(request, count, gpu.backend).total
        fixed += mtp_bytes(request, count, gpu.backend)
        gpu_layers = min(layers_that_fit(parts.per_layer, usable - fixed), arch.n_layers)
        verdict = Verdict.PARTIAL if gpu_layers > 0 else Verdict.NO
    ceiling = None
    placed = verdict in (Verdict.FITS, Verdict.TIGHT)
    cpu_layers = 0 if placed else arch.n_layers - gpu_layers
    decode = None
    reads_host = False
    if placed or gpu_layers > 0:
        read = bytes_per_token(parts, request.users, cpu_layers=cpu_layers, output_on_cpu=not placed)
        reads_host = read.host > 0
        decode = _decode(read, gpu, parts)
        if placed:
            ceiling = _ceiling(read, gpu, parts)
    max_ctx = largest_context(request, choice, runs_on_gpu) if with_max_context else None
    ram = 0 if gpu.is_unified else (request.ram_bytes if request.ram_bytes is not None else ASSUMED_RAM_BYTES)
    ram_usable = usable_ram(ram)
    on_host = _host_bytes(parts, gpu_layers if verdict in (Verdict.PARTIAL, Verdict.NO) else None)
    caches = _caches(parts, None if gpu.is_unified else ram_usable - on_host)
    on_host += caches.total_bytes if caches is not None else 0
    experts = None
    if verdict in (Verdict.PARTIAL, Verdict.NO) and not gpu.is_unified:
        experts = _expert_offload(parts, total, usable, ram_usable, gpu, request.users)
    prefill = None
    if placed or gpu_layers > 0:
        prefill = _prefill(parts, gpu, host_weight_bytes(parts, cpu_layers=cpu_layers))
    streams = (prefill is not None and cpu_layers > 0) or (experts is not None and experts.prefill is not None)
    from_ram = not gpu.is_unified and (reads_host or experts is not None)
    return Fit(
        gpu=gpu.id,
        name=gpu.name,
        count=count,
        memory_bytes=gpu.memory_bytes,
        usable_bytes=usable,
        verdict=verdict,
        gpu_layers=gpu_layers,
        layers=n_layers,
        headroom_bytes=usable - total,
        total_bytes=total,
        max_context=max_ctx,
        tokens_per_second=ceiling,
        decode=decode_estimate(decode),
        prefill=decode_estimate(prefill),
        pcie_gbs=round(gpu.pcie_gbs, 1) if streams else None,
        pcie_assumed=streams and gpu.pcie_assumed,
        host_bytes=on_host,
        ram_bytes=ram,
        ram_usable_bytes=ram_usable,
        ram_fits=gpu.is_unified or on_host <= ram_usable,
        server_caches=caches,
        ram_speed=parts.ram_speed if from_ram else None,
        ram_speed_assumed=from_ram and parts.ram_speed_assumed,
        expert_offload=experts,
        fit_default=fit_default(request, choice) if with_max_context else None,
    )


def fit_default(request: Request, choice: GpuChoice) -> FitDefault | None:
    """What llama-server b11434's ``--fit`` picks for ``llama-server -m MODEL`` on ``choice`` (calc.fit_params): the
    trained context on four slots sharing one cache, cut to meet the 1,024 MiB target, then layers or experts moved
    to system memory at 4,096 tokens. None for several GPUs (its per-device split is not modelled) and for the
    engines that do not run llama-server."""
    if choice.count != 1 or request.runner == "ollama" or request.engine != Engine.LLAMA_CPP:
        return None
    arch = request.model.architecture
    trained = arch.context_length
    backend = choice.gpu.backend
    usable = usable_bytes(request, choice)

    def default_load(context: int) -> Request:
        return request.model_copy(update={
            "context": max(1, context // SERVER_AUTO_SLOTS), "users": SERVER_AUTO_SLOTS, "kv_unified": True,
            "n_outputs_max": None, "draft": None, "mtp": False, "images": False, "swa_full": False,
        })  # fmt: skip

    total_max = total_bytes(default_load(trained), 1, backend)
    if usable - total_max >= FIT_TARGET_BYTES:
        return FitDefault(trained_context=trained, context=trained, free_bytes=usable - total_max)
    smallest = min(trained, FIT_MIN_CONTEXT)
    if trained > FIT_MIN_CONTEXT:
        total_min = total_bytes(default_load(smallest), 1, backend)
        context = fitted_context(total_at_max=total_max, total_at_min=total_min, usable=usable, context_max=trained)
        if context is not None:
            free = usable - total_bytes(default_load(context), 1, backend)
            return FitDefault(trained_context=trained, context=context, free_bytes=free)
    # step 3: vramfit's partial offload with the target held back, as --fit fills the device back to front
    held_back = default_load(smallest).model_copy(update={"reserved_bytes": request.reserved_bytes + FIT_TARGET_BYTES})
    placed = fit(held_back, choice, with_max_context=False)
    if placed.verdict in (Verdict.FITS, Verdict.TIGHT):
        return FitDefault(trained_context=trained, context=smallest, free_bytes=usable - placed.total_bytes)
    plan = placed.expert_offload
    if plan is not None and plan.verdict != Verdict.NO and not plan.all_experts:
        return FitDefault(trained_context=trained, context=smallest, n_cpu_moe=plan.n_cpu_moe,
                          free_bytes=usable - plan.gpu_bytes)  # fmt: skip
    return FitDefault(trained_context=trained, context=smallest, gpu_layers=placed.gpu_layers,
                      fits=placed.gpu_layers > 0)  # fmt: skip


def _caches(parts: _Parts, room_bytes: int | None) -> ServerCaches | None:
    """llama-server's checkpoints and prompt cache for ``parts``' slots, within ``room_bytes`` of RAM (None: its
    defaults; unified memory, where the verdict is on the GPU's share); None under Ollama's runner."""
    if parts.checkpoint is None:
        return None
    return server_caches(parts.checkpoint, parts.users, room_bytes=room_bytes)


def _host_bytes(parts: _Parts, gpu_layers: int | None) -> int:
    """System RAM with ``gpu_layers`` repeating layers offloaded (None: all of them and the output layer), as
    :mod:`calc.host_memory` lists it: the first ``n_layers - gpu_layers`` layers stay on the CPU with their KV."""
    weights = parts.weights
    if gpu_layers is None:
        return host_bytes(token_embd_bytes=weights.host_bytes, cpu_layer_bytes=0)
    cpu_layers = parts.arch.n_layers - gpu_layers
    return host_bytes(
        token_embd_bytes=weights.host_bytes,
        cpu_layer_bytes=sum(parts.per_layer[:cpu_layers]),
        cpu_output_bytes=weights.output_bytes,
        host_compute_bytes=output_stage_bytes(parts.arch, parts.n_ubatch),
    )


def bytes_per_token(
    parts: _Parts, users: int, *, cpu_layers: int = 0, output_on_cpu: bool = False, cpu_expert_blocks: int = 0
) -> BytesPerToken:
    """What one generated token of one sequence reads (:mod:`calc.speed`): each layer's active weights, its KV cache
    and recurrent state for one sequence, and the output layer; on the host for the first ``cpu_layers`` layers (and
    the output layer when ``output_on_cpu``) and for the routed experts of the first ``cpu_expert_blocks`` blocks."""
    arch, weights = parts.arch, parts.weights
    gpu = host = 0
    per_user = max(users, 1)
    for il in range(arch.n_layers):
        layer, experts = weights.layer_bytes[il], weights.expert_layer_bytes[il]
        active = active_bytes(layer, experts, arch.n_experts, arch.n_experts_used)
        cache = (parts.kv.layer_bytes[il] + parts.state.layer_bytes[il]) // per_user
        if il < cpu_layers:
            host += active + cache
        elif il < cpu_expert_blocks and experts:
            moved = active_bytes(experts, experts, arch.n_experts, arch.n_experts_used)
            host += moved
            gpu += active - moved + cache
        else:
            gpu += active + cache
    if output_on_cpu:
        host += weights.output_bytes
    else:
        gpu += weights.output_bytes
    return BytesPerToken(gpu=gpu, host=host)


def host_weight_bytes(parts: _Parts, *, cpu_layers: int = 0, cpu_expert_blocks: int = 0) -> int:
    """The weights a prompt's micro-batch copies to the GPU (:func:`calc.speed.streamed_prefill_speed`): every
    weight of the first ``cpu_layers`` layers (``-ngl``), and the routed-expert tensors of the first
    ``cpu_expert_blocks`` blocks (``--n-cpu-moe``). Not the output layer (its one-token product stays on the CPU)."""
    weights = parts.weights
    return sum(weights.layer_bytes[:cpu_layers]) + sum(weights.expert_layer_bytes[cpu_layers:cpu_expert_blocks])


def _prefill(parts: _Parts, gpu: Gpu, host_weights: int) -> DecodeSpeed | None:
    """Prompt tokens per second on ``gpu`` with ``host_weights`` bytes of weights in system RAM, averaged over a
    prompt of the context asked for (its attention grows with the cache, :mod:`calc.attention_flops`). One GPU's
    throughput however many share the layers: llama.cpp's layer split runs a micro-batch through the GPUs one after
    another (two RX 7900 XTX run pp512 slower than one: speed.jsonl), as decode reads them."""
    return streamed_prefill_speed(
        active_params(parts),
        host_weights,
        fp16_tflops=gpu.fp16_tflops,
        backend=gpu.backend,
        pcie_gbs=gpu.pcie_gbs,
        n_ubatch=parts.n_ubatch,
        geforce=is_geforce(gpu),
        attention_flops=parts.prompt_attention_flops,
        chip_class=gpu.chip_class,
        experts=routed_experts(parts),
    )


def active_params(parts: _Parts) -> int:
    """Parameters one token computes with: all of them less the routed experts it does not use (their share of the
    parameters taken as their share of the bytes)."""
    weights, arch = parts.weights, parts.arch
    experts = sum(weights.expert_layer_bytes)
    if not arch.n_experts or not experts or not weights.tensor_bytes:
        return weights.params
    unused = experts * (arch.n_experts - arch.n_experts_used) / arch.n_experts
    return round(weights.params * (1 - unused / weights.tensor_bytes))


def routed_experts(parts: _Parts) -> RoutedExperts | None:
    """A mixture of experts' routed part in one micro-batch (:class:`calc.speed.RoutedExperts`): the active
    routed-expert parameters (their share of the bytes, as :func:`active_params`) and each expert's tokens with even
    routing, ``n_ubatch × experts_used ÷ experts``; None for a dense model."""
    weights, arch = parts.weights, parts.arch
    experts = sum(weights.expert_layer_bytes)
    if not arch.n_experts or not experts or not weights.tensor_bytes:
        return None
    used = experts * arch.n_experts_used / arch.n_experts
    params = round(weights.params * used / weights.tensor_bytes)
    return RoutedExperts(params=params, tokens_per_expert=parts.n_ubatch * arch.n_experts_used / arch.n_experts)


def is_geforce(gpu: Gpu) -> bool:
    """An NVIDIA consumer or laptop card (GeForce): its FP32-accumulate tensor rate is half its FP16 one."""
    return gpu.vendor == Vendor.NVIDIA and gpu.segment in (Segment.CONSUMER, Segment.LAPTOP)


def _decode(read: BytesPerToken, gpu: Gpu, parts: _Parts) -> DecodeSpeed | None:
    """Decode speed: the GPU side at the GPU's bandwidth, the host side at the system RAM's (the question's, or
    calc.ram_speed.ASSUMED_RAM_SPEED)."""
    return decode_speed(read, gpu_bandwidth_gbs=gpu.bandwidth_gbs, backend=gpu.backend, moe=parts.arch.n_experts > 0,
                        layers=parts.arch.n_layers, ram_bandwidth_gbs=parts.ram_speed.bandwidth_gbs,
                        chip_class=gpu.chip_class)  # fmt: skip


def _ceiling(read: BytesPerToken, gpu: Gpu, parts: _Parts) -> float | None:
    """The bandwidth bound (every byte at full bandwidth): ``tokens_per_second`` of the JSON contract."""
    bound = decode_speed(read, gpu_bandwidth_gbs=gpu.bandwidth_gbs, backend=gpu.backend, moe=False, bound=True)
    return bound.tokens_per_second if bound is not None else None


def _expert_offload(
    parts: _Parts, total: int, usable: int, ram_usable: int, gpu: Gpu, users: int
) -> ExpertOffload | None:
    """The smallest ``--n-cpu-moe`` plan for a mixture-of-experts model that does not fit whole (None for a dense
    model, or when even every expert on the CPU leaves too little room)."""
    expert_bytes = parts.weights.expert_layer_bytes
    blocks = expert_layers(expert_bytes)
    if not blocks:
        return None
    # With experts on the CPU the GPU's compute buffer holds a copy of one expert tensor at a time.
    compute_change = (
        parts.offloaded_compute(cpu_layers=False, cpu_experts=True, backend=gpu.backend)
        - parts.compute(1, backend=gpu.backend).gpu_bytes
    )
    split = smallest_expert_split(expert_bytes, lambda moved: total - moved + compute_change, usable)
    if split is None:
        return None
    on_host = host_bytes(
        token_embd_bytes=parts.weights.host_bytes, cpu_layer_bytes=0, cpu_expert_bytes=split.cpu_expert_bytes
    )
    caches = _caches(parts, ram_usable - on_host)
    on_host += caches.total_bytes if caches is not None else 0
    return ExpertOffload(
        n_cpu_moe=split.n_cpu_moe,
        expert_blocks=blocks,
        expert_blocks_moved=expert_layers(expert_bytes[: split.n_cpu_moe]),
        all_experts=split.cpu_expert_bytes == sum(expert_bytes),
        verdict=split.verdict,
        gpu_bytes=split.gpu_bytes,
        cpu_expert_bytes=split.cpu_expert_bytes,
        host_bytes=on_host,
        ram_fits=on_host <= ram_usable,
        server_caches=caches,
        decode=decode_estimate(_decode(bytes_per_token(parts, users, cpu_expert_blocks=split.n_cpu_moe), gpu, parts)),
        prefill=decode_estimate(_prefill(parts, gpu, host_weight_bytes(parts, cpu_expert_blocks=split.n_cpu_moe))),
    )


def decode_estimate(speed: DecodeSpeed | None) -> DecodeEstimate | None:
    if speed is None:
        return None
    return DecodeEstimate(tokens_per_second=speed.tokens_per_second, low=speed.low, high=speed.high)


def usable_bytes(request: Request, choice: GpuChoice) -> int:
    """The memory the model may use on ``choice``'s devices: their usable memory (Apple: Metal's share) less what
    other programs already hold there (``request.reserved_bytes``: a desktop on the card, as the question says)."""
    return max(choice.gpu.usable_bytes * choice.count - request.reserved_bytes, 0)


def fits_within(total_bytes: int, usable: int) -> bool:
    """True when ``total_bytes`` fits ``usable`` bytes with the tight margin left over."""
    return usable - total_bytes >= tight_margin(usable)


def runs_on_gpu(request: Request, choice: GpuChoice) -> bool:
    """True when every layer fits (verdict fits or tight)."""
    return total_bytes(request, choice.count, choice.gpu.backend) <= usable_bytes(request, choice)


def fits_with_margin(request: Request, choice: GpuChoice) -> bool:
    """True when the request fits ``choice`` whole with the tight margin left."""
    return fits_within(total_bytes(request, choice.count, choice.gpu.backend), usable_bytes(request, choice))


PROFILE = EngineProfile(
    estimate=estimate, total_bytes=total_bytes, fit=fit, runs_on_gpu=runs_on_gpu, fits_with_margin=fits_with_margin
)
