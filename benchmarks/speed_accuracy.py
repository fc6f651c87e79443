"""Decode speed, estimated against published llama-bench results (tests/data/groundtruth/speed.jsonl).

    python benchmarks/speed_accuracy.py          # the table, the fit half and the check half
    python benchmarks/speed_accuracy.py --fit    # also the constants calc/speed.py would get from the fit half

Each row is run through the calculator at its own setting (device, model, quant, offload); the table prints the
measured tokens/s, the bandwidth bound, vramfit's estimate and measured ÷ estimate side by side. The shipped calibration
of calc/speed.py is fitted on every row; the check column estimates each row with the constants fitted on the other
half only (rows split by their id as a hex number, even or odd), so it is out of sample.
Prefill (pp) rows are estimated where the presets carry the GPU's FP16 throughput. Both tables end with the summary
per backend and per fold (fold k: its rows checked with the constants fitted on the other fold). The pp rows with
weights in system RAM (``-ngl N``, ``--n-cpu-moe N``) get a table of their own, the compute plus the PCIe transfer of
those weights per micro-batch, and ``--fit`` fits the PCIe efficiency on them. Asserts nothing.
"""

from __future__ import annotations

import dataclasses
import math
import re
import statistics
import sys
from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

from speed_rows import SpeedRow, speed_rows  # noqa: E402

from vramfit.calc.attention_flops import attention_flops_per_token  # noqa: E402
from vramfit.calc.engines import llama_cpp  # noqa: E402
from vramfit.calc.presets import load_catalog  # noqa: E402
from vramfit.calc.request import GpuChoice, Request  # noqa: E402
from vramfit.calc.speed import (  # noqa: E402
    ASSUMED_RAM_BANDWIDTH_GBS,
    CALIBRATION,
    PCIE_CALIBRATION,
    PREFILL_CALIBRATION,
    BytesPerToken,
    DecodeCalibration,
    PcieCalibration,
    PrefillCalibration,
    decode_speed,
    prefill_speed,
    streamed_prefill_speed,
)


def read_of(row: SpeedRow) -> tuple[BytesPerToken, bool, int]:
    """What a token of ``row`` reads, whether the model is a mixture of experts, and its layers."""
    gpu = load_catalog().gpus[row.gpu]
    request = Request(
        model=row.model,
        quant=row.quant,
        context=max(256, row.depth + row.tokens),
        gpus=(GpuChoice(gpu=gpu, count=row.count),),
    )
    parts = llama_cpp._parts(request)
    n_layers = parts.arch.n_layers
    kind, _, value = row.offload.partition(" ")
    if kind == "ngl":
        on_gpu = min(int(value), n_layers + 1)
        read = llama_cpp.bytes_per_token(
            parts, 1, cpu_layers=n_layers - min(on_gpu, n_layers), output_on_cpu=on_gpu <= n_layers
        )
    elif kind == "ncmoe":
        read = llama_cpp.bytes_per_token(parts, 1, cpu_expert_blocks=int(value))
    else:
        read = llama_cpp.bytes_per_token(parts, 1)
    return read, parts.arch.n_experts > 0, n_layers


def _speed(row: SpeedRow, calibration: DecodeCalibration, bound: bool = False) -> float:
    read, moe, layers = read_of(row)
    speed = decode_speed(
        read,
        gpu_bandwidth_gbs=load_catalog().gpus[row.gpu].bandwidth_gbs,
        backend=row.backend,
        moe=moe,
        ram_bandwidth_gbs=row.host_bandwidth_gbs or ASSUMED_RAM_BANDWIDTH_GBS,
        calibration=calibration,
        bound=bound,
        layers=layers,
    )
    assert speed is not None
    return speed.tokens_per_second


C = TypeVar("C")  # a calibration (decode or prefill) that a fit makes and an estimate reads


def percentile(values: list[float], share: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, round(share * (len(ordered) - 1))))]


