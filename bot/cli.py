"""``vram``: the calculator in a terminal, as a readable table or as the JSON contract.

    vram "llama3-8b 32k on a 3060"
    vram --json --model llama-3-8b --quant Q4_K_M --context 32768 --gpu rtx-3060-12gb
    vram --json --config path/to/config.json --context 8k

Exit 0 with an answer, 2 with an error (a JSON object with --json), never a traceback for bad input; 130 when
interrupted (Ctrl-C), 1 when the answer cannot be written (a closed pipe, a full disk).

The Hub and Ollama clients, huggingface_hub and httpx, load inside bot.sources only when a server is asked.
"""

from __future__ import annotations

import argparse
import contextlib
import itertools
import json
import os
import re
import stat
import sys
import tempfile
import threading
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import shtab

from vramfit.bot.answering.cards import Overrides
from vramfit.bot.answering.chart_data import chart_series
from vramfit.bot.answering.configs import model_from_config
from vramfit.bot.answering.followups import followup_slots, merge, parse_or_none, slots_of
from vramfit.bot.answering.log_doctor import diagnose
from vramfit.bot.answering.resolve import FitResult, IntentResult, resolve, still_assumed
from vramfit.bot.detect import DetectedMachine, detect, gpu_specs, ram_spec
from vramfit.bot.errors import AnswerError
from vramfit.bot.i18n import Lang, Tr, _
from vramfit.bot.logs import MAX_LOG_BYTES, read_log, unread_error
from vramfit.bot.parser import ParsedQuery, draft_model_ref, parse, parse_gpu_spec, slots
from vramfit.bot.parser.numbers import parse_quantity
from vramfit.bot.parser.text import clean
from vramfit.bot.render.contract import error_json, result_json
from vramfit.bot.render.labels import SOURCE_UNREAD_NOTE
from vramfit.bot.render.log_report import log_report_json, render_log_report
from vramfit.bot.render.text import (
    ASK_DISPLAY_SHARE,
    error_message,
    error_text,
    list_gpus_text,
    list_models_text,
    quant_mix_line,
    render_result,
    speed_first_line,
    terminal_colours,
    unparsed_line,
)
from vramfit.bot.sources.huggingface import best_quant_files, hub_model, with_hub_repos
from vramfit.bot.sources.ollama import ollama_model
from vramfit.bot.sources.references import (
    UNREAD_CODES,
    HubReference,
    find_ollama_tag,
    find_reference,
    mentions_remote_model,
    ollama_tags_written,
    parse_ollama_name,
    preset_in_place_of_reference,
)
from vramfit.bot.untrusted_text import inert
from vramfit.bot.version import vramfit_version
from vramfit.calc.cache_files import cache_dir, usable_folder
from vramfit.calc.errors import BadNumberError, UnknownModelError, VramfitError
from vramfit.calc.estimate import answer
from vramfit.calc.file_types import file_type_in_header, file_type_in_name, parse_file_type, uploader_mix
from vramfit.calc.files import read_config_json
from vramfit.calc.gguf import architecture_from_gguf, read_gguf
from vramfit.calc.gpu import GIB
from vramfit.calc.presets import Catalog, load_catalog, normalize_key
from vramfit.calc.ram_speed import RamSpeed
from vramfit.calc.request import (
    MAX_CONTEXT,
    MAX_GPU_COUNT,
    MAX_USERS,
    Engine,
    GpuChoice,
    KvType,
    ModelRef,
    Request,
    unstated_context,
)
from vramfit.calc.results import Answer

EXIT_ERROR = 2
OLLAMA_SOURCE = "ollama://"  # bot.sources.ollama's ModelRef.source


class _ArgumentError(Exception):
    pass


class _Parser(argparse.ArgumentParser):
    """argparse that answers a bad flag like any other bad input (``bad_flag``, localized) instead of exiting, and
    keeps each flag's choices to offer them (argparse's own message is English only)."""

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(exit_on_error=False, **kwargs)
        self.choices_of: dict[str, list[str]] = {}

    def add_argument(self, *args: Any, **kwargs: Any) -> argparse.Action:
        action = super().add_argument(*args, **kwargs)
        for flag in action.option_strings if action.choices else ():
            self.choices_of[flag] = [str(choice) for choice in action.choices or ()]
        return action

    def error(self, message: str) -> Any:  # "unrecognized arguments: --bogus" still comes here
        raise _ArgumentError(message)

    def bad_flag(self, error: argparse.ArgumentError | _ArgumentError, argv: Sequence[str]) -> AnswerError:
        """The ``bad_flag`` error for what argparse refused: the flag and the value given (or the unknown words), with
        the flag's choices as suggestions."""
        if isinstance(error, argparse.ArgumentError):
            flag = error.argument_name or ""
            given = list(argv)
            value = given[given.index(flag) + 1] if flag in given[:-1] and flag in self.choices_of else ""
            subject = f"{flag} {value}".strip()
        else:
            subject = str(error).partition(": ")[2] or str(error)
            flag = ""
        return AnswerError("bad_flag", str(error), subject=subject, suggestions=self.choices_of.get(flag, ()))


