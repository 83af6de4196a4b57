"""Every report format on a generated plan, side by side with a ``json.load`` of the same file.

For each format, azai and ``json.load`` run alternately (so both see the same machine load),
and the medians of wall time and the peaks of memory are compared: the targets are ratios, not
seconds. With ``--grow``, the same is done at 5x the resources, for the growth figure.

The floor is what a CPython scan that writes azai's JSON report spends before it translates,
evaluates or locates anything: azai's imports and rule loading, then ``json.load`` of the plan
and a compact ``json.dumps`` (the C encoder) of the report's value, with the collector off as
in a scan of files. It is printed as a ratio to the ``json.load`` runs above, with what the
4x target leaves for the rest, per resource.

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
TARGET_RATIO = 4.0

# Timed in one process: start-up as a scan pays it, then the plan's load and the report's dump
# with the collector off, as a scan of files runs them.
_FLOOR = """
import gc, json, sys, time
started = time.perf_counter()
import reports.json_report, scanner.cli.commands, scanner.pipeline.scan
from scanner.engine.registry import load_checks
load_checks()
imported = time.perf_counter()
gc.disable()
with open(sys.argv[1], "rb") as f:
    json.load(f)
loaded = time.perf_counter()
with open(sys.argv[2], "rb") as f:
    report = json.load(f)
begun = time.perf_counter()
json.dumps(report, separators=(",", ":"))
print(imported - started, loaded - imported, time.perf_counter() - begun)
"""


def _plan(resources: int) -> Path:
    plan = HERE / "out" / f"plan-{resources}.json"
    if not plan.exists():
        subprocess.run([sys.executable, str(HERE / "generate_plan.py"), str(resources), str(plan)], check=True)
    return plan


def _scan(fmt: str, plan: Path, output: str = os.devnull) -> list[str]:
    return [sys.executable, "-m", "scanner", "scan", "--format", fmt, "--fail-on", "none", "-o", output, str(plan)]


def _formats(plan: Path, runs: int) -> float:
    """Each format's median time and peak memory, and their ratios to ``json.load``'s; returns
    ``json.load``'s median over all the runs."""
    load = [sys.executable, "-c", f"import json\nwith open({str(plan)!r}, 'rb') as f: json.load(f)"]
    loads = []
    for fmt in FORMATS:
        pairs = [(measure(_scan(fmt, plan)), measure(load)) for _ in range(runs)]
        azai_time = statistics.median(a[0] for a, _ in pairs)
        load_time = statistics.median(b[0] for _, b in pairs)
        loads += [b[0] for _, b in pairs]
        azai_peak = max(a[1] for a, _ in pairs)
        load_peak = max(b[1] for _, b in pairs)
        print(
            f"  {fmt:8} azai {azai_time:6.2f} s {azai_peak:6.0f} MiB | json.load {load_time:5.2f} s "
            f"{load_peak:5.0f} MiB | {azai_time / load_time:5.1f}x time {azai_peak / load_peak:4.1f}x memory",
            flush=True,
        )
    return statistics.median(loads)


def _floor(plan: Path, resources: int, runs: int, baseline: float) -> None:
    """The floor's parts (medians), as a ratio to ``baseline``, the median ``json.load`` run."""
    report = HERE / "out" / f"report-{plan.stem}.json"
    subprocess.run(_scan("json", plan, str(report)), check=True)
    command = [sys.executable, "-c", _FLOOR, str(plan), str(report)]
    env = {**os.environ, "PYTHONPATH": str(HERE.parent)}
    samples = [subprocess.run(command, capture_output=True, text=True, check=True, env=env).stdout for _ in range(runs)]
    start, load, dump = (statistics.median(float(s.split()[i]) for s in samples) for i in range(3))
    floor = start + load + dump
    left = TARGET_RATIO * baseline - floor
    print(
        f"  floor: start-up {start:.2f} s + json.load {load:.2f} s + json.dumps of the report {dump:.2f} s "
        f"= {floor:.2f} s ({floor / baseline:.1f}x json.load's {baseline:.2f} s); at {TARGET_RATIO:.0f}x, {left:.2f} s "
        f"({left / resources * 1e6:.0f} us per resource) are left to translate, evaluate, locate and build findings",
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
    baseline = _formats(plan, args.runs)
    _floor(plan, args.resources, args.runs, baseline)
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
