"""Decode speed, estimated against published llama-bench results (tests/data/groundtruth/speed.jsonl).

    python benchmarks/speed_accuracy.py          # the table, the fit half and the check half
    python benchmarks/speed_accuracy.py --fit    # also the constants calc/speed.py would get from the fit half

Each row is run through the calculator at its own setting (device, model, quant, offload); the table prints the
measured tokens/s, the bandwidth bound, vramfit's estimate and measured ÷ estimate side by side. The calibration of
calc/speed.py was fitted on the rows whose id is even (as a hex number) and is checked here on the odd ones.
Prefill (pp) rows are counted but not estimated yet. Asserts nothing.
"""

from __future__ import annotations

import statistics
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

from speed_rows import SpeedRow, speed_rows  # noqa: E402

from vramfit.calc.engines import llama_cpp  # noqa: E402
from vramfit.calc.presets import load_catalog  # noqa: E402
from vramfit.calc.request import GpuChoice, Request  # noqa: E402
from vramfit.calc.speed import (  # noqa: E402
    ASSUMED_RAM_BANDWIDTH_GBS,
    CALIBRATION,
    PREFILL_CALIBRATION,
    BytesPerToken,
    DecodeCalibration,
    PrefillCalibration,
    decode_speed,
    prefill_speed,
)


def read_of(row: SpeedRow) -> tuple[BytesPerToken, bool]:
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
    return read, parts.arch.n_experts > 0


def _speed(row: SpeedRow, calibration: DecodeCalibration, bound: bool = False) -> float:
    read, moe = read_of(row)
    speed = decode_speed(
        read,
        gpu_bandwidth_gbs=load_catalog().gpus[row.gpu].bandwidth_gbs,
        backend=row.backend,
        moe=moe,
        ram_bandwidth_gbs=row.host_bandwidth_gbs or ASSUMED_RAM_BANDWIDTH_GBS,
        calibration=calibration,
        bound=bound,
    )
    assert speed is not None
    return speed.tokens_per_second


def percentile(values: list[float], share: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, round(share * (len(ordered) - 1))))]


def fit(rows: list[SpeedRow]) -> DecodeCalibration:
    """The constants from ``rows``: per backend, the median of measured ÷ bound over dense rows with every layer on
    the GPU; the MoE factor, the median over MoE rows on the GPU of what is left; the host efficiency, the median
    over offloaded rows of what explains their time once the GPU part is taken out; the band, the 10th and 90th
    percentile of measured ÷ estimate."""
    bound = DecodeCalibration(efficiency={}, moe_factor=1.0, host_efficiency=1.0, band=(1.0, 1.0))
    dense: dict[str, list[float]] = {}
    for row in rows:
        if row.offload == "all" and not read_of(row)[1]:
            dense.setdefault(row.backend, []).append(row.measured / _speed(row, bound, bound=True))
    efficiency = {backend: round(statistics.median(ratios), 3) for backend, ratios in dense.items()}
    default = round(statistics.median([r for ratios in dense.values() for r in ratios]), 3)
    base = DecodeCalibration(efficiency=efficiency, moe_factor=1.0, host_efficiency=1.0, band=(1, 1),
                             default_efficiency=default)  # fmt: skip
    moe = [row.measured / _speed(row, base) for row in rows if row.offload == "all" and read_of(row)[1]]
    moe_factor = round(statistics.median(moe), 3) if moe else 1.0
    host: list[float] = []
    for row in rows:
        read, is_moe = read_of(row)
        if row.offload == "all" or not read.host:
            continue
        e_gpu = efficiency.get(row.backend, default) * (moe_factor if is_moe else 1.0)
        gpu_seconds = read.gpu / (load_catalog().gpus[row.gpu].bandwidth_gbs * 1e9 * e_gpu)
        left = 1 / row.measured - gpu_seconds
        if left > 0:
            ram = (row.host_bandwidth_gbs or ASSUMED_RAM_BANDWIDTH_GBS) * 1e9
            host.append(read.host / (ram * left) / (moe_factor if is_moe else 1.0))
    host_efficiency = round(statistics.median(host), 3) if host else 0.3
    fitted = DecodeCalibration(efficiency=efficiency, moe_factor=moe_factor, host_efficiency=host_efficiency,
                               band=(1, 1), default_efficiency=default)  # fmt: skip
    ratios = [row.measured / _speed(row, fitted) for row in rows]
    band = (round(percentile(ratios, 0.1), 2), round(percentile(ratios, 0.9), 2))
    return DecodeCalibration(efficiency=efficiency, moe_factor=moe_factor, host_efficiency=host_efficiency,
                             band=band, default_efficiency=default)  # fmt: skip