def device_weights(rows: list[SpeedRow]) -> list[float]:
    """1 ÷ the rows of the row's GPU: every machine counts once, however many rows its results file holds (one
    DGX Spark's benchmark files give 55 decode rows, most GPUs one or two)."""
    counts: dict[str, int] = {}
    for row in rows:
        counts[row.gpu] = counts.get(row.gpu, 0) + 1
    return [1 / counts[row.gpu] for row in rows]


def weighted_percentile(values: list[float], weights: list[float], share: float) -> float:
    """The value below which ``share`` of the total weight lies."""
    pairs = sorted(zip(values, weights, strict=True))
    total, seen = sum(weights), 0.0
    for value, weight in pairs:
        seen += weight
        if seen >= share * total:
            return value
    return pairs[-1][0]


def minimize(f: Callable[[list[float]], float], x0: list[float], rounds: int = 6) -> list[float]:
    """Nelder-Mead from ``x0``, restarted ``rounds`` times from its last best point (deterministic)."""
    best = list(x0)
    for _ in range(rounds):
        n = len(best)
        points = [best] + [[v + (0.5 if i == j else 0.0) for j, v in enumerate(best)] for i in range(n)]
        values = [f(p) for p in points]
        for _ in range(400 * n):
            order = sorted(range(n + 1), key=values.__getitem__)
            points, values = [points[i] for i in order], [values[i] for i in order]
            if values[-1] - values[0] < 1e-12:
                break
            centre = [sum(p[j] for p in points[:-1]) / n for j in range(n)]
            worst = points[-1]
            reflected = [c + (c - w) for c, w in zip(centre, worst, strict=True)]
            fr = f(reflected)
            if fr < values[0]:
                expanded = [c + 2 * (c - w) for c, w in zip(centre, worst, strict=True)]
                fe = f(expanded)
                points[-1], values[-1] = (expanded, fe) if fe < fr else (reflected, fr)
            elif fr < values[-2]:
                points[-1], values[-1] = reflected, fr
            else:
                contracted = [c + 0.5 * (w - c) for c, w in zip(centre, worst, strict=True)]
                fc = f(contracted)
                if fc < values[-1]:
                    points[-1], values[-1] = contracted, fc
                else:
                    points = [points[0]] + [[a + 0.5 * (b - a) for a, b in zip(points[0], p, strict=True)]
                                            for p in points[1:]]  # fmt: skip
                    values = [values[0]] + [f(p) for p in points[1:]]
        best = points[min(range(n + 1), key=values.__getitem__)]
    return best


def _share(x: float) -> float:
    """A share in (0, 1) from any real number (the logistic function): no engine exceeds the bandwidth."""
    return 1 / (1 + math.exp(-x))


def fit(rows: list[SpeedRow]) -> DecodeCalibration:
    """The constants from ``rows``, fitted together: the least squares of log(measured ÷ estimate) over every row,
    with one GPU efficiency per backend that has rows, the MoE factor, the host efficiency and the fixed cost per
    layer (efficiencies at most 1, the cost at least 0); a backend without rows gets the median of the backends'
    efficiencies; the band is the 10th and 90th percentile of measured ÷ estimate with every GPU counted once
    (:func:`device_weights`), so it is the band of a machine, not of the few machines with whole result files. (The
    fit itself weights rows alike: weighting it by GPU too checked worse out of sample, 85 % of rows and 68 % of GPUs
    within ±30 % against 90 % and 76 %, as single rows of noisy machines then pull it around.)"""
    features = [(row, *read_of(row), load_catalog().gpus[row.gpu].bandwidth_gbs * 1e9,
                 (row.host_bandwidth_gbs or ASSUMED_RAM_BANDWIDTH_GBS) * 1e9) for row in rows]  # fmt: skip
    backends = sorted({row.backend for row in rows})

    def unpack(x: list[float]) -> tuple[dict[str, float], float, float, float]:
        efficiency = {b: _share(v) for b, v in zip(backends, x, strict=False)}
        return efficiency, math.exp(x[-3]), _share(x[-2]), abs(x[-1]) * 100e-6

    def loss(x: list[float]) -> float:
        efficiency, moe_factor, host, overhead = unpack(x)
        total = 0.0
        for row, read, moe, layers, bandwidth, ram in features:
            m = moe_factor if moe else 1.0
            seconds = read.gpu / (bandwidth * efficiency[row.backend] * m) + layers * overhead
            if read.host:
                seconds += read.host / (ram * host * m)
            total += math.log(row.measured * seconds) ** 2
        return total

    x = minimize(loss, [0.5] * len(backends) + [0.0, 1.0, 1.0])
    efficiency, moe_factor, host_efficiency, overhead = unpack(x)
    efficiency = {b: round(e, 3) for b, e in efficiency.items()}
    default = round(statistics.median(efficiency.values()), 3)
    fitted = DecodeCalibration(efficiency=efficiency, moe_factor=round(moe_factor, 3),
                               host_efficiency=round(host_efficiency, 3), band=(1, 1), default_efficiency=default,
                               layer_overhead_us=round(overhead * 1e6, 1))  # fmt: skip
    ratios = [row.measured / _speed(row, fitted) for row in rows]
    weights = device_weights(rows)
    band = (round(weighted_percentile(ratios, weights, 0.1), 2), round(weighted_percentile(ratios, weights, 0.9), 2))
    return dataclasses.replace(fitted, band=band)


