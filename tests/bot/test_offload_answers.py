"""When a model does not fit whole: system RAM in questions and flags, the --n-cpu-moe plan on the card and in the
terminal, and the llama-server command that reproduces each answer (read back flag by flag)."""

from __future__ import annotations

import io
import json
import shlex
from typing import Any

import pytest

from vramfit.bot.answering.commands import llama_server_args
from vramfit.bot.answering.service import default_backend
from vramfit.bot.cli import run
from vramfit.bot.render.embed import render_card, render_math
from vramfit.calc.engines import fit_gpu
from vramfit.calc.presets import load_catalog
from vramfit.calc.request import GpuChoice, KvType, Request

GIB = 1 << 30


def vram(*argv: str, status: int = 0) -> tuple[int, str]:
    out = io.StringIO()
    code = run(list(argv), out)
    assert code == status, out.getvalue()
    return code, out.getvalue()


def flags(command: list[str]) -> dict[str, str]:
    """``-c 8192 -ngl 99 --swa-full`` → {"-c": "8192", "-ngl": "99", "--swa-full": ""}."""
    found: dict[str, str] = {}
    words = command[1:]
    for i, word in enumerate(words):
        if word.startswith("-"):
            value = words[i + 1] if i + 1 < len(words) and not words[i + 1].startswith("-") else ""
            found[word] = value
    return found


@pytest.mark.parametrize(
    ("model", "quant", "gpu", "context", "users", "kv", "flash"),
    [("llama-3.1-8b", "Q4_K_M", "rtx-3060-12gb", 32768, 1, KvType.F16, None),
     ("llama-3.1-8b", "Q8_0", "rtx-4090", 16384, 4, KvType.Q8_0, None),
     ("llama-3.1-8b", "Q4_K_M", "rtx-3060-12gb", 8192, 1, KvType.Q8_0, False),
     ("llama-3.3-70b", "Q4_K_M", "rtx-4090", 8192, 1, KvType.F16, None),
     ("gpt-oss-120b", "MXFP4", "rtx-5090", 32768, 1, KvType.F16, None)],
)  # fmt: skip
def test_the_command_reproduces_the_answer_it_came_from(
    model: str, quant: str, gpu: str, context: int, users: int, kv: KvType, flash: bool | None
) -> None:
    catalog = load_catalog()
    request = Request(model=catalog.models[model].ref(), quant=quant, context=context, users=users, kv_cache=kv,
                      flash_attn=flash, gpus=(GpuChoice(gpu=catalog.gpus[gpu]),), ram_bytes=64 * GIB)  # fmt: skip
    fit = fit_gpu(request, request.gpus[0], with_max_context=False)
    command = llama_server_args(request, fit)
    assert shlex.split(shlex.join(command)) == command
    got = flags(command)
    assert command[0] == "llama-server" and got["-m"] == f"{model}-{quant}.gguf"
    assert int(got["-c"]) == context * users  # llama-server's -c is the whole cache, shared by the slots
    if fit.expert_offload is not None:
        assert (got["-ngl"], got["--n-cpu-moe"]) == ("99", str(fit.expert_offload.n_cpu_moe))
    elif fit.verdict.value == "partial":
        assert got["-ngl"] == str(fit.gpu_layers) and "--n-cpu-moe" not in got
    else:
        assert got["-ngl"] == "99"
    assert got["-fa"] == ("on" if request.flash_attn_effective else "off")
    if kv == KvType.F16:
        assert "-ctk" not in got and "-ctv" not in got
    else:
        assert got["-ctk"] == kv.value
        assert got.get("-ctv") == (kv.value if request.flash_attn_effective else None)  # V stays f16 without FA
    # the slots are always named: with none, llama-server b11434 opens 4 (tools/server/server.cpp, n_parallel auto),
    # each with its own recurrent state, sliding-window cache and output row
    assert got["-np"] == str(users)
    assert ("-kvu" in got) == (users > 1)