def build_arg_parser(lang: Lang = "en") -> _Parser:
    """The command line, with its help in ``lang``."""
    tr = Tr(lang)
    p = _Parser(prog="vram", description=tr(_("Will this LLM run on my GPU? Memory by component, engine-accurate.")))
    p.add_argument(
        "query", nargs="*", help=tr(_('the question in words, e.g. "llama3-8b 32k 3060" or "라마3 8B 32k 3060"'))
    )
    p.add_argument(
        "--json",
        action="store_true",
        help=tr(_("print the JSON answer (its fields are described in docs/cli-json.md of the vramfit repository)")),
    )
    p.add_argument("--model", help=tr(_("preset model id or alias (see --list-models)")))
    p.add_argument("--config", help=tr(_("a Hugging Face config.json, for any model")))
    p.add_argument("--gguf", help=tr(_("a GGUF file: exact tensor sizes from its header")))
    p.add_argument(
        "--hf",
        metavar="REPO",
        help=tr(_("a Hugging Face GGUF repo or link: exact sizes from the header of its file, read remotely")),
    )
    p.add_argument("--file", help=tr(_("with --hf: the GGUF file in the repo (default: the one of --quant)")))
    p.add_argument(
        "--ollama",
        metavar="TAG",
        help=tr(_("an Ollama model tag (qwen3.5:9b): exact sizes from the header of its GGUF, read from the registry")),
    )
    p.add_argument("--quant", help=tr(_("quant: Q4_K_M (default), Q8_0, F16, FP8, INT4, ...")))
    p.add_argument("--context", help=tr(_("tokens per user: 8192 (default), 32k, 128k")))
    p.add_argument("--users", help=tr(_("sequences held at once (default 1)")))
    p.add_argument("--kv-cache", help=tr(_("KV cache type: f16 (default), q8_0, q4_0, fp8, bf16, f32")))
    p.add_argument("--gpu", action="append", help=tr(_("preset GPU id or alias; repeat it, or write '2x rtx-3090'")))
    p.add_argument("--gpu-count", type=str, help=tr(_("how many of the (first) GPU")))
    p.add_argument(
        "--ram",
        help=tr(_("system RAM, e.g. 64GB (default: 32 GB assumed): checked when layers or experts stay on the CPU")),
    )
    p.add_argument(
        "--ram-speed",
        help=tr(
            _(
                "system RAM kind, rate and channels, e.g. ddr4, ddr5-6000, 'ddr4-3200 4 channel' (default: DDR5-5600, "
                "2 channels assumed): the speed of weights kept in RAM"
            )
        ),
    )
    p.add_argument(
        "--detect",
        action="store_true",
        help=tr(_("read this machine's GPUs (nvidia-smi, rocm-smi, sysctl) and RAM, and answer for them")),
    )
    p.add_argument(
        "--log",
        metavar="FILE",
        help=tr(
            _(
                "read a llama.cpp, Ollama or vLLM log (or nvidia-smi) from FILE, or - for standard input: what the "
                "engine allocated beside vramfit's estimate, and why it failed"
            )
        ),
    )
    p.add_argument(
        "--chart",
        metavar="FILE.png",
        help=tr(_("also draw memory against context to FILE.png: each GPU's level and where the total crosses it")),
    )
    p.add_argument(
        "--draft",
        "-md",
        metavar="MODEL",
        help=tr(_("a draft model for speculative decoding (a preset, e.g. qwen3-0.6b): its weights, KV cache and "
                  "compute buffer join the model's on the GPUs")),
    )  # fmt: skip
    p.add_argument("--draft-quant", help=tr(_("the draft model's quantization (default Q4_K_M)")))
    p.add_argument(
        "--draft-kv", choices=[k.value for k in KvType], help=tr(_("the draft's KV cache type (default f16, -ctkd)"))
    )
    p.add_argument(
        "--draft-max",
        help=tr(_("tokens drafted a step (llama.cpp's --spec-draft-n-max, default 3); no memory of its own")),
    )
    p.add_argument(
        "--mtp",
        action="store_true",
        help=tr(_("draft with the model's own MTP head (llama.cpp's --spec-type draft-mtp) and count what it loads")),
    )
    p.add_argument(
        "--mmproj",
        "--images",
        action="store_true",
        help=tr(
            _(
                "images are sent: count the vision projector (the preset's or the repo's mmproj file) and its compute "
                "buffer, as llama.cpp's --fit does"
            )
        ),
    )
    p.add_argument(
        "--reserved",
        help=tr(
            _(
                "GPU memory other programs already use, e.g. 1.5GB (a desktop on the card; nvidia-smi shows it): "
                "taken off what the model may use"
            )
        ),
    )
    p.add_argument(
        "--flash-attn", choices=["on", "off"], help=tr(_("flash attention (default on, as llama.cpp's -fa auto)"))
    )
    p.add_argument("--engine", choices=[e.value for e in Engine], help=tr(_("llama.cpp (default) or vllm")))
    p.add_argument(
        "--ubatch", help=tr(_("llama.cpp micro-batch, -ub (default 512): sizes compute buffers and SWA caches"))
    )
    p.add_argument("--batch", help=tr(_("llama.cpp logical batch, -b (default 2048)")))
    p.add_argument(
        "--kv-unified",
        choices=["on", "off"],
        help=tr(_("one KV buffer shared by all users (default on, as llama-server) or one per user")),
    )
    p.add_argument(
        "--swa-full", action="store_true", help=tr(_("llama.cpp --swa-full: full-size sliding-window caches"))
    )
    p.add_argument("--lang", choices=["ko", "en"], help=tr(_("language of the answer (default: the question's)")))
    p.add_argument(
        "--list-models", nargs="?", const="", metavar="FILTER", help=tr(_("list preset models (those matching FILTER)"))
    )
    p.add_argument(
        "--list-gpus", nargs="?", const="", metavar="FILTER", help=tr(_("list preset GPUs (those matching FILTER)"))
    )
    p.add_argument("--version", action="store_true", help=tr(_("print the version and exit")))
    # Shell completion from the parser itself (shtab: a maintained generator, rather than scripts written by hand).
    # The shells are shtab's own (its choices): bash, zsh, tcsh, fish since shtab 1.9, powershell in later releases.
    shtab.add_argument_to(p, ["--print-completion"], help=tr(_("print a completion script for the shell named")))
    p.add_argument("--interactive", action="store_true", help=tr(_("ask questions at a prompt, one per line")))
    return p