def _row_parts(row: SpeedRow) -> llama_cpp._Parts:
    """The calculator's parts (weights, KV, architecture) for the row's model, quant and prompt on its GPU."""
    gpu = load_catalog().gpus[row.gpu]
    request = Request(model=row.model, quant=row.quant, context=max(256, row.tokens), gpus=(GpuChoice(gpu=gpu),))
    return llama_cpp._parts(request)


def _prefill(row: SpeedRow, calibration: PrefillCalibration, bound: bool = False) -> float | None:
    gpu = load_catalog().gpus[row.gpu]
    parts = _row_parts(row)
    speed = prefill_speed(llama_cpp.active_params(parts), fp16_tflops=row.fp16_tflops,
                          backend=row.backend, calibration=calibration, bound=bound,
                          geforce=llama_cpp.is_geforce(gpu), attention_flops=attention_of(row),
                          chip_class=gpu.chip_class, experts=llama_cpp.routed_experts(parts))  # fmt: skip
    return speed.tokens_per_second if speed is not None else None


def attention_of(row: SpeedRow) -> float:
    """The row's attention FLOPs per prompt token: ``pp512 @ d32768`` reads 32,768 cells and more."""
    return attention_flops_per_token(row.model.architecture, row.tokens, depth=row.depth)


def host_weights_of(row: SpeedRow) -> tuple[int, int]:
    """The row's active parameters and the weights its micro-batches copy over PCIe (llama_cpp.host_weight_bytes)."""
    parts = _row_parts(row)
    kind, _, value = row.offload.partition(" ")
    if kind == "ngl":
        cpu_layers = parts.arch.n_layers - min(int(value), parts.arch.n_layers)
        moved = llama_cpp.host_weight_bytes(parts, cpu_layers=cpu_layers)
    elif kind == "ncmoe":
        moved = llama_cpp.host_weight_bytes(parts, cpu_expert_blocks=int(value))
    else:
        moved = 0
    return llama_cpp.active_params(parts), moved


def _streamed(row: SpeedRow, pcie: PcieCalibration, bound: bool = False) -> float | None:
    """An offloaded pp row: the compute at the shipped prefill calibration plus the PCIe transfer per micro-batch
    (llama-bench's n_ubatch, 512)."""
    gpu = load_catalog().gpus[row.gpu]
    params, moved = host_weights_of(row)
    parts = _row_parts(row)
    speed = streamed_prefill_speed(params, moved, fp16_tflops=row.fp16_tflops, backend=row.backend,
                                   pcie_gbs=gpu.pcie_gbs, geforce=llama_cpp.is_geforce(gpu), pcie=pcie,
                                   bound=bound, attention_flops=attention_of(row),
                                   chip_class=gpu.chip_class, experts=llama_cpp.routed_experts(parts))  # fmt: skip
    return speed.tokens_per_second if speed is not None else None