def test_ram_flag_and_words_reach_the_json() -> None:
    _, out = vram("--json", "--model", "gpt-oss-120b", "--gpu", "rtx-5090", "--ram", "64GB")
    data: dict[str, Any] = json.loads(out)
    assert data["request"]["ram_bytes"] == 64 * GIB
    fit = data["fits"][0]
    assert fit["ram_bytes"] == 64 * GIB and fit["ram_fits"] is True
    assert fit["expert_offload"]["n_cpu_moe"] > 0 and fit["expert_offload"]["verdict"] == "fits"
    assert "ram" not in data["request"]["assumed"]
    _, out = vram("--json", "gpt-oss-120b on a 5090")  # no RAM named: assumed, and said so where it matters
    data = json.loads(out)
    assert data["request"]["ram_bytes"] is None and "ram" in data["request"]["assumed"]
    assert data["fits"][0]["ram_bytes"] == 32 * GIB
    _, out = vram("--json", "llama 3.1 8b 3060")  # fits whole: RAM does not matter, so nothing is assumed about it
    assert "ram" not in json.loads(out)["request"]["assumed"]


@pytest.mark.parametrize("bad", ["lots", "0", "99999999GB"])
def test_a_bad_ram_flag_is_a_clear_error(bad: str) -> None:
    _, out = vram("--ram", bad, "--model", "llama-3.1-8b", status=2)
    assert bad in out and "Traceback" not in out  # the input quoted, never a traceback


@pytest.mark.parametrize(
    ("question", "plan_line", "ram_line"),
    [("gpt-oss-120b on a 5090 with 64GB RAM",
      "↳ MoE offload: the experts of {n} of 36 layers in system RAM (--n-cpu-moe {n}):",
      "usable (64.0 GiB RAM)"),
     ("gpt-oss-120b 5090에서 돌아가? 램 64기가",
      "↳ MoE 오프로드: 전문가 레이어 36개 중 {n}개의 전문가 가중치를 시스템 RAM에 둬요 (--n-cpu-moe {n}):",
      "(RAM 64.0GiB)")],
)  # fmt: skip
def test_the_terminal_shows_the_expert_plan_and_the_command(question: str, plan_line: str, ram_line: str) -> None:
    _, out = vram("--json", question)
    n = json.loads(out)["fits"][0]["expert_offload"]["n_cpu_moe"]
    _, text = vram(question)
    lines = [line.strip() for line in text.splitlines()]
    assert plan_line.format(n=n) in lines
    assert any(line.endswith(ram_line) for line in lines)
    assert f"llama-server -m gpt-oss-120b-MXFP4_MOE.gguf -c 8192 -ngl 99 --n-cpu-moe {n} -fa on -np 1" in lines


def test_the_terminal_row_says_the_plan_it_runs_not_the_layer_split() -> None:
    """Before: "18 of 37 layers on the GPU   −27.6 GiB" above the --n-cpu-moe plan that fits with room to spare."""
    _, out = vram("--json", "gpt-oss-120b on a 5090 with 64GB RAM")
    fit = json.loads(out)["fits"][0]
    plan = fit["expert_offload"]
    headroom = (fit["usable_bytes"] - plan["gpu_bytes"]) / 2**30
    assert headroom > 0
    _, text = vram("gpt-oss-120b on a 5090 with 64GB RAM")
    row = next(line for line in text.splitlines() if line.strip().startswith("GeForce RTX 5090 "))
    assert f"experts of {plan['expert_blocks_moved']}/36 layers in RAM" in row and f"+{headroom:.1f} GiB" in row
    assert "layers on the GPU" not in row and "−" not in row


@pytest.mark.parametrize(
    ("question", "headline", "ram"),
    [("gpt-oss-120b on a 5090 with 64GB RAM",
      "🟧 Runs on **GeForce RTX 5090** with the experts of {n} of 36 layers in RAM.",
      "GPU **"),
     ("gpt-oss-120b 5090에서 돌아가? 램 64기가",
      "🟧 **GeForce RTX 5090**: 레이어 36개 중 {n}개의 전문가를 RAM에 두면 돌아가요.",
      "GPU **")],
)  # fmt: skip
def test_the_card_leads_with_the_plan_and_gives_the_command(question: str, headline: str, ram: str) -> None:
    card = default_backend().answer(question, None, {})
    first = card.fits[0]  # type: ignore[union-attr]
    assert first.expert_plan is not None
    embed = render_card(card, card.lang)
    description = (embed.description or "").splitlines()
    assert description[0] == headline.format(n=first.expert_plan.n_cpu_moe)
    assert description[1].startswith(ram)
    assert description[-1] == f"`{card.command}`"  # type: ignore[union-attr]
    math_footer = render_math(card, card.lang).footer.text or ""  # type: ignore[arg-type]
    assert "assumed" not in description[1] and "GiB assumed" not in math_footer  # the RAM was named
    assert "DDR5-5600" in math_footer  # its speed was not named: the assumed one is said


