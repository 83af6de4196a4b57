"""The catalog's options change exactly the resources their docs say, from the command line."""

from __future__ import annotations

import pytest

from tests.conftest import FIXTURES, cli_json, run_cli

# AZAI-305 by default: Global deployments on EU accounts or serving EU Search data, and EU Search
# data sent to a UK account or the US data zone.
AZAI_305_DEFAULT = {
    "oai-eu/chat-global",
    "oai-eu/ptu-global",
    "oai-eu/batch-global",
    "oai-rag/rag-datazone",
    "oai-uk/chat-global",
    "oai-uk/chat-regional",
    "oai-hub/chat-global",
}

# AZAI-204's scheduled serverless jobs on the dedicated tier, which the option leaves failing.
SCHEDULED_ON_DEDICATED = ("ws-train/nightly-gpu-default-tier", "ws-train/nightly-cpu-standard")


def failing(rule: str, *options: str) -> set[str]:
    extra = [arg for option in options for arg in ("--rule-option", f"{rule}:{option}")]
    data = cli_json("--select", rule, *extra, str(FIXTURES / "rules" / rule / "template.json"))
    return {f["resource_name"] for f in data["findings"]}


@pytest.mark.parametrize(
    ("rule", "option", "default_fails", "optioned_fails"),
    [
        (
            "AZAI-101",
            "all_container_apps=true",
            {"app-public", "app-gpu", "mlws/ep-key", "mlws/sl-both", "oai-keys", "oai-private-keys"},
            {
                "app-public",
                "app-gpu",
                "app-web",
                "app-gpu-env-cpu",
                "mlws/ep-key",
                "mlws/sl-both",
                "oai-keys",
                "oai-private-keys",
            },
        ),
        (
            "AZAI-105",
            "require_approved_outbound=true",
            {"ws-none", "ws-disabled"},
            {"ws-none", "ws-disabled", "ws-internet"},
        ),
        (
            "AZAI-106",
            "require_user_assigned=true",
            {"ws-none", "oai-none"},
            {"ws-none", "oai-none", "ws-system", "ws-user-unused"},
        ),
        (
            "AZAI-107",
            "required=true",
            {"ws-hbi-plain"},
            {"ws-hbi-plain", "ws-standard", "oai-microsoft-keys", "speech-owned-storage", "speech-microsoft-storage"},
        ),
        (
            "AZAI-107",
            "owned_storage=true",
            {"ws-hbi-plain"},
            {"ws-hbi-plain", "speech-microsoft-storage"},
        ),
        (
            "AZAI-203",
            "marker_values=ai,web",
            {"cae-gpu-unmarked", "cae-gpu-web"},
            {"cae-gpu-unmarked", "cae-gpu-inference"},
        ),
        (
            "AZAI-204",
            "exempt_tag=team",
            {"ws-train/gpu-dedicated", "ws-train/cpu-default", *SCHEDULED_ON_DEDICATED},
            {"ws-train/gpu-dedicated", "ws-train/cpu-default", "ws-train/gpu-deadline", *SCHEDULED_ON_DEDICATED},
        ),
        (
            "AZAI-205",
            "max_scale_down_delay=PT3M",
            {"ws-batch/slow"},
            {"ws-batch/slow", "ws-batch/fast", "ws-batch/at-limit"},
        ),
        ("AZAI-303", "max_nodes=3", {"aks-ml/gpubig"}, {"aks-ml/gpubig", "aks-ml/gpusmall"}),
        (
            "AZAI-401",
            "production_values=dev",
            {"ws-prod/ep/single"},
            {"ws-dev/ep-dev/single-dev"},
        ),
        (
            "AZAI-402",
            "zone_regions=westcentralus",
            {"aks-east/gpuone", "aks-east/gpunone"},
            {"aks-wcus/gpu"},
        ),
        (
            "AZAI-305",
            "residency=region",
            AZAI_305_DEFAULT,
            AZAI_305_DEFAULT | {"oai-eu/chat-datazone"},
        ),
        ("AZAI-305", "residency=any", AZAI_305_DEFAULT, set()),
        (
            "AZAI-305",
            "data_resident_regions=eastus",
            AZAI_305_DEFAULT,
            {"oai-us/chat-global", "oai-hub/chat-global", "oai-ext/chat-global"},
        ),
    ],
)
def test_an_option_changes_exactly_the_documented_resources(
    rule: str, option: str, default_fails: set[str], optioned_fails: set[str]
) -> None:
    assert failing(rule) == default_fails
    assert failing(rule, option) == optioned_fails


def test_a_flag_option_rejects_what_is_not_a_flag() -> None:
    done = run_cli(
        "scan", "--rule-option", "AZAI-106:require_user_assigned=maybe", str(FIXTURES / "demo" / "plan.json")
    )
    assert done.returncode == 2 and "must be a bool" in done.stderr and len(done.stderr.strip().splitlines()) == 1


def test_residency_region_rates_a_data_zone_deployment_medium_and_a_global_one_high() -> None:
    """Under ``residency=region`` a data zone deployment on an EU account keeps its data in the EU
    data zone, so it is less severe than a Global one, whose data may leave it."""
    template = str(FIXTURES / "rules" / "AZAI-305" / "template.json")
    data = cli_json("--select", "AZAI-305", "--rule-option", "AZAI-305:residency=region", template)
    severity = {f["resource_name"]: f["severity"] for f in data["findings"]}
    assert severity["oai-eu/chat-datazone"] == "medium"
    assert severity["oai-eu/chat-global"] == "high"
