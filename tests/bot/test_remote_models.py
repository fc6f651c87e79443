"""Models read from the Hugging Face Hub: the real huggingface_hub client against a fake Hub on 127.0.0.1
(tests/fake_hub), GGUF headers read with range requests and compared byte for byte with the same file read locally."""

from __future__ import annotations

import io
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.bot.cli_json import run_json
from tests.calc.test_gguf import TINY_LLAMA, write_2026_gguf, write_gguf
from tests.fake_hub import FakeHub, Repo, use_hub
from vramfit.bot.cli import run
from vramfit.bot.sources.references import find_reference
from vramfit.calc.file_types import FileType

REPO = "tiny-org/Tiny-Llama-GGUF"


@pytest.fixture(scope="module")
def files(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    folder = tmp_path_factory.mktemp("gguf")
    out = {}
    for quant in (FileType.Q8_0, FileType.Q4_K_M):
        path = folder / f"Tiny-Llama-{quant.value}.gguf"
        write_gguf(path, {**TINY_LLAMA, "vocab_size": 32768}, quant)  # a few MiB: the header is a small part
        out[quant.value] = path
    hybrid = folder / "Tiny-Qwen3.5-Q8_0.gguf"
    write_2026_gguf(hybrid, "qwen35", FileType.Q8_0)
    out["qwen35"] = hybrid
    return out


@pytest.fixture
def hub(files: dict[str, Path], monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Iterator[FakeHub]:
    cache = tmp_path / "cache"
    repos = {
        REPO: Repo(files={p.name: p.read_bytes() for k, p in files.items() if k != "qwen35"} | {"README.md": b"hi"}),
        "tiny-org/Tiny-Qwen3.5-GGUF": Repo(files={files["qwen35"].name: files["qwen35"].read_bytes()}),
        "tiny-org/Gated-GGUF": Repo(files={"x-Q8_0.gguf": b"GGUF"}, gated=True),
        "tiny-org/Busy-GGUF": Repo(files={"x-Q8_0.gguf": b"GGUF"}, rate_limited=True),
        "tiny-org/NoRanges-GGUF": Repo(files={files["Q8_0"].name: files["Q8_0"].read_bytes()}, ignores_ranges=True),
        "tiny-org/Elsewhere-GGUF": Repo(files={files["Q8_0"].name: b"GGUF"}, redirect_to="http://storage.example.net"),
    }
    with FakeHub(repos) as server:
        use_hub(monkeypatch, server.url, cache, deadline_seconds="3")  # a busy Hub is given up on after 3 s, not 15
        yield server


def test_a_repo_in_a_question_answers_from_the_remote_header_exactly(hub: FakeHub, files: dict[str, Path]) -> None:
    remote = run_json(f"{REPO} Q8_0 8k 3060")
    local = run_json("--gguf", str(files["Q8_0"]), "--context", "8192", "--gpu", "3060")
    assert remote["estimate"] == local["estimate"]
    assert remote["request"]["quant"] == "Q8_0"
    assert remote["request"]["model"]["source"].endswith("/Tiny-Llama-Q8_0.gguf")
    # Only the header was read: a few requests, a small part of the file.
    reads = [r for r in hub.log if r.path.startswith("/storage/") and r.method == "GET"]
    assert reads and all(r.range.startswith("bytes=") for r in reads) and len(reads) <= 3
    assert hub.bytes_sent < files["Q8_0"].stat().st_size // 2


def test_the_quant_picks_the_file_and_the_default_is_q4_k_m(hub: FakeHub, files: dict[str, Path]) -> None:
    assert run_json(REPO)["request"]["quant"] == "Q4_K_M"
    local = run_json("--gguf", str(files["Q4_K_M"]))
    assert run_json(REPO)["estimate"] == local["estimate"]
    assert run_json(f"hf.co/{REPO}:Q8_0")["request"]["quant"] == "Q8_0"  # Ollama's form for a Hub GGUF


def test_a_link_to_one_file_is_read_through_hf_endpoint(hub: FakeHub, files: dict[str, Path]) -> None:
    link = f"https://huggingface.co/{REPO}/blob/main/Tiny-Llama-Q8_0.gguf"
    assert run_json("--hf", link)["estimate"] == run_json("--gguf", str(files["Q8_0"]))["estimate"]
    assert not any("huggingface.co" in r.path for r in hub.log)  # every request went to the fake Hub


def test_a_hybrid_model_from_the_hub_has_its_recurrent_state(hub: FakeHub, files: dict[str, Path]) -> None:
    remote = run_json("--hf", "tiny-org/Tiny-Qwen3.5-GGUF", "--context", "4096")
    local = run_json("--gguf", str(files["qwen35"]), "--context", "4096")
    assert remote["estimate"] == local["estimate"] and remote["estimate"]["recurrent_state_bytes"] > 0


def test_korean_question_with_a_repo(hub: FakeHub) -> None:
    out = io.StringIO()
    assert run([f"{REPO} 8k 3060에서 돌아가?"], out) == 0
    assert "가중치" in out.getvalue()


@pytest.mark.parametrize(
    ("argv", "code"),
    [
        (["tiny-org/Missing-GGUF"], "remote_not_found"),
        (["--hf", "not a repo"], "remote_not_found"),  # never reaches huggingface_hub's own validation error
        (["tiny-org/Gated-GGUF"], "remote_gated"),
        (["tiny-org/Busy-GGUF"], "remote_unavailable"),
        (["tiny-org/NoRanges-GGUF Q8_0"], "remote_unavailable"),  # never downloads the whole file instead
        (["tiny-org/Elsewhere-GGUF Q8_0"], "remote_host_refused"),  # a redirect off the Hub is not followed
        ([f"{REPO} Q2_K"], "remote_no_gguf"),
        (["llama 3 8b from https://models.example.org/llama.gguf"], "remote_host_refused"),
        (["http://169.254.169.254/latest/meta-data"], "remote_host_refused"),
    ],
)
def test_remote_errors_are_answers(hub: FakeHub, argv: list[str], code: str) -> None:
    error = run_json(*argv, status=2)["error"]
    assert error["code"] == code, error
    if code == "remote_no_gguf":
        assert set(error["suggestions"]) == {"Q4_K_M", "Q8_0"}  # the quants the repo has
    if argv[0].startswith("tiny-org/Elsewhere"):  # the host refused is named, not the file that led there
        assert "not from storage.example.net." in error["message"], error["message"]
    assert not any("example" in r.path for r in hub.log)


def test_references_are_found_in_text() -> None:
    found = find_reference("will unsloth/Qwen3.5-9B-GGUF Q5_K_M run at 32k on a 3060?")
    assert found is not None and found[0].repo == "unsloth/Qwen3.5-9B-GGUF"
    assert "Q5_K_M" in found[1] and "unsloth" not in found[1]
    link = find_reference("https://huggingface.co/bartowski/x-GGUF/resolve/main/x-Q4_K_M.gguf 4090")
    assert link is not None and (link[0].repo, link[0].file) == ("bartowski/x-GGUF", "x-Q4_K_M.gguf")
    assert find_reference("llama 3.1 8b 32k on 2x 3090") is None  # no repo: the preset catalog answers


@pytest.mark.parametrize(
    ("argv", "words"),
    [
        (["tiny-org/Gated-GGUF", "--lang", "ko"], "접근 권한"),
        (["tiny-org/Gated-GGUF"], "HF_TOKEN"),
        (["tiny-org/Missing-GGUF", "--lang", "ko"], "찾지 못했어요"),
        (["https://models.example.org/x.gguf", "--lang", "ko"], "허깅페이스에서만"),
    ],
)
def test_remote_errors_read_as_sentences(hub: FakeHub, argv: list[str], words: str) -> None:
    out = io.StringIO()
    assert run(argv, out) == 2
    assert words in out.getvalue() and "Traceback" not in out.getvalue()


def test_a_second_question_about_the_same_file_needs_no_network(hub: FakeHub, monkeypatch: pytest.MonkeyPatch) -> None:
    first = run_json(f"{REPO} Q8_0 8k 3060")
    requests = len(hub.log)
    again = run_json(f"{REPO} Q8_0 32k 4090")  # another context and GPU: the same file
    assert len(hub.log) == requests  # answered from the cache
    assert again["estimate"]["weights_bytes"] == first["estimate"]["weights_bytes"]
    monkeypatch.setenv("VRAMFIT_OFFLINE", "1")
    assert run_json(f"{REPO} Q8_0 8k 3060")["estimate"] == first["estimate"]  # offline: from the cache
    assert run_json(f"{REPO} Q4_K_M", status=2)["error"]["code"] == "remote_offline"  # never read: says so
    assert len(hub.log) == requests


def test_the_bot_refuses_other_hosts_and_fetches_nothing(hub: FakeHub) -> None:
    from vramfit.bot.answering.service import CalcBackend
    from vramfit.bot.errors import AnswerError

    with pytest.raises(AnswerError) as refused:
        CalcBackend().answer("https://example.org/model.gguf 3060", None, {})
    assert refused.value.code == "remote_host_refused"
    assert hub.log == []  # no request at all


@pytest.mark.parametrize("lang", ["en", "ko"])
def test_the_bot_answers_a_hub_repo_from_its_header_and_then_from_the_cache(hub: FakeHub, lang: str) -> None:
    """The card's numbers are the file's own (the same as --hf in the terminal), it says where they came from, and a
    second question about the file makes no request to the Hub."""
    from vramfit.bot.answering.service import CalcBackend
    from vramfit.bot.render.embed import render_card

    question = f"{REPO} Q8_0 32k 3060" if lang == "en" else f"{REPO} Q8_0 32k 3060에서 돌아가?"
    card = CalcBackend().answer(question, None, {})
    assert card.estimate.weights_bytes == run_json(f"{REPO} Q8_0 32k 3060")["estimate"]["weights_bytes"]  # type: ignore[union-attr]
    requests = len(hub.log)
    description = render_card(card, lang).description or ""  # type: ignore[arg-type]
    link = "[Tiny-Llama-Q8\\_0.gguf]("  # the file name as Markdown shows it literally
    words = "Read from the header of " + link if lang == "en" else link
    assert words in description
    again = CalcBackend().answer(f"{REPO} Q8_0 8k 4090", None, {})  # a new backend: only the file cache is shared
    assert again.estimate.weights_bytes == card.estimate.weights_bytes  # type: ignore[union-attr]
    assert len(hub.log) == requests


def test_the_quant_label_is_the_files_own(hub: FakeHub, files: dict[str, Path]) -> None:
    # The weights of a file are its own tensors, so the label names that file's quant, not a --quant default.
    assert run_json("--gguf", str(files["Q8_0"]))["request"]["quant"] == "Q8_0"
    assert run_json("--hf", REPO, "--file", "Tiny-Llama-Q8_0.gguf")["request"]["quant"] == "Q8_0"
    assert "quant" not in run_json("--gguf", str(files["Q8_0"]))["request"]["assumed"]


def test_a_file_named_without_its_quant_is_labelled_by_its_header(tmp_path: Path) -> None:
    path = tmp_path / "model.gguf"  # as a blob from a registry is named: by nothing but its digest
    write_gguf(path, TINY_LLAMA, FileType.Q8_0, declare=True)
    assert run_json("--gguf", str(path))["request"]["quant"] == "Q8_0"
    write_gguf(path, TINY_LLAMA, FileType.Q8_0)  # declares none: the --quant given, as before
    assert run_json("--gguf", str(path), "--quant", "Q4_K_M")["request"]["quant"] == "Q4_K_M"


def test_split_files_are_chosen_part_by_part() -> None:
    from vramfit.bot.errors import AnswerError
    from vramfit.bot.sources.huggingface import choose_files
    from vramfit.bot.sources.references import HubReference
    from vramfit.calc.file_types import file_type_in_name

    parts = [f"Q4_K_M/m-Q4_K_M-0000{i}-of-00003.gguf" for i in (1, 2, 3)]
    listing = [*parts, "m-Q8_0.gguf", "mmproj-m-F16.gguf", "README.md"]
    assert choose_files(listing, HubReference("o/m-GGUF", quant="Q4_K_M")) == parts
    assert choose_files(listing, HubReference("o/m-GGUF", quant="Q8_0")) == ["m-Q8_0.gguf"]  # mmproj never chosen
    assert file_type_in_name("x-UD-Q4_K_XL-00001-of-00002.gguf") == "Q4_K_XL"
    with pytest.raises(AnswerError, match="lacks") as missing:
        choose_files(parts[:2], HubReference("o/m-GGUF", quant="Q4_K_M"))  # a missing part is an error
    assert missing.value.code == "remote_no_gguf"


def test_a_repo_in_slash_vram_is_deferred_answered_and_cached(
    files: dict[str, Path], monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """Through the fake Discord: a Hub that takes a while makes the bot defer (Discord's 3-second window), the card
    comes as the deferred reply, and the same question again is answered without a request to the Hub."""
    from tests.fake_discord.harness import slow_source_then_cached

    slow = {"tiny-org/Slow-GGUF": Repo(files={files["Q8_0"].name: files["Q8_0"].read_bytes()}, delay_seconds=0.4)}
    with FakeHub(slow) as server:
        use_hub(monkeypatch, server.url, tmp_path / "cache")
        embed = slow_source_then_cached("tiny-org/Slow-GGUF Q8_0 32k 3060", lambda: len(server.log))
    assert "Read from the header of" in embed["description"]


@pytest.mark.parametrize("kind", ["sqlite", "postgres"])
def test_a_restarted_bot_answers_a_hub_repo_from_its_store(
    files: dict[str, Path], monkeypatch: pytest.MonkeyPatch, tmp_path: Path, kind: str
) -> None:
    """The bot keeps what it read from the Hub in its store (SQLite or PostgreSQL), not the cache folder: a second
    bot (a fresh process state: a new backend, no card cache, the cache folder off) sharing the database answers the
    same file with no request to the Hub; a bot with a store of its own asks the Hub again."""
    from tests import pg
    from tests.fake_discord.harness import World, make_settings, run
    from tests.fake_discord.sent import embed_of
    from vramfit.bot.answering.service import CalcBackend

    repos = {REPO: Repo(files={files["Q8_0"].name: files["Q8_0"].read_bytes()})}
    store: dict[str, Any] = (
        {"database_path": str(tmp_path / "vramfit.db")} if kind == "sqlite" else {"database_url": pg.fresh_url()}
    )
    with FakeHub(repos) as server:
        use_hub(monkeypatch, server.url, "")  # no cache folder: only the store is shared

        async def ask(**settings: Any) -> dict[str, Any]:
            async with World.start(settings=make_settings(**settings), backend=CalcBackend().backend()) as world:
                interaction = await world.slash(f"{REPO} Q8_0 32k 3060")
                body: dict[str, Any] = (await world.callback(interaction, timeout=15)).json["data"]
                return embed_of(body)

        async def scenario() -> None:
            first = await ask(**store)
            assert "Read from the header of" in first["description"]
            requests = len(server.log)
            assert requests > 0
            assert await ask(**store) == first  # restarted, same database: the same card, no request
            assert len(server.log) == requests
            assert await ask(database_path=":memory:") == first  # a store of its own: the Hub is asked again
            assert len(server.log) > requests

        run(scenario(), timeout=60)


def test_a_shared_cache_keeps_hub_and_ollama_reads_with_their_revision(
    hub: FakeHub, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """Given a cache, the sources keep their reads there under the source's key with the revision read (the Hub's
    commit, the manifest digest), write no cache file, and answer from it; a read older than a day is read again."""
    import dataclasses

    from tests.fake_hub import MemoryCache
    from tests.fake_ollama import FakeRegistry, Tag
    from vramfit.bot.answering.cards import Card
    from vramfit.bot.answering.service import CalcBackend

    shared = MemoryCache()

    def answer(question: str) -> Card:
        backend = CalcBackend()  # a new process each time: no card cache in common
        backend.use_remote_cache(shared)
        card = backend.answer(question, None, {})
        assert isinstance(card, Card)
        return card

    card = answer(f"{REPO} Q8_0 8k 3060")
    ((key, read),) = shared.reads.items()
    assert key.startswith("hub|") and REPO in key and read.source == "hub" and read.revision
    assert not (tmp_path / "cache").exists()  # the cache folder is not written
    requests = len(hub.log)
    assert answer(f"{REPO} Q8_0 32k 4090").estimate.weights_bytes == card.estimate.weights_bytes
    assert len(hub.log) == requests
    shared.reads[key] = dataclasses.replace(read, fetched_at=read.fetched_at - 2 * 24 * 3600)  # two days old
    answer(f"{REPO} Q8_0 8k 3060")
    assert len(hub.log) > requests and shared.reads[key].age_seconds < 60  # read again, and kept anew

    blob = tmp_path / "blob"
    write_gguf(blob, {**TINY_LLAMA, "vocab_size": 32768}, FileType.Q8_0, declare=True)
    with FakeRegistry({"library/tiny-llama:3b": Tag(gguf=blob.read_bytes())}) as registry:
        monkeypatch.setenv("VRAMFIT_OLLAMA_REGISTRY", registry.url)
        first = answer("tiny-llama:3b 8k 3060")
        read = next(r for k, r in shared.reads.items() if k.startswith("ollama|"))
        assert read.revision.startswith("sha256:") and read.etag == read.revision
        asked = len(registry.log)
        assert answer("tiny-llama:3b 32k 4090").estimate.weights_bytes == first.estimate.weights_bytes
        assert len(registry.log) == asked  # another process: no request to the registry
    assert not (tmp_path / "cache").exists()