def test_an_assumed_ram_is_said_only_where_it_matters() -> None:
    backend = default_backend()
    card = backend.answer("llama 3.3 70b on a 4090", None, {})
    # 19.9 GiB for the 36 layers left on the CPU with their KV, the output layer and the token embeddings, and
    # llama-server b11434's prompt cache at its default limit, --cache-ram 8192 MiB (a dense Llama makes no
    # context checkpoints): 27.9 GiB
    assert "RAM 27.9 GiB of 28.0 GiB usable (32.0 GiB, assumed)" in (render_card(card, card.lang).description or "")
    math_footer = render_math(card, card.lang).footer.text or ""
    assert math_footer.startswith("RAM 32.0 GiB assumed · RAM DDR5-5600, 2-channel assumed · ")
    whole = backend.answer("llama 3.1 8b on a 4090", None, {})
    assert "RAM" not in (render_card(whole, whole.lang).description or "")  # nothing on the CPU
    assert "RAM" not in (render_math(whole, whole.lang).footer.text or "")  # neither its size nor speed matters


def test_the_ram_speed_asked_is_the_one_the_answer_reads_and_shows() -> None:
    """gpt-oss-120b on an RTX 5090 with 64 GB: its --n-cpu-moe plan reads 19 blocks' experts from RAM, at two
    channels of DDR4-3200 (51.2 GB/s) when the question says "ddr4", at the assumed DDR5-5600 (89.6) when it names
    none, and says which."""
    _, out = vram("--json", "gpt-oss-120b on a 5090 with 64gb ddr4")
    named = json.loads(out)
    ddr4 = {"kind": "ddr4", "mts": 3200, "channels": 2, "bandwidth_gbs": 51.2}
    assert named["request"]["ram_speed"] == named["fits"][0]["ram_speed"] == ddr4
    assert named["fits"][0]["ram_speed_assumed"] is False and "ram_speed" not in named["request"]["assumed"]
    _, out = vram("--json", "gpt-oss-120b on a 5090 with 64gb ram")
    default = json.loads(out)
    assert default["request"]["ram_speed"] is None and default["fits"][0]["ram_speed_assumed"] is True
    assert default["fits"][0]["ram_speed"] == {"kind": "ddr5", "mts": 5600, "channels": 2, "bandwidth_gbs": 89.6}
    assert "ram_speed" in default["request"]["assumed"]
    slow, fast = (d["fits"][0]["expert_offload"]["decode"]["tokens_per_second"] for d in (named, default))
    assert slow < fast
    _, text = vram("gpt-oss-120b on a 5090 with 64gb ddr4")
    assert "RAM bandwidth: DDR4-3200, 2-channel, 51.2 GB/s" in text
    _, text = vram("gpt-oss 120b 5090 램 64기가 ddr4")
    assert "RAM 대역폭: DDR4-3200 2채널, 51.2GB/s" in text
    _, text = vram("gpt-oss-120b on a 5090 with 64gb ram")
    assert text.rstrip().endswith("system RAM DDR5-5600, 2-channel, 89.6 GB/s")  # the "Assumed:" line
    card = default_backend().answer("gpt-oss-120b on a 5090 with 64gb ddr4", None, {})
    assert "RAM bandwidth: DDR4-3200, 2-channel, 51.2 GB/s" in (render_card(card, card.lang).description or "")
    card = default_backend().answer("gpt-oss 120b 5090 램 64기가", None, {})
    assert (render_math(card, card.lang).footer.text or "").startswith("RAM DDR5-5600 2채널 가정 · ")


def test_a_plan_that_does_not_fit_the_ram_says_so_and_gives_no_command() -> None:
    _, text = vram("qwen3 235b q8_0 on a 4090 with 64gb ram")
    assert "❌ …but that does not fit in system RAM either." in [line.strip() for line in text.splitlines()]
    assert "llama-server" not in text


