"""`vram --log` over real logs from public issues (tests/data/logs/, each file's header names its source): what each
is read to, the engine's figures beside vramfit's, the cause of an out-of-memory failure and the change that fits.

The expected values were read off each log by hand (tests/data/logs/README.md lists them), not from the reader.
"""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest

from tests.bot.cli_json import run_json
from vramfit.bot.answering.log_doctor import diagnose, quant_of
from vramfit.bot.cli import run
from vramfit.bot.logs import read_log

LOGS = Path("tests/data/logs")


def log_text(name: str) -> str:
    """A log as its issue posted it: the file without its ``# `` header (source, what, extent)."""
    text = (LOGS / name).read_text(encoding="utf-8")
    header, _, body = text.partition("\n\n")
    assert header.startswith("# source: https://"), name
    return body


# (file, engine, what was read: field → value), hand-checked against each log
WHOLE_LOGS = [
    ("llama.cpp-glm-z1-32b-iq4xs-3090ti-sweepbench.log", "llama.cpp",
     {"n_ctx": 32768, "layers_on_gpu": 62, "kv_total_mib": 1952.0, "gpu_model_mib": 16303.48, "flash_attn": True}),
    ("llama.cpp-qwen3-30b-a3b-q4km-4090+5090-ot-exps-cpu.log", "llama.cpp",
     {"layers_on_gpu": 49, "kv_total_mib": 1536.0, "host_model_mib": 17447.91, "gpu_compute_mib": 2160.0}),
    # ik_llama.cpp prints llama.cpp's lines: read as llama.cpp's
    ("ik_llama.cpp-glm-z1-32b-iq4xs-3090ti-sweepbench.log", "llama.cpp",
     {"layers_on_gpu": 62, "kv_total_mib": 1952.0, "gpu_model_mib": 16303.48}),
    ("ik_llama.cpp-qwen3-235b-dual3090-oom.log", "llama.cpp", {"layers_on_gpu": 95, "n_ctx": 32768}),
    ("ik_llama.cpp-deepseek-r1-q2k-15x3090-oom-compute.log", "llama.cpp", {"layers_on_gpu": 62}),
    ("llama.cpp-4070ti+3090ti-full-offload-2024.log", "llama.cpp",
     {"n_ctx": 4096, "kv_total_mib": 5120.0, "gpu_model_mib": 19423.91, "host_model_mib": 1640.62}),
    ("llama.cpp-70b-4060ti+3060-partial-offload-2024.log", "llama.cpp",
     {"layers_on_gpu": 78, "layers_total": 81, "kv_total_mib": 2560.0, "host_model_mib": 22994.45}),
    ("llama.cpp-node-llama-cpp-jetson-orin-1.7b-q4km-2026.log", "llama.cpp",
     {"kv_total_mib": 448.0, "gpu_compute_mib": 300.75, "host_compute_mib": 16.01}),
    ("llama.cpp-lmstudio-r1-distill-partial-offload-20of49-2026.log", "llama.cpp",
     {"layers_on_gpu": 20, "layers_total": 49, "gpu_model_mib": 3621.44, "host_model_mib": 4944.6}),
    ("vllm-llama32-11b-vision-h100-memprofile-2025.log", "vllm",
     {"weights_gib": 19.86, "kv_cache_gib": 14.65, "activation_gib": 36.63, "gpu_blocks": 6001}),
    ("vllm-v1-llama31-70b-w8a8-gpu-blocks-2025.log", "vllm",
     {"weights_gib": 67.7229, "gpu_blocks": 1381, "max_concurrency": 10.79, "max_model_len": 2048}),
    ("vllm-v1-llama31-8b-l40s-kv-tokens-concurrency.log", "vllm",
     {"weights_gib": 14.9889, "kv_tokens": 158656, "max_concurrency": 4.84}),
    ("vllm-qwen3-30b-a3b-w4a16-3090-memprofile.log", "vllm", {"weights_gib": 15.6841, "kv_cache_gib": 5.34}),
    ("ollama-deepseek-v3-docker-offload-to-cuda-5of62.log", "ollama",
     {"ollama_layers_offload": 5, "ollama_layers_model": 62, "ollama_required_full_gib": 415.7, "ollama_kv_gib": 9.5}),
    # Ollama's new engine prints its own buffers (GiB): 11.5 + 11.9 GiB on two GPUs, 680 MiB in RAM
    ("ollama-new-engine-mistral3-q8-2gpu-2025.log", "ollama",
     {"gpu_model_mib": 11.5 * 1024 + 11.9 * 1024, "host_model_mib": 680.0, "layers_on_gpu": 41, "file_type": "Q8_0"}),
    ("ollama-ps-llama4-83-17-cpu-gpu.log", "ollama-ps",
     {"ollama_ps": (("llama4:latest", "70 GB", "83%/17% CPU/GPU"),)}),
    ("nvidia-smi-rtx3090-llamacpp-qwen36-35b-a3b-15gb.log", "nvidia-smi", {}),
    # ik_llama.cpp#437, #239, #305, #377, #384, #397, #629 and discussions #357, #562 (github-data/ of that repository);
    # GPU sums are the logs' per-device lines added by hand (16 × RTX 3090: 19,112.52 + … + 19,014.55 MiB)
    ("ik_llama.cpp-deepseek-r1-0528-iq3kr4-2x4090-oom-compute-65k.log", "llama.cpp",
     {"n_ctx": 65536, "layers_on_gpu": 62, "kv_total_mib": 2333.25, "gpu_model_mib": 13995.99 + 13730.03,
      "host_model_mib": 300312.01, "file_type": "IQ3_K_R4 - 3.4325 bpw"}),
    ("ik_llama.cpp-deepseek-r1-0528-iq3kr4-2x4090-oom-compute-ncopies4.log", "llama.cpp",
     {"n_ctx": 32768, "kv_total_mib": 1166.62,  # the log's own total (592.89 + 573.76 rounded apart)
      "gpu_model_mib": 27726.02}),
    ("ik_llama.cpp-deepseek-r1-0528-iq4ksr4-2x4090-runtime-oom.log", "ik_llama.cpp",
     {"n_ctx": 40960, "kv_total_mib": 1458.28,  # the log's total line "gpu_model_mib": 15175.99 + 14910.03,
      "gpu_compute_mib": 6698.02 + 4560.02, "host_compute_mib": 752.05}),
    ("ik_llama.cpp-deepseek-r1-iq4kss-16x3090-load-ok-nofmoe.log", "llama.cpp",
     {"n_ctx": 8192, "kv_total_mib": 549.0, "gpu_model_mib": 323858.88, "host_model_mib": 938.98,
      "gpu_compute_mib": 27703.19, "host_compute_mib": 156.05, "flash_attn": False}),
    ("ik_llama.cpp-deepseek-r1-iq4kss-16x3090-oom-compute-dev3.log", "llama.cpp",
     {"n_ctx": 8192, "kv_total_mib": 549.0, "gpu_model_mib": 323858.88}),
    ("ik_llama.cpp-deepseek-v3-0324-iq2kr4-4gpu-partial-27of62.log", "llama.cpp",
     {"layers_on_gpu": 27, "layers_total": 62, "kv_total_mib": 549.0,
      "gpu_model_mib": 2 * 19631.39 + 23557.67 + 43189.07, "host_model_mib": 129085.52,
      "gpu_compute_mib": 2484.78 + 3 * 2491.50, "host_compute_mib": 2634.50}),
    ("ik_llama.cpp-nemotron-ultra-253b-q3kxl-4gpu-full-offload.log", "ik_llama.cpp",
     {"n_ctx": 12288, "layers_on_gpu": 163, "kv_total_mib": 1248.0,
      "gpu_model_mib": 21995.70 + 22587.26 + 45199.39 + 27632.88, "host_model_mib": 1127.25,
      "gpu_compute_mib": 412 + 420 + 2560 + 2086, "file_type": "Q3_K - Medium"}),
    ("ik_llama.cpp-qwen3-235b-iq3k-2x2080ti-oom-compute-ncopies4.log", "llama.cpp",
     {"n_ctx": 8192, "kv_total_mib": 768.0 + 736.0}),  # the post starts at the context
    ("ik_llama.cpp-qwen3-235b-iq3k-2x4090-oom-compute.log", "ik_llama.cpp",
     {"n_ctx": 65536, "layers_on_gpu": 95, "kv_total_mib": 6392.0, "gpu_model_mib": 19102.05 + 14312.97}),
    ("ik_llama.cpp-qwen3-235b-iq3k-5090+4090-windows.log", "llama.cpp",
     {"n_ctx": 32768, "kv_total_mib": 3520.0 + 2496.0, "gpu_model_mib": 24978.41 + 18143.66,
      "host_model_mib": 630.59 + 65640.94, "gpu_compute_mib": 1264.01 + 1251.00, "host_compute_mib": 288.02}),
    ("ik_llama.cpp-qwen3-32b-2xt4-sm-row-kv-on-one-gpu.log", "llama.cpp",
     {"layers_on_gpu": 65, "kv_total_mib": 2048.0, "gpu_model_mib": 21608.65 + 2.58, "gpu_compute_mib": 633.5}),
    ("llama.cpp-deepseek-v3-0324-ud-q2kxl-5090+2x4090+a6000.log", "llama.cpp",
     {"n_ctx": 16384, "kv_total_mib": 510.0 + 408 + 408 + 748,
      "gpu_model_mib": 22412.07 + 17714.47 + 21610.08 + 42786.36, "host_model_mib": 134253.11,
      "gpu_compute_mib": 3285.00 + 788 + 788 + 788.01, "host_compute_mib": 92.01, "file_type": "Q2_K - Medium"}),
    ("llama.cpp-llama31-8b-q4_0-rtx4080-vulkan.log", "llama.cpp",
     {"n_ctx": 16384, "layers_on_gpu": 33, "kv_total_mib": 2048.0, "gpu_model_mib": 4155.99,
      "host_model_mib": 281.81, "gpu_compute_mib": 613.01, "host_compute_mib": 80.01, "file_type": "Q4_0"}),
    ("llama.cpp-qwen3-235b-q6k-2x3090-cpu-only-0of95.log", "llama.cpp",
     {"layers_on_gpu": 0, "layers_total": 95, "kv_total_mib": 1598.0, "gpu_model_mib": 0,
      "gpu_compute_mib": 742.0, "host_compute_mib": 304.75 + 65.01}),
    ("llama.cpp-qwen3-235b-q6k-3090-ot-ffn.log", "llama.cpp",
     {"layers_on_gpu": 95, "kv_total_mib": 1598.0, "gpu_model_mib": 15191.95, "host_model_mib": 183525.52,
      "gpu_compute_mib": 774.0, "host_compute_mib": 8.25 + 40.01}),
    ("llama.cpp-qwen3-235b-q8_0-a6000-ot-ffn-cpu.log", "llama.cpp",
     {"n_ctx": 32768, "kv_total_mib": 6016.0, "gpu_model_mib": 39273.87, "host_model_mib": 630.59 + 198451.27,
      "gpu_compute_mib": 1024.0, "host_compute_mib": 72.01, "file_type": "Q8_0"}),
    # Ollama's estimate and the runner's own llama.cpp lines, whole server logs committed in two repositories
    ("ollama-llama31-8b-q4km-lora-rtx4090-runpod-parallel4.log", "ollama",
     {"n_ctx": 8192, "layers_on_gpu": 33, "kv_total_mib": 1024.0, "gpu_model_mib": 4403.49, "gpu_compute_mib": 560.0,
      "ollama_layers_offload": 33, "ollama_required_full_gib": 6.5, "ollama_kv_gib": 1.0}),
    ("ollama-phi4-q4km-rtx4060laptop-partial-29of41.log", "ollama",
     {"n_ctx": 2048, "layers_on_gpu": 29, "layers_total": 41, "kv_total_mib": 110.0 + 290.0,
      "gpu_model_mib": 5731.89, "host_model_mib": 275.62 + 2622.81, "ollama_required_full_gib": 9.6}),
    ("vllm-internvl3-78b-bf16-8xl40s-tp8.log", "vllm",
     {"weights_gib": 21.6682, "kv_cache_gib": 3.09, "gpu_blocks": 5065, "max_concurrency": 9.89}),
]  # fmt: skip

