"""A fake Ollama registry on 127.0.0.1: manifests by tag, blob downloads redirected to a storage path that honours
range requests, so the real registry client runs in the tests without the network."""

from tests.fake_ollama.server import FakeRegistry, Tag

__all__ = ["FakeRegistry", "Tag"]