def test_the_vllm_command_reproduces_the_answer() -> None:
    from vramfit.bot.answering.commands import vllm_args
    from vramfit.calc.engines.vllm import GPU_MEMORY_UTILIZATION
    from vramfit.calc.request import Engine

    catalog = load_catalog()
    two_h100 = (GpuChoice(gpu=catalog.gpus["h100-sxm"], count=2),)
    request = Request(model=catalog.models["qwen3-32b"].ref(), quant="FP8", context=16384, users=4,
                      kv_cache=KvType.FP8, engine=Engine.VLLM, gpus=two_h100)  # fmt: skip
    command = vllm_args(request)
    assert command[:3] == ["vllm", "serve", "Qwen/Qwen3-32B-FP8"]  # Qwen's FP8 checkpoint (the preset's vllm_repos)
    got = flags(command)
    assert int(got["--max-model-len"]) == 16384
    num, den = GPU_MEMORY_UTILIZATION
    assert float(got["--gpu-memory-utilization"]) == num / den == 0.9  # the budget the answer was computed with
    assert "--quantization" not in got and got["--kv-cache-dtype"] == "fp8"  # its config.json names FP8
    assert (got["--tensor-parallel-size"], got["--max-num-seqs"]) == ("2", "4")


@pytest.mark.parametrize(
    ("kv", "users", "flash"), [(KvType.F16, 1, None), (KvType.Q8_0, 4, None), (KvType.Q8_0, 1, False)]
)
def test_the_ollama_settings_reproduce_the_answer(kv: KvType, users: int, flash: bool | None) -> None:
    from vramfit.bot.answering.commands import ollama_command

    catalog = load_catalog()
    request = Request(model=catalog.models["qwen3.5-9b"].ref(), context=32768, users=users, kv_cache=kv,
                      flash_attn=flash)  # fmt: skip
    serve, run_part = ollama_command(request, "qwen3.5:9b").split(" & ")
    env = dict(word.split("=", 1) for word in shlex.split(serve) if "=" in word)
    assert shlex.split(run_part) == ["ollama", "run", "qwen3.5:9b"]
    assert env["OLLAMA_CONTEXT_LENGTH"] == "32768"  # Ollama's context is per request: not × users
    assert env.get("OLLAMA_FLASH_ATTENTION") == ("1" if request.flash_attn_effective else None)
    quantized = kv != KvType.F16 and request.flash_attn_effective  # Ollama quantizes the KV only with FA
    assert env.get("OLLAMA_KV_CACHE_TYPE") == (kv.value if quantized else None)
    assert env.get("OLLAMA_NUM_PARALLEL") == (str(users) if users > 1 else None)


def test_file_sizes_are_also_in_decimal_gb_as_the_hub_shows_them() -> None:
    """Llama 3.1 8B Q4_K_M: 4,920,747,168 bytes, which the Hub lists as "4.92 GB" and llama.cpp as 4.58 GiB."""
    _, out = vram("--json", "--model", "llama-3.1-8b")
    assert json.loads(out)["estimate"]["file_bytes"] == 4_920_747_168
    _, text = vram("--model", "llama-3.1-8b")
    assert "(file 4.6 GiB = 4.92 GB," in text
    _, text = vram("--lang", "ko", "--model", "llama-3.1-8b")
    assert "(파일 4.6GiB = 4.92GB," in text


def test_unified_memory_says_what_the_gpu_may_use_and_has_no_system_ram_apart() -> None:
    """A 64 GB Mac: macOS lets Metal wire three quarters (48 GiB); leaving macOS 8 GiB is 57,344 MiB."""
    _, text = vram("llama 3.1 70b on a mac studio m2 ultra 64gb")
    assert "macOS lets the GPU use 48.0 GiB of this Mac's 64.0 GiB; `sudo sysctl iogpu.wired_limit_mb=57344` " \
        "raises it to 56.0 GiB." in [line.strip() for line in text.splitlines()]  # fmt: skip
    assert "system RAM" not in text
    roomy = default_backend().answer("llama 3.1 70b on a mac studio m2 ultra 64gb", None, {})
    assert "iogpu" not in (render_card(roomy, roomy.lang).description or "")  # it fits: nothing to raise
    short = default_backend().answer("llama 3.1 70b 32k on a mac studio m2 ultra 64gb", None, {})
    assert short.fits[0].verdict in ("tight", "partial", "no")  # type: ignore[union-attr]
    assert "iogpu.wired_limit_mb=57344" in (render_card(short, short.lang).description or "")


