"""Models named by an Ollama tag: the real registry client against a fake Ollama registry on 127.0.0.1
(tests/fake_ollama), the model blob's GGUF header read with range requests where the registry redirects, and
compared with the same file read locally with --gguf."""

from __future__ import annotations

import hashlib
import io
import os
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.bot.cli_json import run_json
from tests.calc.test_gguf import TINY_LLAMA, write_2026_gguf, write_gguf
from tests.fake_hub import FakeHub, Repo
from tests.fake_ollama import FakeRegistry, Tag, use_registry
from tests.fake_ollama.server import MANIFEST_TYPE
from vramfit.bot.cli import run
from vramfit.bot.sources.references import OllamaReference, find_ollama_tag, parse_ollama_name
from vramfit.calc.file_types import FileType
from vramfit.calc.gguf import read_gguf


@pytest.fixture(scope="module")
def files(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    folder = tmp_path_factory.mktemp("blobs")
    out = {}
    for quant in (FileType.Q8_0, FileType.Q4_K_M):
        path = folder / f"blob-{len(out)}"  # named as Ollama names a blob: by nothing that tells its quant
        write_gguf(path, {**TINY_LLAMA, "vocab_size": 32768}, quant, declare=True)  # a few MiB, a small header
        out[quant.value] = path
    out["qwen35"] = folder / "blob-hybrid"
    write_2026_gguf(out["qwen35"], "qwen35", FileType.Q8_0)
    return out


@pytest.fixture
def registry(files: dict[str, Path], monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Iterator[FakeRegistry]:
    q8, q4 = files["Q8_0"].read_bytes(), files["Q4_K_M"].read_bytes()
    tags = {
        "library/tiny-llama:3b-instruct-q8_0": Tag(gguf=q8),
        "library/tiny-llama:3b-instruct-q4_K_M": Tag(gguf=q4),
        "library/tiny-llama:latest": Tag(gguf=q4),
        "someone/tiny-llama:3b": Tag(gguf=q8),
        "library/tiny-qwen3.5:0.8b": Tag(gguf=files["qwen35"].read_bytes()),
        "library/busy:1b": Tag(gguf=b"GGUF", rate_limited=True),
        "library/slow:1b": Tag(gguf=q8, delay_seconds=3.0),
        "library/elsewhere:1b": Tag(gguf=q8, redirect_to="http://storage.example.net"),
        "library/adapter:1b": Tag(model_layer=False),
        "library/not-gguf:1b": Tag(gguf=b"this is not a GGUF file"),
    }
    with FakeRegistry(tags) as server:
        use_registry(monkeypatch, server.url, tmp_path / "cache")
        yield server


def _manifest_digest(registry: FakeRegistry, name: str) -> str:
    return hashlib.sha256(registry.manifest(registry.tags[name])).hexdigest()


def test_a_tag_in_a_question_answers_from_the_blob_header_exactly(
    registry: FakeRegistry, files: dict[str, Path]
) -> None:
    remote = run_json("tiny-llama:3b-instruct-q8_0 8k 3060")
    local = run_json("--gguf", str(files["Q8_0"]), "--context", "8192", "--gpu", "3060")
    assert remote["estimate"] == local["estimate"] and remote["fits"] == local["fits"]
    assert remote["request"]["quant"] == "Q8_0"  # the header's general.file_type: a blob's name carries none
    digest = _manifest_digest(registry, "library/tiny-llama:3b-instruct-q8_0")
    host = registry.url.removeprefix("http://")
    assert remote["request"]["model"]["source"] == f"ollama://{host}/library/tiny-llama:3b-instruct-q8_0@{digest[:12]}"
    assert remote["request"]["model"]["id"] == "tiny-llama:3b-instruct-q8_0"
    # One manifest asked as the v2 type, one blob request answered by a redirect, then only the header's bytes.
    manifests = [r for r in registry.log if "/manifests/" in r.path]
    assert [r.path for r in manifests] == ["/v2/library/tiny-llama/manifests/3b-instruct-q8_0"]
    assert MANIFEST_TYPE in manifests[0].accept
    blob = "sha256:" + hashlib.sha256(files["Q8_0"].read_bytes()).hexdigest()
    assert [r.path for r in registry.log if "/blobs/" in r.path] == [f"/v2/library/tiny-llama/blobs/{blob}"]
    reads = [r for r in registry.log if r.path.startswith("/storage/")]
    assert reads and all(r.range.startswith("bytes=") for r in reads) and len(reads) <= 3
    assert registry.bytes_sent < files["Q8_0"].stat().st_size // 2


def test_the_header_read_remotely_is_the_files_own(registry: FakeRegistry, files: dict[str, Path]) -> None:
    from vramfit.bot.sources.ollama import ollama_model

    model, label = ollama_model(OllamaReference("tiny-llama", tag="3b-instruct-q4_K_M"))
    assert model.gguf == read_gguf(files["Q4_K_M"])  # every key, tensor, offset and size
    assert label == "Q4_K_M"


@pytest.mark.parametrize(
    ("argv", "quant"),
    [
        (["--ollama", "tiny-llama:3b-instruct-q8_0"], "Q8_0"),
        (["--ollama", "tiny-llama"], "Q4_K_M"),  # the tag defaults to latest
        (["--ollama", "ollama.com/library/tiny-llama:latest"], "Q4_K_M"),  # the registry's host in front
        (["library/tiny-llama:3b-instruct-q4_K_M"], "Q4_K_M"),
        (["Will tiny-llama:3b-instruct-q4_K_M run at 8k on a 3060?"], "Q4_K_M"),
        (["someone/tiny-llama:3b"], "Q8_0"),  # another namespace than library
        (["tiny-llama:3b-instruct-q8_0 8k 3060에서 돌아가?"], "Q8_0"),
    ],
)
def test_the_ways_to_name_a_tag(registry: FakeRegistry, files: dict[str, Path], argv: list[str], quant: str) -> None:
    remote = run_json(*argv)
    assert remote["request"]["quant"] == quant
    context = str(remote["request"]["context"])  # 8k where the question says so, else the file's 4,096
    assert remote["estimate"] == run_json("--gguf", str(files[quant]), "--context", context)["estimate"]
    assert "quant" not in remote["request"]["assumed"] and "unparsed" not in remote["request"]


def test_a_hybrid_model_from_the_registry_has_its_recurrent_state(
    registry: FakeRegistry, files: dict[str, Path]
) -> None:
    remote = run_json("--ollama", "tiny-qwen3.5:0.8b", "--context", "4096")
    local = run_json("--gguf", str(files["qwen35"]), "--context", "4096")
    assert remote["estimate"] == local["estimate"] and remote["estimate"]["recurrent_state_bytes"] > 0


def test_a_korean_question_answers_in_korean(registry: FakeRegistry) -> None:
    out = io.StringIO()
    assert run(["tiny-llama:3b-instruct-q8_0로 8k 3060에서 돌아가?"], out) == 0
    assert "가중치" in out.getvalue() and "Q8_0" in out.getvalue()


def test_the_command_to_run_it_names_a_file_for_the_tag(registry: FakeRegistry) -> None:
    out = io.StringIO()
    assert run(["tiny-llama:3b-instruct-q8_0 8k 3060"], out) == 0
    assert "llama-server -m tiny-llama-3b-instruct-q8_0-Q8_0.gguf -c 8192" in out.getvalue()


def test_a_quant_beside_the_tag_that_is_not_its_files_is_said(registry: FakeRegistry) -> None:
    answer = run_json("tiny-llama:3b-instruct-q8_0 q4_k_m 8k")
    assert answer["request"]["quant"] == "Q8_0"  # the tag is one file
    assert answer["request"]["unparsed"] == ["Q4_K_M"]


def test_a_tag_a_preset_lists_as_its_alias_is_the_preset(registry: FakeRegistry) -> None:
    answer = run_json("qwen3.5:4b 32k on a 3060")
    assert answer["request"]["model"]["id"] == "qwen3.5-4b"
    assert registry.log == []  # answered offline, from the catalog
    assert run_json("--ollama", "qwen3.5:4b", status=2)["error"]["code"] == "ollama_not_found"  # the flag asks
    assert [r.path for r in registry.log] == ["/v2/library/qwen3.5/manifests/4b"]


@pytest.mark.parametrize(
    ("argv", "env", "code"),
    [
        (["nothing-here:1b"], {}, "ollama_not_found"),
        (["--ollama", "not a tag!"], {}, "ollama_not_found"),  # never a request
        (["busy:1b"], {}, "ollama_rate_limited"),
        (["slow:1b"], {"VRAMFIT_OLLAMA_TIMEOUT_SECONDS": "0.3"}, "ollama_unavailable"),
        (["tiny-llama:latest"], {"VRAMFIT_OLLAMA_REGISTRY": "http://127.0.0.1:1"}, "remote_unreachable"),  # not busy
        (["adapter:1b"], {}, "ollama_no_model"),
        (["elsewhere:1b"], {}, "ollama_host_refused"),  # a redirect to another host is not followed
        (["not-gguf:1b"], {}, "bad_file"),
        (["tiny-llama:latest"], {"VRAMFIT_OFFLINE": "1"}, "ollama_offline"),  # never read: says so
    ],
)
def test_registry_errors_are_answers(
    registry: FakeRegistry, monkeypatch: pytest.MonkeyPatch, argv: list[str], env: dict[str, str], code: str
) -> None:
    for key, value in env.items():
        monkeypatch.setenv(key, value)
    started = time.monotonic()
    error = run_json(*argv, status=2)["error"]
    assert error["code"] == code, error
    assert time.monotonic() - started < 2.5  # the slow registry is given up on within its time-out
    if code == "ollama_rate_limited":
        assert "30 seconds" in error["message"]  # its Retry-After
    if code == "ollama_host_refused":
        assert "storage.example.net" in error["message"]
        assert not any("storage" in r.path for r in registry.log)  # nothing was asked of the other host
    if argv[0] == "--ollama" or env.get("VRAMFIT_OFFLINE"):
        assert registry.log == []


# Each registry error in both languages: the arguments, and words of the English and of the Korean sentence.
REGISTRY_ERRORS = [
    (["nothing-here:1b"], "I couldn't find nothing-here:1b in the Ollama registry.",
     "Ollama 레지스트리에서 nothing-here:1b 모델을 찾지 못했어요."),
    (["busy:1b"], "The Ollama registry is limiting requests: try again in 30 seconds.",
     "Ollama 레지스트리가 요청을 제한하고 있어요. 30초 뒤에 다시 시도해 주세요."),
    (["tiny-llama:latest", "--ollama-down"], "I can't reach 127.0.0.1: there is no network",
     "127.0.0.1 서버에 연결할 수 없어요"),
    (["slow:1b", "--ollama-slow"], "The Ollama registry didn't answer in time or refused the request",
     "Ollama 레지스트리가 제때 응답하지 않았거나"),
    (["adapter:1b"], "adapter:1b: the Ollama registry lists no GGUF model file for it.",
     "adapter:1b: Ollama 레지스트리에 이 모델의 GGUF 모델 파일이 없어요."),
    (["elsewhere:1b"], "sent the download to storage.example.net, which is neither the registry nor its storage",
     "다운로드를 storage.example.net 주소로 보냈는데"),
    (["tiny-llama:latest", "--offline"], "has not been read from the Ollama registry before",
     "아직 Ollama 레지스트리에서 읽은 적이 없는데"),
]  # fmt: skip


@pytest.mark.parametrize(
    ("argv", "words"),
    [
        (argv + lang_flag, words)
        for argv, english, korean in REGISTRY_ERRORS
        for lang_flag, words in (([], english), (["--lang", "ko"], korean))
    ],
)
def test_registry_errors_read_as_sentences_in_both_languages(
    registry: FakeRegistry, monkeypatch: pytest.MonkeyPatch, argv: list[str], words: str
) -> None:
    if "--ollama-down" in argv:
        monkeypatch.setenv("VRAMFIT_OLLAMA_REGISTRY", "http://127.0.0.1:1")
    if "--ollama-slow" in argv:
        monkeypatch.setenv("VRAMFIT_OLLAMA_TIMEOUT_SECONDS", "0.3")
    if "--offline" in argv:
        monkeypatch.setenv("VRAMFIT_OFFLINE", "1")
    out = io.StringIO()
    assert run([a for a in argv if a not in ("--ollama-down", "--ollama-slow", "--offline")], out) == 2
    assert words in out.getvalue() and "Traceback" not in out.getvalue()


def _age_cache(folder: Path, seconds: float) -> None:
    for path in (folder / "ollama").glob("*.json"):
        then = time.time() - seconds
        os.utime(path, (then, then))


def test_a_second_question_about_the_same_tag_needs_no_network(
    registry: FakeRegistry, monkeypatch: pytest.MonkeyPatch
) -> None:
    first = run_json("tiny-llama:3b-instruct-q8_0 8k 3060")
    requests = len(registry.log)
    again = run_json("tiny-llama:3b-instruct-q8_0 32k 4090")  # another context and GPU: the same file
    assert len(registry.log) == requests  # answered from the cache
    assert again["estimate"]["weights_bytes"] == first["estimate"]["weights_bytes"]
    assert again["request"]["model"]["source"] == first["request"]["model"]["source"]
    by_flag = run_json("--ollama", "library/tiny-llama:3b-instruct-q8_0", "--context", "8k")
    assert by_flag["estimate"] == first["estimate"]
    monkeypatch.setenv("VRAMFIT_OFFLINE", "1")
    assert run_json("tiny-llama:3b-instruct-q8_0 8k 3060")["estimate"] == first["estimate"]  # offline: from the cache
    assert run_json("tiny-llama:latest", status=2)["error"]["code"] == "ollama_offline"
    assert len(registry.log) == requests


def test_after_a_day_the_manifest_is_asked_again(
    registry: FakeRegistry, files: dict[str, Path], tmp_path: Path
) -> None:
    first = run_json("someone/tiny-llama:3b")
    _age_cache(tmp_path / "cache", 25 * 3600)
    seen = len(registry.log)
    assert run_json("someone/tiny-llama:3b")["estimate"] == first["estimate"]
    assert [r.path for r in registry.log[seen:]] == ["/v2/someone/tiny-llama/manifests/3b"]  # the same digest
    registry.tags["someone/tiny-llama:3b"].gguf = files["Q4_K_M"].read_bytes()  # the tag pushed again
    registry.manifest(registry.tags["someone/tiny-llama:3b"])
    _age_cache(tmp_path / "cache", 25 * 3600)
    seen = len(registry.log)
    pushed = run_json("someone/tiny-llama:3b")
    assert pushed["request"]["quant"] == "Q4_K_M" and pushed["estimate"] != first["estimate"]
    assert any(r.path.startswith("/storage/") for r in registry.log[seen:])
    assert pushed["request"]["model"]["source"].endswith(_manifest_digest(registry, "someone/tiny-llama:3b")[:12])


def test_ollamas_name_for_a_hub_gguf_is_read_from_the_hub(
    registry: FakeRegistry, files: dict[str, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    with FakeHub({"tiny-org/Tiny-GGUF": Repo(files={"Tiny-Q8_0.gguf": files["Q8_0"].read_bytes()})}) as hub:
        monkeypatch.setenv("HF_ENDPOINT", hub.url)
        monkeypatch.delenv("HF_TOKEN", raising=False)
        local = run_json("--gguf", str(files["Q8_0"]))["estimate"]
        assert run_json("--ollama", "hf.co/tiny-org/Tiny-GGUF:Q8_0")["estimate"] == local
        assert run_json("hf.co/tiny-org/Tiny-GGUF:Q8_0")["estimate"] == local
        assert hub.log and registry.log == []


@pytest.mark.parametrize(
    ("text", "name"),
    [
        ("qwen3.5:9b 32k 3060", "qwen3.5:9b"),
        ("gemma3:27b-it-qat on a 3090", "gemma3:27b-it-qat"),
        ("llama3.1:70b-instruct-q4_K_M", "llama3.1:70b-instruct-q4_K_M"),
        ("library/qwen3:30b with 64GB RAM", "qwen3:30b"),
        ("someone/model:tag 4090", "someone/model:tag"),
        ("will qwen3:30b. run?", "qwen3:30b"),
        ("qwen3.5:9b로 32k 돌아가?", "qwen3.5:9b"),
        ("Qwen3:latest", "qwen3:latest"),
        ("qwen3 30b 32k", None),  # no colon: a name for the parser
        ("hf.co/unsloth/Qwen3.5-9B-GGUF:Q4_K_M", None),  # the Hub's form (bot.sources.references.find_reference)
        ("ctx:32k gpu:3090 quant:q4_k_m users:4", None),  # settings written key:value
        ("at 10:30 on localhost:8080", None),
        ("e.g.: llama3 8b", None),
        ("C:\\models\\x.gguf", None),
        ("https://example.org:8080/x", None),
        ("a:b", None),
        ("rtx3090:2", None),  # a tag has a letter in it
    ],
)
def test_tags_are_found_in_text(text: str, name: str | None) -> None:
    found = find_ollama_tag(text)
    assert (found[0].name if found else None) == name
    if found is not None:
        assert name is not None and name.split(":")[-1] not in found[1]


def test_tag_finding_passes_over_what_is_answered_otherwise() -> None:
    assert find_ollama_tag("qwen3.5:4b vs qwen3.5:9b", skip=lambda written: written == "qwen3.5:4b") == (
        OllamaReference("qwen3.5", tag="9b"),
        "qwen3.5:4b vs",
    )
    assert parse_ollama_name("qwen3") == OllamaReference("qwen3")
    assert parse_ollama_name("registry.ollama.ai/library/qwen3:30b") == OllamaReference("qwen3", tag="30b")
    assert parse_ollama_name("not a tag!") is None


@pytest.mark.parametrize("lang", ["en", "ko"])
def test_the_bot_answers_a_tag_from_its_header_and_then_from_the_cache(registry: FakeRegistry, lang: str) -> None:
    """The card's numbers are the tag's own file (the same as --ollama in the terminal), it says where they came from
    (the tag's page, the manifest's digest), and a second question about the tag makes no request to the registry."""
    from vramfit.bot.answering.service import CalcBackend
    from vramfit.bot.render.embed import render_card

    question = "tiny-llama:3b-instruct-q8_0 32k 3060" + ("에서 돌아가?" if lang == "ko" else "")
    card = CalcBackend().answer(question, None, {})
    expected = run_json("--ollama", "tiny-llama:3b-instruct-q8_0", "--context", "32768", "--gpu", "3060")
    assert card.estimate.weights_bytes == expected["estimate"]["weights_bytes"]  # type: ignore[union-attr]
    assert card.estimate.kv_cache_bytes == expected["estimate"]["kv_cache_bytes"]  # type: ignore[union-attr]
    requests = len(registry.log)
    assert requests > 0
    description = render_card(card, lang).description or ""  # type: ignore[arg-type]
    link = "[tiny-llama:3b-instruct-q8\\_0](https://ollama.com/library/tiny-llama:3b-instruct-q8_0)"
    assert link in description
    assert ("Read from the header of " if lang == "en" else "파일의 헤더에서 읽었어요") in description
    again = CalcBackend().answer("tiny-llama:3b-instruct-q8_0 8k 4090", None, {})  # only the file cache is shared
    assert again.estimate.weights_bytes == card.estimate.weights_bytes  # type: ignore[union-attr]
    assert len(registry.log) == requests


def test_the_bot_answers_a_presets_alias_as_the_preset_and_asks_nothing(registry: FakeRegistry) -> None:
    from vramfit.bot.answering.service import CalcBackend

    card = CalcBackend().answer("qwen3.5:9b 32k 3060", None, {})
    assert card.model.id == "qwen3.5-9b"  # type: ignore[union-attr]
    assert registry.log == []


@pytest.mark.parametrize(
    ("question", "code"),
    [("nothing-here:7b 3060", "ollama_not_found"), ("someone/absent:1b 3060", "ollama_not_found")],
)
def test_the_bot_says_what_the_registry_answered(registry: FakeRegistry, question: str, code: str) -> None:
    from vramfit.bot.answering.service import CalcBackend
    from vramfit.bot.errors import AnswerError
    from vramfit.calc.errors import VramfitError

    with pytest.raises((AnswerError, VramfitError)) as refused:
        CalcBackend().answer(question, None, {})
    assert refused.value.code == code


def test_a_tag_in_slash_vram_is_deferred_answered_and_cached(
    files: dict[str, Path], monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """Through the fake Discord: a registry that takes a while makes the bot defer (Discord's 3-second window), the
    card comes as the deferred reply, and the same question again is answered without a request to the registry."""
    from tests.fake_discord.harness import slow_source_then_cached

    with FakeRegistry({"library/tiny-slow:3b": Tag(gguf=files["Q8_0"].read_bytes(), delay_seconds=0.4)}) as server:
        use_registry(monkeypatch, server.url, tmp_path / "cache")
        embed = slow_source_then_cached("tiny-slow:3b 32k 3060", lambda: len(server.log))
    assert "Read from the header of [tiny-slow:3b](https://ollama.com/library/tiny-slow:3b)" in embed["description"]
