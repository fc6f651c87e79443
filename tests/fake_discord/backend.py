"""A deterministic stand-in for the parser + calculator, with round numbers that tests can assert exactly.

Llama 3 8B at Q4_K_M: weights 4.5 GiB on the GPU (+0.5 GiB in system RAM, file 5.0 GiB), KV cache
``131072 × context × users`` bytes in f16 (1 GiB at 8K, 4 GiB at 32K, 16 GiB at 128K), compute 0.5 GiB and
runtime 0.5 GiB. So at 32K the total is 9.5 GiB, and an RTX 3060 (12 GiB) has 2.5 GiB to spare.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from vramfit.bot.answering.cards import (
    Assumptions,
    Backend,
    Card,
    Estimate,
    GpuFit,
    ModelInfo,
    Overrides,
    Tip,
    Verdict,
)
from vramfit.bot.errors import AnswerError
from vramfit.bot.i18n import Lang, lang_of_text

GIB = 1 << 30


@dataclass(frozen=True)
class FakeModel:
    id: str
    name: str
    aliases: tuple[str, ...]
    params: int
    layers: int
    kv_heads: int
    head_dim: int
    weights_gib: float  # at Q4_K_M
    swa_factor: float = 1.0  # share of the naive KV cache the engine allocates


MODELS = {
    m.id: m
    for m in (
        FakeModel(
            "llama-3-8b", "Llama 3 8B", ("llama3", "llama-3-8b", "llama3-8b", "라마3"), 8_000_000_000, 32, 8, 128, 4.5
        ),
        FakeModel(
            "gemma-2-9b",
            "Gemma 2 9B",
            ("gemma2", "gemma-2-9b", "젬마2"),
            9_000_000_000,
            42,
            8,
            256,
            5.5,
            swa_factor=0.5,
        ),
        FakeModel("llama-3-70b", "Llama 3 70B", ("llama3-70b", "llama-3-70b"), 70_000_000_000, 80, 8, 128, 39.0),
    )
}
GPUS = {
    "rtx-3060-12gb": ("GeForce RTX 3060 12GB", 12, "consumer", ("3060",)),
    "rtx-4090": ("GeForce RTX 4090", 24, "consumer", ("4090",)),
    "rtx-a6000": ("RTX A6000", 48, "workstation", ("a6000",)),
    "h100-80gb": ("H100 80GB", 80, "datacenter", ("h100",)),
    "apple-m2-max-96gb": ("Apple M2 Max 96GB", 96, "apple", ("m2 max",)),
}
QUANT_FACTOR = {"Q4_K_M": 1.0, "Q8_0": 2.0, "F16": 4.0, "Q3_K_M": 0.8, "Q2_K": 0.6}
KV_BYTES = {"f16": 2.0, "bf16": 2.0, "f32": 4.0, "q8_0": 1.0, "fp8": 1.0, "q4_0": 0.5}
OVERHEAD_GIB = 1.0  # compute 0.5 + runtime 0.5
TIGHT_GIB = 1.0


class FakeBackend:
    """Implements the :class:`bot.answering.cards.Backend` functions; counts calls."""

    def __init__(self) -> None:
        self.calls: list[tuple[str, Lang | None, Overrides]] = []
        self.fail_with: BaseException | None = None

    def backend(self) -> Backend:
        return Backend(answer=self.answer, suggest_models=self.suggest_models, suggest_gpus=self.suggest_gpus)

    def suggest_models(self, current: str) -> list[tuple[str, str]]:
        key = current.lower()
        return [(m.name, m.id) for m in MODELS.values() if key in m.id or any(key in a for a in m.aliases)][:25]

    def suggest_gpus(self, current: str) -> list[tuple[str, str]]:
        key = current.lower()
        return [(name, gid) for gid, (name, *_rest) in GPUS.items() if key in gid or key in name.lower()][:25]

    # -- parsing ----------------------------------------------------------------------------------------------------

    def _parse(self, text: str, overrides: Overrides) -> tuple[FakeModel, dict[str, object], Lang]:
        lowered = text.lower()
        model: FakeModel | None = None
        if "model" in overrides:
            model = MODELS.get(overrides["model"])
            if model is None:
                raise AnswerError("unknown_model", subject=overrides["model"], suggestions=["llama-3-8b"])
        else:
            for candidate in sorted(MODELS.values(), key=lambda m: -max(len(a) for a in m.aliases)):
                if any(alias in lowered for alias in sorted(candidate.aliases, key=len, reverse=True)):
                    model = candidate
                    if "70b" in lowered and candidate.id == "llama-3-8b":
                        model = MODELS["llama-3-70b"]
                    break
        if model is None:
            word = text.split()[0] if text.split() else ""
            raise AnswerError("unknown_model", subject=word, suggestions=["llama-3-8b"] if word else ())
        settings: dict[str, object] = {
            "quant": "Q4_K_M",
            "context": 8192,
            "users": 1,
            "kv_cache": "f16",
            "engine": "llama.cpp",
            "flash_attn": True,
            "gpus": (),
        }
        if match := re.search(r"(\d+)\s*k\b", lowered):
            settings["context"] = int(match[1]) * 1024
        gpus: list[tuple[str, int]] = []
        for gid, (_name, _mem, _seg, aliases) in GPUS.items():
            if any(re.search(rf"(?<!\d){re.escape(a)}(?!\d)", lowered) for a in aliases):
                gpus.append((gid, 1))
        settings["gpus"] = tuple(gpus)
        for key in ("quant", "context", "users", "kv_cache", "engine", "flash_attn", "gpus"):
            if key in overrides:
                settings[key] = overrides[key]  # type: ignore[literal-required,unused-ignore]
        if "gpu" in overrides:
            gid = overrides["gpu"]
            if gid not in GPUS:
                raise AnswerError("unknown_gpu", subject=gid, suggestions=["rtx-3060-12gb"])
            settings["gpus"] = ((gid, overrides.get("gpu_count", 1)),)
        elif "gpu_count" in overrides and settings["gpus"]:
            first = settings["gpus"][0]  # type: ignore[index]
            settings["gpus"] = ((first[0], overrides["gpu_count"]),)
        if settings["quant"] not in QUANT_FACTOR:
            raise AnswerError("unknown_quant", subject=str(settings["quant"]), suggestions=list(QUANT_FACTOR))
        return model, settings, lang_of_text(text)

    # -- numbers ----------------------------------------------------------------------------------------------------

    @staticmethod
    def _estimate(model: FakeModel, quant: str, context: int, users: int, kv: str) -> Estimate:
        weights = int(model.weights_gib * QUANT_FACTOR[quant] * GIB)
        naive = int(2 * model.layers * model.kv_heads * model.head_dim * context * users * KV_BYTES.get(kv, 2.0))
        actual = int(naive * model.swa_factor)
        half = GIB // 2
        return Estimate(
            file_bytes=weights + half,
            weights_bytes=weights,
            host_bytes=half,
            kv_cache_bytes=actual,
            kv_cache_naive_bytes=naive,
            compute_bytes=half,
            runtime_bytes=half,
            total_bytes=weights + actual + 2 * half,
        )

    @staticmethod
    def _fit(model: FakeModel, est: Estimate, gid: str, count: int) -> GpuFit:
        name, mem_gib, segment, _aliases = GPUS[gid]
        memory = mem_gib * GIB
        budget = memory * count
        headroom = budget - est.total_bytes
        layers = model.layers + 1
        verdict: Verdict
        if headroom >= TIGHT_GIB * GIB:
            verdict, gpu_layers = "fits", layers
        elif headroom >= 0:
            verdict, gpu_layers = "tight", layers
        else:
            per_layer = (est.weights_bytes + est.kv_cache_bytes) / layers
            gpu_layers = max(0, min(model.layers, int((budget - est.overhead_bytes) // per_layer)))
            verdict = "partial" if gpu_layers > 0 else "no"
        free = budget - est.weights_bytes - est.overhead_bytes - TIGHT_GIB * GIB
        kv_per_token = 2 * model.layers * model.kv_heads * model.head_dim * 2 * model.swa_factor
        return GpuFit(
            gpu_id=gid,
            gpu_name=name,
            count=count,
            memory_bytes=memory,
            verdict=verdict,
            gpu_layers=gpu_layers,
            layers=layers,
            headroom_bytes=headroom,
            segment=segment,
            usable_bytes=budget,
            max_context=None if free <= 0 else int(free // kv_per_token) // 256 * 256,
        )

    def answer(self, text: str, lang: Lang | None, overrides: Overrides) -> Card:
        self.calls.append((text, lang, dict(overrides)))  # type: ignore[arg-type]
        if self.fail_with is not None:
            raise self.fail_with
        model, s, question_lang = self._parse(text, overrides)
        quant, context, users, kv = str(s["quant"]), int(s["context"]), int(s["users"]), str(s["kv_cache"])  # type: ignore[call-overload]
        est = self._estimate(model, quant, context, users, kv)
        gpus: tuple[tuple[str, int], ...] = s["gpus"]  # type: ignore[assignment]
        if gpus:
            fits = tuple(self._fit(model, est, gid, count) for gid, count in gpus)
        else:
            fits = tuple(f for f in (self._fit(model, est, gid, 1) for gid in GPUS) if f.verdict in ("fits", "tight"))
        tips: list[Tip] = []
        if gpus and fits[0].verdict in ("partial", "no"):
            smaller = self._estimate(model, quant, context, users, "q8_0")
            tips.append(Tip("kv_cache", "q8_0", smaller.total_bytes, self._fit(model, smaller, *gpus[0]).verdict))
            tips.append(Tip("gpus", "2", est.total_bytes, self._fit(model, est, gpus[0][0], 2).verdict))
        return Card(
            lang=lang or question_lang,
            model=ModelInfo(
                model.id,
                model.name,
                model.params,
                model.layers,
                model.kv_heads,
                model.head_dim,
                4096 if model.swa_factor < 1 else 0,
            ),
            assumptions=Assumptions(
                quant=quant,
                context=context,
                users=users,
                kv_cache=kv,
                engine=str(s["engine"]),
                flash_attn=bool(s["flash_attn"]),
                kv_bytes_per_element=KV_BYTES.get(kv, 2.0),
            ),
            estimate=est,
            fits=fits,
            named_gpus=bool(gpus),
            gpus=gpus,
            tips=tuple(tips),
            notes=("sliding_window",) if model.swa_factor < 1 else (),
        )
