"""Prices, waste arithmetic, cost totals, price refresh and idle detection (the HTML report: test_html.py)."""

from __future__ import annotations

import csv
import io
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from scanner.cli.prices import refresh
from scanner.cost.summary import summarize
from scanner.emulator.estate import Estate
from scanner.emulator.server import Emulator
from scanner.errors import InputError
from scanner.model.price_sources import (
    KARPENTER_SOURCE,
    fine_tune_item,
    karpenter_prices,
    merge,
    parse_karpenter,
    ptu_item,
    snapshot_prices,
)
from scanner.model.price_tables import Price, parse_keyed, parse_wide, render_keyed, render_wide
from scanner.model.pricing import SERVERLESS_GPU, PriceBook
from scanner.model.unknown import Unknown
from scanner.pipeline.scan import ScanRequest, run_scan
from scanner.sources.live.scope import LiveScope
from tests.conftest import CHILD_PROCESS, FIXTURES, ROOT, run_cli, scan

SUB = "00000000-0000-0000-0000-0000000000c5"
OLD_KARPENTER = KARPENTER_SOURCE.replace(
    "2b431da153a6a92b705c18046512c60b1631b682", "0499866a0874e27363395146ad4ecf5dac208e6d"
)
GROUP = f"/subscriptions/{SUB}/resourceGroups/rg-cost"


def test_price_lookup_has_a_source_and_an_unknown_path() -> None:
    book = PriceBook.load()
    known = book.estimate("standard_nc24ads_a100_v4", "East US", 2, 730, "always-on nodes")
    assert known.monthly_usd == 5362.58 and known.price is not None
    assert known.price.usd_per_hour == 3.673 and known.price.source.startswith("https://") and known.price.as_of
    # a region the June 2026 snapshot does not list, and a size Azure does not sell
    for size, region in (("Standard_NC24ads_A100_v4", "belgiumcentral"), ("Standard_QX2_v9", "eastus")):
        missing = book.estimate(size, region, 1, 730, "x")
        assert missing.unknown_reason == (
            f"no price for {size} in {region} in the bundled price table (run: azai prices refresh --region {region})"
        )
    assert (
        book.estimate(Unknown("after apply"), "eastus", 1, 730, "x").unknown_reason
        == "the VM size or region is not known before deploy"
    )


def test_bundled_prices_cover_every_size_and_region_of_the_dated_snapshot() -> None:
    """Every VM size of the Karpenter snapshot, CPU sizes too, in each of its 57 regions: spot-
    check figures transcribed from the file and the source every such row must name."""
    book = PriceBook.load()
    for size, region, usd in (
        ("Standard_NC24ads_A100_v4", "brazilsouth", 7.346),
        ("Standard_ND96amsr_A100_v4", "canadacentral", 39.324),
        ("Standard_NC16as_T4_v3", "westus", 1.445),
        ("Standard_D4s_v3", "West Europe", 0.24),
        ("standard_d4s_v5", "eastus", 0.192),
    ):
        price = book.price(size, region)
        assert price == Price(usd, KARPENTER_SOURCE, "2026-06-18"), (size, region)
    rows = parse_wide((ROOT / "scanner" / "data" / "vm_prices.csv").read_text(encoding="utf-8"), "bundled")
    assert len(rows) == 65237 and len({region for _, region in rows}) == 57
    assert len({size.lower() for size, _ in rows}) == 1793  # 1,778 sizes of 2026, 15 retired ones of 2023
    # a retired size the June 2026 file no longer lists keeps its December 2023 row
    assert book.price("Standard_NC6", "westeurope") == Price(1.166, OLD_KARPENTER, "2023-12-18")


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
    template["parameters"]["location"]["defaultValue"] = "belgiumcentral"  # opened after the snapshot
    path = tmp_path / "t.json"
    path.write_text(json.dumps(template))
    data = json.loads(run_cli("scan", "--format", "json", "--fail-on", "none", str(path)).stdout)
    assert data["cost"]["total_monthly_usd"] == 0 and data["cost"]["findings_with_unknown_cost"] == 5
    unknown = [f["cost"] for f in data["findings"] if f["cost"]]
    assert all(c["monthly_usd"] is None and "belgiumcentral" in c["unknown_reason"] for c in unknown)


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
    # no public copy holds serverless GPU prices for westeurope: unknown, never $0
    assert [c["unknown_reason"] for c in others] == [
        "no serverless GPU price for Consumption-GPU-NC8as-T4 in westeurope in the bundled price table "
        "(run: azai prices refresh --region westeurope)"
    ]
    for cost in costs:
        price = cost["price"]
        assert isinstance(price, dict) and "westeurope)" in str(cost["basis"])
        size = str(cost["basis"]).rsplit("(", 1)[1].split(",")[0]
        assert price == {
            "usd_per_hour": {"Standard_NC24ads_A100_v4": 4.775, "Standard_NC4as_T4_v3": 0.658}[size],
            "source": KARPENTER_SOURCE,
            "as_of": "2026-06-18",
        }
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
    assert priced[0]["price"] == {"usd_per_hour": 0.684, "source": KARPENTER_SOURCE, "as_of": "2026-06-18"}
    assert all("Standard_NC24ads_A100_v4" in str(c["unknown_reason"]) for c in unknown)
    assert all(c["monthly_usd"] != 0 for c in costs)