@pytest.mark.parametrize(
    ("lines", "titles"),
    [(["llama 3.1 8b 8k 3060", "32k면?", "what about a 4090?", "q8이면?"],
      ["Llama 3.1 8B · Q4_K_M · 8,192 tokens", "Llama 3.1 8B · Q4_K_M · 32,768 tokens",
       "Llama 3.1 8B · Q4_K_M · 32,768 tokens", "Llama 3.1 8B · Q8_0 · 32,768 tokens"]),
     (["라마3.1 8b 8k 3060", "4090이면?", "qwen2.5 7b 3060"],  # a new model: a new question, not a follow-up
      ["Llama 3.1 8B · Q4_K_M · 토큰 8,192개", "Llama 3.1 8B · Q4_K_M · 토큰 8,192개",
       "Qwen2.5 7B · Q4_K_M · 8,192 tokens"])],
)  # fmt: skip
def test_interactive_follow_ups_change_the_previous_question(lines: list[str], titles: list[str]) -> None:
    from vramfit.bot.cli import interactive

    out = io.StringIO()
    assert interactive(out, io.StringIO("\n".join([*lines, ""]) + "\n")) == 0
    answers = [block for block in out.getvalue().split("> ")[1:] if block.strip()]
    assert [a.splitlines()[0].split(" × ")[0] for a in answers] == titles
    assert "RTX 3060" in answers[0] and "RTX 4090" not in answers[0]
    assert ("RTX 4090" in answers[1]) is ("4090" in lines[1])  # the GPU follows the follow-up that names one


@pytest.mark.parametrize(
    ("question", "context"),
    [("llama 3.1 8b on ollama 3060", 4096),  # 12 GiB: under 24 GiB, Ollama's 4k
     ("llama 3.1 8b on ollama 4090", 32768),  # 24 GiB: 32k
     ("llama 3.1 8b on ollama 2x 4090", 131072),  # 48 GiB: 256k, capped at the model's 131,072
     ("llama 3 8b on ollama 2x 4090", 8192),  # ... and at Llama 3's 8,192
     ("llama 3.1 8b 16k on ollama 4090", 16384),  # a context asked for is kept
     ("라마3.1 8b 올라마 4090", 32768),
     ("llama 3.1 8b on a 4090", 8192)],  # not on Ollama: the usual default
)  # fmt: skip
def test_on_ollama_the_context_is_ollamas_default_for_the_gpus(question: str, context: int) -> None:
    _, out = vram("--json", question)
    request = json.loads(out)["request"]
    assert request["context"] == context
    assert request["runner"] == ("ollama" if ("ollama" in question or "올라마" in question) else "")


def test_on_ollama_the_answer_says_what_ollama_ps_would_show() -> None:
    _, out = vram("--json", "llama 3.3 70b on ollama 4090 64gb ram")
    data = json.loads(out)
    fit, estimate = data["fits"][0], data["estimate"]
    on_cpu = fit["host_bytes"] - estimate["host_bytes"]  # the layers left on the CPU, with their KV and buffers
    cpu = round(100 * on_cpu / estimate["total_bytes"])
    _, text = vram("llama 3.3 70b on ollama 4090 64gb ram")
    assert f"`ollama ps` would show: {cpu}%/{100 - cpu}% CPU/GPU" in text
    assert "OLLAMA_CONTEXT_LENGTH=32768" in text and "llama-server" not in text
    card = default_backend().answer("llama 3.1 8b on ollama 4090", None, {})
    embed = render_card(card, card.lang)
    assert "`ollama ps` would show: 100% GPU" in (embed.description or "")
    assert embed.footer.text == "estimate · KV f16 · Ollama · FA off"  # Q4_K_M is in the title; no room here
    assert "Ollama (llama.cpp)" in (render_math(card, card.lang).footer.text or "")