def _prefill(row: SpeedRow, calibration: PrefillCalibration, bound: bool = False) -> float | None:
    gpu = load_catalog().gpus[row.gpu]
    request = Request(model=row.model, quant=row.quant, context=max(256, row.tokens), gpus=(GpuChoice(gpu=gpu),))
    speed = prefill_speed(llama_cpp.active_params(llama_cpp._parts(request)), fp16_tflops=gpu.fp16_tflops * row.count,
                          backend=row.backend, calibration=calibration, bound=bound)  # fmt: skip
    return speed.tokens_per_second if speed is not None else None


def fit_prefill(rows: list[SpeedRow]) -> PrefillCalibration:
    """Per backend, the median of measured ÷ bound; the band, the 10th and 90th percentile of measured ÷ estimate."""
    bound = PrefillCalibration(efficiency={}, band=(1, 1))
    ratios: dict[str, list[float]] = {}
    for row in rows:
        peak = _prefill(row, bound, bound=True)
        if peak:
            ratios.setdefault(row.backend, []).append(row.measured / peak)
    efficiency = {b: round(statistics.median(r), 3) for b, r in ratios.items()}
    default = round(statistics.median([x for r in ratios.values() for x in r]), 3) if ratios else 0.3
    fitted = PrefillCalibration(efficiency=efficiency, band=(1, 1), default_efficiency=default)
    errors = [row.measured / e for row in rows if (e := _prefill(row, fitted))]
    band = (round(percentile(errors, 0.1), 2), round(percentile(errors, 0.9), 2)) if errors else (1, 1)
    return PrefillCalibration(efficiency=efficiency, band=band, default_efficiency=default)


def prefill_table(rows: list[SpeedRow]) -> None:
    usable = [r for r in rows if r.kind == "pp" and r.offload == "all" and load_catalog().gpus[r.gpu].fp16_tflops]
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
    if "--fit" in sys.argv:
        print(f"\nprefill fitted on every row: {fit_prefill(usable)}")


def main() -> None:
    rows, left = speed_rows()
    decode = [r for r in rows if r.kind == "tg"]
    prefill = [r for r in rows if r.kind == "pp"]
    print(f"{len(decode)} decode rows estimated; {len(prefill)} prefill rows not estimated yet; {len(left)} rows "
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
    if "--fit" in sys.argv:
        print("\nfitted on every row (the constants for calc/speed.py):")
        print(f"  {fit(decode)}")
        for k, fold in enumerate(folds):
            print(f"  fitted without fold {k}: {fold}")
    prefill_table(rows)


def _summary(backend: str, shipped: list[float], check: list[float]) -> None:
    def worst(ratios: list[float]) -> float:
        return max(ratios, key=lambda r: abs(r - 1))

    within15 = sum(1 for r in check if abs(r - 1) <= 0.15) / len(check)
    within30 = sum(1 for r in check if abs(r - 1) <= 0.30) / len(check)
    print(f"{backend:<8} {len(check):>5} {statistics.median(shipped):15.2f} {worst(shipped):7.2f} "
          f"{statistics.median(check):13.2f} {worst(check):7.2f} {within15:11.0%} {within30:11.0%}")  # fmt: skip


if __name__ == "__main__":
    main()