def argv_lang(argv: Sequence[str], *, locale: bool = False) -> Lang:
    """The language before the question is parsed: --lang, else Hangul in the arguments, else English (answers
    follow the question's language) or, with ``locale``, the terminal's locale (help text, the prompt)."""
    for flag, value in itertools.pairwise([*argv, ""]):
        if flag == "--lang" and value in ("ko", "en"):
            return "ko" if value == "ko" else "en"
        if flag in ("--lang=ko", "--lang=en"):
            return "ko" if flag.endswith("ko") else "en"
    if any("\uac00" <= ch <= "\ud7a3" for ch in " ".join(argv)):
        return "ko"
    if not locale:
        return "en"
    setting = os.environ.get("LC_ALL") or os.environ.get("LC_MESSAGES") or os.environ.get("LANG") or ""
    return "ko" if setting.startswith("ko") else "en"


def _number(text: str, what: str, low: int, high: int) -> int:
    value = parse_quantity(text)
    if value is None:
        raise BadNumberError(f"{what}: not a number: {text}", field=what, value=text)
    if not low <= value <= high:
        raise BadNumberError(
            f"{what} must be between {low} and {high}: {text}", field=what, value=text, low=low, high=high
        )
    return value


def _model_from_file(args: argparse.Namespace) -> ModelRef | None:
    if args.ollama:
        model = _ollama_flag(args.ollama)
        if model is not None:
            return model
    if args.hf or args.ollama:  # --ollama hf.co/{repo}:{quant} is Ollama's name for a Hub GGUF: read from the Hub
        found = find_reference(args.hf or args.ollama)
        reference = found[0] if found else HubReference(repo=args.hf.strip())
        if args.file:
            reference = HubReference(reference.repo, reference.revision, args.file, reference.quant)
        return hub_model(reference, args.quant or "", args.engine or "llama.cpp")[0]
    if args.gguf:
        header = read_gguf(args.gguf)
        name = inert(str(header.metadata.get("general.name") or Path(args.gguf).stem))[:200]
        return ModelRef(
            id=Path(args.gguf).stem,
            name=name,
            architecture=architecture_from_gguf(header),
            gguf=header,
            source=str(args.gguf),
        )
    if args.config:
        path = Path(args.config)
        config = read_config_json(path)
        # A config.json is named by its folder (a downloaded repo); a file with a name of its own by that name.
        named = path.stem if path.name != "config.json" else path.parent.name or path.stem
        return model_from_config(config, fallback_name=named, source=str(path))
    return None


def _ollama_flag(value: str) -> ModelRef | None:
    """The model of ``--ollama TAG``, or None for Ollama's name of a Hub GGUF (``hf.co/{repo}:{quant}``)."""
    hub = re.match(r"^(?:https?://)?(?:www\.)?(?:hf\.co|huggingface\.co)/", value.strip(), re.IGNORECASE)
    if hub and find_reference(value) is not None:
        return None
    reference = parse_ollama_name(value)
    if reference is None:
        subject = value.strip()[:80]
        raise AnswerError("ollama_not_found", f"{subject!r} is not an Ollama model name", subject=subject)
    return ollama_model(reference)[0]


def _gpu_choices(args: argparse.Namespace) -> tuple[GpuChoice, ...] | None:
    if not args.gpu:
        return None
    catalog = load_catalog()
    choices = [parse_gpu_spec(spec, catalog) for spec in args.gpu]
    if args.gpu_count:
        count = _number(args.gpu_count, "gpu_count", 1, MAX_GPU_COUNT)
        choices[0] = choices[0].model_copy(update={"count": count})
    return tuple(choices)


def _overrides(args: argparse.Namespace) -> dict[str, Any]:
    """Request fields given as flags: they override what the text says."""
    overrides: dict[str, Any] = {}
    model = _model_from_file(args)
    if model is None and args.model:
        # The preset's id: the parser's request builder applies the preset's own default quant (gpt-oss: MXFP4_MOE).
        overrides["model"] = load_catalog().model(args.model).id
    if model is not None:
        overrides["model"] = model
    if args.quant:
        overrides["quant"] = parse_file_type(args.quant).value
    if model is not None and model.gguf is not None:
        # The numbers are the file's own tensors: the label names the file's quant, by its name or its header (an
        # Ollama blob's name is its digest: only the header names it).
        named = "" if model.source.startswith(OLLAMA_SOURCE) else file_type_in_name(model.source)
        if label := named or file_type_in_header(model.gguf.metadata):
            overrides["quant"] = label
    if args.context:
        overrides["context"] = _number(args.context, "context", 1, MAX_CONTEXT)
    if args.users:
        overrides["users"] = _number(args.users, "users", 1, MAX_USERS)
    if args.kv_cache:
        try:
            overrides["kv_cache"] = KvType(args.kv_cache.lower())
        except ValueError as exc:
            raise BadNumberError(
                f"unknown KV cache type: {args.kv_cache}", suggestions=[k.value for k in KvType]
            ) from exc
    if args.flash_attn:
        overrides["flash_attn"] = args.flash_attn == "on"
    if args.engine:
        overrides["engine"] = Engine(args.engine)
    if args.ubatch:
        overrides["n_ubatch"] = _number(args.ubatch, "ubatch", 1, 65536)
    if args.batch:
        overrides["n_batch"] = _number(args.batch, "batch", 1, 65536)
    if args.kv_unified:
        overrides["kv_unified"] = args.kv_unified == "on"
    if args.swa_full:
        overrides["swa_full"] = True
    gpus = _gpu_choices(args)
    if gpus is not None:
        overrides["gpus"] = gpus
    if args.ram:
        overrides["ram_bytes"] = _ram_bytes(args.ram)
    if args.reserved:
        overrides["reserved_bytes"] = slots.reserved_bytes(args.reserved)
    if args.mmproj:
        overrides["images"] = True
    if args.mtp:
        overrides["mtp"] = True
    if args.draft:
        overrides["draft"] = draft_model_ref(args.draft)
    if args.draft_quant:  # without it, Request's own default
        overrides["draft_quant"] = parse_file_type(args.draft_quant).value
    if args.draft_kv:
        overrides["draft_kv_cache"] = KvType(args.draft_kv)
    if args.draft_max:
        overrides["draft_max"] = _number(args.draft_max, "draft_max", 1, 64)
    if args.ram_speed:
        overrides["ram_speed"] = _ram_speed(args.ram_speed)
    return overrides