KARPENTER_FILE = """// generated at 2026-06-18T03:43:41Z
\tinitialOnDemandPrices["westeurope"] = map[string]float64{
\t\t"Dsv3_Type1":                  6.600000,
\t\t"Standard_D4s_v5":             0.230000,
\t\t"Standard_NC4as_T4_v3":        0.658000,
\t\t"Standard_NM16ads_MA35D  ":    3.100000,
\t}
\tinitialOnDemandPrices["eastus"] = map[string]float64{
\t\t"Standard_NC24ads_A100_v4":    3.673000,
\t\t"Standard_NC4as_T4_v3":        0.526000,
\t}
"""


def test_price_table_builder_takes_every_vm_size_and_keeps_newer_sourced_rows() -> None:
    """The builder takes every VM size of the Karpenter file, CPU sizes too, spelled as the file
    spells them (blanks trimmed), and no dedicated-host type. A row already in the table wins
    where it is newer, and stays where the file lacks its pair; an undated or older row loses."""
    generated, fetched = parse_karpenter(KARPENTER_FILE)
    assert generated == "2026-06-18"
    assert fetched == {
        "westeurope": {"Standard_D4s_v5": 0.23, "Standard_NC4as_T4_v3": 0.658, "Standard_NM16ads_MA35D": 3.1},
        "eastus": {"Standard_NC24ads_A100_v4": 3.673, "Standard_NC4as_T4_v3": 0.526},
    }
    newer = Price(3.673, "https://example.org/newer", "2026-11-09")
    current = {
        ("Standard_NC24ads_A100_v4", "eastus"): newer,
        ("standard_nc4as_t4_v3", "eastus"): Price(0.526, "https://example.org/catalog", "undated"),
        ("Standard_NC4as_T4_v3", "westeurope"): Price(0.5, "https://example.org/old", "2023-12-18"),
        ("Standard_NC6", "westeurope"): Price(1.166, OLD_KARPENTER, "2023-12-18"),
    }
    rows = merge(current, karpenter_prices(fetched))
    assert rows == {
        ("Standard_NC24ads_A100_v4", "eastus"): newer,
        ("Standard_NC4as_T4_v3", "eastus"): Price(0.526, KARPENTER_SOURCE, "2026-06-18"),
        ("Standard_NC4as_T4_v3", "westeurope"): Price(0.658, KARPENTER_SOURCE, "2026-06-18"),
        ("Standard_D4s_v5", "westeurope"): Price(0.23, KARPENTER_SOURCE, "2026-06-18"),
        ("Standard_NM16ads_MA35D", "westeurope"): Price(3.1, KARPENTER_SOURCE, "2026-06-18"),
        ("Standard_NC6", "westeurope"): Price(1.166, OLD_KARPENTER, "2023-12-18"),
    }
    text = render_wide(rows)
    assert text.splitlines()[:2] == [
        "size,source,as_of,eastus,westeurope",
        f"Standard_D4s_v5,{KARPENTER_SOURCE},2026-06-18,,0.23",
    ]
    assert parse_wide(text, "t") == rows


