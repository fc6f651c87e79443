"""A fake Ollama registry on 127.0.0.1: manifests by tag, blob downloads redirected to a storage path that honours
range requests, so the real registry client runs in the tests without the network."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.fake_ollama.server import FakeRegistry, Tag

__all__ = ["FakeRegistry", "Tag", "use_registry"]


def use_registry(monkeypatch: pytest.MonkeyPatch, url: str, cache: Path) -> None:
    """Point this test's Ollama reads at ``url``, online and with vramfit's own timeout, keeping remote reads in
    ``cache`` (a fresh folder: the test starts with nothing read)."""
    monkeypatch.setenv("VRAMFIT_OLLAMA_REGISTRY", url)
    monkeypatch.delenv("VRAMFIT_OLLAMA_TIMEOUT_SECONDS", raising=False)
    monkeypatch.delenv("VRAMFIT_OFFLINE", raising=False)
    monkeypatch.delenv("HF_HUB_OFFLINE", raising=False)
    monkeypatch.setenv("VRAMFIT_CACHE_DIR", str(cache))