def _ram_speed(text: str) -> RamSpeed:
    """``--ram-speed ddr5-6000``, ``ddr4``, ``"ddr4-3200 4 channel"``: read as the question's words are."""
    scratch = slots.Scratch(clean(text))
    found = slots.extract_ram_speed(scratch)
    rest = scratch.text.replace(slots.USED, " ").replace("ram", " ").strip()
    if found is None or not found.kind_named or rest:
        raise BadNumberError(
            f"ram-speed: not a memory kind and rate: {text}", field="ram_speed", value=text,
            suggestions=["ddr4", "ddr5-6000", "ddr4-3200 4 channel"],
        )  # fmt: skip
    return found.speed


_RAM_SIZE = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*(gb|gib|g|tb|tib|t)?\s*$", re.IGNORECASE)
MAX_RAM_GB = 65536


def _ram_bytes(text: str) -> int:
    """``--ram 64GB``, ``64``, ``1TB``: memory modules are sold in binary gigabytes, so 64 GB is 64 GiB."""
    found = _RAM_SIZE.match(text)
    if found is None:
        raise BadNumberError(f"ram: not a memory size: {text}", field="ram", value=text)
    gb = float(found[1]) * (1024 if (found[2] or "g").lower().startswith("t") else 1)
    if not 1 <= gb <= MAX_RAM_GB:
        raise BadNumberError(
            f"ram must be between 1 and {MAX_RAM_GB} GB: {text}", field="ram", value=text, low=1, high=MAX_RAM_GB
        )
    return int(gb * GIB)


@dataclass(frozen=True, slots=True)
class Resolved:
    """The answer for the command line, its language, what was assumed, what was not understood, and an uploader's
    mix sized as its nearest standard quant ("" when none was asked for, or the file itself was read)."""

    result: IntentResult
    lang: Lang
    assumed: tuple[str, ...]
    unparsed: tuple[str, ...]
    quant_mix: str = ""
    asks_speed: bool = False  # "how fast", "몇 토큰 나와?": the speed is said first
    display_unsized: bool = False  # a display runs on the card, its share unsaid: the answer asks for it
    source_unread: str = ""  # a repo or tag whose server could not be read: answered from its preset instead
    overridden: tuple[tuple[str, str], ...] = ()  # (flag, what the text said) where a flag won over the text


def _parse_under_flags(text: str, model_flag: bool) -> tuple[ParsedQuery, str]:
    """The text's parse; with a model given by a flag, a model name the text cannot place is left out (the flag wins)
    and returned, so the answer can say so."""
    try:
        return parse(text), ""
    except UnknownModelError as exc:
        subject = exc.subject
        if not model_flag or not subject:
            raise
        words = r"[\s._-]*".join(re.escape(word) for word in subject.split())
        return parse(re.sub(words, " ", text, flags=re.IGNORECASE)), subject


def _overridden(args: argparse.Namespace, parsed: ParsedQuery, unplaced: str) -> tuple[tuple[str, str], ...]:
    """Where a flag and the text both name a setting and disagree: (the flag as given, what the text said)."""
    found: list[tuple[str, str]] = []
    if args.model and (unplaced or (parsed.model and parsed.model != _preset_id(args.model))):
        found.append((f"--model {args.model}", unplaced or str(parsed.model)))
    pairs = (
        ("--quant", args.quant, parsed.quant, lambda v: parse_file_type(v).value),
        ("--context", args.context, parsed.context, lambda v: _number(v, "context", 1, MAX_CONTEXT)),
        ("--users", args.users, parsed.users, lambda v: _number(v, "users", 1, MAX_USERS)),
        ("--kv-cache", args.kv_cache, parsed.kv_cache.value if parsed.kv_cache else None, str.lower),
        ("--engine", args.engine, parsed.engine.value if parsed.engine else None, str),
    )
    for flag, given, said, read in pairs:
        if given and said is not None and read(given) != said:
            found.append((f"{flag} {given}", str(said)))
    said_gpus = [choice.gpu.id for choice in parsed.gpus]
    if args.gpu and said_gpus and said_gpus != [_gpu_id(spec) for spec in args.gpu]:
        found.append(("--gpu " + " --gpu ".join(args.gpu), ", ".join(said_gpus)))
    return tuple(found)


def _preset_id(name: str) -> str:
    found = load_catalog().find_model(name)
    return found.id if found is not None else name


def _gpu_id(spec: str) -> str:
    return parse_gpu_spec(spec).gpu.id


def resolve_with_fallback(args: argparse.Namespace) -> Resolved:
    """:func:`resolve_args`; when the question's repo or tag could not be read for want of its server and names a
    model the catalog has, that preset's answer, saying so (``source_unread``)."""
    try:
        return resolve_args(args)
    except AnswerError as exc:
        text = " ".join(args.query).strip()
        fallback = None
        if exc.code in UNREAD_CODES and text:
            fallback = preset_in_place_of_reference(text, load_catalog().find_model)
        if fallback is None:
            raise
        resolved = resolve_args(argparse.Namespace(**{**vars(args), "query": [fallback[0]]}))
        return replace(resolved, source_unread=fallback[1])