def test_model_tables_builder_reads_the_snapshot_meters_by_region() -> None:
    """PTU and fine-tuned hosting rows from the snapshot's grouped rows: public regions only,
    each region's latest effective price, meter names of every spelling mapped to one model."""
    items = [
        {
            "productName": "Azure OpenAI",
            "meterName": "Provisioned Managed Data Zone Unit",
            "unitOfMeasure": "1/Hour",
            "retailPrice": 1.1,
            "effectiveStartDate": "2026-06-01T00:00:00Z",
            "regions": ["japaneast", "italynorth"],
        },
        {
            "productName": "Azure OpenAI",
            "meterName": "Provisioned Managed Data Zone Unit",
            "unitOfMeasure": "1/Hour",
            "retailPrice": 1.2,
            "effectiveStartDate": "2026-08-01T00:00:00Z",
            "regions": ["japaneast"],
        },
        {
            "productName": "Azure OpenAI",
            "meterName": "Provisioned Managed Regional Unit",
            "unitOfMeasure": "1/Hour",
            "retailPrice": 2.5,
            "effectiveStartDate": "2025-08-01T00:00:00Z",
            "regions": ["usgovvirginia", "Global"],
        },
        {
            "productName": "Azure OpenAI",
            "meterName": "Provisioned Throughput Units",
            "unitOfMeasure": "1/Month",
            "retailPrice": 312.0,
            "effectiveStartDate": "2024-05-01T00:00:00Z",
            "regions": ["eastus"],
        },
        {
            "productName": "Azure OpenAI PP FT GPT4s",
            "meterName": "4o mini 0718 ft hosting Dz Unit",
            "unitOfMeasure": "1 Hour",
            "retailPrice": 1.7,
            "effectiveStartDate": "2026-05-01T00:00:00Z",
            "regions": ["westus3"],
        },
        {
            "productName": "Azure OpenAI",
            "meterName": "gpt-4o-mini-0718-FT-Hstng-regnl Unit",
            "unitOfMeasure": "1 Hour",
            "retailPrice": 2.04,
            "effectiveStartDate": "2025-01-01T00:00:00Z",
            "regions": ["southeastasia"],
        },
        {
            "productName": "Azure OpenAI",
            "meterName": "gpt-35-turbo4K-FT-Hstng-regnl Unit",
            "unitOfMeasure": "1 Hour",
            "retailPrice": 1.87,
            "effectiveStartDate": "2025-09-01T00:00:00Z",
            "regions": ["eastus2"],
        },
    ]
    ptu, clashes = snapshot_prices(items, ptu_item)
    assert clashes == []
    assert {key: p.usd_per_hour for key, p in ptu.items()} == {
        ("DataZoneProvisionedManaged", "japaneast"): 1.2,
        ("DataZoneProvisionedManaged", "italynorth"): 1.1,
    }
    assert ptu[("DataZoneProvisionedManaged", "japaneast")] == Price(
        1.2,
        "Retail Prices API meter 'Provisioned Managed Data Zone Unit' (productName Azure OpenAI, unitOfMeasure "
        "1/Hour, effective 2026-08-01), as cached in azure-genai-prices 0.2.0 data/snapshot.json "
        "(https://github.com/nikklavzar/azure-genai-prices, fetched 2026-08-11)",
        "2026-08-11",
    )
    hosting, _ = snapshot_prices(items, fine_tune_item)
    assert {key: p.usd_per_hour for key, p in hosting.items()} == {
        ("gpt-4o-mini DataZoneStandard", "westus3"): 1.7,
        ("gpt-4o-mini Standard", "southeastasia"): 2.04,
    }


@pytest.mark.parametrize(
    ("name", "keys", "value"),
    [
        ("ptu_prices.csv", ["sku"], "usd_per_ptu_hour"),
        ("fine_tune_hosting_prices.csv", ["model", "sku"], "usd_per_hour"),
        ("serverless_gpu_prices.csv", ["profile"], "usd_per_gpu_hour"),
    ],
)
def test_bundled_hourly_tables_are_what_the_builder_writes(name: str, keys: list[str], value: str) -> None:
    text = (ROOT / "scanner" / "data" / name).read_text(encoding="utf-8")
    columns = next(csv.reader([text.splitlines()[0]]))
    rows = parse_keyed(list(csv.DictReader(io.StringIO(text))), keys, value)
    assert render_keyed(rows, columns, keys, value) == text
    assert all(p.source and p.as_of[:2] == "20" for p in rows.values())  # every row sourced and dated


