"""A pasted log, diagnosed: what the engine allocated beside vramfit's estimate for exactly those settings, why it
failed when it did, and the cheapest change that fits (issue 28).

The model is the preset whose name the log prints (``general.name``) and whose shape it prints too (layers, KV heads,
width: a name alone never picks a model); a model no preset matches keeps the log's own figures, said as not
estimated. The settings are the log's: its context split over its sequences, KV type, flash attention, micro-batch,
layers on the GPU, and the GPU it names.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from vramfit.bot.logs import LogReading
from vramfit.bot.parser import parse
from vramfit.calc import GpuChoice, Request, answer, load_catalog
from vramfit.calc.errors import VramfitError
from vramfit.calc.file_types import parse_file_type
from vramfit.calc.gpu import Gpu
from vramfit.calc.presets import ModelPreset
from vramfit.calc.request import KvType
from vramfit.calc.results import Answer
from vramfit.calc.solve import max_context
from vramfit.calc.weights import model_weights

MIB = 1 << 20
_PARAMS = re.compile(r"^([\d.]+) ?([MBT])$")
_FTYPE = re.compile(r"^(?:all )?(?P<base>[A-Z0-9_]+?)(?: - (?P<size>Small|Medium|Large)|\s+MoE)?(?: - [\d.]+ bpw)?$")


def quant_of(file_type: str) -> str:
    """llama.cpp's printed file type as the calculator's name: "Q4_K - Medium" → Q4_K_M, "IQ4_XS - 4.25 bpw" →
    IQ4_XS, "MXFP4 MoE" → MXFP4_MOE, "all F32" → F32; "" when it is none the calculator knows (ik_llama.cpp's own)."""
    m = _FTYPE.match(file_type.strip())
    if not m:
        return ""
    name = m["base"] + ({"Small": "_S", "Medium": "_M", "Large": "_L"}[m["size"]] if m["size"] else "")
    name = "Q2_K" if name == "Q2_K_M" else name  # llama.cpp names its Q2_K "Q2_K - Medium"
    if file_type.strip().endswith("MoE"):
        name += "_MOE"
    try:
        return parse_file_type(name).value
    except VramfitError:
        return ""


def preset_of(reading: LogReading) -> ModelPreset | None:
    """The preset the log's model is: named by its ``general.name`` and of the same shape (layers, KV heads and width
    where the log prints them), or None."""
    if not reading.general_name:
        return None
    catalog = load_catalog()
    found = catalog.find_model(reading.general_name)
    if found is None:
        try:
            parsed = parse(reading.general_name, catalog)
        except VramfitError:
            return None
        found = catalog.models.get(parsed.model or "")
    if found is None:
        return None
    arch = found.architecture
    printed = (
        (reading.n_layer, arch.n_layers),
        (None if arch.is_mla else reading.n_head_kv, max(arch.n_kv_heads)),  # MLA: llama.cpp prints the heads
        (reading.n_embd, arch.hidden_size),
    )
    if any(seen is not None and seen != own for seen, own in printed):
        return None
    if (m := _PARAMS.match(reading.params)) is not None:  # "49.87 B": a pruned model of another's name and width
        params = float(m[1]) * (1e9 if m[2] == "B" else 1e6 if m[2] == "M" else 1e12)
        if abs(model_weights(found.ref(), "Q8_0").params / params - 1) > 0.02:
            return None
    return found


@dataclass(frozen=True)
class Row:
    """One component: the engine's figure and vramfit's for the same settings, MiB (None: not in the log / not
    estimated)."""

    label: str
    logged_mib: float | None
    estimated_mib: float | None


@dataclass(frozen=True)
class Diagnosis:
    reading: LogReading
    preset: ModelPreset | None
    request: Request | None
    calculated: Answer | None
    rows: tuple[Row, ...]
    # The failure: what could not be allocated and how much, and where the estimate says the model fits instead
    failed_what: str = ""
    failed_mib: float | None = None
    fitting_context: int | None = None  # the largest context per sequence that fits the GPU the log names
    gpu_name: str = ""


def preset_gpu(printed: str) -> Gpu | None:
    """The preset of a GPU as a log prints it ("NVIDIA GeForce RTX 3090 Ti", "AMD Radeon RX 7900 XTX"), or None."""
    catalog = load_catalog()
    name = re.sub(r"^(NVIDIA|AMD)\s+", "", printed).strip()
    return next((g for c in (printed, name, name.replace("GeForce ", "")) if (g := catalog.find_gpu(c))), None)


def held_elsewhere(reading: LogReading) -> list[tuple[str, float, float]]:
    """``(GPU, MiB free at start, MiB it has)`` for each device the log says started with more than 2 GiB of its
    memory already taken (another model, another process): a likely cause of running short. Below that the driver's
    own reservation and a desktop are the usual reason (a card reports less than its nominal size)."""
    found = []
    for seen in reading.gpus:
        gpu = preset_gpu(seen.name) if seen.free_mib is not None else None
        if gpu is not None and seen.free_mib is not None and gpu.memory_bytes / MIB - seen.free_mib > 2048:
            found.append((gpu.name, seen.free_mib, gpu.memory_bytes / MIB))
    return found


# vramfit mirrors llama.cpp at this commit (calc/, tests/data/groundtruth/LLAMACPP.md).
MIRRORED_COMMIT = "0c1e57098"
DIFFERENT_BUILD_SHARE = 0.01  # a component off by more than this, with nothing else to explain it


def differing_components(d: Diagnosis) -> tuple[str, ...]:
    """The KV cache or compute buffer that differs from vramfit's estimate by more than 1 % where no setting the log
    shows explains it (pipeline copies explain the compute buffer): a different build of llama.cpp, or a setting
    the reader does not take, is the likely cause, and the report says which build the log names."""
    out = []
    for row in d.rows:
        if row.label not in ("kv", "compute") or row.logged_mib is None or not row.estimated_mib:
            continue
        if row.label == "compute" and pipeline_copies(d.reading):
            continue
        if abs(row.logged_mib - row.estimated_mib) > DIFFERENT_BUILD_SHARE * row.estimated_mib:
            out.append(row.label)
    return tuple(out)


_BACKENDS = ("Vulkan", "ROCm", "Metal", "SYCL", "MUSA", "CANN")


def other_backend(reading: LogReading) -> str:
    """The GPU backend the log's buffers name when it is not CUDA ("Vulkan", "ROCm", ...), whose compute buffers
    vramfit does not model apart from CUDA's; "" for CUDA or when the log names none."""
    names = (*reading.compute_mib, *reading.model_mib, *reading.kv_mib)
    return next((b for name in names for b in _BACKENDS if name.startswith(b)), "")


def pipeline_copies(reading: LogReading) -> int | None:
    """The compute-buffer copies the log says llama.cpp's scheduler keeps for pipeline parallelism (several GPUs,
    every layer offloaded: GGML_SCHED_MAX_COPIES, 4 unless the build says otherwise), when more than one: a setting
    the log shows that multiplies what each device's compute buffer asks. vramfit's estimate is for one."""
    return reading.n_copies if reading.n_copies is not None and reading.n_copies > 1 else None


def _gpu_choice(reading: LogReading) -> GpuChoice | None:
    """The preset of the GPU the log names (its first device it knows), as many as the log lists."""
    gpu = next((g for seen in reading.gpus if (g := preset_gpu(seen.name)) is not None), None)
    return GpuChoice(gpu=gpu, count=max(1, len(reading.gpus))) if gpu is not None else None


def diagnose(reading: LogReading) -> Diagnosis:
    """The log beside vramfit's estimate for its settings (llama.cpp's logs; other engines keep their own figures)."""
    preset = preset_of(reading)
    quant = quant_of(reading.file_type)
    failed = next((f for f in reading.failures if f.mib), None)
    engine_oom = any(f.what == "cuda" for f in reading.failures)  # vLLM's own refusals are said apart
    failed_what = failed.what if failed else ("cuda" if engine_oom else "")
    failed_mib = failed.mib if failed else None
    if preset is None or not quant or reading.n_ctx is None or reading.engine not in ("llama.cpp", "ik_llama.cpp"):
        return Diagnosis(reading, preset, None, None, _logged_rows(reading), failed_what, failed_mib)
    seqs = max(1, reading.n_seq or 1)
    choice = _gpu_choice(reading)
    fields: dict[str, object] = {
        "model": preset.ref(),
        "quant": quant,
        "context": max(256, reading.n_ctx // seqs),
        "users": seqs,
        "n_ubatch": reading.n_ubatch or 512,
        # the outputs the log's build reserved: every token's where it does not say (builds before the limit)
        "n_outputs_max": reading.n_outputs_max if reading.n_outputs_max is not None else 0,
        "gpus": (choice,) if choice is not None else (),
    }
    if reading.flash_attn is not None:
        fields["flash_attn"] = reading.flash_attn
    if reading.kv_unified is not None:
        fields["kv_unified"] = reading.kv_unified
    if reading.type_k in {k.value for k in KvType}:
        fields["kv_cache"] = KvType(reading.type_k)
    try:
        request = Request.model_validate(fields)
        calculated = answer(request)
    except (VramfitError, ValueError):
        return Diagnosis(reading, preset, None, None, _logged_rows(reading), failed_what, failed_mib)
    est = calculated.estimate
    whole = reading.layers_on_gpu is None or reading.layers_on_gpu >= (reading.layers_total or 0)
    weights: tuple[Row, ...]
    as_estimated = whole and not reading.tensor_overrides  # no -ot placing tensors elsewhere
    if as_estimated and reading.host_model_mib <= 2 * est.host_bytes / MIB + 64:  # every layer on the GPU
        weights = (
            Row("weights_gpu", reading.gpu_model_mib or None, est.weights_bytes / MIB),
            Row("weights_host", reading.host_model_mib or None, est.host_bytes / MIB),
        )
    else:  # layers or experts left in RAM: the split is the log's, the sum is comparable
        logged = reading.gpu_model_mib + reading.host_model_mib
        weights = (Row("weights_all", logged or None, (est.weights_bytes + est.host_bytes) / MIB),)
    rows = (
        *weights,
        Row("kv", reading.kv_total_mib, (est.kv_cache_bytes + est.recurrent_state_bytes) / MIB),
        Row("compute", reading.gpu_compute_mib or None, est.compute_bytes / MIB),
    )
    fitting = None
    if choice is not None:
        fitting = max_context(request, choice)
    return Diagnosis(
        reading, preset, request, calculated, rows,
        failed_what=failed_what,
        failed_mib=failed_mib,
        fitting_context=fitting,
        gpu_name=(choice.gpu.name if choice.count == 1 else f"{choice.count}× {choice.gpu.name}") if choice else "",
    )  # fmt: skip


def _logged_rows(reading: LogReading) -> tuple[Row, ...]:
    """The log's own figures when vramfit has no estimate to set beside them."""
    rows = [
        Row("weights_gpu", reading.gpu_model_mib or None, None),
        Row("weights_host", reading.host_model_mib or None, None),
        Row("kv", reading.kv_total_mib, None),
        Row("compute", reading.gpu_compute_mib or None, None),
    ]
    if reading.weights_gib is not None:
        rows.append(Row("weights_gpu", reading.weights_gib * 1024, None))
    if reading.kv_cache_gib is not None:
        rows.append(Row("kv", reading.kv_cache_gib * 1024, None))
    if reading.activation_gib is not None:
        rows.append(Row("compute", reading.activation_gib * 1024, None))
    return tuple(r for r in rows if r.logged_mib is not None)