# (file, what failed, MiB asked for)
OOM_LOGS = [
    ("llama.cpp-apertus-70b-iq4xs-rocm-oom-compute.log", "compute", 14136.04),
    ("llama.cpp-deepseek-v3-q2kl-4xa100-kv-oom.log", "kv", 204800.0),
    ("llama.cpp-jan-gemma3-12b-q4_1-gtx1070-weights-oom.log", "model", 7203.17),
    ("llama.cpp-minimax-m3-iq4xs-3gpu-oom-compute-2026.log", "compute", 51748.72),
    ("llama.cpp-weights-oom-144817mib-2026.log", "model", 144817.04),
    ("ollama-llama3-8b-64k-ctx65536-oom-compute.log", "compute", 4507.0),
    ("ollama-deepseek-v3-docker-oom-28426mib.log", "model", 28426.68),
    ("ik_llama.cpp-qwen3-235b-dual3090-oom.log", "compute", 360757.13),
    ("ik_llama.cpp-deepseek-r1-q2k-15x3090-oom-compute.log", "compute", 8900.01),
    ("ik_llama.cpp-deepseek-r1-0528-iq3kr4-2x4090-oom-compute-65k.log", "compute", 7688.02),
    ("ik_llama.cpp-deepseek-r1-0528-iq3kr4-2x4090-oom-compute-ncopies4.log", "compute", 1130415.93),
    ("ik_llama.cpp-deepseek-r1-iq4kss-16x3090-oom-compute-dev3.log", "compute", 9032.01),
    ("ik_llama.cpp-qwen3-235b-iq3k-2x2080ti-oom-compute-ncopies4.log", "compute", 167771.94),
    ("ik_llama.cpp-qwen3-235b-iq3k-2x4090-oom-compute.log", "compute", 2432.02),
]


