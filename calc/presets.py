"""The preset catalog: models and GPUs shipped as TOML data in the ``presets`` package.

Every row carries the source of its numbers. Model rows hold the memory-relevant keys of the model's
config.json verbatim, so a preset and ``vram --config config.json`` go through the same
:func:`calc.hf_config.from_hf_config`.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Mapping
from functools import cached_property, lru_cache
from importlib import import_module
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from vramfit.calc.architecture import Architecture
from vramfit.calc.cache_files import cache_dir, read_cache_json, set_aside, write_cache_file
from vramfit.calc.errors import UnknownGpuError, UnknownModelError
from vramfit.calc.file_types import FileType
from vramfit.calc.gpu import GIB, Gpu, Machine
from vramfit.calc.hf_config import from_hf_config
from vramfit.calc.request import ModelRef

# The kinds of quantized checkpoint a preset may list a repo of (``vllm_repos``), by the format vLLM loads them in.
VLLM_CHECKPOINT_KINDS = frozenset(("awq", "gptq", "gptq-int8", "fp8", "bnb-4bit", "nvfp4"))


def normalize_key(text: str) -> str:
    """Lowercase and drop spaces, hyphens, underscores and dots, so "Llama-3.1 8B" and "llama3.18b" meet."""
    return re.sub(r"[\s\-_.]+", "", text.lower())


class ModelPreset(BaseModel):
    model_config = ConfigDict(defer_build=True, frozen=True, ignored_types=(cached_property,))

    id: str
    name: str
    family: str = ""
    org: str = ""
    hf_repo: str = ""
    source: str
    source_note: str = ""
    aliases: tuple[str, ...] = ()
    # The quant a question that names none gets, where the model ships in one form (gpt-oss: MXFP4_MOE, the experts
    # as OpenAI released them); empty: the general default.
    default_quant: str = ""
    # The model's config.json describes a vision encoder, which [model.config] leaves out with the rest of the wrapper
    # (bot.preset_row writes it from calc.hf_config.declares_vision_encoder): the preset is the text model.
    vision_encoder: bool = False
    # The quant of the file each Ollama library tag among the aliases pulls ("llama3.2:1b" → Q8_0), and where each
    # was read: a question that names the tag is answered for that file.
    ollama_quants: dict[str, str] = {}
    ollama_quants_source: str = ""
    # Repos of the model's quantized checkpoints that vLLM serves, by kind (awq, gptq, gptq-int8, fp8, bnb-4bit), and
    # where each was found: the ``vllm serve`` of an answer in that format names the repo.
    vllm_repos: dict[str, str] = {}
    vllm_repos_source: str = ""
    # The vision projector (mmproj GGUF) people download beside the default quant: its file name, its size in bytes,
    # its warmup compute buffer where a published llama.cpp log measured it (0: none did), and where each was read.
    mmproj: str = ""
    mmproj_bytes: int = Field(default=0, ge=0)
    mmproj_compute_bytes: int = Field(default=0, ge=0)
    mmproj_source: str = ""
    config: dict[str, Any]

    @field_validator("default_quant")
    @classmethod
    def _known_quant(cls, value: str) -> str:
        if value:
            FileType(value)  # a ValueError (a ValidationError for the row) on a name calc does not know
        return value

    @model_validator(mode="after")
    def _tags_are_aliases(self) -> ModelPreset:
        for tag, quant in self.ollama_quants.items():
            FileType(quant)
            if tag not in self.aliases:
                raise ValueError(f"{self.id}: ollama_quants names {tag}, which is not one of its aliases")
        if bool(self.mmproj) != bool(self.mmproj_bytes) or (self.mmproj_bytes and "https://" not in self.mmproj_source):
            raise ValueError(f"{self.id}: mmproj needs its file name, its bytes and mmproj_source")
        if self.mmproj_compute_bytes and not self.mmproj_bytes:
            raise ValueError(f"{self.id}: mmproj_compute_bytes without the projector")
        if self.ollama_quants and not self.ollama_quants_source:
            raise ValueError(f"{self.id}: ollama_quants without ollama_quants_source")
        for kind, repo in self.vllm_repos.items():
            if kind not in VLLM_CHECKPOINT_KINDS or repo.count("/") != 1:
                raise ValueError(f"{self.id}: vllm_repos has {kind} = {repo}")
            if f"{kind}: " not in self.vllm_repos_source:
                raise ValueError(f"{self.id}: vllm_repos_source does not say where its {kind} repo was found")
        return self

    @cached_property
    def architecture(self) -> Architecture:
        return from_hf_config(self.config)

    @property
    def release_quant(self) -> str:
        """The format the model's own release ships in, what ``vllm serve`` of its repo loads: FP8 or MXFP4 where its
        config.json's ``quantization_config`` says so, else its ``torch_dtype`` (BF16 when the preset's config states
        none, as the releases of the last two years are)."""
        quantization = self.config.get("quantization_config")
        method = str(quantization.get("quant_method", "")).lower() if isinstance(quantization, dict) else ""
        if method == "fp8":
            return "FP8"
        if method == "mxfp4":
            return "MXFP4_MOE"
        dtype = str(self.config.get("torch_dtype") or self.config.get("dtype") or "bfloat16").lower()
        return {"float16": "F16", "float32": "F32"}.get(dtype, "BF16")

    def ref(self) -> ModelRef:
        return ModelRef(id=self.id, name=self.name, family=self.family, architecture=self.architecture,
                        source=self.source, vision_encoder=self.vision_encoder or bool(self.mmproj),
                        mmproj=self.mmproj, mmproj_bytes=self.mmproj_bytes,
                        mmproj_compute_bytes=self.mmproj_compute_bytes)  # fmt: skip


class Catalog:
    """Models and GPUs by id, with lookups that fail with suggestions."""

    def __init__(
        self, models: list[ModelPreset], gpus: list[Gpu], fingerprint: str = "", machines: tuple[Machine, ...] = ()
    ) -> None:
        # The SHA-256 of the preset files this catalog was read from ("" for one built in code): what a cache of
        # anything derived from the catalog (the parser's name index) is keyed by.
        self.fingerprint = fingerprint
        self.models: dict[str, ModelPreset] = {m.id: m for m in models}
        self.gpus: dict[str, Gpu] = {g.id: g for g in gpus}
        self._model_keys: dict[str, str] = {}
        for m in models:
            for key in (m.id, m.name, *m.aliases):
                self._model_keys.setdefault(normalize_key(key), m.id)
        self._gpu_keys: dict[str, str] = {}
        for g in gpus:
            for key in (g.id, g.name, *g.aliases):
                self._gpu_keys.setdefault(normalize_key(key), g.id)
        self._ollama_quants = {tag.lower(): quant for m in models for tag, quant in m.ollama_quants.items()}
        self.machines: dict[str, Machine] = {m.id: m for m in machines}
        self._machine_keys = {normalize_key(key): m.id for m in machines for key in (m.name, *m.aliases)}

    def find_model(self, text: str) -> ModelPreset | None:
        model_id = self._model_keys.get(normalize_key(text))
        return self.models[model_id] if model_id else None

    def ollama_tag_quant(self, tag: str) -> str | None:
        """The quant of the file an Ollama library tag that a preset lists as its alias pulls (``llama3.2:1b`` →
        ``Q8_0``), or None where the catalog records none."""
        return self._ollama_quants.get(tag.strip().lower())

    def find_gpu(self, text: str) -> Gpu | None:
        gpu_id = self._gpu_keys.get(normalize_key(text))
        return self.gpus[gpu_id] if gpu_id else None

    def find_machine(self, text: str) -> Machine | None:
        """The computer a product name names ("mac studio", "맥 미니"), or None."""
        machine_id = self._machine_keys.get(normalize_key(text))
        return self.machines[machine_id] if machine_id else None

    def model(self, text: str) -> ModelPreset:
        found = self.find_model(text)
        if found is None:
            raise UnknownModelError(f"unknown model: {text}", suggestions=self.suggest_models(text))
        return found

    def gpu(self, text: str) -> Gpu:
        found = self.find_gpu(text)
        if found is None:
            raise UnknownGpuError(f"unknown GPU: {text}", suggestions=self.suggest_gpus(text))
        return found

    def suggest_models(self, text: str, limit: int = 5) -> list[str]:
        return _suggest(text, self._model_keys, limit)

    def suggest_gpus(self, text: str, limit: int = 5) -> list[str]:
        return _suggest(text, self._gpu_keys, limit)

    def gpu_variants(self, family: str) -> list[Gpu]:
        return [g for g in self.gpus.values() if g.family == family]

    def other_sizes(self, gpu: Gpu) -> list[Gpu]:
        """The other memory sizes of ``gpu``'s family, smallest first, when ``gpu`` is the one a name without a size
        means (its family's default); otherwise none."""
        if not gpu.default or not gpu.family:
            return []
        others = [g for g in self.gpu_variants(gpu.family) if g.id != gpu.id]
        return sorted(others, key=lambda g: g.memory_bytes)


def _suggest(text: str, keys: Mapping[str, str], limit: int) -> list[str]:
    import difflib  # only when a name is not found: not on the start-up path

    matches = difflib.get_close_matches(normalize_key(text), list(keys), n=limit * 4, cutoff=0.5)
    ids: list[str] = []
    for key in matches:
        if keys[key] not in ids:
            ids.append(keys[key])
    return ids[:limit]


# The shipped preset files, found next to their package (not through importlib.resources, whose import pulls in
# tempfile, shutil and the compression modules: a tenth of a cold start). Installs are plain folders, never zips.
PRESETS_DIR = Path(import_module("vramfit.presets").__file__ or "").parent


_TABLES = {"models.toml": "model", "gpus.toml": "gpu"}  # the table of rows each preset file must have


def _cached_rows(name: str, raw: bytes) -> tuple[str, Path | None]:
    """The SHA-256 of a preset file's bytes, and the cache file its parsed rows are kept in (None: no cache)."""
    digest = hashlib.sha256(raw).hexdigest()
    folder = cache_dir()
    return digest, folder / f"{Path(name).stem}-{digest[:20]}.json" if folder else None


def _load_toml(name: str, *, use_cache: bool = True) -> tuple[dict[str, Any], str]:
    """A preset file's rows. Parsing the TOML takes most of a cold start's catalog time, so the parsed rows are kept
    as JSON next to the user's other caches (:mod:`calc.cache_files`), under the TOML's SHA-256: an edited preset
    file is parsed afresh, and a cache that cannot be read or written is simply not used."""
    raw = (PRESETS_DIR / name).read_bytes()
    digest, cached = _cached_rows(name, raw)
    cached = cached if use_cache else None
    if cached is not None and (found := read_cache_json(cached)) is not None:
        rows = found[0].get(_TABLES[name]) if isinstance(found[0], dict) else None
        if isinstance(rows, list) and rows and all(isinstance(row, dict) for row in rows):
            return found[0], digest
        set_aside(cached, f"not a table of [[{_TABLES[name]}]] rows")
    import tomllib  # only when the cache misses: not on the start-up path

    data = tomllib.loads(raw.decode("utf-8"))
    if cached is not None:
        write_cache_file(cached, json.dumps(data).encode("utf-8"))
    return data, digest


def _gpu_from_row(row: Mapping[str, Any]) -> Gpu:
    fields = dict(row)
    memory_gib = float(fields.pop("memory_gib"))
    fields.pop("source_note", None)
    fields.pop("fp16_tflops_source", None)
    fields.pop("pcie_source", None)
    fields["memory_bytes"] = int(memory_gib * GIB)
    if "gpu_share_gib" in fields:
        fields["gpu_share_bytes"] = int(float(fields.pop("gpu_share_gib")) * GIB)
    fields["aliases"] = tuple(fields.get("aliases", ()))
    return Gpu(**fields)


@lru_cache(maxsize=1)
def load_catalog() -> Catalog:
    """The shipped catalog (parsed once per process); rows from a cache file that do not make a catalog (edited or
    truncated by hand) are set aside and read again from the TOML."""
    try:
        return _catalog(use_cache=True)
    except (ValueError, TypeError, KeyError, AttributeError) as exc:  # pydantic's ValidationError is a ValueError
        for name in ("models.toml", "gpus.toml"):
            _digest, cached = _cached_rows(name, (PRESETS_DIR / name).read_bytes())
            if cached is not None and cached.exists():
                set_aside(cached, f"its rows make no catalog: {str(exc).splitlines()[0]}")
        return _catalog(use_cache=True)


def _catalog(*, use_cache: bool) -> Catalog:
    model_rows, model_digest = _load_toml("models.toml", use_cache=use_cache)
    gpu_rows, gpu_digest = _load_toml("gpus.toml", use_cache=use_cache)
    models = [ModelPreset(**row) for row in model_rows.get("model", [])]
    gpus = [_gpu_from_row(row) for row in gpu_rows.get("gpu", [])]
    machines = tuple(
        Machine(**{k: v for k, v in row.items() if k != "source_note"}) for row in gpu_rows.get("machine", [])
    )
    fingerprint = hashlib.sha256((model_digest + gpu_digest).encode()).hexdigest()
    return Catalog(models, gpus, fingerprint=fingerprint, machines=machines)