def resolve_args(args: argparse.Namespace) -> Resolved:
    """The answer for the command line (see :class:`Resolved`)."""
    text = " ".join(args.query).strip()
    overrides = _overrides(args)
    remote = tag = None
    if text and "model" not in overrides:
        remote = find_reference(text, skip=lambda written: load_catalog().find_model(written) is not None)
        if remote is None:  # a tag a preset lists as its alias ("qwen3.5:4b") is the preset's, answered offline
            tag = find_ollama_tag(text, skip=lambda written: load_catalog().find_model(written) is not None)
        text = remote[1] if remote is not None else tag[1] if tag is not None else text
    unparsed_quant: tuple[str, ...] = ()
    if text or remote is not None or tag is not None:
        parsed, unplaced = _parse_under_flags(text, "model" in overrides)  # the parser: only for a question in words
        if remote is not None:  # "unsloth/Qwen3.5-9B-GGUF Q4_K_M 32k 3060": the file of the asked quant
            engine = str(overrides.get("engine") or parsed.engine or "llama.cpp")  # vLLM reads a repo's safetensors
            best = None
            if parsed.intent == "best_quant":  # which quant of a GGUF repo fits: its own files, largest first
                best = best_quant_files(remote[0], engine, overrides.get("gpus") or parsed.gpus)
            if best is not None:
                overrides["model"], overrides["quant"], overrides["quant_files"] = best
            else:
                asked = str(args.quant or parsed.quant_mix or parsed.quant or "")  # "UD-Q4_K_XL" picks that file
                model, file_quant = hub_model(remote[0], asked, engine)
                overrides["model"] = model
                if file_quant or model.checkpoint is None:  # a safetensors repo with no quant: the request's default
                    overrides["quant"] = file_quant or str(parsed.quant or "Q4_K_M")
        alias_quant = None
        if remote is None and tag is None and "model" not in overrides and not args.quant:
            # "llama3.2:1b", a preset's alias and an Ollama library tag: the quant of the file that tag pulls
            alias_quants = (load_catalog().ollama_tag_quant(written) for written in ollama_tags_written(text))
            alias_quant = next((q for q in alias_quants if q), None)
        if alias_quant is not None:
            overrides["quant"] = alias_quant
            if parsed.quant and parsed.quant.upper() != alias_quant:
                unparsed_quant = (parsed.quant,)  # a quant beside the tag that the tag's file is not: said so
        if tag is not None:  # "qwen3.5:9b 32k 3060": the tag is one file, whatever quant the words name
            model, file_quant = ollama_model(tag[0])
            overrides["model"] = model
            overrides["quant"] = file_quant or str(overrides.get("quant") or parsed.quant or "Q4_K_M")
            if file_quant and parsed.quant and parsed.quant.upper() != file_quant.upper():
                unparsed_quant = (parsed.quant,)  # a quant beside the tag that the tag's file is not: said so
        lang: Lang = args.lang or parsed.lang
        result = resolve(parsed, **overrides)
        given = set(overrides) - {"quant_files"} | ({"gpu_variant", "gpu_generic"} if "gpus" in overrides else set())
        if "ram_bytes" in overrides:  # --ram: the size is given, not assumed
            given.add("ram")
        if "model" in overrides:
            given.add("model_fuzzy")
        assumed = still_assumed(result, tuple(a for a in parsed.assumed if a not in given))
        mix = _approximated_mix(args.quant or parsed.quant_mix, overrides.get("model"))
        overridden = _overridden(args, parsed, unplaced) if remote is None and tag is None else ()
        resolved = Resolved(result, lang, assumed, (*parsed.unparsed, *unparsed_quant), mix, parsed.asks_speed,
                            parsed.display_unsized)  # fmt: skip
        return replace(resolved, overridden=overridden)
    if "model" not in overrides:
        raise UnknownModelError("no model named", suggestions=["llama-3.1-8b", "qwen2.5-7b", "gemma-2-9b"])
    assumed = tuple(key for key in ("quant", "context", "users", "kv_cache", "engine") if key not in overrides)
    if isinstance(overrides["model"], str):  # a preset named by --model: its ref, and the quant it ships in
        preset = load_catalog().model(overrides["model"])
        overrides["model"] = preset.ref()
        if (
            "quant" not in overrides
            and preset.default_quant
            and overrides.get("engine", Engine.LLAMA_CPP) == Engine.LLAMA_CPP
        ):
            overrides["quant"] = preset.default_quant
    if "context" not in overrides:
        overrides["context"] = unstated_context(overrides["model"].architecture)
    checkpoint = overrides["model"].checkpoint
    if checkpoint is not None and overrides.get("engine") == Engine.VLLM and "quant" not in overrides:
        overrides["quant"] = checkpoint.file_type  # a safetensors repo: vLLM runs its checkpoint as it is
    fit = FitResult(answer=answer(Request(**overrides), tuple(load_catalog().gpus.values())))
    mix = _approximated_mix(args.quant or "", overrides["model"])
    return Resolved(fit, args.lang or "en", still_assumed(fit, assumed), (), mix)


def _approximated_mix(asked: str, model: object) -> str:
    """The uploader's mix the answer sized as a standard quant: asked for, and no file of it read (a file's header
    gives every tensor's own type, so that answer is exact)."""
    if not asked or (isinstance(model, ModelRef) and model.gguf is not None):
        return ""
    found = uploader_mix(asked)
    return found[1] if found is not None else ""


def _json_line(data: Any, out: Any) -> str:
    """One JSON object and a newline; non-ASCII as ``\\uXXXX`` escapes when ``out`` cannot encode Hangul (a terminal
    or pipe set to ASCII or Latin-1), so the JSON stays whole and valid."""
    return json.dumps(data, ensure_ascii=not _can_encode(out, "한")) + "\n"


def _can_encode(out: Any, text: str) -> bool:
    encoding = getattr(out, "encoding", None) or "utf-8"
    try:
        text.encode(encoding)
    except (UnicodeEncodeError, LookupError):
        return False
    return True


def _matching(names: Sequence[str], wanted: str) -> bool:
    """Whether any of a preset's names contains ``wanted``, spaces, hyphens, dots and case aside."""
    key = normalize_key(wanted)
    return not key or any(key in normalize_key(name) for name in names)


def filtered_catalog(wanted: str) -> Catalog:
    """The shipped catalog's models and GPUs whose id, name or an alias contains ``wanted`` ("" for all)."""
    catalog = load_catalog()
    models = [m for m in catalog.models.values() if _matching((m.id, m.name, *m.aliases), wanted)]
    gpus = [g for g in catalog.gpus.values() if _matching((g.id, g.name, *g.aliases), wanted)]
    return Catalog(models, gpus)


