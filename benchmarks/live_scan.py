"""A live scan of 1,000 subscriptions x 100 resources against the emulator, with added latency.

Reports wall time, requests sent against the minimum number of pages the estate needs, and
peak memory of the scanning process; then the same estate collected naively (one subscription
and one resource type at a time, through the generic resources API) for the ratio that
Resource Graph discovery buys.

    python benchmarks/live_scan.py --subscriptions 1000 --resources 100 --latency 0.025
"""

from __future__ import annotations

import argparse
import math
import os
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

from scanner.emulator.estate import Estate, generate_estate  # noqa: E402
from scanner.emulator.server import Emulator, Faults  # noqa: E402
from scanner.sources.live.collect import (  # noqa: E402
    GRAPH_TYPES,
    PAGE_SIZE,
    SUBSCRIPTIONS_PER_QUERY,
    environment_reference,
)


def minimum_requests(estate: Estate, page_size: int, diagnostics: bool = True) -> int:
    """Pages the estate needs at the least: subscription list, Resource Graph, per-parent details."""
    subscriptions = estate.subscription_ids()
    graph = 0
    for start in range(0, len(subscriptions), SUBSCRIPTIONS_PER_QUERY):
        batch = {s.lower() for s in subscriptions[start : start + SUBSCRIPTIONS_PER_QUERY]}
        rows = sum(1 for r in estate.top_level if r["id"].split("/")[2].lower() in batch)
        graph += max(1, math.ceil(rows / PAGE_SIZE))
    details = 0
    for resource in estate.top_level:
        kind = resource["type"].lower()
        # workspaces: computes, online and serverless endpoints (and diagnostic settings);
        # clusters: agent pools; Container Apps: auth configs; Cognitive accounts: diagnostic settings
        if kind.endswith("/workspaces"):
            details += 3 + diagnostics
        elif kind.endswith(("/managedclusters", "/containerapps")):
            details += 1
        elif kind.endswith("cognitiveservices/accounts"):
            details += diagnostics and str(resource.get("kind", "")).lower() in ("openai", "aiservices")
    details += sum(1 for r in estate.resources if r["type"].lower().endswith("/onlineendpoints"))  # their deployments
    # the environment versions deployments name by id, read once each
    details += len({ref.lower() for r in estate.resources if (ref := environment_reference(r))})
    details += _metric_requests(estate)
    return math.ceil(len(subscriptions) / page_size) + graph + details


def _metric_requests(estate: Estate) -> int:
    """Utilization requests AZAI-202 needs: one per workspace with GPU computes, one per GPU VM or scale set."""
    from scanner.model import vmsizes

    workspaces, machines = set(), 0
    for r in estate.resources:
        kind = r["type"].lower()
        props = r.get("properties", {})
        if kind.endswith("/workspaces/computes") and vmsizes.is_gpu_size(
            str(props.get("properties", {}).get("vmSize", ""))
        ):
            workspaces.add(r["id"].lower().rsplit("/computes/", 1)[0])
        elif kind.endswith("/virtualmachines") and vmsizes.is_gpu_size(
            str(props.get("hardwareProfile", {}).get("vmSize", ""))
        ):
            machines += 1
    return len(workspaces) + machines


def naive(emulator: Emulator, workers: int) -> tuple[float, int]:
    """One subscription and one resource type at a time, as tools without Resource Graph do."""
    from scanner.sources.live.clients import ClientFactory, RateLimits
    from scanner.sources.live.collect import Collector, Progress

    factory = ClientFactory(arm_endpoint=emulator.endpoint, limits=RateLimits())
    collector = Collector(factory, Progress(False))
    before = len(emulator.log)
    started = time.perf_counter()

    def one(subscription: str) -> None:
        client = factory.resources(subscription)
        for resource_type in GRAPH_TYPES:
            for item in client.resources.list(filter=f"resourceType eq '{resource_type}'"):
                body = item.as_dict()
                body.update(subscriptionId=subscription, resourceGroup=body["id"].split("/")[4])
                collector.details(body)

    with ThreadPoolExecutor(max_workers=workers) as pool:
        list(pool.map(one, emulator.estate.subscription_ids()))
    return time.perf_counter() - started, len(emulator.log) - before


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--subscriptions", type=int, default=1000)
    parser.add_argument("--resources", type=int, default=100)
    parser.add_argument("--latency", type=float, default=0.025)
    parser.add_argument(
        "--naive-subscriptions", type=int, default=100, help="naive run on this many (time scales linearly; 0 skips it)"
    )
    parser.add_argument("--ignore", action="append", default=[], metavar="RULE", help="passed to azai scan")
    args = parser.parse_args()

    estate = generate_estate(args.subscriptions, args.resources)
    faults = Faults(latency_seconds=args.latency)
    print(
        f"estate: {args.subscriptions} subscriptions x {args.resources} resources "
        f"({len(estate.resources)} incl. children), latency {args.latency * 1000:.0f} ms per request"
    )
    with Emulator(estate, faults) as emulator:
        env = {**os.environ, **emulator.environment(), "PYTHONPATH": str(HERE.parent)}
        command = [
            sys.executable,
            "-m",
            "scanner",
            "scan",
            "--all-subscriptions",
            "--arm-endpoint",
            emulator.endpoint,
            "--format",
            "json",
            "--output",
            os.devnull,
            "--fail-on",
            "none",
            *[arg for rule in args.ignore for arg in ("--ignore", rule)],
        ]
        started = time.perf_counter()
        process = subprocess.Popen(command, env=env)
        _, status, usage = os.wait4(process.pid, 0)
        elapsed = time.perf_counter() - started
        requests = sum(1 for r in emulator.log if r.path != "/msi/token")
        writes = emulator.writes()
        minimum = minimum_requests(estate, faults.page_size, diagnostics="AZAI-501" not in args.ignore)
        print(f"azai: {elapsed:.1f} s, exit {os.waitstatus_to_exitcode(status)}, peak {usage.ru_maxrss / 1024:.0f} MiB")
        ratio = requests / minimum
        print(f"requests: {requests} against a minimum of {minimum} pages ({ratio:.2f}x); writes: {len(writes)}")

    if args.naive_subscriptions <= 0:
        return 0
    sample = generate_estate(args.naive_subscriptions, args.resources)
    with Emulator(sample, Faults(latency_seconds=args.latency)) as emulator:
        os.environ.update(emulator.environment())
        naive_time, naive_requests = naive(emulator, workers=1)
    scale = args.subscriptions / args.naive_subscriptions
    print(
        f"naive, {args.naive_subscriptions} subscriptions, one at a time: {naive_time:.1f} s, {naive_requests} requests"
    )
    print(f"naive scaled to {args.subscriptions}: {naive_time * scale:.0f} s, {naive_requests * scale:.0f} requests")
    speed, fewer = naive_time * scale / elapsed, naive_requests * scale / requests
    print(f"Resource Graph buys {speed:.1f}x in time and {fewer:.1f}x in requests")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