def fit_pcie(rows: list[SpeedRow]) -> float:
    """The PCIe efficiency: the least squares of log(measured ÷ estimate) over the offloaded pp rows (golden-section
    search on (0, 1]); the band is not fitted (two rows of one machine cannot give one)."""

    def loss(e: float) -> float:
        pcie = PcieCalibration(efficiency=e, band=(1, 1))
        return sum(math.log(r.measured / (_streamed(r, pcie) or 1.0)) ** 2 for r in rows)

    low, high = 0.01, 1.0
    ratio = (math.sqrt(5) - 1) / 2
    for _ in range(80):
        a, b = high - ratio * (high - low), low + ratio * (high - low)
        low, high = (low, b) if loss(a) < loss(b) else (a, high)
    return round((low + high) / 2, 3)


def offloaded_prefill_table(rows: list[SpeedRow]) -> None:
    """The pp rows with weights in system RAM (-ngl N, --n-cpu-moe N) beside their bound (compute and link at peak)
    and the estimate with the shipped PCIe efficiency."""
    usable = [r for r in rows if r.kind == "pp" and r.offload != "all" and r.fp16_tflops]
    print(f"\nprefill with weights in system RAM: {len(usable)} pp rows (the compute plus the host weights over PCIe "
          "once per micro-batch)")  # fmt: skip
    print(f"{'row':<15} {'device':<18} {'model':<22} {'offload':<9} {'moved GB':>9} {'link GB/s':>9} "
          f"{'measured':>9} {'bound':>9} {'shipped':>9} {'ratio':>6}")  # fmt: skip
    for row in sorted(usable, key=lambda r: (r.gpu, r.model.id, r.offload)):
        gpu = load_catalog().gpus[row.gpu]
        _, moved = host_weights_of(row)
        peak = _streamed(row, PCIE_CALIBRATION, bound=True) or 0.0
        shipped = _streamed(row, PCIE_CALIBRATION) or 0.0
        link = f"{gpu.pcie_gbs:.1f}" + ("*" if gpu.pcie_assumed else "")
        print(f"{row.row['id']!s:<15} {row.gpu:<18.18} {row.model.id + ' ' + row.quant:<22.22} {row.offload:<9} "
              f"{moved / 1e9:9.2f} {link:>9} {row.measured:9.1f} {peak:9.1f} {shipped:9.1f} "
              f"{row.measured / shipped:6.2f}")  # fmt: skip
    if usable:
        print(f"shipped PCIe efficiency {PCIE_CALIBRATION.efficiency} (band {PCIE_CALIBRATION.band}, chosen wide: "
              f"{len(usable)} rows of {len({r.gpu for r in usable})} machine(s)); * an assumed link")  # fmt: skip
    if "--fit" in sys.argv and usable:
        print(f"PCIe efficiency fitted on these rows: {fit_pcie(usable)}")


def fit_prefill(rows: list[SpeedRow]) -> PrefillCalibration:
    """The shares at each of :data:`EXPERT_MIN_TOKENS` (the least work a routed expert's product costs, in tokens), and
    the one whose estimates miss least (the sum of squared log(measured ÷ estimate), each machine counted once)."""
    weights = machine_weights(rows)
    best: tuple[float, PrefillCalibration] | None = None
    for min_tokens in EXPERT_MIN_TOKENS:
        fitted = _fit_prefill_shares(rows, weights, min_tokens)
        errors = [(row.measured / e, w) for row, w in zip(rows, weights, strict=True) if (e := _prefill(row, fitted))]
        loss = sum(w * math.log(r) ** 2 for r, w in errors)
        if best is None or loss < best[0]:
            best = (loss, fitted)
    assert best is not None
    return best[1]


EXPERT_MIN_TOKENS = (0, 16, 32, 48, 64, 80, 96, 128, 160, 192)


