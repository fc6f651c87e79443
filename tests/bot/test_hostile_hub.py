"""A hostile Hub, registry and cache folder (issue: every remote read has a deadline and a cap, nothing runs from the
cache, the token goes to the Hub only): the real client against tests/fake_hub/hostile.py on 127.0.0.1, crafted
cache folders, and the real bot on the fake Discord."""

from __future__ import annotations

import asyncio
import io
import json
import os
import pickle
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.calc.test_gguf import TINY_LLAMA, write_gguf
from tests.fake_discord.harness import World, make_settings, run
from tests.fake_hub import FakeHub, Repo, use_hub
from tests.fake_hub.hostile import HostileHub
from vramfit.bot.answering.service import CalcBackend
from vramfit.bot.cli import run as vram
from vramfit.bot.errors import AnswerError
from vramfit.bot.sources.budget import RemoteLimits, checked_session, origin_of, remote_budget
from vramfit.bot.sources.references import allowed_ollama_host
from vramfit.calc.cache_files import read_cache_file, write_cache_file
from vramfit.calc.file_types import FileType


def _vram(*argv: str) -> tuple[int, dict[str, Any], float]:
    out = io.StringIO()
    start = time.monotonic()
    status = vram(["--json", *argv], out)
    return status, json.loads(out.getvalue()), time.monotonic() - start


