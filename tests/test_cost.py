"""Prices, waste arithmetic, cost totals, price refresh and idle detection (the HTML report: test_html.py)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from scanner.cli.prices import refresh
from scanner.cost.summary import summarize
from scanner.emulator.estate import Estate
from scanner.emulator.server import Emulator
from scanner.errors import InputError
from scanner.model.price_sources import KARPENTER_SOURCE
from scanner.model.pricing import PriceBook
from scanner.model.unknown import Unknown
from scanner.pipeline.scan import ScanRequest, run_scan
from scanner.sources.live.scope import LiveScope
from tests.conftest import FIXTURES, ROOT, run_cli, scan

SUB = "00000000-0000-0000-0000-0000000000c5"
GROUP = f"/subscriptions/{SUB}/resourceGroups/rg-cost"


def test_price_lookup_has_a_source_and_an_unknown_path() -> None:
    book = PriceBook.load()
    known = book.estimate("standard_nc24ads_a100_v4", "East US", 2, 730, "always-on nodes")
    assert known.monthly_usd == 5362.58 and known.price is not None
    assert known.price.usd_per_hour == 3.673 and known.price.source.startswith("https://") and known.price.as_of
    # a region the December 2023 snapshot predates, and a CPU size the GPU table leaves out
    for size, region in (("Standard_NC24ads_A100_v4", "italynorth"), ("Standard_D4s_v5", "eastus")):
        missing = book.estimate(size, region, 1, 730, "x")
        assert missing.monthly_usd is None and "no price for" in (missing.unknown_reason or "")
    assert (
        book.estimate(Unknown("after apply"), "eastus", 1, 730, "x").unknown_reason
        == "the VM size or region is not known before deploy"
    )


def test_bundled_prices_cover_the_regions_of_the_dated_snapshot() -> None:
    """Outside eastus the rows come from the Karpenter snapshot, transcribed N-series line by line:
    spot-check figures from three of its regions and the source every such row must name."""
    book = PriceBook.load()
    for size, region, usd in (
        ("Standard_NC24ads_A100_v4", "brazilsouth", 7.346),
        ("Standard_ND96amsr_A100_v4", "canadacentral", 39.324),
        ("Standard_NC16as_T4_v3", "westus", 1.445),
    ):
        cost = book.estimate(size, region, 1, 1, "x")
        assert cost.price is not None and cost.price.usd_per_hour == usd, (size, region)
        assert cost.price.source == KARPENTER_SOURCE and cost.price.as_of == "2023-12-18"
    regions = {region for _, region in book.prices}
    assert len(regions) == 43 and {"swedencentral", "japaneast", "uksouth"} <= regions


def _costs(path: Path) -> dict[tuple[str, str], float | None]:
    return {(f.check.id, f.resource.name): f.cost.monthly_usd for f in scan(path).findings if f.cost is not None}


def test_waste_arithmetic_matches_hand_computed_values() -> None:
    costs = _costs(FIXTURES / "rules" / "AZAI-201" / "template.json")
    assert costs == {
        ("AZAI-201", "mlws/gpumin2"): 5362.58,  # 2 nodes x 730 h x $3.673
        ("AZAI-201", "mlws/cinoidle"): 292.67,  # 556.4 idle h (8 h on 21.7 working days used) x $0.526
        ("AZAI-201", "mlws/ciidle2d"): 418.41,  # 44 h over the limit x 21.7 days, capped at 556.4 h, x $0.752
        ("AZAI-201", "akstrain/gpuauto1"): 2681.29,  # 1 node x 730 h x $3.673
        ("AZAI-201", "akstrain/gpufixed"): 767.96,  # 2 nodes x 730 h x $0.526
    }


def test_totals_group_by_rule_group_and_inherited_owner_and_count_plans() -> None:
    result = scan(FIXTURES / "demo" / "plan.json")
    summary = summarize(result)
    # AZAI-201's always-on compute, AZAI-207's serverless schedule and AZAI-208's warm GPU app
    assert summary.total_monthly_usd == 11209.67 and summary.added_by_plans_usd == 11209.67
    assert summary.by_rule == {
        "AZAI-201 always-on-compute": 5655.25,
        "AZAI-207 serverless-full-time": 5362.58,  # 2 instances x 730 h x $3.673
        "AZAI-208 always-on-serverless-gpu": 191.84,  # 1 GPU x 730 h x $0.2628
    }
    assert summary.by_resource_group == {"rg-ai": 11209.67}
    # computes and the schedule inherit the workspace's tag; the app carries its own
    assert summary.by_owner == {"ml-platform": 8528.38, "(untagged)": 2681.29}  # 2973.96 + 5362.58 + 191.84
    assert [f.resource.name for f in summary.top] == [
        "ws-demo/retrain",
        "aks-demo/gpu",
        "ws-demo/train",
        "ws-demo/notebook",
        "llm-demo",
    ]


def test_what_plans_add_is_the_recurring_cost_of_what_they_create_counted_once(tmp_path: Path) -> None:
    """A Terraform plan and a what-if both say what a deploy creates; the same deployment in both
    forms is counted once; a template says nothing of it; what a plan only updates adds nothing."""
    demo = FIXTURES / "demo"
    added = {
        name: summarize(scan(*(demo / p for p in paths))).added_by_plans_usd
        for name, paths in {
            "plan": ["plan.json"],
            "whatif": ["whatif.json"],
            "both": ["plan.json", "whatif.json"],
            "template": ["template.json"],
        }.items()
    }
    assert added == {"plan": 11209.67, "whatif": 11209.67, "both": 11209.67, "template": None}
    plan = json.loads((demo / "plan.json").read_text())
    for change in plan["resource_changes"]:
        change["change"]["actions"] = ["update"]
    updated = tmp_path / "updated.json"
    updated.write_text(json.dumps(plan))
    summary = summarize(scan(updated))
    assert summary.total_monthly_usd == 11209.67 and summary.added_by_plans_usd == 0.0


def test_unknown_costs_are_reported_apart_never_as_zero(tmp_path: Path) -> None:
    template = json.loads((FIXTURES / "demo" / "template.json").read_text())
    template["parameters"]["location"]["defaultValue"] = (
        "italynorth"  # opened after the dated snapshot: no bundled price
    )
    path = tmp_path / "t.json"
    path.write_text(json.dumps(template))
    data = json.loads(run_cli("scan", "--format", "json", "--fail-on", "none", str(path)).stdout)
    assert data["cost"]["total_monthly_usd"] == 0 and data["cost"]["findings_with_unknown_cost"] == 5
    unknown = [f["cost"] for f in data["findings"] if f["cost"]]
    assert all(c["monthly_usd"] is None and "italynorth" in c["unknown_reason"] for c in unknown)


# The demo's findings priced from the VM table (always-on compute, serverless jobs' instances);
# AZAI-208 prices serverless GPU-seconds from its own table.
VM_PRICED = frozenset({"AZAI-201", "AZAI-207"})


def _demo_costs_in(region: str, tmp_path: Path) -> tuple[list[dict[str, object]], list[dict[str, object]]]:
    """The demo template's costs moved to ``region``: those priced from the VM table, and the rest."""
    template = json.loads((FIXTURES / "demo" / "template.json").read_text())
    template["parameters"]["location"]["defaultValue"] = region
    path = tmp_path / f"{region}.json"
    path.write_text(json.dumps(template))
    data = json.loads(run_cli("scan", "--format", "json", "--fail-on", "none", str(path)).stdout)
    priced = [f for f in data["findings"] if f["cost"]]
    return (
        [f["cost"] for f in priced if f["rule_id"] in VM_PRICED],
        [f["cost"] for f in priced if f["rule_id"] not in VM_PRICED],
    )