def _fit_prefill_shares(rows: list[SpeedRow], weights: list[float], min_tokens: float) -> PrefillCalibration:
    """Per backend, and per backend and chip class where at least :data:`CLASS_MACHINES` machines were measured, the
    median of measured ÷ bound with each machine counted once (a row weighs 1 ÷ its machine's rows); the band, the
    10th and 90th percentile of measured ÷ estimate, weighted the same way."""
    bound = PrefillCalibration(efficiency={}, band=(1, 1), expert_min_tokens=min_tokens)
    ratios: dict[str, list[tuple[float, float]]] = {}
    machines: dict[str, set[tuple[str, str, str]]] = {}
    for row, weight in zip(rows, weights, strict=True):
        peak = _prefill(row, bound, bound=True)
        if peak:
            for key in (row.backend, f"{row.backend}/{chip_class(row.gpu)}"):
                ratios.setdefault(key, []).append((row.measured / peak, weight))
                machines.setdefault(key, set()).add(machine_of(row))

    def median(pairs: list[tuple[float, float]]) -> float:
        return round(weighted_percentile([p[0] for p in pairs], [p[1] for p in pairs], 0.5), 3)

    efficiency = {k: median(v) for k, v in ratios.items() if "/" not in k}
    classes = {k: median(v) for k, v in ratios.items() if "/" in k and len(machines[k]) >= CLASS_MACHINES}
    # a backend without rows: the median backend's share (the median row would be Metal's, most machines are Macs)
    default = round(statistics.median(efficiency.values()), 3) if efficiency else 0.3
    fitted = PrefillCalibration(efficiency=efficiency, band=(1, 1), default_efficiency=default,
                                class_efficiency=classes, expert_min_tokens=min_tokens)  # fmt: skip
    errors = [(row.measured / e, w) for row, w in zip(rows, weights, strict=True) if (e := _prefill(row, fitted))]
    band = (1.0, 1.0)
    if errors:
        values, ws = [e[0] for e in errors], [e[1] for e in errors]
        band = (round(weighted_percentile(values, ws, 0.1), 2), round(weighted_percentile(values, ws, 0.9), 2))
    return dataclasses.replace(fitted, band=band)


CLASS_MACHINES = 2  # a backend's chip class with this many measured machines gets a prefill share of its own


def machine_weights(rows: list[SpeedRow]) -> list[float]:
    """1 ÷ the rows of the row's machine (:func:`machine_of`): every machine counts once."""
    counts: dict[tuple[str, str, str], int] = {}
    for row in rows:
        counts[machine_of(row)] = counts.get(machine_of(row), 0) + 1
    return [1 / counts[machine_of(row)] for row in rows]


