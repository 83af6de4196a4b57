"""Prices wherever the work runs (issue 35, item 5).

The demo estate, moved out of eastus to three other regions, must have every dollar figure
known, each naming its source and date: in its IaC twin (a Terraform plan, an ARM template and
a what-if of the same deployment) and in its live twin (served by the emulator). The regions
are westeurope, swedencentral and westus3, which the bundled sources cover for every meter the
demo bills but one: VM sizes (Karpenter's June 2026 snapshot) and provisioned throughput
(azure-genai-prices' August 2026 snapshot) are bundled there; no public copy holds the
Container Apps serverless GPU meters outside eastus, so, as a user would, each test first runs
``azai prices refresh`` for those regions against the emulator's Retail Prices API, serving
Container Apps rows only (the VM family gets no rows there and stays bundled).

Exact-value tests pin a few looked-up rows: a CPU size outside the US, a serverless GPU
profile in westus3, a regional PTU in swedencentral and a fine-tuned model's hosting.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from scanner.cli.commands import DEMO_RULE_OPTIONS
from scanner.emulator.estate import Estate, demo_estate_path
from scanner.emulator.server import Emulator
from scanner.model.price_sources import KARPENTER_SOURCE, SNAPSHOT_COPY
from scanner.model.price_tables import Price
from scanner.model.pricing import FINE_TUNE_HOSTING, PTU, SERVERLESS_GPU, PriceBook, fine_tune_item
from tests.conftest import FIXTURE_DATE, FIXTURES, run_cli
from tests.live_estates import live_scan, model_account, model_deployment, rule_outcomes
from tests.test_cost import container_apps_item

REGIONS = ("westeurope", "swedencentral", "westus3")
DEMO_REGIONS = {"eastus", "east us", "westeurope", "west europe"}
DATE = re.compile(r"^\d{4}-\d{2}-\d{2}$")
# Linux pay-as-you-go $/h of the demo's sizes in Karpenter's snapshot (zz_generated.pricing.go
# at 2b431da, generated 2026-06-18): (Standard_NC24ads_A100_v4, Standard_NC4as_T4_v3).
VM_USD = {"westeurope": (4.775, 0.658), "swedencentral": (4.775, 0.558), "westus3": (3.673, 0.526)}
# Made-up serverless T4 prices per GPU-second that the emulator's Retail Prices API serves: test
# data, so each region's figure shows it came from the refresh and not from a bundled row.
T4_PER_SECOND = {"westeurope": 0.0001, "swedencentral": 0.00009, "westus3": 0.00008}


def relocate(document: Any, region: str) -> Any:
    """``document`` with every string naming one of the demo's regions replaced by ``region``."""
    if isinstance(document, dict):
        return {key: relocate(value, region) for key, value in document.items()}
    if isinstance(document, list):
        return [relocate(value, region) for value in document]
    return region if isinstance(document, str) and document.lower() in DEMO_REGIONS else document


def _refresh_serverless_gpus(emulator: Emulator) -> None:
    """``azai prices refresh`` for the three regions, into the user cache scans read first."""
    args = [arg for region in REGIONS for arg in ("--region", region)]
    done = run_cli("prices", "refresh", *args, "--endpoint", emulator.endpoint)
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("wrote 3 prices to "), done.stdout


def _serverless_gpu_rows() -> list[dict[str, object]]:
    return [
        container_apps_item("Standard NC T4 v3 GPU Usage", per_second, region)
        for region, per_second in T4_PER_SECOND.items()
    ]


@pytest.fixture
def user_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """An empty user cache for this test: the refresh writes there and scans read it."""
    cache = tmp_path / "cache"
    monkeypatch.setenv("XDG_CACHE_HOME", str(cache))
    return cache


def _costs(findings: list[dict[str, Any]]) -> dict[tuple[str, str], dict[str, Any]]:
    """Each priced finding's cost by (rule, resource name), after checking it is the same for
    every copy of the resource (the plan, template and what-if name the same resources)."""
    costs: dict[tuple[str, str], dict[str, Any]] = {}
    for finding in findings:
        if finding["cost"]:
            key = (finding["rule_id"], finding["resource_name"])
            assert costs.setdefault(key, finding["cost"]) == finding["cost"], key
    return costs


def _assert_known_and_cited(costs: dict[tuple[str, str], dict[str, Any]], region: str) -> None:
    for key, cost in costs.items():
        price = cost["price"]
        assert cost["monthly_usd"] is not None and cost["unknown_reason"] is None, (key, cost)
        assert price["source"] and DATE.match(price["as_of"]), (key, price)
        assert "(" not in cost["basis"] or f", {region})" in cost["basis"], (key, cost["basis"])


