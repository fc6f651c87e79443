"""Where a question names a model outside the preset catalog: a Hugging Face repo, a link to it or to one of its
GGUF files, or Ollama's form of a Hub GGUF (``hf.co/{repo}:Q4_K_M``).

Only finding and checking, with no network and no HTTP client imported: every question passes through
:func:`find_reference`, and most name no repo, so the Hub client (``bot.sources.huggingface``) is imported only
when one is found. A URL to a host other than the Hub's is refused here, before anything is fetched.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from urllib.parse import urlparse

from vramfit.bot.answering.cards import AnswerError

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
REPO_ID = re.compile(rf"{_NAME}/{_NAME}")
_ANY_URL = re.compile(r"https?://(?P<host>[^\s/:?#]+)", re.IGNORECASE)


@dataclass(frozen=True, slots=True)
class HubReference:
    """A repo on the Hub, and optionally one file, a revision and the quant asked for (``:Q4_K_M``)."""

    repo: str
    revision: str = "main"
    file: str = ""
    quant: str = ""


def endpoint() -> str:
    """The Hub to read from: ``HF_ENDPOINT`` (a mirror, or a test server) or huggingface.co."""
    return (os.environ.get("HF_ENDPOINT") or DEFAULT_ENDPOINT).rstrip("/")


def find_reference(text: str) -> tuple[HubReference, str] | None:
    """The Hub reference in ``text`` and the text without it, or None. A link to another host is refused."""
    link = _LINK.search(text)
    match = link or _BARE.search(text)
    if match is None:
        for url in _ANY_URL.finditer(text):
            if not _allowed_link_host(url["host"]):
                raise AnswerError(
                    "remote_host_refused",
                    f"vramfit reads models from the Hugging Face Hub only, not from {url['host']}",
                    subject=url["host"][:80],
                )
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


def _allowed_link_host(host: str) -> bool:
    host = host.lower().removeprefix("www.")
    return host in HUB_HOSTS or host == (urlparse(endpoint()).hostname or "")


def allowed_storage_host(host: str) -> bool:
    host = host.lower()
    return host == (urlparse(endpoint()).hostname or "") or host in HUB_HOSTS or host.endswith(STORAGE_SUFFIXES)
