"""A fake Hugging Face Hub on 127.0.0.1: the API routes huggingface_hub calls, file resolution with a redirect to a
storage path, and range requests, so the real client code runs in the tests without the network."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.fake_hub.server import FakeHub, MemoryCache, Repo

__all__ = ["FakeHub", "MemoryCache", "Repo", "use_hub"]


def use_hub(
    monkeypatch: pytest.MonkeyPatch,
    url: str,
    cache: Path | str,
    *,
    token: str | None = None,
    deadline_seconds: str | None = None,
) -> None:
    """Point this test's Hub reads at ``url``, online, with ``token`` (none by default), keeping remote reads in
    ``cache`` (a fresh folder: the test starts with nothing read; "": no cache folder) and giving a busy Hub
    ``deadline_seconds`` (vramfit's own deadline when None)."""
    monkeypatch.setenv("HF_ENDPOINT", url)
    if token is None:
        monkeypatch.delenv("HF_TOKEN", raising=False)
    else:
        monkeypatch.setenv("HF_TOKEN", token)
    monkeypatch.delenv("HF_HUB_OFFLINE", raising=False)
    monkeypatch.delenv("VRAMFIT_OFFLINE", raising=False)
    monkeypatch.setenv("VRAMFIT_CACHE_DIR", str(cache))
    if deadline_seconds is not None:
        monkeypatch.setenv("VRAMFIT_HUB_DEADLINE_SECONDS", deadline_seconds)
