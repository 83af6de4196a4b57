"""Every report format on a generated plan, side by side with a ``json.load`` of the same file.

For each format, azai and ``json.load`` run alternately (so both see the same machine load),
and the medians of wall time and the peaks of memory are compared: the targets are ratios, not
seconds. With ``--grow``, the same is done at 5x the resources, for the growth figure.

    python benchmarks/report_formats.py --resources 10000 --runs 3 [--grow]
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from plan_scan import measure  # noqa: E402

FORMATS = ("json", "sarif", "text", "markdown", "junit", "html")


def _plan(resources: int) -> Path:
    plan = HERE / "out" / f"plan-{resources}.json"
    if not plan.exists():
        subprocess.run([sys.executable, str(HERE / "generate_plan.py"), str(resources), str(plan)], check=True)
    return plan


def _scan(fmt: str, plan: Path) -> list[str]:
    return [sys.executable, "-m", "scanner", "scan", "--format", fmt, "--fail-on", "none", "-o", os.devnull, str(plan)]


def _formats(plan: Path, runs: int) -> None:
    """Each format's median time and peak memory, and their ratios to ``json.load``'s."""
    load = [sys.executable, "-c", f"import json\nwith open({str(plan)!r}, 'rb') as f: json.load(f)"]
    for fmt in FORMATS:
        pairs = [(measure(_scan(fmt, plan)), measure(load)) for _ in range(runs)]
        azai_time = statistics.median(a[0] for a, _ in pairs)
        load_time = statistics.median(b[0] for _, b in pairs)
        azai_peak = max(a[1] for a, _ in pairs)
        load_peak = max(b[1] for _, b in pairs)
        print(
            f"  {fmt:8} azai {azai_time:6.2f} s {azai_peak:6.0f} MiB | json.load {load_time:5.2f} s "
            f"{load_peak:5.0f} MiB | {azai_time / load_time:5.1f}x time {azai_peak / load_peak:4.1f}x memory",
            flush=True,
        )


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--resources", type=int, default=10_000)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--grow", action="store_true", help="also measure 5x the resources, for the growth figure")
    args = parser.parse_args()
    plan = _plan(args.resources)
    print(f"{plan.name}: {plan.stat().st_size / 1e6:.1f} MB")
    _formats(plan, args.runs)
    if args.grow:
        larger = _plan(args.resources * 5)
        for fmt in ("json", "sarif"):
            first, second = (
                statistics.median(measure(_scan(fmt, p))[0] for _ in range(args.runs)) for p in (plan, larger)
            )
            print(f"  {fmt}: {args.resources} -> {args.resources * 5} resources: {first:.2f} s -> {second:.2f} s "
                  f"({second / first:.1f}x)")  # fmt: skip
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