def test_the_card_says_when_the_first_token_comes_for_the_asked_prompt() -> None:
    """The asked context read as the prompt, at the prefill estimate: 32,768 tokens ÷ prompt tokens per second."""
    _, out = vram("--json", "llama 3.1 8b 32k on a 4090")
    prefill = json.loads(out)["fits"][0]["prefill"]
    seconds, fast, slow = (32768 / prefill[k] for k in ("tokens_per_second", "high", "low"))
    card = default_backend().answer("llama 3.1 8b 32k on a 4090", None, {})
    assert seconds < 10  # said to a tenth of a second on the card
    assert f"first token ≈ {seconds:.1f} s" in (render_card(card, card.lang).description or "")
    math = render_math(card, card.lang).description or ""  # the band, under "show the math"
    assert f"first token after ≈ {seconds:.1f} s for a prompt of 32K ({fast:.1f}–{slow:.1f} s)" in math
    no_figure = default_backend().answer("llama 3.1 8b 32k on a 1080 ti", None, {})  # no tensor cores: no figure
    description = render_card(no_figure, no_figure.lang).description or ""
    assert "first token ≈" not in description  # no number where there is no FP16 figure, and it says so
    assert "first token: not estimated" in description
    math = render_math(no_figure, no_figure.lang).description or ""
    assert "first token: not estimated (no FP16 throughput known for this GPU)" in math
    _, text = vram("라마3.1 8b 1080 ti")
    assert "GeForce GTX 1080 Ti: 첫 토큰 시간은 추정하지 않았어요 (이 GPU의 FP16 성능 정보가 없어요)" in text


def _first_token(prompt: int, prefill: dict[str, float], lang: str = "en") -> str:
    seconds, fast, slow = (prompt / prefill[k] for k in ("tokens_per_second", "high", "low"))
    if lang == "ko":
        return f"첫 토큰까지 약 {seconds:.1f}초 ({fast:.1f}–{slow:.1f}초)"
    return f"first token after ≈ {seconds:.1f} s for a prompt of 8K ({fast:.1f}–{slow:.1f} s)"


@pytest.mark.parametrize(
    ("question", "where", "link_assumed"),
    [
        # --n-cpu-moe 19: the plan's prefill, its experts over the 5090's stated PCIe 5.0 x16
        ("gpt-oss-120b on a 5090 with 64GB RAM", "expert_offload", False),
        ("gpt-oss 120b 5090 램 64기가", "expert_offload", False),
        # -ngl 44 of 81: the layers left on the CPU over the 4090's stated PCIe 4.0 x16
        ("llama 3.3 70b on a 4090 with 64GB RAM", "fit", False),
        # -ngl 52 of 81 on an A40, whose preset states no link: PCIe 4.0 x16 assumed, and said
        ("llama 3.3 70b q8_0 on an a40 with 128GB RAM", "fit", True),
        ("라마3.3 70b q8_0 a40 램 128기가", "fit", True),
    ],
)
def test_offloaded_answers_say_when_the_first_token_comes_and_whether_the_link_was_assumed(
    question: str, where: str, link_assumed: bool
) -> None:
    """The first token at the prefill estimate that includes the PCIe copies of the weights kept in RAM, on the card
    and in the terminal alike; an assumed PCIe link is listed with the other assumptions."""
    _, out = vram("--json", question)
    data = json.loads(out)
    fit = data["fits"][0]
    assert fit["verdict"] == "partial"
    prefill = fit["expert_offload"]["prefill"] if where == "expert_offload" else fit["prefill"]
    assert prefill is not None and prefill["low"] < prefill["tokens_per_second"] < prefill["high"]
    assert fit["pcie_gbs"] == 31.5 if link_assumed or where == "fit" else fit["pcie_gbs"] == 63.0
    assert fit["pcie_assumed"] is link_assumed
    assert ("pcie" in data["request"]["assumed"]) is link_assumed
    lang = data["lang"]
    line = _first_token(8192, prefill, lang)
    _, text = vram(question)
    assert line in text
    assert ("PCIe 4.0 x16" in text.splitlines()[-1]) is link_assumed  # the "Assumed:" line
    card = default_backend().answer(question, None, {})
    math = render_math(card, card.lang)
    assert line in (math.description or "")  # whole, under "show the math"; the card says it in few words
    short = f"첫 토큰 약 {round(8192 / prefill['tokens_per_second'])}초" if lang == "ko" else (
        f"first token ≈ {round(8192 / prefill['tokens_per_second'])} s")  # fmt: skip
    assert short in (render_card(card, card.lang).description or "")
    footer = math.footer.text or ""
    assert (("PCIe 4.0 x16 가정" if lang == "ko" else "PCIe 4.0 x16 assumed") in footer) is link_assumed