def prefill_table(rows: list[SpeedRow]) -> None:
    usable = [r for r in rows if r.kind == "pp" and r.offload == "all" and r.fp16_tflops]
    folds = [fit_prefill([r for r in usable if r.fold != k]) for k in (0, 1)]
    print(f"\nprefill: {len(usable)} pp rows with every layer on a GPU whose FP16 throughput the presets carry")
    print(f"{'row':<15} {'fold':<4} {'backend':<7} {'device':<24} {'model':<24} {'test':<14} "
          f"{'measured':>9} {'bound':>9} {'shipped':>9} {'ratio':>6} {'check':>9} {'ratio':>6}")  # fmt: skip
    shipped_ratios: dict[str, list[float]] = {}
    check_ratios: dict[str, list[float]] = {}
    for row in sorted(usable, key=lambda r: (r.backend, r.gpu, r.model.id)):
        peak = _prefill(row, PREFILL_CALIBRATION, bound=True) or 0.0
        shipped = _prefill(row, PREFILL_CALIBRATION) or 0.0
        check = _prefill(row, folds[row.fold]) or 0.0
        shipped_ratios.setdefault(row.backend, []).append(row.measured / shipped)
        check_ratios.setdefault(row.backend, []).append(row.measured / check)
        print(f"{row.row['id']!s:<15} {row.fold:<4} {row.backend:<7} {row.gpu:<24.24} "
              f"{row.model.id + ' ' + row.quant:<24.24} {row.row['test']:<14.14} {row.measured:9.1f} {peak:9.1f} "
              f"{shipped:9.1f} {row.measured / shipped:6.2f} {check:9.1f} {row.measured / check:6.2f}")  # fmt: skip
    print(f"\n{'backend':<8} {'rows':>5} {'shipped median':>15} {'worst':>7} {'check median':>13} {'worst':>7} "
          f"{'check ±15%':>11} {'check ±30%':>11}")  # fmt: skip
    for backend in sorted(check_ratios):
        _summary(backend, shipped_ratios[backend], check_ratios[backend])
    if check_ratios:
        _summary("all", [r for v in shipped_ratios.values() for r in v], [r for v in check_ratios.values() for r in v])
    for k, fold in enumerate(folds):
        rows_k = [r for r in usable if r.fold == k]
        _summary(f"fold {k}", [r.measured / (_prefill(r, PREFILL_CALIBRATION) or 1.0) for r in rows_k],
                 [r.measured / (_prefill(r, fold) or 1.0) for r in rows_k])  # fmt: skip
    if usable:
        weights = device_weights(usable)
        check_all = [r.measured / (_prefill(r, folds[r.fold]) or 1.0) for r in usable]
        within = sum(w for r, w in zip(check_all, weights, strict=True) if abs(r - 1) <= 0.30) / sum(weights)
        print(f"each GPU counted once ({len(set(r.gpu for r in usable))} GPUs): check median "
              f"{weighted_percentile(check_all, weights, 0.5):.2f}, {within:.0%} within ±30%")  # fmt: skip
    if "--fit" in sys.argv:
        print(f"\nprefill fitted on every row: {fit_prefill(usable)}")