def test_bundled_vm_table_is_what_the_builder_writes() -> None:
    """The committed CSV is the builder's output (sorted, one column per region), so a rebuild
    from the cited file shows only real price changes in its diff."""
    text = (ROOT / "scanner" / "data" / "vm_prices.csv").read_text(encoding="utf-8")
    rows = parse_wide(text, "bundled")
    assert render_wide(rows) == text
    assert all(p.source.startswith("https://") and p.as_of[:2] == "20" for p in rows.values())


def test_a_user_table_replaces_the_bundled_rows_of_the_regions_it_names(tmp_path: Path) -> None:
    """A refreshed or --prices table speaks for each region it names, for its meter family:
    a size it lacks there is unknown (naming the file); other regions stay bundled."""
    table = tmp_path / "prices.csv"
    table.write_text(
        "size,region,usd_per_hour,source,as_of,meter\n"
        "Standard_D4s_v5,westeurope,0.25,mine,2026-12-01,\n"
        "Consumption-GPU-NC8as-T4,westeurope,0.3,mine,2026-12-01,serverless-gpu\n"
    )
    book = PriceBook.load(str(table))
    assert book.price("standard_d4s_v5", "West Europe") == Price(0.25, "mine", "2026-12-01")
    assert book.price("Consumption-GPU-NC8as-T4", "westeurope", SERVERLESS_GPU) == Price(0.3, "mine", "2026-12-01")
    assert book.estimate("Standard_NC24ads_A100_v4", "westeurope", 1, 730, "x").unknown_reason == (
        f"no price for Standard_NC24ads_A100_v4 in westeurope in the {table} "
        "(run: azai prices refresh --region westeurope)"
    )
    assert book.price("Standard_D4s_v5", "swedencentral") == Price(0.204, KARPENTER_SOURCE, "2026-06-18")
    assert book.price("Consumption-GPU-NC8as-T4", "eastus", SERVERLESS_GPU) is not None  # bundled eastus row
    table.write_text("size,region,usd_per_hour,source,as_of,meter\nX,eastus,1,s,2026-12-01,gpu\n")
    with pytest.raises(InputError, match="meter 'gpu' of X is not one of fine-tune-hosting, ptu, serverless-gpu, vm"):
        PriceBook.load(str(table))


@CHILD_PROCESS
def test_no_bundled_table_is_read_until_a_price_is_asked_for() -> None:
    """Start-up stays light: `azai --version` and a scan that prices nothing read no bundled
    price table; the first VM price reads the VM table once, and no other."""
    probe = (
        "import sys\n"
        "from scanner.cli.commands import main\n"
        "from scanner.model import pricing\n"
        "def read():\n"
        "    return [f.cache_info().currsize for f in (pricing._bundled_vm, pricing._bundled_hourly)]\n"
        "for args in sys.argv[1:]:\n"
        "    try:\n"
        "        main(args.split(), prog_name='azai')\n"
        "    except SystemExit:\n"
        "        pass\n"
        "    print(read(), file=sys.stderr)\n"
    )
    storage = str(FIXTURES / "demo" / "template.json")
    done = subprocess.run(
        [
            sys.executable,
            "-c",
            probe,
            "--version",
            f"scan --select AZAI-101 {storage} -o /dev/null",
            f"scan --select AZAI-201 {storage} -o /dev/null",
        ],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=120,
        check=False,
    )
    assert done.stderr.splitlines() == ["[0, 0]", "[0, 0]", "[1, 0]"], done.stderr


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


def container_apps_item(meter: str, per_second: float, region: str = "eastus", **extra: object) -> dict[str, object]:
    """A Retail Prices API row of Azure Container Apps, shaped as the API answers."""
    return {
        "currencyCode": "USD",
        "retailPrice": per_second,
        "unitPrice": per_second,
        "armRegionName": region,
        "effectiveStartDate": "2026-10-01T00:00:00Z",
        "meterName": meter,
        "productName": "Azure Container Apps",
        "skuName": "Standard",
        "serviceName": "Azure Container Apps",
        "armSkuName": "",
        "unitOfMeasure": "1 Second",
        "type": "Consumption",
        "isPrimaryMeterRegion": True,
        **extra,
    }


