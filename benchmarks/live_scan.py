"""A live scan of 1,000 subscriptions x 100 resources against the emulator, with added latency.

Reports wall time, requests sent against the minimum number of pages the estate needs, peak
memory of the scanning process, and the CPU time of azai (the child process that scans) and
of the emulator (this process, which serves it and does nothing else meanwhile) apart; then
the same estate collected naively (one subscription and one resource type at a time, through
the generic resources API) for the ratio that Resource Graph discovery buys.

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
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

from scanner.emulator.estate import Estate, generate_estate  # noqa: E402
from scanner.emulator.server import Emulator, Faults  # noqa: E402
from scanner.engine.registry import every_live_read, live_needs, load_checks  # noqa: E402
from scanner.model import azure_types as T  # noqa: E402
from scanner.model.needs import LiveNeeds, LiveRead  # noqa: E402
from scanner.sources.live.collect import (  # noqa: E402
    ACCOUNT_CHILDREN,
    GRAPH_TYPES,
    LISTED_UNDER,
    PAGE_SIZE,
    SUBSCRIPTIONS_PER_QUERY,
    collected_types,
    environment_reference,
    graph_types,
    held_children,
    names_custom_filter,
)


def minimum_requests(estate: Estate, page_size: int, needs: LiveNeeds) -> int:
    """Pages the estate needs at the least for what the rules read (``needs``): subscription
    list, Resource Graph, per-parent lists and per-resource reads."""
    subscriptions = estate.subscription_ids()
    collected = collected_types(needs)
    discovered = set(graph_types(collected))
    rows = [r for r in estate.top_level if r["type"].lower() in discovered]
    return (
        math.ceil(len(subscriptions) / page_size)
        + _graph_pages(subscriptions, rows)
        + _list_requests(estate, collected)
        + _read_requests(estate, rows, needs, page_size)
    )


def _graph_pages(subscriptions: list[str], rows: list[dict[str, Any]]) -> int:
    """Resource Graph pages: one query per batch of subscriptions, at least one page each."""
    pages = 0
    for start in range(0, len(subscriptions), SUBSCRIPTIONS_PER_QUERY):
        batch = {s.lower() for s in subscriptions[start : start + SUBSCRIPTIONS_PER_QUERY]}
        pages += max(1, math.ceil(sum(1 for r in rows if r["id"].split("/")[2].lower() in batch) / PAGE_SIZE))
    return pages


def _list_requests(estate: Estate, collected: frozenset[str]) -> int:
    """One list per parent and child type read (workspaces: computes, online and serverless
    endpoints, connections; endpoints: deployments; clusters: agent pools; Container Apps: auth
    configs; AI services accounts: the children their kind holds, content filters only where a
    deployment names a custom one)."""
    listed = [LISTED_UNDER[t] for t in collected if t in LISTED_UNDER]
    account = T.COGNITIVE_ACCOUNT.lower()
    total = sum(listed.count(r["type"].lower()) for r in estate.resources if r["type"].lower() != account)
    child_type = {child: kind.lower() for child, kind in ACCOUNT_CHILDREN}
    for r in estate.resources:
        if r["type"].lower() != account:
            continue
        wanted = {child for child in held_children(r.get("kind")) if child_type[child] in collected}
        deployments = estate.children.get((r["id"].lower(), "deployments"), [])
        if "raiPolicies" in wanted and "deployments" in wanted and not names_custom_filter(deployments):
            wanted.discard("raiPolicies")
        total += len(wanted)
    return total


def _read_requests(estate: Estate, rows: list[dict[str, Any]], needs: LiveNeeds, page_size: int) -> int:
    """Diagnostic settings per row, a workspace's jobs (one page at least), environment versions
    deployments name by id (read once each), and utilization metrics, where ``needs`` asks for
    them."""

    def wants(read: LiveRead, body: dict[str, Any]) -> bool:
        return needs.wants(read, str(body["type"]), body.get("kind"))

    logged = sum(1 for r in rows if wants(LiveRead.DIAGNOSTIC_SETTINGS, r))
    jobs = sum(
        max(1, math.ceil(len(estate.children.get((r["id"].lower(), "jobs"), [])) / page_size))
        for r in rows
        if wants(LiveRead.ML_JOBS, r)
    )
    references = {
        ref.lower()
        for r in estate.resources
        if wants(LiveRead.ENVIRONMENT_VERSIONS, r) and (ref := environment_reference(r))
    }
    return logged + jobs + len(references) + _metric_requests(estate, needs)


def _metric_requests(estate: Estate, needs: LiveNeeds) -> int:
    """Utilization requests: one per workspace with GPU computes, one per GPU VM or scale set."""
    from scanner.model import vmsizes

    workspaces, machines = set(), 0
    for r in estate.resources:
        kind = r["type"].lower()
        props = r.get("properties", {})
        if not needs.wants(LiveRead.METRICS, kind, r.get("kind")):
            continue
        if kind == T.COMPUTE.lower() and vmsizes.is_gpu_size(str(props.get("properties", {}).get("vmSize", ""))):
            workspaces.add(r["id"].lower().rsplit("/computes/", 1)[0])
        elif kind == T.VIRTUAL_MACHINE.lower() and vmsizes.is_gpu_size(
            str(props.get("hardwareProfile", {}).get("vmSize", ""))
        ):
            machines += 1
    return len(workspaces) + machines


RESOURCES_API = "2021-04-01"  # Resources - List


def naive(emulator: Emulator, workers: int) -> tuple[float, int]:
    """One subscription and one resource type at a time, as tools without Resource Graph do."""
    from scanner.sources.live.clients import ClientFactory, RateLimits
    from scanner.sources.live.collect import Collector, Progress, arm_collection
    from scanner.sources.live.shapes import arm_object

    factory = ClientFactory(arm_endpoint=emulator.endpoint, limits=RateLimits())
    collector = Collector(factory, Progress(False), every_live_read(load_checks()))
    before = len(emulator.log)
    started = time.perf_counter()

    def one(subscription: str) -> None:
        url = f"/subscriptions/{subscription}/resources"
        for resource_type in GRAPH_TYPES:
            first = factory.url(url, {"api-version": RESOURCES_API, "$filter": f"resourceType eq '{resource_type}'"})
            for body in arm_collection(factory.raw(), first, factory.boundary.limits, arm_object):
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
        started, served = time.perf_counter(), time.process_time()
        process = subprocess.Popen(command, env=env)
        _, status, usage = os.wait4(process.pid, 0)
        elapsed, served = time.perf_counter() - started, time.process_time() - served
        requests = sum(1 for r in emulator.log if r.path != "/msi/token")
        writes = emulator.writes()
        # the minimum for the rules the scan runs: it reads only what they declare
        needs = live_needs([c for c in load_checks() if c.id not in args.ignore and "drift" not in c.sources])
        minimum = minimum_requests(estate, faults.page_size, needs)
        print(f"azai: {elapsed:.1f} s, exit {os.waitstatus_to_exitcode(status)}, peak {usage.ru_maxrss / 1024:.0f} MiB")
        ratio = requests / minimum
        print(f"requests: {requests} against a minimum of {minimum} pages ({ratio:.2f}x); writes: {len(writes)}")
        scanned = usage.ru_utime + usage.ru_stime
        for who, seconds in (("azai", scanned), ("emulator", served)):
            print(f"{who} CPU: {seconds:.1f} s, {seconds / max(requests, 1) * 1000:.2f} ms per request")
        # system time is the kernel's share (sockets, TLS records, threads waking on locks)
        print(f"azai CPU split: user {usage.ru_utime:.1f} s, system {usage.ru_stime:.1f} s")
        # A scan is one interpreter, whose Python runs one thread at a time: near one core
        # here means its CPU, not the latency, sets the wall time.
        print(f"azai busy: {scanned / elapsed:.2f} cores on average; machine: {os.cpu_count()} cores")

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