def main() -> None:
    rows, left = speed_rows()
    decode = [r for r in rows if r.kind == "tg"]
    prefill = [r for r in rows if r.kind == "pp"]
    print(f"{len(decode)} decode rows estimated; {len(prefill)} prefill rows (estimated below where the GPU's FP16 "
          f"throughput is known); {len(left)} rows "
          "left out (device or model without a preset, CPU-only runs, spills past VRAM, unusual quants)\n")  # fmt: skip
    folds = [fit([r for r in decode if r.fold != k]) for k in (0, 1)]  # fold k is checked with the other's fit
    print(f"{'row':<15} {'fold':<4} {'backend':<7} {'device':<24} {'model':<24} {'offload':<9} "
          f"{'measured':>9} {'bound':>8} {'shipped':>8} {'ratio':>6} {'check':>8} {'ratio':>6}")  # fmt: skip
    shipped_ratios: dict[str, list[float]] = {}
    check_ratios: dict[str, list[float]] = {}
    for row in sorted(decode, key=lambda r: (r.backend, r.gpu, r.model.id)):
        bound = _speed(row, CALIBRATION, bound=True)
        shipped = _speed(row, CALIBRATION)
        check = _speed(row, folds[row.fold])
        shipped_ratios.setdefault(row.backend, []).append(row.measured / shipped)
        check_ratios.setdefault(row.backend, []).append(row.measured / check)
        print(f"{row.row['id']!s:<15} {row.fold:<4} {row.backend:<7} {row.gpu:<24.24} "
              f"{row.model.id + ' ' + row.quant:<24.24} {row.offload:<9} {row.measured:9.1f} {bound:8.1f} "
              f"{shipped:8.1f} {row.measured / shipped:6.2f} {check:8.1f} {row.measured / check:6.2f}")  # fmt: skip
    print("\nshipped: calc/speed.py's constants (fitted on every row); check: each row estimated with the constants")
    print("fitted on the other half of the rows only (2-fold), so the check column is out of sample.\n")
    print(f"{'backend':<8} {'rows':>5} {'shipped median':>15} {'worst':>7} {'check median':>13} {'worst':>7} "
          f"{'check ±15%':>11} {'check ±30%':>11}")  # fmt: skip
    for backend in sorted(check_ratios):
        _summary(backend, shipped_ratios[backend], check_ratios[backend])
    _summary("all", [r for v in shipped_ratios.values() for r in v], [r for v in check_ratios.values() for r in v])
    for k, fold in enumerate(folds):
        rows_k = [r for r in decode if r.fold == k]
        _summary(f"fold {k}", [r.measured / _speed(r, CALIBRATION) for r in rows_k],
                 [r.measured / _speed(r, fold) for r in rows_k])  # fmt: skip
    weights = device_weights(decode)
    check_all = [r.measured / _speed(r, folds[r.fold]) for r in decode]
    within = sum(w for r, w in zip(check_all, weights, strict=True) if abs(r - 1) <= 0.30) / sum(weights)
    print(f"each GPU counted once ({len(set(r.gpu for r in decode))} GPUs): check median "
          f"{weighted_percentile(check_all, weights, 0.5):.2f}, {within:.0%} within ±30%")  # fmt: skip
    # A few machines publish whole result files (dozens of rows each): the devices with the most rows, so a share of
    # "all" that rests on them is seen as such.
    by_device: dict[str, list[SpeedRow]] = {}
    for row in decode:
        by_device.setdefault(row.gpu, []).append(row)
    print("\nthe devices with the most decode rows:")
    for gpu, rows_d in sorted(by_device.items(), key=lambda item: -len(item[1]))[:6]:
        _summary(gpu, [r.measured / _speed(r, CALIBRATION) for r in rows_d],
                 [r.measured / _speed(r, folds[r.fold]) for r in rows_d])  # fmt: skip
    if "--fit" in sys.argv:
        print("\nfitted on every row (the constants for calc/speed.py):")
        print(f"  {fit(decode)}")
        for k, fold in enumerate(folds):
            print(f"  fitted without fold {k}: {fold}")
    prefill_table(rows)
    offloaded_prefill_table(rows)
    presets = {str(r.row.get("device", r.gpu)): r.gpu for r in rows}
    decode_by_machine = leave_one_machine_out(decode, fit, _speed)
    lomo_table("decode", decode_by_machine, presets)
    if "--fit" in sys.argv:
        bands = class_bands(decode_by_machine, presets, CALIBRATION.band)
        print(f"\nthe decode band per chip class (CALIBRATION.class_bands): {bands}")
    full_prefill = [r for r in prefill if r.offload == "all" and r.fp16_tflops]
    prefill_by_machine = leave_one_machine_out(full_prefill, fit_prefill, lambda r, c: _prefill(r, c) or 0.0)
    lomo_table("prefill", prefill_by_machine, presets)
    if "--fit" in sys.argv:
        bands = class_bands(prefill_by_machine, presets, PREFILL_CALIBRATION.band)
        print(f"\nthe prefill band per chip class (PREFILL_CALIBRATION.class_bands): {bands}")


def chip_class(gpu_id: str) -> str:
    """The preset's chip class (calc.gpu.chip_class): what a machine is compared within."""
    return load_catalog().gpus[gpu_id].chip_class


def machine_of(row: SpeedRow) -> tuple[str, str, str]:
    """One machine: the device as its source names it, the backend it ran and the publication its results came in
    (its rows leave together; two core counts of one chip in one table are two machines). A publication is a
    repository at one commit, or one page: kyuz0's Strix Halo toolbox publishes one log per model, backend build and
    depth, 36 files of one machine, and they leave together as one."""
    return str(row.row.get("device", row.gpu)), row.backend, publication(str(row.row.get("source", "")))


def publication(url: str) -> str:
    """The repository and commit of a file on GitHub (``owner/name@commit``), else the page without its anchor."""
    blob = re.match(r"https://github\.com/([^/]+/[^/]+)/blob/([^/]+)/", url)
    return f"{blob[1]}@{blob[2]}" if blob else url.split("#")[0]