@pytest.mark.parametrize(("name", "engine", "expected"), WHOLE_LOGS, ids=[w[0] for w in WHOLE_LOGS])
def test_a_real_log_is_read_as_its_author_posted_it(name: str, engine: str, expected: dict[str, object]) -> None:
    reading = read_log(log_text(name))
    assert reading.engine == engine
    for field, value in expected.items():
        got = getattr(reading, field)
        if isinstance(value, float):
            assert got is not None and abs(got - value) < 0.011, (field, got, value)
        else:
            assert got == value, (field, got, value)


def test_nvidia_smi_gives_each_gpu_and_its_memory() -> None:
    (gpu,) = read_log(log_text("nvidia-smi-rtx3090-llamacpp-qwen36-35b-a3b-15gb.log")).gpus
    assert (gpu.name, gpu.used_mib, gpu.total_mib) == ("NVIDIA GeForce RTX 3090", 15005.0, 24576.0)
    (laptop,) = read_log(log_text("nvidia-smi-rtx5090-laptop-wddm-nearly-full.log")).gpus
    assert laptop.used_mib == 24095.0 and laptop.total_mib == 24463.0 and "WDDM" not in laptop.name


@pytest.mark.parametrize(("name", "what", "mib"), OOM_LOGS, ids=[o[0] for o in OOM_LOGS])
def test_an_out_of_memory_log_says_what_failed_and_how_much(name: str, what: str, mib: float) -> None:
    diagnosis = diagnose(read_log(log_text(name)))
    assert (diagnosis.failed_what, diagnosis.failed_mib) == (what, mib)