@pytest.fixture
def hostile(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Iterator[HostileHub]:
    with HostileHub() as server:
        use_hub(monkeypatch, server.url, tmp_path / "cache", token="hf_secret_token", deadline_seconds="1.5")
        yield server


@pytest.mark.parametrize("repo", ["evil/drip-listing-GGUF", "evil/drip-head-GGUF"])
def test_a_drip_ends_at_the_deadline_and_leaves_no_reader_behind(hostile: HostileHub, repo: str) -> None:
    """A body or a status line one byte every 0.2 s never trips a per-read time-out; the question's deadline (1.5 s
    here) ends the read itself: no thread is left reading, and the answer is "the Hub didn't answer in time"."""
    def readers() -> set[int]:  # every thread but the fake Hub's own
        return {t.ident or 0 for t in threading.enumerate() if "process_request" not in t.name}

    before = readers()
    status, data, seconds = _vram(f"{repo} 3060")
    assert status == 2 and data["error"]["code"] == "remote_unavailable", data
    assert seconds < 3.0
    assert readers() == before  # before: a "hub-file-list" thread was abandoned, still reading


def test_a_split_file_of_ten_thousand_parts_is_refused_before_any_part_is_read(hostile: HostileHub) -> None:
    status, data, seconds = _vram("evil/split-many-GGUF 3060")
    assert status == 2 and data["error"]["code"] == "remote_too_large", data
    assert "10000 parts" in data["error"]["message"]
    assert [h.path for h in hostile.hits] == ["/api/models/evil/split-many-GGUF/tree/main"]  # the listing only
    assert seconds < 2.0


def test_an_endless_listing_stops_at_the_budget(hostile: HostileHub, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("VRAMFIT_HUB_DEADLINE_SECONDS", "30")  # the file cap, not the clock, ends it here
    status, data, _ = _vram("evil/endless-listing-GGUF 3060")
    assert status == 2 and data["error"]["code"] == "remote_too_large", data
    pages = len(hostile.hits)
    assert pages == RemoteLimits().max_listing_files // 1000 + 1  # 250,000 files at 1,000 a page, then one more
    time.sleep(0.5)
    assert len(hostile.hits) == pages  # nothing keeps paging after the answer


def test_a_redirect_past_the_first_hop_to_another_port_is_refused(hostile: HostileHub) -> None:
    status, data, _ = _vram("evil/redirect-canary-GGUF 3060")
    assert status == 2 and data["error"]["code"] == "remote_host_refused", data
    assert hostile.canary.hits == []  # the canary (a metadata service, say) was never reached


def test_the_token_goes_to_the_hubs_own_host_only(hostile: HostileHub) -> None:
    """A storage host the budget allows (here the canary's port) still gets no Authorization header; the Hub does."""
    from huggingface_hub.utils._headers import build_hf_headers

    hub, canary = origin_of(hostile.url), origin_of(hostile.canary.url)
    refused, spent = AnswerError("remote_host_refused"), AnswerError("remote_unavailable")
    with remote_budget(RemoteLimits(), allowed=lambda o: o in (hub, canary), token_origin=hub,
                       refuse=lambda h: refused, exceeded=lambda e: spent):  # fmt: skip
        session = checked_session()
        headers = build_hf_headers(token="hf_secret_token")
        session.get(f"{hostile.url}/api/models/nothing/tree/main", headers=headers)
        session.get(f"{hostile.canary.url}/file", headers=headers)
    assert hostile.hits[-1].authorization == "Bearer hf_secret_token"
    assert hostile.canary.hits and hostile.canary.hits[-1].authorization == ""


@pytest.mark.parametrize("repo", ["evil/bad-html-GGUF", "evil/bad-object-GGUF", "evil/bad-entry-GGUF"])
def test_a_malformed_file_list_is_an_answer_naming_the_host(hostile: HostileHub, repo: str) -> None:
    status, data, _ = _vram(f"{repo} 3060")
    assert status == 2 and data["error"]["code"] == "remote_bad_answer", data
    assert "127.0.0.1" in data["error"]["message"]
    out = io.StringIO()
    assert vram(["--lang", "ko", f"{repo} 3060"], out) == 2
    assert "127.0.0.1" in out.getvalue() and "읽기를 멈췄어요" in out.getvalue()


@pytest.mark.parametrize(
    ("url", "allowed"),
    [
        ("http://127.0.0.1:11434/v2/library/x/blobs/sha256:00", True),  # the registry itself
        ("http://127.0.0.1:18081/latest/meta-data", False),  # the same host on another port
        ("https://127.0.0.1:11434/v2/", False),  # another scheme
        ("https://bucket.r2.cloudflarestorage.com/blob", True),
        ("https://bucket.r2.cloudflarestorage.com:8443/blob", False),
        ("http://bucket.r2.cloudflarestorage.com/blob", False),
    ],
)
def test_ollama_redirects_are_checked_by_scheme_host_and_port(
    monkeypatch: pytest.MonkeyPatch, url: str, allowed: bool
) -> None:
    monkeypatch.setenv("VRAMFIT_OLLAMA_REGISTRY", "http://127.0.0.1:11434")
    assert allowed_ollama_host(url) is allowed


# -- the cache folder --------------------------------------------------------------------------------------------------


def test_a_planted_pickle_never_runs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Before, the parser's name index was unpickled from the cache folder; a pickle planted under its name ran."""
    from vramfit.bot.parser import index as index_module
    from vramfit.calc.presets import load_catalog

    marker = tmp_path / "ran"

    class Payload:
        def __reduce__(self) -> tuple[Any, tuple[str]]:
            return (os.system, (f"touch {marker}",))

    cache = tmp_path / "cache"
    monkeypatch.setenv("VRAMFIT_CACHE_DIR", str(cache))
    catalog = load_catalog()
    index_module._stored_index(catalog)
    for stored in cache.glob("parser-index-*"):
        stored.write_bytes(pickle.dumps(Payload()))
        stored.with_suffix(".pickle").write_bytes(pickle.dumps(Payload()))
    assert index_module._stored_index(catalog) == index_module.build_index(catalog)
    assert not marker.exists()


def test_a_planted_symlink_is_replaced_not_written_through(tmp_path: Path) -> None:
    folder = tmp_path / "cache"
    folder.mkdir(mode=0o700)
    victim = tmp_path / "victim"
    victim.write_text("keep me")
    (folder / "entry.json").symlink_to(victim)
    for pid in range(os.getpid() - 2, os.getpid() + 3):  # the old temporary names, planted too
        (folder / f"entry.{pid}.tmp").symlink_to(victim)
    write_cache_file(folder / "entry.json", b"{}")
    assert victim.read_text() == "keep me"
    assert (folder / "entry.json").read_bytes() == b"{}" and not (folder / "entry.json").is_symlink()


def test_special_files_and_foreign_folders_are_not_read(tmp_path: Path) -> None:
    folder = tmp_path / "cache"
    folder.mkdir(mode=0o700)
    (folder / "zero.json").symlink_to("/dev/zero")
    os.mkfifo(folder / "fifo.json")
    (folder / "big.json").write_bytes(b"x" * 2048)
    start = time.monotonic()
    assert read_cache_file(folder / "zero.json") is None
    assert read_cache_file(folder / "fifo.json") is None  # refused at once, not waited on
    assert read_cache_file(folder / "big.json", limit=1024) is None
    assert time.monotonic() - start < 1.0
    open_folder = tmp_path / "shared"
    open_folder.mkdir()
    open_folder.chmod(0o777)  # anyone may write here: not a cache to trust
    (open_folder / "entry.json").write_bytes(b"{}")
    assert read_cache_file(open_folder / "entry.json") is None
    write_cache_file(open_folder / "other.json", b"{}")
    assert not (open_folder / "other.json").exists()


REPO = "tiny-org/Tiny-Llama-GGUF"


@pytest.fixture
def good_hub(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeHub]:
    path = tmp_path / "Tiny-Llama-Q8_0.gguf"
    write_gguf(path, TINY_LLAMA, FileType.Q8_0)
    with FakeHub({REPO: Repo(files={path.name: path.read_bytes()})}) as server:
        use_hub(monkeypatch, server.url, tmp_path / "cache")
        yield server


def _tampered(entry: dict[str, Any], how: str) -> bytes:
    if how == "a list":
        return b"[]"
    if how == "no files":
        return json.dumps({**entry, "files": []}).encode()
    if how == "1e400":
        return json.dumps(entry).replace('"mmproj_bytes": 0', '"mmproj_bytes": 1e400').encode()
    if how == "truncated":
        return json.dumps(entry).encode()[:100]
    if how == "a million tensors":
        tensor = entry["header"]["tensors"][0]
        return json.dumps({**entry, "header": {**entry["header"], "tensors": [tensor] * 1_000_000}}).encode()
    raise AssertionError(how)


@pytest.mark.parametrize("how", ["a list", "no files", "1e400", "truncated", "a million tensors"])
def test_a_tampered_cache_entry_is_a_miss_read_again(good_hub: FakeHub, tmp_path: Path, how: str) -> None:
    status, first, _ = _vram(f"{REPO} Q8_0 8k 3060")
    assert status == 0, first
    (entry_path,) = [p for p in (tmp_path / "cache" / "hub").glob("*.json") if "listing" not in p.read_text()[:20]]
    entry = json.loads(entry_path.read_bytes())
    assert "header" in entry
    entry_path.write_bytes(_tampered(entry, how))
    requests = len(good_hub.log)
    status, again, _ = _vram(f"{REPO} Q8_0 8k 3060")
    assert status == 0, again
    assert again["estimate"]["weights_bytes"] == first["estimate"]["weights_bytes"]
    assert len(good_hub.log) > requests  # read from the Hub again


# -- the bot: a stalled Hub holds only the questions that need it ------------------------------------------------------


def test_two_stalled_hub_questions_leave_preset_questions_answered(hostile: HostileHub) -> None:
    async def scenario() -> None:
        settings = make_settings(answer_workers=2, remote_workers=2)
        async with World.start(settings=settings, backend=CalcBackend().backend()) as world:
            stalled = [await world.slash(f"evil/drip-listing-GGUF {n}k 3060") for n in (8, 16)]
            await asyncio.sleep(0.3)
            start = time.monotonic()
            preset = await world.slash("llama3 8b 32k 3060")
            sent = await world.callback(preset, timeout=10)
            assert time.monotonic() - start < 3.0
            assert sent.json["data"]["embeds"][0]["title"].startswith("Llama 3 8B")
            for interaction in stalled:  # deferred, then told the Hub did not answer in time
                await world.callback(interaction, timeout=10)

    run(scenario())


def test_split_parts_with_too_many_tensors_together_stop_at_the_cap(
    hostile: HostileHub, monkeypatch: pytest.MonkeyPatch
) -> None:
    """12 parts of 130,000 tensors each: before, every part was read and merged (45 s, 2.56 GB); then the merged cap
    stopped it at the second part (two tables of 130,000 parsed, 1.4 GB for four such questions at once). Now the
    cap of a GGUF's tensors (16,384, all parts together) is checked against the count a part's header gives before
    its tensor table is read: the first part's table is never parsed."""
    monkeypatch.setenv("VRAMFIT_HUB_DEADLINE_SECONDS", "60")  # the cap, not the clock, ends it here
    status, data, _ = _vram("evil/tensors-GGUF 3060")
    assert status == 2 and data["error"]["code"] == "remote_too_large", data
    assert "16,384 tensors" in data["error"]["message"]
    heads = [h for h in hostile.hits if h.method == "HEAD"]
    assert len(heads) == 1  # the first part's count was enough


def test_a_refused_connection_is_unreachable_at_once_with_no_retry_lines(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, capfd: pytest.CaptureFixture[str]
) -> None:
    """Before: 15 s of "Retrying in 8s [Retry 4/5]" lines, then "the Hub is busy or limiting requests"."""
    import socket

    with socket.socket() as closed:  # a port that was free a moment ago: nothing listens there
        closed.bind(("127.0.0.1", 0))
        port = closed.getsockname()[1]
    monkeypatch.setenv("HF_ENDPOINT", f"http://127.0.0.1:{port}")
    monkeypatch.setenv("VRAMFIT_CACHE_DIR", str(tmp_path))
    status, data, seconds = _vram("someone/Not-In-The-Catalog-GGUF 3060")  # no preset to answer from instead
    assert status == 2 and data["error"]["code"] == "remote_unreachable", data
    assert "I can't reach 127.0.0.1" in data["error"]["message"]
    assert seconds < 2.0
    assert "Retry" not in capfd.readouterr().err


def test_a_refused_token_is_said_as_such(hostile: HostileHub) -> None:
    status, data, _ = _vram("evil/bad-token-GGUF 3060")
    assert status == 2 and data["error"]["code"] == "remote_token_refused", data
    assert "HF_TOKEN" in data["error"]["message"]


def test_a_dripping_registry_is_bounded_by_its_timeout_as_a_whole(
    hostile: HostileHub, monkeypatch: pytest.MonkeyPatch
) -> None:
    """VRAMFIT_OLLAMA_TIMEOUT_SECONDS bounds the whole read of a tag (before: each read, so a drip never ended)."""
    monkeypatch.setenv("VRAMFIT_OLLAMA_REGISTRY", hostile.url)
    monkeypatch.setenv("VRAMFIT_OLLAMA_TIMEOUT_SECONDS", "1")
    status, data, seconds = _vram("someone/dripping:1b 3060")
    assert status == 2 and data["error"]["code"] == "ollama_unavailable", data
    assert seconds < 2.0


@pytest.fixture
def no_hub(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    import socket

    with socket.socket() as closed:  # nothing listens on this port once it is closed
        closed.bind(("127.0.0.1", 0))
        port = closed.getsockname()[1]
    monkeypatch.setenv("HF_ENDPOINT", f"http://127.0.0.1:{port}")
    monkeypatch.setenv("VRAMFIT_CACHE_DIR", str(tmp_path))
    monkeypatch.delenv("VRAMFIT_OFFLINE", raising=False)


def test_an_unreachable_hub_answers_a_known_model_from_its_preset_and_says_so(no_hub: None) -> None:
    status, data, _ = _vram("unsloth/Qwen3.5-9B-GGUF 32k 3060")
    assert status == 0, data
    assert data["request"]["model"]["id"] == "qwen3.5-9b" and data["request"]["context"] == 32768
    assert data["request"]["source_unread"] == "unsloth/Qwen3.5-9B-GGUF"
    out = io.StringIO()
    assert vram(["--lang", "ko", "unsloth/Qwen3.5-9B-GGUF 32k 3060"], out) == 0
    assert out.getvalue().startswith("⚠️ unsloth/Qwen3.5-9B-GGUF 파일을 읽지 못해서")
    status, data, _ = _vram("someone/Not-In-The-Catalog-GGUF 3060")
    assert status == 2 and data["error"]["code"] == "remote_unreachable"  # no preset to fall back on


def test_the_bot_card_says_it_is_the_presets_answer_when_the_hub_is_down(no_hub: None) -> None:
    from vramfit.bot.answering.cards import Card
    from vramfit.bot.render.embed import render_card

    card = CalcBackend().answer("unsloth/Qwen3.5-9B-GGUF 32k 3060", "en", {})
    assert isinstance(card, Card) and card.model.id == "qwen3.5-9b"
    assert card.source_unread == "unsloth/Qwen3.5-9B-GGUF"
    description = render_card(card, "en").description or ""
    assert "⚠️ `unsloth/Qwen3.5-9B-GGUF` could not be read (its server did not answer)" in description


def test_a_gzip_bomb_file_list_stops_at_the_page_cap_in_under_a_second(hostile: HostileHub) -> None:
    assert len(hostile.gzip_bomb()) < 2 << 20  # built before the question: the fake's time is not the client's
    status, data, seconds = _vram("evil/gzip-bomb-GGUF 3060")
    assert status == 2 and data["error"]["code"] == "remote_bad_answer", data
    assert seconds < 1.0


@pytest.mark.parametrize(
    "target",
    [
        "file:///etc/passwd",
        "http://127.0.0.1\\@evil.example/x",  # a backslash that some parsers read as a path
        "http://[::1]:{port}/storage/evil/x",  # the same server, named by its IPv6 loopback
        "https://cas-bridge.example.hf.co.evil.net/x",  # a Hub-like name under another domain
        "http://{canary}/latest/meta-data",  # another port on the Hub's host
    ],
)
def test_every_redirect_hop_off_the_hub_is_refused(hostile: HostileHub, target: str) -> None:
    port = hostile.url.rsplit(":", 1)[1]
    name = f"t{abs(hash(target)) % 10**8}-GGUF"
    hostile.redirect_targets[name] = target.format(port=port, canary=hostile.canary.url.removeprefix("http://"))
    status, data, _ = _vram(f"evil/redirect-to-{name} 3060")
    assert status == 2 and data["error"]["code"] == "remote_host_refused", data
    assert hostile.canary.hits == []


@pytest.mark.parametrize(
    ("repo", "code", "words"),
    [
        ("evil/deep-index", "bad_file", "nested 100,000 deep"),
        ("evil/deep-header", "bad_file", "nested 100,000 deep"),
        ("evil/huge-index", "remote_too_large", "200,000,000 bytes"),
        ("evil/lying-index", "remote_too_large", "more than 33,554,432 bytes"),
        ("evil/huge-config", "remote_too_large", "120,000,000 bytes"),
    ],
)
def test_a_hostile_checkpoint_is_an_answer_read_within_its_limits(
    hostile: HostileHub, monkeypatch: pytest.MonkeyPatch, tmp_path: Path, repo: str, code: str, words: str
) -> None:
    """Issue 43: an index nested 100,000 deep was a RecursionError (a traceback in the CLI, "Something went wrong"
    in the bot), a 200 MB index was read whole (10.5 s, 1.06 GB) and a 120 MB config.json downloaded in full before
    the 4 MiB check refused it, each into huggingface_hub's download cache. Now each is refused with a sentence: by
    the listing's size before any byte is read, by the bytes as they arrive when the listing lied, by its nesting
    before it is parsed; and nothing is written to that cache."""
    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path / "hf-cache"))
    status, data, _ = _vram(f"{repo} 3060")
    assert status == 2 and data["error"]["code"] == code, data
    assert words in data["error"]["message"], data["error"]["message"]
    read = [hit.path for hit in hostile.hits if hit.method == "GET" and hit.path.startswith("/storage/")]
    never_read = {"evil/huge-index": "index.json", "evil/huge-config": "config.json"}.get(repo)
    if never_read:  # refused by the listing: the file itself never asked for
        assert not any(path.endswith(never_read) for path in read), read
    assert not (tmp_path / "hf-cache").exists() or not any((tmp_path / "hf-cache").rglob("*.*"))


def test_the_bot_answers_a_deeply_nested_index_with_a_sentence() -> None:
    """The same index through the bot: the error's sentence, not "Something went wrong" and a traceback."""
    with HostileHub() as server:
        mp = pytest.MonkeyPatch()
        try:
            import tempfile

            folder = tempfile.mkdtemp(prefix="vramfit-hub-")
            use_hub(mp, server.url, Path(folder) / "cache", deadline_seconds="5")

            async def scenario() -> None:
                async with World.start(backend=CalcBackend().backend()) as world:
                    data = await world.ask("evil/deep-index 3060")
                    assert "That file could not be read" in data["content"], data
                    assert "went wrong" not in data["content"]

            run(scenario(), timeout=60)
        finally:
            mp.undo()