@pytest.mark.parametrize("region", REGIONS)
def test_the_demo_iac_twin_moved_out_of_eastus_has_every_figure_known(
    serve: Callable[..., Emulator], user_cache: Path, tmp_path: Path, region: str
) -> None:
    _refresh_serverless_gpus(serve(Estate([], [], retail_prices=_serverless_gpu_rows())))
    paths = []
    for name in ("plan.json", "template.json", "whatif.json"):
        document = relocate(json.loads((FIXTURES / "demo" / name).read_text(encoding="utf-8")), region)
        paths.append(tmp_path / name)
        paths[-1].write_text(json.dumps(document), encoding="utf-8")
    done = run_cli("scan", "--format", "json", "--fail-on", "none", *map(str, paths))
    data = json.loads(done.stdout)
    costs = _costs(data["findings"])
    _assert_known_and_cited(costs, region)
    a100, t4 = VM_USD[region]
    gpu_hour = round(T4_PER_SECOND[region] * 3600, 6)
    assert {key: cost["monthly_usd"] for key, cost in costs.items()} == {
        ("AZAI-201", "aks-demo/gpu"): round(730 * a100, 2),
        ("AZAI-201", "ws-demo/train"): round(730 * a100, 2),
        ("AZAI-201", "ws-demo/notebook"): round(556.4 * t4, 2),
        ("AZAI-207", "ws-demo/retrain"): round(2 * 730 * a100, 2),
        ("AZAI-208", "llm-demo"): round(730 * gpu_hour, 2),
    }
    sources = {rule: cost["price"]["source"] for (rule, _), cost in costs.items()}
    assert sources["AZAI-201"] == sources["AZAI-207"] == KARPENTER_SOURCE
    assert sources["AZAI-208"].startswith("Azure Retail Prices API (https://127.0.0.1:")
    assert data["cost"]["findings_with_unknown_cost"] == 0


@pytest.mark.parametrize("region", REGIONS)
def test_the_demo_live_twin_moved_out_of_eastus_has_every_figure_known(
    serve: Callable[..., Emulator], user_cache: Path, tmp_path: Path, region: str
) -> None:
    document = relocate(json.loads(demo_estate_path().read_text(encoding="utf-8")), region)
    document["retailPrices"] = _serverless_gpu_rows()
    (tmp_path / "estate.json").write_text(json.dumps(document), encoding="utf-8")
    emulator = serve(Estate.load(tmp_path / "estate.json"))
    _refresh_serverless_gpus(emulator)
    result = live_scan(emulator, rule_options=DEMO_RULE_OPTIONS)
    costs = {(f.check.id, f.resource.name): f.cost for f in result.findings if f.cost is not None}
    for key, cost in costs.items():
        assert cost.monthly_usd is not None and cost.price is not None, (key, cost.unknown_reason)
        assert cost.price.source and DATE.match(cost.price.as_of), (key, cost.price)
    a100, t4 = VM_USD[region]
    gpu_hour = round(T4_PER_SECOND[region] * 3600, 6)
    assert {key: cost.monthly_usd for key, cost in costs.items()} == {
        ("AZAI-201", "aks-demo/gpu"): round(730 * a100, 2),
        ("AZAI-201", "ws-demo/train"): round(730 * a100, 2),
        ("AZAI-201", "ws-demo/notebook"): round(730 * 128 / 168 * t4, 2),  # idle in 128 of 168 hours measured
        ("AZAI-202", "ws-demo/train"): round(730 * a100, 2),  # idle in every hour measured
        ("AZAI-206", "oai-demo/chat-ptu"): 58_400.0,  # 80 PTU no hour needed x 730 h x $1 (Global)
        ("AZAI-207", "ws-demo/retrain"): round(2 * 730 * a100, 2),
        ("AZAI-208", "llm-demo"): round(730 * gpu_hour, 2),
        ("AZAI-209", "oai-demo/support-bot"): 547.5,  # at the demo's stated reservation rate
    }
    sources = {key: cost.price.source for key, cost in costs.items() if cost.price is not None}
    assert {sources[key] for key in sources if key[0] in ("AZAI-201", "AZAI-202", "AZAI-207")} == {KARPENTER_SOURCE}
    assert sources[("AZAI-206", "oai-demo/chat-ptu")].endswith(SNAPSHOT_COPY)
    assert sources[("AZAI-208", "llm-demo")].startswith("Azure Retail Prices API (https://127.0.0.1:")
    assert costs[("AZAI-209", "oai-demo/support-bot")].price == Price(
        0.3, "option ptu_usd_per_hour (a reservation's effective rate)", FIXTURE_DATE.isoformat()
    )


def test_a_cpu_size_outside_the_us_has_its_bundled_price(tmp_path: Path) -> None:
    """The held-out estate's serverless D4s_v3 job, as the demo's retraining schedule in West
    Europe: 2 instances x 730 h x $0.24 (Karpenter's westeurope row)."""
    assert PriceBook.load().price("Standard_D4s_v3", "West Europe") == Price(0.24, KARPENTER_SOURCE, "2026-06-18")
    text = (FIXTURES / "demo" / "template.json").read_text(encoding="utf-8")
    template = relocate(json.loads(text.replace("Standard_NC24ads_A100_v4", "Standard_D4s_v3")), "westeurope")
    path = tmp_path / "template.json"
    path.write_text(json.dumps(template), encoding="utf-8")
    data = json.loads(
        run_cli("scan", "--format", "json", "--fail-on", "none", "--select", "AZAI-207", str(path)).stdout
    )
    [cost] = [f["cost"] for f in data["findings"]]
    assert cost["monthly_usd"] == 350.4 and cost["price"]["usd_per_hour"] == 0.24