def test_vllm_past_its_cache_says_the_length_that_fits(tmp_path: Path) -> None:
    (tmp_path / "vllm.log").write_text(log_text("vllm-llama31-8b-3090-maxseqlen-29k-fails.log"))
    out = io.StringIO()
    assert run(["--log", str(tmp_path / "vllm.log")], out) == 0
    assert "fewer than --max-model-len 29000: start with --max-model-len 23648" in out.getvalue()


def test_a_log_beside_vramfits_estimate_agrees_to_the_mib(tmp_path: Path) -> None:
    """lcpp-10701 (measured.jsonl): Llama 3.1 8B Q4_K_M at 2,048 tokens on ROCm; every buffer as llama.cpp printed."""
    quote = next(
        json.loads(line)["quote"]
        for line in Path("tests/data/groundtruth/measured.jsonl").read_text().splitlines()
        if line.startswith('{"id": "lcpp-10701-')
    )
    (tmp_path / "server.log").write_text(quote)
    data = run_json("--log", str(tmp_path / "server.log"))
    assert data["model"] == "llama-3.1-8b"
    rows = {row["component"]: row for row in data["rows"]}
    for component, logged in (("weights_gpu", 4403.49), ("weights_host", 281.81), ("kv", 256.0), ("compute", 258.5)):
        assert rows[component]["log_mib"] == logged
        assert abs(rows[component]["vramfit_mib"] - logged) < 0.5, component
    out = io.StringIO()
    assert run(["--lang", "ko", "--log", str(tmp_path / "server.log")], out) == 0
    assert "llama.cpp 로그 내용:" in out.getvalue() and "vramfit 프리셋: Llama 3.1 8B" in out.getvalue()