def test_gpu_compute_outside_eastus_is_priced_from_the_bundled_row(tmp_path: Path) -> None:
    """Issue item 8: an always-on GPU pool in westeurope was "unknown" because only eastus was
    bundled. Each figure must be the table's own row times the hours, with that row's source."""
    book = PriceBook.load()
    costs, others = _demo_costs_in("West Europe", tmp_path)
    assert len(costs) == 4 and all(c["monthly_usd"] is not None for c in costs)
    # no serverless GPU price is bundled for westeurope: unknown, never $0
    assert len(others) == 1 and others[0]["monthly_usd"] is None and "westeurope" in str(others[0]["unknown_reason"])
    for cost in costs:
        price = cost["price"]
        assert isinstance(price, dict) and "westeurope)" in str(cost["basis"])
        size = str(cost["basis"]).rsplit("(", 1)[1].split(",")[0]
        row = book.prices[(size.lower(), "westeurope")]
        assert price["usd_per_hour"] == row.usd_per_hour and price["source"] == row.source
        assert price["as_of"] == "2023-12-18" and "karpenter-provider-azure" in row.source
    pool = book.estimate("Standard_NC24ads_A100_v4", "westeurope", 2, 730, "always-on nodes")
    assert pool.monthly_usd == round(2 * 730 * 4.775, 2) == 6971.5


