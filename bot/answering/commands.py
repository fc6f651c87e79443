"""The command that reproduces an answer, to copy: llama.cpp's ``llama-server``, Ollama's settings and ``vllm serve``,
with the flags of the asked setting.

The flags are llama.cpp's own, as common/arg.cpp at revision 0c1e57098 defines them (the revision the calculator
mirrors): ``-m`` (or ``-hf <user>/<repo>:<quant>`` for a Hub GGUF), ``-c`` / ``--ctx-size`` (the whole KV cache:
context × slots), ``-ngl`` / ``--n-gpu-layers`` (99: every layer), ``--n-cpu-moe N`` / ``--cpu-moe`` (the routed
experts of the first N blocks, or all, in system RAM), ``-fa on|off``, ``-ctk`` / ``-ctv`` (KV cache types; a
quantized V cache needs flash attention), ``-np`` / ``--parallel`` (slots), ``-kvu`` / ``--no-kv-unified`` (with an
explicit ``-np`` llama-server gives each slot its own KV stream unless ``-kvu``: "default: enabled if number of slots
is auto"), ``-ub`` / ``-b`` (micro-batch and batch, when not the defaults 512 and 2048) and ``--swa-full``. Set
explicitly, none of them is changed by llama-server's ``--fit``, which "adjusts unset arguments" only.
``--ctx-checkpoints N`` and ``--cache-ram MiB`` (b11434: 32 a slot and 8192 by default, both in system RAM) are named
when the answer cuts them to fit the RAM the model leaves (calc.server_caches).

Ollama runs the same llama.cpp and takes the server-wide settings from its environment: ``OLLAMA_CONTEXT_LENGTH``
(the context of every loaded model; Ollama's docs/context-length.mdx at 948f69330), ``OLLAMA_FLASH_ATTENTION=1``,
``OLLAMA_KV_CACHE_TYPE`` (``q8_0``, ``q4_0``) and ``OLLAMA_NUM_PARALLEL`` (requests at once), named as Ollama's FAQ
names them. A quantized KV cache takes effect only with flash attention: a published measurement on Ollama 0.20.3
(baeseokjae.github.io, research/evidence/local-llm-vram-kv-cache-budget-2026) found ``q8_0`` inert without
``OLLAMA_FLASH_ATTENTION=1`` and halving the KV slope with it.

vLLM (``vllm serve``, its engine arguments): ``--max-model-len``, ``--gpu-memory-utilization`` (0.9, the calculator's
vLLM profile), ``--kv-cache-dtype fp8``, ``--tensor-parallel-size`` / ``-tp`` (the GPUs of one machine),
``--max-num-seqs`` (users at once) and ``--quantization fp8`` (FP8 weights quantized on load from a 16-bit
checkpoint); INT4 needs an AWQ or GPTQ checkpoint, whose repo the command cannot know, so it names the original.
"""

from __future__ import annotations

import re
import shlex

from vramfit.calc.engines.vllm import GPU_MEMORY_UTILIZATION
from vramfit.calc.fit import Verdict
from vramfit.calc.ollama import processor_split
from vramfit.calc.presets import load_catalog
from vramfit.calc.request import Engine, KvType, Request
from vramfit.calc.results import Estimate, Fit
from vramfit.calc.server_caches import CACHE_RAM_DEFAULT_BYTES, CTX_CHECKPOINTS_DEFAULT, MIB, ServerCaches

ALL_LAYERS = 99  # what people write for "every layer" (llama.cpp clamps it to the model's layer count)
DEFAULT_UBATCH = 512
DEFAULT_BATCH = 2048
DEFAULT_DRAFT_MAX = 3  # common.h at 0c1e57098: --spec-draft-n-max (the removed --draft-max's successor)
# bot.sources.huggingface writes a Hub file's source as https://huggingface.co/{repo}/blob/{revision}/{file}.
_HUB_SOURCE = re.compile(r"^https://huggingface\.co/(?P<repo>[\w.-]+/[\w.-]+)/blob/")