def test_a_model_of_another_shape_is_not_taken_for_the_preset_of_its_name() -> None:
    """Llama 3.3 Nemotron Super 49B: the name says Llama 3.3, the width and layers match the 70B, the 49.87 B
    parameters do not: the log's own figures, never the 70B's."""
    quote = next(
        json.loads(line)["quote"]
        for line in Path("tests/data/groundtruth/measured.jsonl").read_text().splitlines()
        if '"lcpp-14752-' in line
    )
    diagnosis = diagnose(read_log(quote))
    assert diagnosis.preset is None and all(row.estimated_mib is None for row in diagnosis.rows)


def test_what_is_not_a_log_is_said_and_stdin_is_read(monkeypatch: pytest.MonkeyPatch) -> None:
    error = run_json("--log", "README.md", status=2)["error"]
    assert error["code"] == "not_a_log"
    assert run_json("--log", "no/such/file.log", status=2)["error"]["code"] == "bad_file"
    piped = log_text("ollama-llama3-8b-64k-ctx65536-oom-compute.log").encode()
    monkeypatch.setattr("sys.stdin", io.TextIOWrapper(io.BytesIO(piped)))
    data = run_json("--log", "-")
    assert data["failure"] == {"what": "compute", "mib": 4507.0} and data["log"]["n_ctx"] == 65536


@pytest.mark.parametrize(
    ("printed", "quant"),
    [("Q4_K - Medium", "Q4_K_M"), ("Q5_K - Small", "Q5_K_S"), ("IQ4_XS - 4.25 bpw", "IQ4_XS"), ("Q8_0", "Q8_0"),
     ("MXFP4 MoE", "MXFP4_MOE"), ("all F32", "F32"), ("BF16", "BF16"), ("IQ4_K - 4.5 bpw", "")],
)  # fmt: skip
def test_llama_cpps_file_type_names(printed: str, quant: str) -> None:
    assert quant_of(printed) == quant


def test_memory_taken_before_the_start_is_said_as_a_likely_cause(tmp_path: Path) -> None:
    """ik_llama.cpp#514's log: llama.cpp found 9,862 MiB free on the RTX 4090 (24,576 MiB) and 31,518 on the RTX 5090
    (32,768): something else held 14,714 MiB of the 4090; the 5090's 1,250 is the driver's and a desktop's share."""
    (tmp_path / "a.log").write_text(log_text("llama.cpp-qwen3-30b-a3b-q4km-4090+5090-ot-exps-cpu.log"))
    out = io.StringIO()
    assert run(["--log", str(tmp_path / "a.log")], out) == 0
    text = out.getvalue()
    assert "GeForce RTX 4090 started with 9,862 of its 24,576 MiB free: something else held 14,714 MiB." in text
    assert "RTX 5090 started" not in text