def leave_one_machine_out(
    rows: list[SpeedRow], fit_rows: Callable[[list[SpeedRow]], C], estimate: Callable[[SpeedRow, C], float]
) -> dict[tuple[str, str, str], float]:
    """Each machine's median measured ÷ estimate, its rows estimated with the constants fitted on every other
    machine's rows: out of sample by machine, not by row (the rows of one results file share its machine's quirks)."""
    machines: dict[tuple[str, str, str], list[SpeedRow]] = {}
    for row in rows:
        machines.setdefault(machine_of(row), []).append(row)
    out = {}
    for key, own in machines.items():
        calibration = fit_rows([r for r in rows if machine_of(r) != key])
        ratios = [r.measured / e for r in own if (e := estimate(r, calibration))]
        if ratios:
            out[key] = statistics.median(ratios)
    return out


def lomo_table(title: str, by_machine: dict[tuple[str, str, str], float], gpus: dict[str, str]) -> None:
    """Per backend and per chip class: machines, median ratio, and the share within ±15 % and ±30 %, each machine
    counted once (``gpus``: each device's preset)."""
    print(f"\n{title}: leave one machine out ({len(by_machine)} machines, each counted once)")
    print(f"{'group':<18} {'machines':>8} {'median':>7} {'±15%':>6} {'±30%':>6}")
    groups: dict[str, list[float]] = {}
    for (device, backend, _source), ratio in by_machine.items():
        groups.setdefault(backend, []).append(ratio)
        groups.setdefault(chip_class(gpus[device]), []).append(ratio)
        groups.setdefault("all", []).append(ratio)
    for name in sorted(groups, key=lambda g: (g == "all", " " in g, g)):
        ratios = groups[name]
        within15 = sum(1 for r in ratios if abs(r - 1) <= 0.15) / len(ratios)
        within30 = sum(1 for r in ratios if abs(r - 1) <= 0.30) / len(ratios)
        print(f"{name:<18} {len(ratios):>8} {statistics.median(ratios):7.2f} {within15:6.0%} {within30:6.0%}")


CLASS_BAND_MACHINES = 5  # a chip class with this many machines gets a band of its own


def class_bands(
    by_machine: dict[tuple[str, str, str], float], gpus: dict[str, str], general: tuple[float, float]
) -> dict[str, tuple[float, float]]:
    """Per chip class with enough machines: the 10th and 90th percentile of its machines' out-of-sample ratios, the
    band calc/speed.py gives that class's estimates (CALIBRATION.class_bands). A class's band only widens the
    ``general`` one, never narrows it: most Apple machines are one table's rows on one build (Apple Pro 1.05–1.09),
    and a Mac on another build runs up to a third slower (the 2023 Metal rows), which no narrow band would hold."""
    ratios: dict[str, list[float]] = {}
    for (device, _backend, _source), ratio in by_machine.items():
        ratios.setdefault(chip_class(gpus[device]), []).append(ratio)
    bands = {}
    for name, values in sorted(ratios.items()):
        if len(values) < CLASS_BAND_MACHINES:
            continue
        low, high = round(percentile(values, 0.1), 2), round(percentile(values, 0.9), 2)
        if low < general[0] or high > general[1]:
            bands[name] = (min(low, general[0]), max(high, general[1]))
    return bands


def _summary(backend: str, shipped: list[float], check: list[float]) -> None:
    def worst(ratios: list[float]) -> float:
        return max(ratios, key=lambda r: abs(r - 1))

    within15 = sum(1 for r in check if abs(r - 1) <= 0.15) / len(check)
    within30 = sum(1 for r in check if abs(r - 1) <= 0.30) / len(check)
    print(f"{backend:<8} {len(check):>5} {statistics.median(shipped):15.2f} {worst(shipped):7.2f} "
          f"{statistics.median(check):13.2f} {worst(check):7.2f} {within15:11.0%} {within30:11.0%}")  # fmt: skip


if __name__ == "__main__":
    main()