def model_argument(request: Request) -> list[str]:
    """``-m FILE`` for a local GGUF, ``-hf REPO:QUANT`` for one read from the Hub, else ``-m`` with the file name
    people would download (the preset id, or an Ollama tag, and the quant)."""
    source = request.model.source
    hub = _HUB_SOURCE.match(source)
    if hub is not None and request.model.gguf is not None:
        # -hf also loads the repo's vision projector onto the GPU unless --no-mmproj: what the answer counted
        no_mmproj = request.model.mmproj and not request.images
        return ["-hf", f"{hub['repo']}:{request.quant}", *(["--no-mmproj"] if no_mmproj else [])]
    if request.images and request.model.mmproj:  # the projector the answer counted, beside the model
        return [*_model_file(request), "--mmproj", request.model.mmproj]
    return _model_file(request)


def _model_file(request: Request) -> list[str]:
    """``-m`` with the GGUF's path, or the file name people would download."""
    source = request.model.source
    if request.model.gguf is not None and source.endswith(".gguf"):
        return ["-m", source]
    if request.model.gguf is not None and source.startswith("ollama://"):  # bot.sources.ollama: id "qwen3.5:9b"
        return ["-m", f"{request.model.id.replace('/', '-').replace(':', '-')}-{request.quant}.gguf"]
    if request.model.checkpoint is not None:  # a safetensors repo: the GGUF people would make of it
        return ["-m", f"{request.model.name}-{request.quant}.gguf"]
    return ["-m", f"{request.model.id}-{request.quant}.gguf"]


