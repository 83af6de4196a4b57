"""Time ``azai scan`` on compiled Bicep: by default the Azure Verified Modules patterns in
../shared/corpus/arm/bicep-avm-patterns, largest first (the 3 MB chat-with-your-data pattern
must scan in under a second).

Reports the median wall time of the whole command (interpreter start included) and peak memory
per template. Pass ``--root DIR`` to time another checkout of azai side by side.

    python benchmarks/template_scan.py --runs 5
    python benchmarks/template_scan.py --runs 5 --root ../azai-main   # the same, for another checkout
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
from pathlib import Path

from plan_scan import measure

HERE = Path(__file__).resolve().parent
PATTERNS = HERE.parent.parent / "shared" / "corpus" / "arm" / "bicep-avm-patterns"


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("templates", nargs="*", type=Path)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--root", type=Path, default=HERE.parent, help="the azai checkout to run")
    args = parser.parse_args()
    templates = args.templates or sorted(PATTERNS.glob("*.json"), key=lambda p: -p.stat().st_size)
    if not templates:
        print(f"no templates given and none in {PATTERNS}")
        return 2
    os.environ["PYTHONPATH"] = str(args.root.resolve())
    os.chdir(args.root)
    for template in templates:
        command = [sys.executable, "-m", "scanner", "scan", "--format", "json", "--fail-on", "none"]
        command += ["--output", os.devnull, str(template.resolve())]
        runs = [measure(command) for _ in range(args.runs)]
        wall = statistics.median(r[0] for r in runs)
        peak = max(r[1] for r in runs)
        codes = sorted({r[2] for r in runs})
        size = template.stat().st_size / 1e6
        print(f"{template.name}: {size:.2f} MB, median {wall:.3f} s, peak {peak:.0f} MiB, exit {codes}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