def test_a_region_with_some_gpu_rows_prices_those_and_leaves_the_rest_unknown(tmp_path: Path) -> None:
    """australiacentral offers T4 sizes but (in the source) no A100: the T4 compute gets its row,
    the A100 ones stay unknown with the reason, and nothing is counted as $0."""
    costs, others = _demo_costs_in("australiacentral", tmp_path)
    priced = [c for c in costs if c["monthly_usd"] is not None]
    unknown = [c for c in costs if c["monthly_usd"] is None]
    assert len(priced) == 1 and len(unknown) == 3
    assert [c["monthly_usd"] for c in others] == [None]
    assert priced[0]["price"]["usd_per_hour"] == 0.684  # type: ignore[index]
    assert all("Standard_NC24ads_A100_v4" in str(c["unknown_reason"]) for c in unknown)
    assert all(c["monthly_usd"] != 0 for c in costs)


def test_price_table_builder_parses_the_public_copy_and_keeps_sourced_rows() -> None:
    """The builder turns the Karpenter price file into rows; rows already in the table win, and
    only GPU sizes of the size table are taken (an FPGA size and a CPU size are not)."""
    from scanner.model.price_sources import KARPENTER_SOURCE, gpu_sizes, merge, parse_karpenter
    from scanner.model.pricing import render_prices as render

    text = """// generated at 2023-12-18T14:34:50Z
\tinitialOnDemandPrices["westeurope"] = map[string]float64{
\t\t"Standard_D4s_v5":           0.230000,
\t\t"Standard_NC4as_T4_v3":      0.658000,
\t\t"Standard_NP10s":            2.145000,
\t}
\tinitialOnDemandPrices["eastus"] = map[string]float64{
\t\t"Standard_NC24ads_A100_v4":  3.673000,
\t}
"""
    generated, fetched = parse_karpenter(text.replace("\\t", "\t"))
    assert generated == "2023-12-18" and fetched["westeurope"]["Standard_NC4as_T4_v3"] == 0.658
    current = PriceBook.load().prices
    rows = merge(current, fetched, gpu_sizes(), KARPENTER_SOURCE, "2023-12-18")
    assert rows[("standard_nc4as_t4_v3", "westeurope")].usd_per_hour == 0.658
    assert ("standard_np10s", "westeurope") not in rows and ("standard_d4s_v5", "westeurope") not in rows
    assert rows[("standard_nc24ads_a100_v4", "eastus")] == current[("standard_nc24ads_a100_v4", "eastus")]
    assert render(rows).splitlines()[0] == "size,region,usd_per_hour,source,as_of"


def test_bundled_table_is_what_the_builder_writes() -> None:
    """The committed CSV is the builder's output (sorted, sizes spelled as the size table), so a
    rebuild from the cited file shows only real price changes in its diff."""
    from scanner.model.pricing import render_prices as render

    text = (ROOT / "scanner" / "data" / "vm_prices.csv").read_text(encoding="utf-8")
    assert render(PriceBook.parse(text, "bundled").prices) == text


def _item(size: str, price: float, **extra: object) -> dict[str, object]:
    base = {
        "currencyCode": "USD",
        "retailPrice": price,
        "unitPrice": price,
        "armRegionName": "eastus",
        "location": "US East",
        "effectiveStartDate": "2026-10-01T00:00:00Z",
        "meterName": size.replace("Standard_", "").replace("_", " "),
        "productName": "Virtual Machines NCads A100 v4 Series",
        "skuName": size.replace("Standard_", "").replace("_", " "),
        "serviceName": "Virtual Machines",
        "armSkuName": size,
        "unitOfMeasure": "1 Hour",
        "type": "Consumption",
        "isPrimaryMeterRegion": True,
    }
    base.update(extra)
    return base


