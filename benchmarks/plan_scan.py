"""Scan a generated 10,000-resource plan with azai and with Checkov, side by side.

Reports wall time and peak memory (max RSS of the child process) for each tool and their
ratio, plus what ``azai --version`` imports. Checkov is optional: pass its executable with
``--checkov PATH`` (install it in its own virtual environment: ``pip install checkov``).

    python benchmarks/plan_scan.py --resources 10000 --runs 3 --checkov /path/to/checkov

``--sources`` also reports what mapping every finding to its ``.tf`` line costs, in two
layouts of the same 10,000 resources: each declared in its own block (the worst case), and
each copy of the estate an instance of one ``for_each`` module. Each is compared with the same
plan scanned without sources beside it.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent


def measure(command: list[str]) -> tuple[float, float, int]:
    """Wall seconds, peak RSS in MiB, and exit code of one run of ``command``."""
    start = time.perf_counter()
    process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    _, status, usage = os.wait4(process.pid, 0)
    elapsed = time.perf_counter() - start
    return elapsed, usage.ru_maxrss / 1024, os.waitstatus_to_exitcode(status)


def run(label: str, command: list[str], runs: int) -> tuple[float, float]:
    times, peaks = [], []
    for _ in range(runs):
        elapsed, peak, code = measure(command)
        times.append(elapsed)
        peaks.append(peak)
        print(f"  {label}: {elapsed:.2f} s, peak {peak:.0f} MiB, exit {code}", flush=True)
    return statistics.median(times), max(peaks)


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--resources", type=int, default=10_000)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--checkov", help="path to a checkov executable")
    parser.add_argument("--checkov-runs", type=int, default=1)
    parser.add_argument("--sources", action="store_true", help="also scan with .tf sources beside the plan")
    args = parser.parse_args()

    plan = HERE / "out" / f"plan-{args.resources}.json"
    if not plan.exists():
        subprocess.run([sys.executable, str(HERE / "generate_plan.py"), str(args.resources), str(plan)], check=True)
    print(f"plan: {plan} ({plan.stat().st_size / 1e6:.1f} MB, {args.resources} resources)")

    version = (
        subprocess.run(
            [
                sys.executable,
                "-c",
                "import sys\nfrom scanner.cli.commands import main\n"
                "try:\n main(['--version'])\nexcept SystemExit:\n pass\n"
                "print(sorted(m for m in sys.modules if m.startswith('azure')))",
            ],
            capture_output=True,
            text=True,
            check=True,
        )
        .stdout.strip()
        .splitlines()[-1]
    )
    print(f"azure modules imported by 'azai --version': {version}")
    started = time.perf_counter()
    for _ in range(5):
        subprocess.run([sys.executable, "-m", "scanner", "--version"], capture_output=True, check=True)
    print(f"'azai --version': {(time.perf_counter() - started) / 5 * 1000:.0f} ms per run")

    azai = [
        sys.executable,
        "-m",
        "scanner",
        "scan",
        "--format",
        "json",
        "--fail-on",
        "none",
        "--output",
        os.devnull,
        str(plan),
    ]
    azai_time, azai_peak = run("azai", azai, args.runs)
    print(f"azai: median {azai_time:.2f} s, peak {azai_peak:.0f} MiB")
    if args.sources:
        for layout in ("blocks", "modular"):
            pair = []
            for sourced in (False, True):
                variant = f"{layout}-{'sourced' if sourced else 'bare'}-{args.resources}"
                layout_plan = HERE / "out" / variant / "plan.json"
                if not layout_plan.exists():
                    generator = [sys.executable, str(HERE / "generate_plan.py"), str(args.resources), str(layout_plan)]
                    generator += ["--modular"] * (layout == "modular") + ["--sources"] * sourced
                    subprocess.run(generator, check=True, stdout=subprocess.DEVNULL)
                pair.append([*azai[:-1], str(layout_plan)])
            # Alternated, so both see the same load on a shared machine.
            runs = [(measure(pair[0]), measure(pair[1])) for _ in range(args.runs)]
            bare_time, with_time = (statistics.median(r[i][0] for r in runs) for i in (0, 1))
            bare_peak, with_peak = (max(r[i][1] for r in runs) for i in (0, 1))
            print(
                f"{layout}: with .tf sources {with_time:.2f} s, {with_peak:.0f} MiB against {bare_time:.2f} s, "
                f"{bare_peak:.0f} MiB ({(with_time / bare_time - 1) * 100:+.1f} % time, "
                f"{(with_peak / bare_peak - 1) * 100:+.1f} % memory)",
                flush=True,
            )
    if args.checkov:
        checkov = [args.checkov, "-f", str(plan), "--framework", "terraform_plan", "--quiet", "--compact", "-o", "json"]
        checkov_time, checkov_peak = run("checkov", checkov, args.checkov_runs)
        print(f"checkov: median {checkov_time:.2f} s, peak {checkov_peak:.0f} MiB")
        speed, memory = checkov_time / azai_time, checkov_peak / azai_peak
        print(f"ratio: azai is {speed:.1f}x faster and uses {memory:.1f}x less memory")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