def _catalog_json(kind: str, catalog: Catalog) -> dict[str, Any]:
    """``--list-models --json`` and ``--list-gpus --json``: the presets' ids, names and (GPUs) memory."""
    if kind == "models":
        return {"models": [{"id": m.id, "name": m.name} for m in catalog.models.values()]}
    return {"gpus": [{"id": g.id, "name": g.name, "memory_bytes": g.memory_bytes} for g in catalog.gpus.values()]}


SOURCE_FLAGS = ("config", "gguf", "hf", "ollama")


def run(argv: Sequence[str], out: Any = sys.stdout, *, say_overrides: bool = True) -> int:
    """Run the command; returns the exit status. Output goes to ``out``: text for a person (control characters from
    model files made inert), or with ``--json`` one JSON object per answer in every mode. ``say_overrides`` False:
    the flags are the prompt's own (a follow-up), so where they win over the text goes unsaid."""
    lang = argv_lang(argv)
    parser = build_arg_parser(argv_lang(argv, locale=True))
    want_json = "--json" in argv
    try:
        args = parser.parse_args(list(argv))
        lang = args.lang or lang
        sources = [f"--{name}" for name in SOURCE_FLAGS if getattr(args, name)]
        if len(sources) > 1:
            raise AnswerError(
                "conflicting_sources", f"{' and '.join(sources)} each name a model: give one", subject=" ".join(sources)
            )
        if args.interactive:
            return interactive(out, as_json=want_json)
        if args.version:
            version = vramfit_version()
            out.write(_json_line({"version": version}, out) if want_json else f"vram {version}\n")
            return 0
        if args.log:
            return _log_report(args.log, lang, want_json, out)
        if args.list_models is not None or args.list_gpus is not None:
            kind = "models" if args.list_models is not None else "gpus"
            catalog = filtered_catalog(args.list_models if kind == "models" else args.list_gpus)
            if want_json:
                out.write(_json_line(_catalog_json(kind, catalog), out))
            else:
                listing = list_models_text if kind == "models" else list_gpus_text
                out.write(_inert_for(out, listing(catalog, lang)))
            return 0
        detected = _detect_into(args) if args.detect else None
        with _progress_line(args, lang):
            resolved = resolve_with_fallback(args)
        result, lang, assumed, unparsed = resolved.result, resolved.lang, resolved.assumed, resolved.unparsed
    except (argparse.ArgumentError, _ArgumentError) as exc:
        return _fail(parser.bad_flag(exc, argv), lang, want_json, out)
    except VramfitError as exc:
        if exc.code == "unknown_model":
            exc = with_hub_repos(exc)
        return _fail(exc, lang, want_json, out)
    chart_answer = getattr(result, "answer", None)
    if args.chart:
        if not isinstance(chart_answer, Answer):
            return _fail(AnswerError("chart_one_model", "a chart draws one model's answer"), lang, want_json, out)
        try:
            write_chart(chart_answer, lang, Path(args.chart))
        except OSError as exc:
            why = exc.strerror or type(exc).__name__
            return _fail(AnswerError("chart_not_written", why, subject=args.chart, reason=why), lang, want_json, out)
    if want_json:
        data = result_json(result, lang, assumed)
        if args.chart:
            data["chart"] = args.chart
        if unparsed:
            data["request"]["unparsed"] = list(unparsed)
        if resolved.overridden and say_overrides and "request" in data:
            data["request"]["overridden"] = [{"flag": flag, "text": said} for flag, said in resolved.overridden]
        if resolved.source_unread and "request" in data:
            data["request"]["source_unread"] = resolved.source_unread
        if resolved.asks_speed and "request" in data:
            data["request"]["asks_speed"] = True
        if resolved.quant_mix and "quant" in data["request"]:
            data["request"]["quant_mix"] = {"written": resolved.quant_mix, "sized_as": data["request"]["quant"]}
        if detected is not None:
            data["detected"] = detected_json(detected)
        out.write(_json_line(data, out))
    else:
        if detected is not None:
            out.write(_inert_for(out, detected_line(detected, lang) + "\n"))
        if unparsed:
            out.write(_inert_for(out, unparsed_line(unparsed, lang) + "\n"))
        if resolved.source_unread:
            out.write(_inert_for(out, "⚠️ " + Tr(lang)(SOURCE_UNREAD_NOTE, source=resolved.source_unread) + "\n"))
        if resolved.overridden and say_overrides:
            tr = Tr(lang)
            won = _("{flag} over the text's {said}")
            items = "; ".join(tr(won, flag=flag, said=said) for flag, said in resolved.overridden)
            out.write(_inert_for(out, "ℹ️ " + tr(_("The flags win over the text: {items}"), items=items) + "\n"))
        if resolved.asks_speed and isinstance(result, FitResult) and (line := speed_first_line(result.answer, lang)):
            out.write(_inert_for(out, line + "\n"))
        if resolved.quant_mix and isinstance(result, FitResult):
            out.write(quant_mix_line(resolved.quant_mix, result.answer.request.quant, lang) + "\n")
        out.write(terminal_colours(_inert_for(out, render_result(result, lang, assumed)), colour=_colour(out)))
        if resolved.display_unsized and not args.reserved:
            out.write(_inert_for(out, Tr(lang)(ASK_DISPLAY_SHARE) + "\n"))
        if args.chart:
            out.write(_inert_for(out, "📈 " + Tr(lang)(_("Chart written to {file}"), file=args.chart) + "\n"))
    return 0


def _detect_into(args: argparse.Namespace) -> DetectedMachine:
    """``--detect``: this machine's GPUs and RAM (bot.detect) become ``--gpu`` and ``--ram`` where those are not
    given. ``VRAMFIT_MEMINFO`` names another file than /proc/meminfo to read the RAM from."""
    machine = detect(load_catalog(), meminfo=Path(os.environ.get("VRAMFIT_MEMINFO", "/proc/meminfo")))
    if not args.gpu and machine.gpus:
        args.gpu = gpu_specs(machine)
    if not args.ram and (ram := ram_spec(machine)):
        args.ram = ram
    return machine


