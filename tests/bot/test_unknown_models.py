"""A model named with its size that the catalog does not have is said plainly, never answered as another model, with
how to get an exact answer (a repo, a link, an Ollama tag, an attached file); suggestions name real catalog entries
of that family only."""

from __future__ import annotations

import io
import json

import pytest

from vramfit.bot.cli import run


def _error(question: str, lang: str = "en") -> dict[str, object]:
    out = io.StringIO()
    assert run(["--json", "--lang", lang, question], out) == 2, out.getvalue()
    error: dict[str, object] = json.loads(out.getvalue())["error"]
    return error


@pytest.mark.parametrize(
    ("question", "name", "suggestions"),
    [
        ("will Seed-OSS-36B fit on a 4090", "seed oss 36b", []),  # before: Llama 3.1 8B, Qwen2.5 7B, …
        ("Qwen4 14B on a 4080?", "qwen4 14b", ["qwen2.5-14b", "qwen3-14b"]),  # the family's 14B models first
        ("can I run Foobar-2 70B on two 3090s", "foobar 2 70b", []),
    ],
)
def test_an_unknown_model_is_said_plainly(question: str, name: str, suggestions: list[str]) -> None:
    error = _error(question)
    assert error["code"] == "unknown_model"
    message = str(error["message"])
    assert message.startswith(f"I don't know {name} yet, so I won't answer for another model.")
    assert "Hugging Face repo or link, its Ollama tag, or attach its config.json or GGUF" in message
    assert list(error["suggestions"])[: len(suggestions)] == suggestions  # type: ignore[call-overload]


def test_an_unknown_model_in_korean() -> None:
    error = _error("Seed-OSS-36B 4090에서 돼?", "ko")
    assert error["code"] == "unknown_model"
    assert str(error["message"]).startswith("seed oss 36b 모델은 아직 몰라서 다른 모델로 대신 답하지 않을게요.")


def test_the_korean_could_mean_several_message_invents_no_size() -> None:
    """Before: "젬마 4에 해당하는 모델이 여러 개예요. 크기까지 적어 주세요 (예: 젬마 4 14b)", a size Gemma 4 lacks."""
    error = _error("젬마 4 3060", "ko")
    assert error["code"] == "unknown_model"
    assert "14b" not in str(error["message"]) and "크기까지 적어 주세요" in str(error["message"])


@pytest.mark.parametrize("question", ["llama3 8b 32k 3060", "qwen3 14b 4080", "gpt-oss 20b 4090", "라마3 8B 3060"])
def test_known_models_with_sizes_still_answer(question: str) -> None:
    out = io.StringIO()
    assert run(["--json", question], out) == 0, out.getvalue()


@pytest.mark.parametrize(
    ("question", "lang", "words"),
    [
        # "gemma3n e4b" was one (answered as Gemma 3 4B before that): Gemma 3n is a preset now (test_gemma3n.py)
        ("granite 4.0 h micro 3060", "en", "I don't know granite 4.0 h micro yet"),  # before: the 350M model
        ("그래니트 4.0 H 마이크로 3060에서 돼?", "ko", "그래니트 4.0 h 마이크로 모델은 아직 몰라서"),
    ],
)
def test_a_variant_the_catalog_lacks_is_no_loose_match(question: str, lang: str, words: str) -> None:
    error = _error(question, lang)
    assert error["code"] == "unknown_model" and str(error["message"]).startswith(words), error


def test_an_unknown_model_offers_the_gguf_repos_the_hub_has_for_it(
    monkeypatch: pytest.MonkeyPatch, tmp_path: object
) -> None:
    from tests.fake_hub import FakeHub, Repo

    repos = {
        "unsloth/Seed-OSS-36B-Instruct-GGUF": Repo(files={"Seed-OSS-36B-Instruct-Q4_K_M.gguf": b"GGUF"}),
        "bartowski/ByteDance-Seed_Seed-OSS-36B-Instruct-GGUF": Repo(files={"x-Q4_K_M.gguf": b"GGUF"}),
        "ByteDance-Seed/Seed-OSS-36B-Instruct": Repo(files={"model.safetensors": b"{}"}),  # no GGUF: not offered
    }
    with FakeHub(repos) as hub:
        monkeypatch.setenv("HF_ENDPOINT", hub.url)
        error = _error("will Seed-OSS-36B fit on a 4090")
        assert error["repos"] == [
            "bartowski/ByteDance-Seed_Seed-OSS-36B-Instruct-GGUF",
            "unsloth/Seed-OSS-36B-Instruct-GGUF",
        ]
        assert "On Hugging Face: bartowski/ByteDance-Seed_Seed-OSS-36B-Instruct-GGUF" in str(error["message"])
        from vramfit.bot.answering.service import CalcBackend
        from vramfit.bot.errors import AnswerError
        from vramfit.bot.render.embed import render_error

        with pytest.raises(AnswerError) as caught:  # the bot: the same repos under its message
            CalcBackend().answer("will Seed-OSS-36B fit on a 4090", "en", {})
        assert "On Hugging Face: `bartowski/ByteDance-Seed_Seed-OSS-36B-Instruct-GGUF`" in render_error(
            caught.value, "en"
        )
        out = io.StringIO()
        assert run(["--lang", "ko", "Seed-OSS-36B 4090에서 돼?"], out) == 2
        assert "Hugging Face에 있는 저장소: unsloth/Seed-OSS-36B-Instruct-GGUF" in out.getvalue().replace(
            "bartowski/ByteDance-Seed_Seed-OSS-36B-Instruct-GGUF, ", ""
        )


def test_without_the_hub_an_unknown_model_is_still_said_plainly() -> None:
    error = _error("will Seed-OSS-36B fit on a 4090")  # the suite's Hub is a closed port: no repos, the same answer
    assert "repos" not in error and str(error["message"]).startswith("I don't know seed oss 36b yet")


def test_the_bot_offers_the_repos_as_link_buttons(monkeypatch: pytest.MonkeyPatch) -> None:
    from tests.fake_discord.harness import World, make_settings, run
    from tests.fake_hub import FakeHub, Repo
    from vramfit.bot.answering.service import CalcBackend

    repos = {"unsloth/Seed-OSS-36B-Instruct-GGUF": Repo(files={"Seed-OSS-36B-Instruct-Q4_K_M.gguf": b"GGUF"})}

    async def scenario() -> None:
        async with World.start(settings=make_settings(), backend=CalcBackend().backend()) as world:
            interaction = await world.slash("will Seed-OSS-36B fit on a 4090")
            sent = await world.callback(interaction, timeout=10)
            data = sent.json["data"]
            assert data["content"].startswith("I don't know **seed oss 36b** yet")
            buttons = [item for row in data["components"] for item in row["components"]]
            assert buttons == [
                {"type": 2, "style": 5, "disabled": False, "label": "unsloth/Seed-OSS-36B-Instruct-GGUF",
                 "url": "https://huggingface.co/unsloth/Seed-OSS-36B-Instruct-GGUF"}
            ]  # fmt: skip

    with FakeHub(repos) as hub:
        monkeypatch.setenv("HF_ENDPOINT", hub.url)
        run(scenario())