def test_out_of_memory_while_answering_is_a_failure_without_a_size() -> None:
    """ik_llama.cpp#437: DeepSeek-R1-0528 loaded on two RTX 4090s and died on a 10K-token prompt with llama.cpp's
    ``CUDA error: out of memory``, no allocation size printed: the failure is said, no size made up."""
    diagnosis = diagnose(read_log(log_text("ik_llama.cpp-deepseek-r1-0528-iq4ksr4-2x4090-runtime-oom.log")))
    assert (diagnosis.failed_what, diagnosis.failed_mib) == ("cuda", None)


def test_pipeline_copies_are_said_as_the_setting_that_multiplied_the_compute_buffer() -> None:
    """ik_llama.cpp#437: on two RTX 4090s the scheduler kept 4 copies of the compute buffers and asked 1,130,415.93
    MiB; the thread's fix was a build with GGML_SCHED_MAX_COPIES=1. A log with one copy says nothing of it."""
    out = io.StringIO()
    path = LOGS / "ik_llama.cpp-deepseek-r1-0528-iq3kr4-2x4090-oom-compute-ncopies4.log"
    reading = read_log(log_text(path.name))
    assert reading.n_copies == 4
    assert run(["--log", str(path)], out) == 0
    assert "pipeline parallelism with 4 copies" in out.getvalue() and "-DGGML_SCHED_MAX_COPIES=1" in out.getvalue()
    single = read_log(log_text("ik_llama.cpp-deepseek-r1-0528-iq3kr4-2x4090-oom-compute-65k.log"))
    assert single.n_copies == 1
    out = io.StringIO()
    assert run(["--lang", "ko", "--log", str(path)], out) == 0
    assert "GGML_SCHED_MAX_COPIES=1" in out.getvalue()


@pytest.mark.parametrize(
    ("name", "build", "said"),
    [
        # ik_llama.cpp PR #394: mainline build 5331 caches DeepSeek V3's MLA as full K and V, and its compute differs
        ("llama.cpp-deepseek-v3-0324-ud-q2kxl-5090+2x4090+a6000.log", "5331 (33eff402)",
         "KV cache / Compute buffers differ from vramfit's by more than 1 %: this log's llama.cpp is build 5331"),
        # discussion #562: Llama 3.1 8B on Vulkan, the weights and KV exact, the compute buffer Vulkan's
        ("llama.cpp-llama31-8b-q4_0-rtx4080-vulkan.log", "5781 (ba3ef86c5)", "this log ran on Vulkan"),
    ],
)  # fmt: skip
def test_a_difference_nothing_in_the_log_explains_is_said_as_another_build(name: str, build: str, said: str) -> None:
    reading = read_log(log_text(name))
    assert reading.build == build
    out = io.StringIO()
    assert run(["--log", str(LOGS / name)], out) == 0
    assert said in out.getvalue()


def test_a_log_that_matches_says_no_difference() -> None:
    """The GLM-Z1-32B sweep-bench log (mainline build 5274): KV exact, so no build is blamed for it."""
    out = io.StringIO()
    assert run(["--log", str(LOGS / "llama.cpp-glm-z1-32b-iq4xs-3090ti-sweepbench.log")], out) == 0
    assert "KV cache / " not in out.getvalue() and "KV cache differ" not in out.getvalue()


def test_tensors_placed_with_override_tensor_are_said() -> None:
    """ik_llama.cpp#500: 22 tensors placed with -ot (the log's "buffer type overriden to CPU" lines; the metadata
    line "KV overrides do not apply" is not one), an IQ3_K file vramfit does not size: the log's split is said to be
    its own."""
    reading = read_log(log_text("ik_llama.cpp-qwen3-235b-dual3090-oom.log"))
    assert reading.tensor_overrides == 22 and diagnose(reading).calculated is None
    out = io.StringIO()
    assert run(["--log", str(LOGS / "ik_llama.cpp-qwen3-235b-dual3090-oom.log")], out) == 0
    assert "22 tensors placed with -ot (--override-tensor), which vramfit doesn't model" in out.getvalue()
