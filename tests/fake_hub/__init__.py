"""A fake Hugging Face Hub on 127.0.0.1: the API routes huggingface_hub calls, file resolution with a redirect to a
storage path, and range requests, so the real client code runs in the tests without the network."""

from tests.fake_hub.server import FakeHub, MemoryCache, Repo

__all__ = ["FakeHub", "MemoryCache", "Repo"]