def llama_server_args(request: Request, fit: Fit | None) -> list[str]:
    """llama-server's arguments for ``request`` placed as ``fit`` says (every layer when ``fit`` is None or the model
    fits whole; ``-ngl N`` for a partial fit; ``--n-cpu-moe N`` for an expert-offload plan)."""
    args = ["llama-server", *model_argument(request), "-c", str(request.context * request.users)]
    if fit is not None and fit.expert_offload is not None and fit.verdict in (Verdict.PARTIAL, Verdict.NO):
        plan = fit.expert_offload
        args += ["-ngl", str(ALL_LAYERS)]
        args += ["--cpu-moe"] if plan.all_experts else ["--n-cpu-moe", str(plan.n_cpu_moe)]
    elif fit is not None and fit.verdict in (Verdict.PARTIAL, Verdict.NO):
        args += ["-ngl", str(fit.gpu_layers)]
    else:
        args += ["-ngl", str(ALL_LAYERS)]
    flash = request.flash_attn_effective
    args += ["-fa", "on" if flash else "off"]
    if request.kv_cache != KvType.F16:
        args += ["-ctk", request.kv_cache.value]
        if flash:  # without flash attention llama.cpp keeps V in f16 (calc.kv)
            args += ["-ctv", request.kv_cache.value]
    # Slots: llama-server opens 4 on a unified cache when the command names none (b11434: tools/server/server.cpp,
    # n_parallel -1 = auto), whose recurrent state, sliding-window cache and outputs are per slot; the card counts
    # the users asked for, so the command says how many
    args += ["-np", str(request.users)]
    if request.users > 1:
        args.append("-kvu" if request.kv_unified else "--no-kv-unified")
    if request.n_ubatch != DEFAULT_UBATCH:
        args += ["-ub", str(request.n_ubatch)]
    if request.n_batch != DEFAULT_BATCH:
        args += ["-b", str(request.n_batch)]
    if request.swa_full:
        args.append("--swa-full")
    if request.mtp and request.draft is None:  # the model's own MTP head drafts (0c1e57098: --spec-type draft-mtp)
        args += ["--spec-type", "draft-mtp"]
        if request.draft_max != DEFAULT_DRAFT_MAX:
            args += ["--spec-draft-n-max", str(request.draft_max)]
    caches = placement_caches(fit) if fit is not None else None
    if caches is not None and caches.ctx_checkpoints != CTX_CHECKPOINTS_DEFAULT:  # cut to fit the RAM the model leaves
        args += ["--ctx-checkpoints", str(caches.ctx_checkpoints)]
    if caches is not None and caches.cache_ram_bytes != CACHE_RAM_DEFAULT_BYTES:
        args += ["--cache-ram", str(caches.cache_ram_bytes // MIB)]
    if request.draft is not None:  # speculative decoding: the draft the answer counted, every layer on the GPU
        args += ["-md", f"{request.draft.id}-{request.draft_quant}.gguf", "-ngld", str(ALL_LAYERS)]
        args += ["--spec-type", "draft-simple"]  # -md alone loads the draft but speculates with none (0c1e57098)
        if request.draft_kv_cache != KvType.F16:
            args += ["-ctkd", request.draft_kv_cache.value, "-ctvd", request.draft_kv_cache.value]
        if request.draft_max != DEFAULT_DRAFT_MAX:
            args += ["--spec-draft-n-max", str(request.draft_max)]
    return args


def placement_caches(fit: Fit) -> ServerCaches | None:
    """llama-server's checkpoints and prompt cache for the placement the command runs: the expert plan's where the
    model does not fit whole and a plan exists, else the fit's."""
    plan = fit.expert_offload
    if plan is not None and fit.verdict in (Verdict.PARTIAL, Verdict.NO):
        return plan.server_caches
    return fit.server_caches


def runnable(fit: Fit) -> bool:
    """Whether ``fit`` describes a setting that runs: on the GPU whole, or with what stays on the CPU within the RAM."""
    if fit.verdict in (Verdict.FITS, Verdict.TIGHT):
        return True
    if fit.expert_offload is not None:
        return fit.expert_offload.ram_fits
    return fit.ram_fits and fit.verdict == Verdict.PARTIAL


def llama_server_command(request: Request, fit: Fit | None) -> str:
    """The command line, quoted for a POSIX shell."""
    return shlex.join(llama_server_args(request, fit))


_CONFIG_SOURCE = re.compile(r"^https://huggingface\.co/(?P<repo>[\w.-]+/[\w.-]+)/blob/[^/]+/config\.json$")


def ollama_command(request: Request, ollama_name: str) -> str:
    """The Ollama settings and ``ollama run`` for ``request`` (one command line for a POSIX shell)."""
    env = [f"OLLAMA_CONTEXT_LENGTH={request.context}"]
    if request.flash_attn_effective:
        env.append("OLLAMA_FLASH_ATTENTION=1")
    if request.kv_cache != KvType.F16 and request.flash_attn_effective:
        env.append(f"OLLAMA_KV_CACHE_TYPE={request.kv_cache.value}")
    if request.users > 1:
        env.append(f"OLLAMA_NUM_PARALLEL={request.users}")
    return shlex.join([*env, "ollama", "serve"]) + " & " + shlex.join(["ollama", "run", ollama_name])


# The kinds of checkpoint that hold each quantized format, in the order a question that names only the format ("4bit",
# "int8", "fp8") takes them (calc.presets.VLLM_CHECKPOINT_KINDS), and what a command calls each.
_KINDS_OF_FORMAT = {
    "INT4": ("awq", "gptq", "bnb-4bit"), "INT8": ("gptq-int8",), "FP8": ("fp8",), "NVFP4": ("nvfp4",),
}  # fmt: skip
_KIND_NAMES = {
    "awq": "AWQ", "gptq": "GPTQ", "gptq-int8": "GPTQ Int8", "fp8": "FP8", "bnb-4bit": "bitsandbytes 4-bit",
    "nvfp4": "NVFP4",
}  # fmt: skip


def quantized_repo(request: Request) -> tuple[str, str]:
    """``(repo, kind)`` of the quantized checkpoint ``vllm serve`` loads for an INT4 / INT8 / FP8 answer on a preset:
    the preset's recorded repo of the asked kind (``awq``, ``gptq``…; the first recorded when only the format was
    named), or ``("", kind)`` where none is recorded; ``("", "")`` when the answer is in the model's own release (a
    BF16, native FP8 or MXFP4 repo, or a safetensors repo read from the Hub)."""
    quant = request.quant.upper()
    kinds = _KINDS_OF_FORMAT.get(quant, ())
    if quant == "INT4" and request.checkpoint_kind in kinds:
        kinds = (request.checkpoint_kind,)
    preset = load_catalog().models.get(request.model.id)
    if not kinds or preset is None or request.model.checkpoint is not None or _released_as(request, quant):
        return "", ""
    for kind in kinds:
        if repo := preset.vllm_repos.get(kind):
            return repo, kind
    return "", kinds[0]


def vllm_args(request: Request) -> list[str]:
    """``vllm serve`` for ``request``: the model's repo (from its config.json source), or the repo of its quantized
    checkpoint (:func:`quantized_repo`), the context, the GPUs."""
    found = _CONFIG_SOURCE.match(request.model.source)
    model = found["repo"] if found else request.model.id
    num, den = GPU_MEMORY_UTILIZATION
    gguf = is_gguf_type(request.quant)  # a GGUF quant on vLLM: the numbers are that file's, so is the command
    repo, kind = quantized_repo(request)
    served = model_argument(request)[1] if gguf else repo or model
    if not repo and kind and kind != "fp8":  # AWQ/GPTQ weights cannot be made on load: say which repo goes here
        served = f"<{_KIND_NAMES[kind]} repo of {model}>"
    args = [
        "vllm",
        "serve",
        served,
        *(["--tokenizer", model] if gguf and model != request.model.id else []),
        "--max-model-len",
        str(request.context),
        "--gpu-memory-utilization",
        f"{num / den:g}",
    ]
    checkpoint = request.model.checkpoint
    if request.quant.upper() == "FP8" and (checkpoint is None or checkpoint.file_type != "FP8") and not _released_as(
        request, "FP8"
    ) and not repo:
        args += ["--quantization", "fp8"]  # quantized on load; an FP8 checkpoint says so in its config.json
    if request.kv_cache == KvType.FP8:
        args += ["--kv-cache-dtype", "fp8"]
    count = request.gpus[0].count if request.gpus else 1
    if count > 1:
        args += ["--tensor-parallel-size", str(count)]
    if request.users > 1:
        args += ["--max-num-seqs", str(request.users)]
    return args


def _released_as(request: Request, quant: str) -> bool:
    """Whether the request's preset ships in ``quant`` (DeepSeek V3's release is FP8: nothing to quantize on load)."""
    preset = load_catalog().models.get(request.model.id)
    return preset is not None and preset.release_quant == quant


_NOT_GGUF = frozenset(("BF16", "F16", "F32", "FP8", "INT4", "INT8", "NVFP4"))


def is_gguf_type(quant: str) -> bool:
    """Whether ``quant`` exists only as a GGUF file (Q4_K_M, IQ4_XS, MXFP4_MOE…), not as a checkpoint vLLM loads from
    a Transformers repo (BF16, FP8, AWQ/GPTQ INT4…)."""
    return quant.upper() not in _NOT_GGUF and not quant.upper().startswith("MXFP4")


def run_command(request: Request, fit: Fit | None) -> str:
    """The command of the request's engine: ``llama-server`` or ``vllm serve``."""
    if request.engine == Engine.VLLM:
        return shlex.join(vllm_args(request))
    return llama_server_command(request, fit)


def card_commands(request: Request, fit: Fit | None) -> dict[str, str]:
    """What a card prints to run ``request`` as ``fit`` places it, by program: ``llama_server`` (or ``vllm``), and
    ``ollama`` where its registry has the model and the model runs whole there; only ``ollama`` when the question
    named Ollama. Empty when the first GPU cannot run it."""
    if fit is None or not runnable(fit):
        return {}
    ollama = ollama_name(request)
    if request.runner == "ollama":
        return {"ollama": ollama_command(request, ollama or "<model>")}
    if request.engine == Engine.VLLM:
        return {"vllm": run_command(request, fit)}
    commands = {"llama_server": llama_server_command(request, fit)}
    # Ollama places layers itself (whole fits only) and runs no draft model
    if ollama and fit.verdict in (Verdict.FITS, Verdict.TIGHT) and request.draft is None and not request.mtp:
        commands["ollama"] = ollama_command(request, ollama)
    return commands


def ollama_name(request: Request) -> str:
    """The model's Ollama tag, when its preset lists one among its aliases ("qwen3.5:9b"), else ""."""
    preset = load_catalog().models.get(request.model.id)
    return next((a for a in preset.aliases if ":" in a and " " not in a), "") if preset is not None else ""


def ollama_split(fit: Fit, est: Estimate) -> tuple[int, int]:
    """(CPU %, GPU %) of the model's memory for ``fit``: what stays on the CPU is the expert plan's experts or the
    layers left there (calc.ollama.processor_split)."""
    on_cpu = 0
    if fit.verdict.value in ("partial", "no"):
        plan = fit.expert_offload
        caches = fit.server_caches.total_bytes if fit.server_caches is not None else 0
        on_cpu = plan.cpu_expert_bytes if plan is not None else max(fit.host_bytes - caches - est.host_bytes, 0)
    return processor_split(max(est.total_bytes - on_cpu, 0), on_cpu)