@pytest.mark.slow
def test_prices_refresh_pages_filters_and_writes_atomically(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    noise = [_item(f"Standard_Z{i}", 1.0) for i in range(230)]  # sizes azai does not track, to force paging
    items = [
        *noise,
        _item("Standard_NC24ads_A100_v4", 3.9),
        _item("Standard_NC24ads_A100_v4", 1.2, skuName="NC24ads A100 v4 Spot", meterName="NC24ads A100 v4 Spot"),
        _item("Standard_NC24ads_A100_v4", 2.1, skuName="NC24ads A100 v4 Low Priority"),
        _item("Standard_NC24ads_A100_v4", 5.5, productName="Virtual Machines NCads A100 v4 Series Windows"),
        _item("Standard_NC24ads_A100_v4", 2.9, type="DevTestConsumption"),
        _item("Standard_NC24ads_A100_v4", 9.9, isPrimaryMeterRegion=False),
        _item("Standard_D4s_v5", 0.192, productName="Virtual Machines Dsv5 Series"),
    ]
    emulator = Emulator(Estate([], [], retail_prices=items)).start()
    try:
        monkeypatch.setenv("REQUESTS_CA_BUNDLE", str(emulator.ca_bundle))
        target = tmp_path / "prices.csv"
        target.write_text((ROOT / "scanner" / "data" / "vm_prices.csv").read_text())
        count, missing = refresh(["East US"], target, emulator.endpoint)
        book = PriceBook.load(str(target))
        assert book.prices[("standard_nc24ads_a100_v4", "eastus")].usd_per_hour == 3.9
        assert book.prices[("standard_d4s_v5", "eastus")].usd_per_hour == 0.192
        assert book.prices[("standard_nc24ads_a100_v4", "eastus")].as_of == "2026-10-01"
        assert ("standard_nc4as_t4_v3", "eastus") not in book.prices  # refreshed region: only what the API has
        assert "Standard_NC4as_T4_v3 (eastus)" in [
            m.replace("standard_nc4as_t4_v3", "Standard_NC4as_T4_v3") for m in missing
        ]
        elsewhere = {key: p for key, p in PriceBook.load().prices.items() if key[1] != "eastus"}
        assert count == 2 + len(elsewhere)  # other regions' rows are kept as they were
        assert all(book.prices[key] == price for key, price in elsewhere.items()) and elsewhere
        assert [r.path for r in emulator.log].count("/api/retail/prices") == 3  # 237 items: three pages of 100
        assert sorted(p.name for p in tmp_path.iterdir()) == ["prices.csv"]

        before = target.read_text()
        with pytest.raises(InputError, match=r"HTTP \d+: the old price table was kept"):
            refresh(["eastus"], target, emulator.endpoint + "/broken")
        assert target.read_text() == before
    finally:
        emulator.stop()


def _cost_estate() -> Estate:
    workspace = f"{GROUP}/providers/Microsoft.MachineLearningServices/workspaces/mlw"
    storage = f"{GROUP}/providers/Microsoft.Storage/storageAccounts/stcost"

    def compute(name: str, size: str) -> dict[str, object]:
        return {
            "id": f"{workspace}/computes/{name}",
            "name": name,
            "type": "Microsoft.MachineLearningServices/workspaces/computes",
            "location": "eastus",
            "properties": {
                "computeType": "AmlCompute",
                "properties": {
                    "vmSize": size,
                    "scaleSettings": {"minNodeCount": 0, "maxNodeCount": 2},
                    "currentNodeCount": 2,
                },
            },
        }

    def virtual_machine(name: str, size: str) -> dict[str, object]:
        return {
            "id": f"{GROUP}/providers/Microsoft.Compute/virtualMachines/{name}",
            "name": name,
            "type": "Microsoft.Compute/virtualMachines",
            "location": "eastus",
            "properties": {"hardwareProfile": {"vmSize": size}},
        }

    vm = virtual_machine("gpuvm", "Standard_NC4as_T4_v3")
    novel = virtual_machine("novel", "Standard_NX9_v9")
    busyvm = virtual_machine("busyvm", "Standard_NC4as_T4_v3")
    plain = virtual_machine("plain", "Standard_QX2_v9")
    resources = [
        {
            "id": storage,
            "name": "stcost",
            "type": "Microsoft.Storage/storageAccounts",
            "location": "eastus",
            "properties": {},
        },
        {
            "id": workspace,
            "name": "mlw",
            "type": "Microsoft.MachineLearningServices/workspaces",
            "location": "eastus",
            "properties": {"storageAccount": storage},
        },
        compute("busy", "Standard_NC24ads_A100_v4"),
        compute("idle", "Standard_NC24ads_A100_v4"),
        compute("silent", "Standard_NC24ads_A100_v4"),
        vm,
        busyvm,
        novel,
        plain,
    ]
    metrics = {
        workspace: {"GpuUtilizationPercentage": {"busy": [80.0] * 168, "idle": [1.0] * 84 + [15.0] * 84}},
        vm["id"]: {"Percentage CPU": {"": [0.5] * 168}},
        novel["id"]: {"Percentage CPU": {"": [1.0] * 168}},
        busyvm["id"]: {"Percentage CPU": {"": [1.0] * 160 + [6.0] * 8}},  # idle by GPU thresholds, not by Advisor's
        plain["id"]: {"Percentage CPU": {"": [1.0] * 168}},
    }
    skus = [
        {
            "resourceType": "virtualMachines",
            "name": "Standard_NX9_v9",
            "locations": ["eastus"],
            "capabilities": [{"name": "GPUs", "value": "1"}, {"name": "vCPUs", "value": "8"}],
        },
        {
            "resourceType": "virtualMachines",
            "name": "Standard_QX2_v9",
            "locations": ["eastus"],
            "capabilities": [{"name": "vCPUs", "value": "2"}],
        },
    ]
    return Estate(
        [{"id": f"/subscriptions/{SUB}", "subscriptionId": SUB, "displayName": "cost", "state": "Enabled"}],
        resources,
        metrics={k.lower(): v for k, v in metrics.items()},
        skus=skus,
    )


@pytest.mark.slow
def test_idle_detection_on_metric_series_busy_idle_and_missing(monkeypatch: pytest.MonkeyPatch) -> None:
    emulator = Emulator(_cost_estate()).start()
    try:
        for key, value in emulator.environment().items():
            monkeypatch.setenv(key, value)
        result = run_scan(
            ScanRequest(
                paths=(), live=LiveScope(all_subscriptions=True), arm_endpoint=emulator.endpoint, fail_on="none"
            )
        )
    finally:
        emulator.stop()
    idle = {f.resource.name: f for f in result.findings if f.check.id == "AZAI-202"}
    assert set(idle) == {"mlw/idle", "gpuvm", "novel"}  # novel: a GPU size confirmed by the resource SKUs API
    assert {u.resource.name for u in result.undetermined if u.check.id == "AZAI-202"} == {"mlw/silent"}
    assert ("AZAI-202", "mlw/busy") in {(c.id, r.name) for c, r in result.passed}
    assert ("AZAI-202", "busyvm") in {(c.id, r.name) for c, r in result.passed}  # CPU peaks at 6%: above Advisor's 3%
    # the SKU API says QX2 has no GPU, so its idle CPU is no GPU finding
    assert "plain" not in idle and "plain" not in {u.resource.name for u in result.undetermined}
    evidence = idle["mlw/idle"].violation.observed
    assert evidence == {
        "average_percent": 8.0,
        "maximum_percent": 15.0,
        "window": "7 days (hourly)",
        "node_hours": 336.0,
        "metric": "GpuUtilizationPercentage",
        "confidence": "high",
    }
    cost = idle["mlw/idle"].cost
    assert cost is not None and cost.monthly_usd == round(2 * 365 * 3.673, 2)  # 2 nodes idle half of 730 h
    assert idle["gpuvm"].cost is not None and idle["gpuvm"].cost.confidence == "low"
    assert idle["novel"].cost is not None and idle["novel"].cost.monthly_usd is None  # no price for an unlisted size