@pytest.mark.parametrize(
    ("question", "flash", "same_as"),
    [
        # Llama: Ollama runs it without flash attention unless OLLAMA_FLASH_ATTENTION=1.
        (
            "llama 3.1 8b on ollama 4090",
            False,
            ["--model", "llama-3.1-8b", "--context", "32768", "--flash-attn", "off"],
        ),
        # gpt-oss, Qwen3 and Gemma 3 have it on by default (ollama/ollama #11996, #12482, #12639).
        ("gpt-oss 20b on ollama 4090", True, ["--model", "gpt-oss-20b", "--context", "32768", "--flash-attn", "on"]),
        ("qwen3 8b on ollama 4090", True, ["--model", "qwen3-8b", "--context", "32768", "--flash-attn", "on"]),
        ("gemma 3 12b on ollama 4090", True, ["--model", "gemma-3-12b", "--context", "32768", "--flash-attn", "on"]),
        # A quantized cache works on Ollama only with flash attention, so asking for one turns it on.
        (
            "llama 3.1 8b on ollama with q8_0 cache 4090",
            True,
            ["--model", "llama-3.1-8b", "--context", "32768", "--flash-attn", "on", "--kv-cache", "q8_0"],
        ),
        # Said outright, the question's own setting wins.
        ("llama 3.1 8b on ollama with flash attention 4090", True, ["--model", "llama-3.1-8b", "--context", "32768"]),
    ],
)
def test_ollama_runs_flash_attention_as_ollama_does(question: str, flash: bool, same_as: list[str]) -> None:
    _, out = vram("--json", question)
    answer = json.loads(out)
    assert answer["request"]["flash_attn"] is flash
    _, plain = vram("--json", *same_as, "--gpu", "4090")
    estimate, server = answer["estimate"], json.loads(plain)["estimate"]
    assert estimate["kv_cache_bytes"] == server["kv_cache_bytes"]
    assert answer["request"]["runner"] == "ollama" and json.loads(plain)["request"]["runner"] != "ollama"
    # the two differ in their compute buffers only (test below)
    difference = estimate["compute_bytes"] - server["compute_bytes"]
    assert estimate["total_bytes"] - server["total_bytes"] == difference
    _, text = vram(question)
    assert ("OLLAMA_FLASH_ATTENTION=1" in text) is flash


def test_ollama_and_llama_server_reserve_their_own_graphs() -> None:
    """Ollama's runner reserves llama.cpp's library graph (every token's logits, calc.compute); llama-server b11434
    its own (calc.server_graph). Llama 3.1 8B at 32,768 tokens without flash attention, by hand:"""
    _, out = vram("--json", "llama 3.1 8b on ollama 4090")
    _, plain = vram("--json", "--model", "llama-3.1-8b", "--context", "32768", "--flash-attn", "off", "--gpu", "4090")
    # the KQ product of 32 heads, the f32 mask and four hidden states: 4 · 512 · (1 + 4 · 4,096 + 32,768 · 33) B
    assert json.loads(out)["estimate"]["compute_bytes"] == 4 * 512 * (1 + 4 * 4096 + 32768 * 33)
    # five hidden states, the f32 mask, the V row indices (8 B × 512 × 8 heads × 128), the queries and the KQ product
    server = 4 * 512 * (5 * 4096 + 32768 + 32 * 128 + 32 * 32768) + 8 * 512 * 1024
    assert json.loads(plain)["estimate"]["compute_bytes"] == server


