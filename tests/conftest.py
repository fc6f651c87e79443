"""Hypothesis profiles: ``default`` keeps the suite quick; ``--hypothesis-profile=deep`` (``make fuzz``) runs the
parser fuzz test at 100,000 generated inputs. Tests that set their own ``max_examples`` keep it in both."""

from __future__ import annotations

import os
import tempfile

from hypothesis import HealthCheck, settings

_COMMON = {"deadline": None, "suppress_health_check": [HealthCheck.too_slow, HealthCheck.data_too_large]}
settings.register_profile("default", max_examples=600, **_COMMON)  # type: ignore[arg-type]
settings.register_profile("deep", max_examples=100_000, **_COMMON)  # type: ignore[arg-type]
settings.load_profile("default")

# The parsed-presets cache (calc.presets.cache_dir) goes to a folder of this test run, never the user's home.
os.environ["VRAMFIT_CACHE_DIR"] = tempfile.mkdtemp(prefix="vramfit-test-cache-")

# No test reaches the real Hub or Ollama registry: unless a test points them at its own fake on 127.0.0.1, they are a
# closed port on this machine (a question that would read them, or search the Hub for an unknown model, is refused
# at once, as with no network).
os.environ.setdefault("HF_ENDPOINT", "http://127.0.0.1:9")
os.environ.setdefault("VRAMFIT_OLLAMA_REGISTRY", "http://127.0.0.1:9")
