"""Where a question names a model outside the preset catalog: a Hugging Face repo (of GGUF files, or a safetensors
checkpoint such as ``Qwen/Qwen3-8B``), a link to it or to one of its GGUF files, Ollama's form of a Hub GGUF
(``hf.co/{repo}:Q4_K_M``), or a model in an Ollama registry by its tag (``qwen3.5:9b``, ``library/qwen3:30b``).

Only finding and checking, with no network and no HTTP client imported: every question passes through
:func:`find_reference` and :func:`find_ollama_tag`, and most name neither, so the clients (``bot.sources.huggingface``,
``bot.sources.ollama``) are imported only when one is found. A URL to a host other than the Hub's is refused here,
before anything is fetched.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlparse

from vramfit.bot.errors import AnswerError

DEFAULT_ENDPOINT = "https://huggingface.co"
HUB_HOSTS = ("huggingface.co", "hf.co")  # links people paste; read through HF_ENDPOINT
STORAGE_SUFFIXES = (".huggingface.co", ".hf.co")  # where the Hub redirects file downloads (LFS and Xet storage)

_NAME = r"[A-Za-z0-9][\w.-]{0,95}"
_LINK = re.compile(
    rf"(?:https?://)?(?:www\.)?(?P<host>huggingface\.co|hf\.co)/(?P<repo>{_NAME}/{_NAME})"
    rf"(?:/(?:blob|resolve)/(?P<revision>[\w.-]{{1,64}})/(?P<file>[\w./-]{{1,300}}\.gguf))?(?::(?P<tag>[\w.-]{{1,40}}))?",
    re.IGNORECASE,
)
_BARE = re.compile(rf"(?<![\w/.:-])(?P<repo>{_NAME}/[\w.-]*gguf[\w.-]*)(?::(?P<tag>[\w.-]{{1,40}}))?(?![\w/])", re.I)
# Any other repo written bare ("Qwen/Qwen3-8B", "openai/gpt-oss-20b"): an owner with a letter, a name with a letter
# and a digit or hyphen, and nothing after it that would make it a path, a URL or an Ollama tag ("someone/model:tag").
# Words people write with a slash are no repos: "tokens/s", "CPU/GPU" (no digit nor hyphen), "3090/4090" (no letter)
# model sizes side by side, "qwen3-8b/14b" (an owner with a size in it is a model, not an organisation), and quants
# or GPUs side by side, "q4/q8", "fp8/int8", "rtx3090/rtx4090" (an owner of a few letters and a number).
_REPO = re.compile(
    r"(?<![\w/.:@-])(?P<repo>(?=[\w.-]*[A-Za-z])(?![\w.-]*\d[bBmMkK](?![A-Za-z]))(?![A-Za-z]{1,4}\d+(?:_\w+)?/)"
    r"[A-Za-z0-9][\w.-]{1,95}/(?=[\w.-]*[A-Za-z])(?=[\w.-]*[\d-])[A-Za-z0-9](?:[\w.-]{0,94}\w)?)(?![\w/:@-]|\.\w)",
    re.ASCII,
)
REPO_ID = re.compile(rf"{_NAME}/{_NAME}")
_ANY_URL = re.compile(r"https?://(?P<host>[^\s/:?#]+)", re.IGNORECASE)


@dataclass(frozen=True, slots=True)
class HubReference:
    """A repo on the Hub, and optionally one file, a revision and the quant asked for (``:Q4_K_M``)."""

    repo: str
    revision: str = "main"
    file: str = ""
    quant: str = ""


def is_offline() -> bool:
    """``VRAMFIT_OFFLINE`` set (to anything but 0): answer from presets and the cache only."""
    return os.environ.get("VRAMFIT_OFFLINE", "") not in ("", "0")


def endpoint() -> str:
    """The Hub to read from: ``HF_ENDPOINT`` (a mirror, or a test server) or huggingface.co."""
    return (os.environ.get("HF_ENDPOINT") or DEFAULT_ENDPOINT).rstrip("/")


def find_reference(text: str, skip: Callable[[str], bool] | None = None) -> tuple[HubReference, str] | None:
    """The Hub reference in ``text`` and the text without it, or None. A link to another host is refused, also beside
    a repo written bare. ``skip`` passes over a bare repo answered otherwise (a preset's own alias such as
    ``openai/gpt-oss-20b``): links and GGUF repos are always read from the Hub."""
    match = _LINK.search(text)
    if match is None:
        for url in _ANY_URL.finditer(text):
            if not _allowed_link_host(url["host"]):
                raise AnswerError(
                    "remote_host_refused",
                    f"vramfit reads models from the Hugging Face Hub only, not from {url['host']}",
                    subject=url["host"][:80],
                )
        match = _BARE.search(text)
        if match is None:
            match = next((m for m in _REPO.finditer(text) if skip is None or not skip(m["repo"])), None)
    if match is None:
        return None
    groups = match.groupdict()
    reference = HubReference(
        repo=groups["repo"],
        revision=groups.get("revision") or "main",
        file=groups.get("file") or "",
        quant=(groups.get("tag") or "").upper(),
    )
    rest = (text[: match.start()] + " " + text[match.end() :]).strip()
    return reference, rest


def mentions_remote_model(text: str) -> bool:
    """Whether answering ``text`` may read the Hub or an Ollama registry: it names a link, a repo or a tag (a preset's
    own alias included, which is then answered offline). Cheap: a few regular expressions, no catalog."""
    if not text:
        return False
    try:
        return find_reference(text) is not None or find_ollama_tag(text) is not None
    except AnswerError:
        return False  # a link to another host: refused at once, with no request


def _allowed_link_host(host: str) -> bool:
    host = host.lower().removeprefix("www.")
    return host in HUB_HOSTS or host == (urlparse(endpoint()).hostname or "")


def allowed_storage_host(host: str) -> bool:
    host = host.lower()
    return host == (urlparse(endpoint()).hostname or "") or host in HUB_HOSTS or host.endswith(STORAGE_SUFFIXES)


# Ollama: [namespace/]model[:tag], as `ollama run` takes it. A name in a question needs its tag (the colon is what tells
# it from a word), with a letter in it (8b, latest: not 10:30 or a port); settings written "key:value" are no models.
DEFAULT_REGISTRY = "https://registry.ollama.ai"
OLLAMA_STORAGE_SUFFIX = ".r2.cloudflarestorage.com"  # where registry.ollama.ai redirects blob downloads (Cloudflare R2)
OLLAMA_HOSTS = ("ollama.com", "registry.ollama.ai")  # a name written with the registry's host in front
_OLLAMA_MODEL = r"[A-Za-z0-9][A-Za-z0-9._-]{0,79}"
_OLLAMA_TAG_PART = r"[A-Za-z0-9_](?:[A-Za-z0-9._-]{0,126}[A-Za-z0-9_])?"
_OLLAMA_IN_TEXT = re.compile(
    r"(?<![A-Za-z0-9_./:@-])(?:(?P<namespace>[A-Za-z0-9][A-Za-z0-9_-]{0,79})/)?"
    rf"(?P<model>[A-Za-z][A-Za-z0-9._-]{{0,78}}[A-Za-z0-9]):(?P<tag>{_OLLAMA_TAG_PART})(?![A-Za-z0-9_/:@])"
)
_OLLAMA_NAME = re.compile(
    rf"(?:(?P<namespace>[A-Za-z0-9][A-Za-z0-9_-]{{0,79}})/)?(?P<model>{_OLLAMA_MODEL})(?::(?P<tag>{_OLLAMA_TAG_PART}))?"
)
_NOT_MODELS = frozenset((
    "ctx", "context", "quant", "quantization", "gpu", "gpus", "card", "users", "user", "kv", "kv_cache", "kv-cache",
    "cache", "engine", "ram", "vram", "memory", "mem", "batch", "ubatch", "lang", "fa", "flash", "tokens", "model",
    "models", "http", "https", "ftp", "file", "mailto", "ollama", "hf", "note", "ps", "eg", "ie", "re", "localhost",
    "port",
))  # fmt: skip


@dataclass(frozen=True, slots=True)
class OllamaReference:
    """A model in an Ollama registry: ``{namespace}/{model}:{tag}`` (``library`` and ``latest`` when not written)."""

    model: str
    namespace: str = "library"
    tag: str = "latest"

    @property
    def name(self) -> str:
        """As people write it: ``qwen3.5:9b``, ``someone/model:tag``."""
        prefix = "" if self.namespace == "library" else f"{self.namespace}/"
        return f"{prefix}{self.model}:{self.tag}"


def registry() -> str:
    """The registry to read from: ``VRAMFIT_OLLAMA_REGISTRY`` (a mirror, or a test server) or registry.ollama.ai."""
    return (os.environ.get("VRAMFIT_OLLAMA_REGISTRY") or DEFAULT_REGISTRY).rstrip("/")


def _ollama_reference(groups: dict[str, str | None]) -> OllamaReference:
    return OllamaReference(
        model=str(groups["model"]).lower(),
        namespace=(groups.get("namespace") or "library").lower(),
        tag=groups.get("tag") or "latest",
    )


def find_ollama_tag(text: str, skip: Callable[[str], bool] | None = None) -> tuple[OllamaReference, str] | None:
    """The first Ollama tag in ``text`` (``qwen3.5:9b``, ``library/qwen3:30b``) and the text without it, or None.
    ``skip`` passes over a tag as written that is answered otherwise (a preset's own alias such as ``qwen3.5:4b``)."""
    if ":" not in text:
        return None
    for match in _OLLAMA_IN_TEXT.finditer(text):
        setting = not match["namespace"] and match["model"].lower() in _NOT_MODELS  # "ctx:32k", not "someone/model:x"
        if setting or not re.search("[A-Za-z]", match["tag"]):
            continue
        if skip is not None and skip(match[0]):
            continue
        rest = (text[: match.start()] + " " + text[match.end() :]).strip()
        return _ollama_reference(match.groupdict()), rest
    return None


def ollama_tags_written(text: str) -> list[str]:
    """Every Ollama tag in ``text`` as written (``llama3.2:1b``), settings such as ``ctx:32k`` left out: for the tags
    a preset lists as its alias, whose file's quant the catalog records (calc.presets.Catalog.ollama_tag_quant)."""
    if ":" not in text:
        return []
    return [
        match[0]
        for match in _OLLAMA_IN_TEXT.finditer(text)
        if re.search("[A-Za-z]", match["tag"]) and (match["namespace"] or match["model"].lower() not in _NOT_MODELS)
    ]


def parse_ollama_name(value: str) -> OllamaReference | None:
    """``vram --ollama``'s argument: a name with or without its tag, and with or without the registry's host in
    front (``ollama.com/library/qwen3:30b``); None when it is not one."""
    value = re.sub(r"^(?:https?://)?(?:www\.)?", "", value.strip(), flags=re.IGNORECASE)
    host, _, path = value.partition("/")
    if host.lower() in (*OLLAMA_HOSTS, (urlparse(registry()).netloc or "").lower()) and path:
        value = path
    match = _OLLAMA_NAME.fullmatch(value)
    return _ollama_reference(match.groupdict()) if match else None


def _origin(url: str) -> tuple[str, str, int]:
    """``(scheme, host, port)`` of a URL, the scheme's default port filled in; ("", "", 0) when unreadable."""
    parsed = urlparse(url)
    scheme = parsed.scheme.lower()
    try:
        port = parsed.port or (443 if scheme == "https" else 80)
    except ValueError:  # a port out of range or not a number
        return "", "", 0
    return scheme, (parsed.hostname or "").lower(), port


def allowed_ollama_host(url: str) -> bool:
    """Whether a request may go to ``url``: the registry itself (scheme, host and port), or its blob storage on
    Cloudflare R2 over HTTPS on port 443."""
    scheme, host, port = target = _origin(url)
    if host and target == _origin(registry()):
        return True
    return scheme == "https" and port == 443 and host.endswith(OLLAMA_STORAGE_SUFFIX)


# A remote read that failed for want of the server, not because of the file: the answer may fall back on a preset.
UNREAD_CODES = frozenset(("remote_unreachable", "remote_unavailable", "ollama_unavailable"))
_GGUF_SUFFIX = re.compile(r"[-_.]?gguf$", re.IGNORECASE)


def preset_in_place_of_reference(text: str, find_model: Callable[[str], Any]) -> tuple[str, str] | None:
    """When ``text`` names a Hub repo or an Ollama tag of a model the catalog has ("unsloth/Qwen3.5-9B-GGUF",
    "qwen3.5:9b"): the text with that preset's id in place of the reference, and the reference as written; None
    otherwise (``find_model``: the catalog's, a name to its preset or None). For answering from the preset when the
    file itself cannot be read (the server is down)."""
    try:
        hub = find_reference(text)
        tag = find_ollama_tag(text) if hub is None else None
    except AnswerError:
        return None
    if hub is not None:
        reference, rest = hub
        name = reference.repo.rsplit("/", 1)[-1]
        written = f"{reference.repo}:{reference.quant}" if reference.quant else reference.repo
        candidates = (reference.repo, name, _GGUF_SUFFIX.sub("", name))
    elif tag is not None:
        reference_tag, rest = tag
        written = reference_tag.name
        candidates = (reference_tag.name, f"{reference_tag.model}:{reference_tag.tag}", reference_tag.model)
    else:
        return None
    model_id = next((found.id for c in candidates if (found := find_model(c)) is not None), None)
    if model_id is None:
        return None
    quant = hub[0].quant if hub is not None else ""
    return f"{model_id} {quant} {rest}".strip(), written