def detected_line(machine: DetectedMachine, lang: Lang) -> str:
    """ "🔎 Found on this machine: GeForce RTX 4090 (24.0 GiB) · RAM 63.0 GiB (nvidia-smi, /proc/meminfo)"."""
    tr = Tr(lang)
    if not machine.gpus:
        return "🔎 " + tr(_("Found no GPU on this machine (nvidia-smi, rocm-smi and sysctl said nothing): answering "
                            "for what the question names"))  # fmt: skip
    gpus = ", ".join(f"{found.gpu.name} ({tr.gib(found.memory_bytes)})" for found in machine.gpus)
    ram = tr.gib(machine.ram_bytes) if machine.ram_bytes else "—"
    return "🔎 " + tr(_("Found on this machine: {gpus} · RAM {ram} ({sources})"), gpus=gpus, ram=ram,
                      sources=", ".join(machine.sources))  # fmt: skip


def detected_json(machine: DetectedMachine) -> dict[str, Any]:
    """``detected`` of the JSON contract (docs/cli-json.md)."""
    return {
        "gpus": [
            {"name": g.name, "memory_bytes": g.memory_bytes, "used_bytes": g.used_bytes, "gpu": g.gpu.id}
            for g in machine.gpus
        ],
        "ram_bytes": machine.ram_bytes,
        "sources": list(machine.sources),
    }


def _log_report(source: str, lang: Lang, want_json: bool, out: Any) -> int:
    """``vram --log FILE``: the log read (at most MAX_LOG_BYTES of it), diagnosed, reported; the file is only read."""
    try:
        if source == "-":
            raw = sys.stdin.buffer.read(MAX_LOG_BYTES + 1)
        else:
            with open(source, "rb") as handle:
                raw = handle.read(MAX_LOG_BYTES + 1)
    except OSError as exc:
        why = exc.strerror or type(exc).__name__
        return _fail(AnswerError("bad_file", why, subject=source, reason=why), lang, want_json, out)
    reading = read_log(raw.decode("utf-8", errors="replace"))
    if not reading.engine:
        return _fail(unread_error(reading), lang, want_json, out)
    diagnosis = diagnose(reading)
    if want_json:
        out.write(_json_line({"lang": lang, **log_report_json(diagnosis)}, out))
    else:
        out.write(_inert_for(out, render_log_report(diagnosis, lang)))
    return 0


def write_chart(calculated: Answer, lang: Lang, path: Path) -> None:
    """``vram --chart``: the answer's memory against context, drawn to ``path`` (PNG)."""
    try:
        from vramfit.bot.render import chart  # matplotlib takes ~0.3 s to import: only when a chart is asked for
    except ImportError as exc:
        raise AnswerError("chart_unavailable", "matplotlib is not installed") from exc
    png = chart.render_chart(chart_series(calculated), lang)
    path.write_bytes(png)


PROGRESS_AFTER_SECONDS = 1.0


@contextlib.contextmanager
def _progress_line(args: argparse.Namespace, lang: Lang) -> Iterator[None]:
    """A line on stderr while a Hub or registry read takes over a second, on a terminal only, cleared when done."""
    remote = bool(args.hf or args.ollama) or mentions_remote_model(" ".join(args.query))
    if not remote or not sys.stderr.isatty():
        yield
        return
    shown = threading.Event()

    def show() -> None:
        with contextlib.suppress(OSError, ValueError):
            sys.stderr.write("⏳ " + Tr(lang)(_("Reading the model's file header from Hugging Face or Ollama…")))
            sys.stderr.flush()
            shown.set()

    timer = threading.Timer(PROGRESS_AFTER_SECONDS, show)
    timer.daemon = True
    timer.start()
    try:
        yield
    finally:
        timer.cancel()
        if shown.is_set():
            with contextlib.suppress(OSError, ValueError):
                sys.stderr.write("\r\x1b[K")  # the line is erased: the answer follows on stdout
                sys.stderr.flush()


def _colour(out: Any) -> bool:
    """Colours for a person at a colour terminal: ``out`` is one, ``NO_COLOR`` is not set (no-color.org) and TERM is
    not "dumb"; never into a pipe or a file."""
    if os.environ.get("NO_COLOR") or os.environ.get("TERM") == "dumb":
        return False
    isatty = getattr(out, "isatty", None)
    return bool(isatty and isatty())


def _inert_for(out: Any, text: str) -> str:
    """Text for a person: nothing from a model file may drive the terminal (:func:`bot.parser.text.inert`), and a
    character the terminal cannot encode shows as "?" rather than ending the answer with an error."""
    text = inert(text, keep_verdict_marks=True)  # the renderer's own marks: colours, or removed (terminal_colours)
    encoding = getattr(out, "encoding", None)
    if encoding and not _can_encode(out, text):
        with contextlib.suppress(LookupError):
            return text.encode(encoding, errors="replace").decode(encoding)
    return text


def _fail(error: VramfitError, lang: Any, want_json: bool, out: Any) -> int:
    if want_json:
        out.write(_json_line(error_json(error, error_message(error, lang)), out))
    else:
        out.write(_inert_for(out, error_text(error, lang)))
    return EXIT_ERROR