def test_a_regional_ptu_in_swedencentral_is_priced_from_the_snapshot() -> None:
    price = PriceBook.load().price("ProvisionedManaged", "Sweden Central", PTU)
    assert price == Price(
        2.2,
        "Retail Prices API meter 'Provisioned Managed Regional Unit' (productName Azure OpenAI, unitOfMeasure "
        f"1/Hour, effective 2025-09-01), {SNAPSHOT_COPY}",
        "2026-08-11",
    )


def test_a_serverless_gpu_profile_in_westus3_is_priced_after_a_refresh(
    serve: Callable[..., Emulator], user_cache: Path
) -> None:
    """No public copy holds Container Apps GPU prices in westus3: unknown, with the command that
    fetches them; after it, the A100 profile's GPU-second price x 3600, citing the API."""
    before = PriceBook.load().estimate("Consumption-GPU-NC24-A100", "westus3", 1, 730, "x", meter=SERVERLESS_GPU)
    assert before.unknown_reason == (
        "no serverless GPU price for Consumption-GPU-NC24-A100 in westus3 in the bundled price table "
        "(run: azai prices refresh --region westus3)"
    )
    emulator = serve(
        Estate([], [], retail_prices=[container_apps_item("Standard NC A100 v4 GPU Usage", 0.000529, "westus3")])
    )
    done = run_cli("prices", "refresh", "--region", "westus3", "--endpoint", emulator.endpoint)
    assert done.returncode == 0, done.stderr
    cost = PriceBook.load().estimate("Consumption-GPU-NC24-A100", "westus3", 1, 730, "x", meter=SERVERLESS_GPU)
    assert cost.monthly_usd == 1390.21 and cost.price == Price(
        1.9044,
        f"Azure Retail Prices API ({emulator.endpoint}), meter 'Standard NC A100 v4 GPU Usage'",
        "2026-10-01",
    )


SUB = "00000000-0000-0000-0000-0000000000e5"
GROUP = f"/subscriptions/{SUB}/resourceGroups/rg-tuned"


def test_an_unused_fine_tuned_deployment_is_priced_by_its_hosting_meter(serve: Callable[..., Emulator]) -> None:
    """AZAI-206's fine-tuned deployment without requests: 730 h x its base model's hosting price
    for its deployment type in its account's region; unknown, with the reason, where the table
    has no such row (gpt-4o-mini's regional hosting meter is not sold in eastus)."""
    sweden = model_account(GROUP, "tuned-se", "OpenAI", "swedencentral")
    east = model_account(GROUP, "tuned-us", "OpenAI", "eastus")
    resources = [
        sweden,
        model_deployment(GROUP, "tuned-se", "chat", "GlobalStandard", 10),
        model_deployment(GROUP, "tuned-se", "ft-global", "GlobalStandard", 1, "gpt-4.1-mini-2025-04-14.ft-0a1b2c"),
        east,
        model_deployment(GROUP, "tuned-us", "chat", "GlobalStandard", 10),
        model_deployment(GROUP, "tuned-us", "ft-regional", "Standard", 1, "gpt-4o-mini-2024-07-18.ft-3d4e5f"),
    ]
    # each account publishes its request metric, with a series only for its base deployment
    metrics = {account["id"].lower(): {"AzureOpenAIRequests": {"chat": [3.0] * 168}} for account in (sweden, east)}
    subscription = {"id": f"/subscriptions/{SUB}", "subscriptionId": SUB, "displayName": "tuned", "state": "Enabled"}
    emulator = serve(Estate([subscription], resources, metrics=metrics))
    failed, _, _ = rule_outcomes(live_scan(emulator, select=("AZAI-206",)), "AZAI-206")
    assert set(failed) == {"tuned-se/ft-global", "tuned-us/ft-regional"}
    hosted = failed["tuned-se/ft-global"].cost
    assert hosted is not None and hosted.monthly_usd == 1241.0  # 730 h x $1.70
    assert hosted.basis == (
        "fine-tuned model hosting with no requests: 1 deployment x 730 h/month x $1.7/deployment-h "
        "(gpt-4.1-mini GlobalStandard, swedencentral)"
    )
    assert hosted.price == PriceBook.load().price(
        fine_tune_item("gpt-4.1-mini", "GlobalStandard"), "swedencentral", FINE_TUNE_HOSTING
    )
    assert hosted.price is not None and hosted.price.source.startswith(
        "Retail Prices API meter 'gpt-4.1-mini-ft hosting global Unit'"
    )
    unpriced = failed["tuned-us/ft-regional"].cost
    assert unpriced is not None and unpriced.monthly_usd is None
    assert unpriced.unknown_reason == (
        "no hosting price for fine-tuned gpt-4o-mini Standard in eastus in the bundled price table"
    )