@pytest.mark.slow
def test_prices_refresh_pages_filters_and_writes_atomically(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    # rows of another service, which a real API would not send for the filter: to force paging
    noise = [_item(f"Standard_Z{i}", 1.0, serviceName="Storage") for i in range(230)]
    items = [
        *noise,
        _item("Standard_NC24ads_A100_v4", 3.9),
        _item("Standard_NC24ads_A100_v4", 1.2, skuName="NC24ads A100 v4 Spot", meterName="NC24ads A100 v4 Spot"),
        _item("Standard_NC24ads_A100_v4", 2.1, skuName="NC24ads A100 v4 Low Priority"),
        _item("Standard_NC24ads_A100_v4", 5.5, productName="Virtual Machines NCads A100 v4 Series Windows"),
        _item("Standard_NC24ads_A100_v4", 2.9, type="DevTestConsumption"),
        _item("Standard_NC24ads_A100_v4", 9.9, isPrimaryMeterRegion=False),
        _item("Standard_D4s_v5", 0.192, productName="Virtual Machines Dsv5 Series"),
        container_apps_item("Standard NC T4 v3 GPU Usage", 0.000073),
        container_apps_item("Standard vCPU Active Usage", 0.000024),
        container_apps_item("Dedicated GPU Usage", 5.0, skuName="Dedicated", unitOfMeasure="1 Hour"),
    ]
    emulator = Emulator(Estate([], [], retail_prices=items)).start()
    try:
        monkeypatch.setenv("REQUESTS_CA_BUNDLE", str(emulator.ca_bundle))
        target = tmp_path / "prices.csv"
        target.write_text(
            "size,region,usd_per_hour,source,as_of\n"
            "Standard_NC4as_T4_v3,eastus,0.5,old,2026-01-01\n"
            "Standard_NC4as_T4_v3,westeurope,0.6,old,2026-01-01\n"
        )
        count, missing = refresh(["East US", "westeurope"], target, emulator.endpoint)
        book = PriceBook.load(str(target))
        assert book.price("standard_nc24ads_a100_v4", "eastus") == Price(
            3.9, f"Azure Retail Prices API ({emulator.endpoint}), meter 'NC24ads A100 v4'", "2026-10-01"
        )
        assert book.price("Standard_D4s_v5", "eastus") is not None
        assert book.price("Standard_NC4as_T4_v3", "eastus") is None  # refreshed region: only what the API has
        # the API lists nothing in westeurope: an empty answer keeps the region's rows
        assert book.price("Standard_NC4as_T4_v3", "westeurope") == Price(0.6, "old", "2026-01-01")
        assert book.price("Consumption-GPU-NC8as-T4", "eastus", SERVERLESS_GPU) == Price(
            0.2628,
            f"Azure Retail Prices API ({emulator.endpoint}), meter 'Standard NC T4 v3 GPU Usage'",
            "2026-10-01",
        )
        # the eastus A100 GPU meter was not in the answer: refreshed eastus has no price for it
        assert book.price("Consumption-GPU-NC24-A100", "eastus", SERVERLESS_GPU) is None
        assert count == 4
        assert "Standard_NC4as_T4_v3 (eastus)" in missing and "Consumption-GPU-NC24-A100 (eastus)" in missing
        assert "Consumption-GPU-NC8as-T4 (eastus)" not in missing
        # 240 items in eastus, three pages of 100, and one empty page in westeurope, for each family
        assert [r.path for r in emulator.log].count("/api/retail/prices") == 8
        assert sorted(p.name for p in tmp_path.iterdir()) == ["prices.csv"]
        assert target.read_text().splitlines()[0] == "size,region,usd_per_hour,source,as_of,meter"

        before = target.read_text()
        with pytest.raises(InputError, match=r"HTTP \d+: the old price table was kept"):
            refresh(["eastus"], target, emulator.endpoint + "/broken")
        assert target.read_text() == before
    finally:
        emulator.stop()


def _cost_estate() -> Estate:
    workspace = f"{GROUP}/providers/Microsoft.MachineLearningServices/workspaces/mlw"
    storage = f"{GROUP}/providers/Microsoft.Storage/storageAccounts/stcost"

    def compute(name: str, size: str) -> dict[str, Any]:
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

    def virtual_machine(name: str, size: str) -> dict[str, Any]:
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
    resources: list[dict[str, Any]] = [
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