def followup_argv(previous: str, previous_slots: Overrides, line: str) -> tuple[list[str], Overrides] | None:
    """A follow-up to the previous question ("32k면?", "q8이면?", "what about a 4090?"): the previous question's text
    with the merged settings as flags (which win over the text, as in a bot thread), and those settings; None when the
    line asks a question of its own (it names a model) or states no setting."""
    parsed = parse_or_none(line)
    if not previous or parsed is None or parsed.model is not None:
        return None
    change = followup_slots(line)
    if not change:
        return None
    merged = merge(previous_slots, change)
    flags: list[str] = []
    for key, flag in (("quant", "--quant"), ("context", "--context"), ("users", "--users"),
                      ("kv_cache", "--kv-cache"), ("engine", "--engine")):  # fmt: skip
        if key in merged:
            flags += [flag, str(merged[key])]  # type: ignore[literal-required]
    if "flash_attn" in merged:
        flags += ["--flash-attn", "on" if merged["flash_attn"] else "off"]
    for gpu_id, count in merged.get("gpus", ()):
        flags += ["--gpu", f"{count}x {gpu_id}" if count > 1 else gpu_id]
    if "ram_gb" in merged:
        flags += ["--ram", f"{merged['ram_gb']}GB"]
    return [previous, *flags], merged


MAX_HISTORY_BYTES = 1 << 20


def _history_file() -> Path | None:
    """The prompt's history in the cache folder, when that folder is usable (:mod:`calc.cache_files`)."""
    folder = cache_dir()
    return folder / "history" if folder is not None and usable_folder(folder, create=True) else None


def _read_history(editing: Any, history: Path) -> None:
    """readline's history from ``history`` when it is a regular file of a sane size (a planted link to /dev/zero or a
    FIFO would otherwise hang the prompt)."""
    with contextlib.suppress(OSError):
        st = os.lstat(history)
        if stat.S_ISREG(st.st_mode) and st.st_size <= MAX_HISTORY_BYTES:
            editing.read_history_file(history)


def _save_history(editing: Any, history: Path) -> None:
    """readline's history written to a fresh temporary file, then renamed over ``history``: a planted symlink is
    replaced, never written through."""
    with contextlib.suppress(OSError):
        fd, partial = tempfile.mkstemp(prefix=".history.", suffix=".tmp", dir=history.parent)
        os.close(fd)
        try:
            editing.write_history_file(partial)
            os.replace(partial, history)
        finally:
            with contextlib.suppress(OSError):
                os.unlink(partial)


def _line_editing() -> Any:
    """readline for the prompt (editing, ↑ for history, kept between runs in the cache folder), when stdin is a
    terminal and the platform has it; else None."""
    if not sys.stdin.isatty():
        return None
    try:
        import readline
    except ImportError:  # Windows without pyreadline: plain input
        return None
    history = _history_file()
    if history is not None:
        _read_history(readline, history)
    readline.set_history_length(1000)
    return readline


def interactive(out: Any, stdin: Any = None, *, as_json: bool = False) -> int:
    """A prompt for questions; a short follow-up changes the previous question ("32k면?", "what about a 4090?");
    an empty line or end of input quits. With ``as_json`` no greeting nor prompt is written, and each answer is one
    JSON line (a script can drive it through a pipe)."""
    editing = _line_editing() if stdin is None else None
    stdin = stdin or sys.stdin
    tr = Tr(argv_lang([], locale=True))
    json_flag = ["--json"] if as_json else []
    greeting = _(
        'Ask about a model and a GPU, e.g. "llama3-8b 32k 3060" or "라마3 8B 32k 3060에서 돌아가?". '
        'Then change one thing: "32k면?", "what about a 4090?". An empty line quits.'
    )
    if not as_json:
        out.write(tr(greeting) + "\n")
    previous, previous_slots = "", Overrides()
    try:
        while True:
            if editing is not None:
                try:
                    line = input("> ")
                except EOFError:
                    return 0
            else:
                if not as_json:
                    out.write("> ")
                out.flush()
                line = stdin.readline()
            line = line.strip()
            if not line:
                return 0
            followup = followup_argv(previous, previous_slots, line)
            if followup is not None:
                argv, previous_slots = followup
                run([*json_flag, *argv], out, say_overrides=False)  # the follow-up's flags are ours, not the user's
                continue
            if run([*json_flag, line], out) == 0:
                parsed = parse_or_none(line)
                previous, previous_slots = line, (slots_of(parsed) if parsed is not None else Overrides())
    finally:
        history = _history_file()
        if editing is not None and history is not None:
            _save_history(editing, history)  # a read-only cache folder: no history kept


EXIT_WRITE_FAILED = 1
EXIT_INTERRUPTED = 130  # 128 + SIGINT, as a shell reports a program stopped by Ctrl-C


def main(argv: Sequence[str] | None = None) -> int:
    """``vram``: :func:`run` on stdout, ending cleanly whatever happens to the terminal: Ctrl-C (exit 130, a JSON
    error under ``--json``), a closed pipe (``| head``), a full disk or a terminal that cannot encode the answer."""
    argv = list(sys.argv[1:] if argv is None else argv)
    try:
        status = run(argv, sys.stdout)
        sys.stdout.flush()
        return status
    except KeyboardInterrupt:
        _say_interrupted("--json" in argv, argv_lang(argv))
        return EXIT_INTERRUPTED
    except BrokenPipeError:
        _quiet_stdout()  # the reader is gone: say nothing more, and let the exit not flush into the pipe again
        return EXIT_WRITE_FAILED
    except OSError as exc:  # ENOSPC, EIO: the answer could not be written
        _quiet_stdout()
        with contextlib.suppress(OSError, ValueError):
            sys.stderr.write(f"vram: cannot write the answer: {exc.strerror or exc}\n")
        return EXIT_WRITE_FAILED


def _say_interrupted(want_json: bool, lang: Lang) -> None:
    with contextlib.suppress(OSError, ValueError):
        if want_json:
            message = Tr(lang)(_("Interrupted before the answer was ready."))
            sys.stdout.write(_json_line(error_json(AnswerError("interrupted"), message), sys.stdout))
        else:
            sys.stdout.write("\n")
        sys.stdout.flush()


def _quiet_stdout() -> None:
    """Point stdout at the null device, as Python's documentation advises after a broken pipe."""
    with contextlib.suppress(OSError, ValueError, AttributeError):
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())


if __name__ == "__main__":
    sys.exit(main())


__all__ = ["build_arg_parser", "main", "run"]