def test_dense_leading_blocks_are_not_counted_as_expert_layers_moved() -> None:
    """DeepSeek V3 has 61 blocks, the first 3 dense: --n-cpu-moe N keeps the experts of N − 3 of its 58 expert layers
    in RAM. Before: "the experts of the first 60 of 58 layers"."""
    _, out = vram("--json", "deepseek v3 on a 4090 with 512gb ram")
    plan = json.loads(out)["fits"][0]["expert_offload"]
    assert plan["expert_blocks"] == 58
    assert plan["expert_blocks_moved"] == min(58, plan["n_cpu_moe"] - 3)
    _, text = vram("deepseek v3 on a 4090 with 512gb ram")
    line = next(line.strip() for line in text.splitlines() if "MoE offload" in line)
    assert line == (
        f"↳ MoE offload: the experts of {plan['expert_blocks_moved']} of 58 layers in system RAM "
        f"(--n-cpu-moe {plan['n_cpu_moe']}):"
    )



@pytest.mark.parametrize(
    ("question", "lang", "first_line"),
    [
        ("glm-4.5-air on 2x 3090 64k", "en", "❌ Doesn't run on **2× GeForce RTX 3090**: RAM is "),
        ("glm 4.5 air 3090 두 장 64k", "ko", "❌ **2× GeForce RTX 3090**에서는 안 돌아가요."),
    ],
)
def test_one_verdict_per_card_when_ram_cannot_hold_the_rest(question: str, lang: str, first_line: str) -> None:
    """Before: "🟧 Runs on 2× RTX 3090…" then "❌ … does not fit in RAM either" on the same card."""
    from vramfit.bot.answering.cards import Card
    from vramfit.bot.answering.service import CalcBackend
    from vramfit.bot.render.embed import COLOUR, render_card

    card = CalcBackend().answer(question, None, {})
    assert isinstance(card, Card) and not card.fits[0].expert_plan.ram_fits  # type: ignore[union-attr]
    embed = render_card(card, lang)  # type: ignore[arg-type]
    description = embed.description or ""
    assert description.startswith(first_line)
    assert "🟧" not in description.splitlines()[0] and "either" not in description
    assert embed.colour is not None and embed.colour.value == COLOUR["no"]


@pytest.mark.parametrize(
    "question", ["deepseek v3.1 on mac m4 max 64gb", "deepseek v3.1 on a strix halo 128gb", "qwen3 235b a22b dgx spark"]
)
def test_unified_memory_has_no_partial_offload_nor_ram_or_pcie_assumptions(question: str) -> None:
    """Before, on a Mac: "6 of 62 layers on the GPU ≈ 2 tok/s", "assumed 0.0 GiB of system RAM; a PCIe 4.0 x16 host
    link". The CPU's share is the same memory and there is no host link: what exceeds the GPU's share does not run."""
    _, out = vram("--json", question)
    data = json.loads(out)
    fit = data["fits"][0]
    assert fit["verdict"] == "no" and fit["gpu_layers"] == 0
    assert fit["pcie_gbs"] is None and not fit["pcie_assumed"] and fit["ram_bytes"] == 0
    assert "ram" not in data["request"]["assumed"] and "pcie" not in data["request"]["assumed"]


def test_the_math_of_an_expert_plan_adds_up_on_each_side() -> None:
    """Before: gpt-oss-120b's "show the math" ended "= −27.6 GiB" (the whole total against the GPU) on a card that
    says it runs with experts in RAM. Now the GPU side and the RAM side, each with its own (positive) headroom."""
    from vramfit.bot.answering.cards import Card
    from vramfit.bot.answering.service import CalcBackend
    from vramfit.bot.render.embed import render_math

    card = CalcBackend().answer("gpt-oss-120b on a 5090 with 64GB RAM", "en", {})
    assert isinstance(card, Card)
    plan, fit = card.fits[0].expert_plan, card.fits[0]
    assert plan is not None and plan.ram_fits
    text = render_math(card, "en").description or ""
    gpu_line = next(line for line in text.splitlines() if "the experts of" in line)
    assert gpu_line.endswith("= +" + f"{round((fit.budget_bytes - plan.gpu_bytes) * 10 / (1 << 30)) / 10:.1f} GiB")
    ram_line = next(line for line in text.splitlines() if line.startswith("**System RAM:**"))
    assert "= +" in ram_line and "−27" not in text and "= −" not in text
