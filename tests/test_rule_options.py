"""The catalog's options change exactly the resources their docs say, from the command line, and a
value there means exactly what it means in azai.toml."""

from __future__ import annotations

import json
import tomllib
from pathlib import Path

import pytest

from scanner.engine.registry import load_checks
from scanner.policy.config import parse_config
from scanner.policy.options import parse_rule_options
from tests.conftest import CHILD_PROCESS, FIXTURES, ROOT, cli_json, run_cli

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
            # with required, a workspace without a key fails whatever its (unknown) HBI flag
            {
                "ws-hbi-plain",
                "ws-hbi-unknown",
                "ws-standard",
                "oai-microsoft-keys",
                "speech-owned-storage",
                "speech-microsoft-storage",
            },
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


# --- a value means on the command line what it means in azai.toml -----------------------------

ZONES = str(FIXTURES / "rules" / "AZAI-402" / "template.json")


def zone_findings(*args: str, cwd: Path = ROOT) -> set[str]:
    done = run_cli("scan", "--format", "json", "--fail-on", "none", "--select", "AZAI-402", *args, ZONES, cwd=cwd)
    assert done.returncode == 0, done.stderr
    return {f["resource_name"] for f in json.loads(done.stdout)["findings"]}


@pytest.mark.parametrize(
    ("toml", "bare", "expected"),
    [
        ('["eastus"]', "eastus", {"aks-east/gpuone", "aks-east/gpunone"}),
        ('["westcentralus"]', "westcentralus", {"aks-wcus/gpu"}),
        (
            "['eastus', 'westcentralus']",
            "eastus, westcentralus",
            {"aks-east/gpuone", "aks-east/gpunone", "aks-wcus/gpu"},
        ),
        ("[]", "", set()),
    ],
)
def test_a_list_in_toml_syntax_is_the_list_bare_text_and_the_config_file_give(
    tmp_path: Path, toml: str, bare: str, expected: set[str]
) -> None:
    """`zone_regions=["eastus"]`, as docs/configuration.md writes lists, was once the one region
    named `["eastus"]`: no finding and no warning."""
    (tmp_path / "azai.toml").write_text(f"[rules.AZAI-402]\nzone_regions = {toml}\n")
    assert zone_findings(cwd=tmp_path) == expected
    assert zone_findings("--rule-option", f"AZAI-402:zone_regions={toml}") == expected
    assert zone_findings("--rule-option", f"ai-pool-zones:zone_regions={bare}") == expected


CHECKS = load_checks()


@pytest.mark.parametrize(
    ("rule", "key", "value"),
    [
        ("AZAI-402", "zone_regions", '["eastus"]'),
        ("AZAI-203", "marker_values", "['ai', \"ml\"]"),
        ("AZAI-303", "max_nodes", "3"),
        ("AZAI-206", "max_average_percent", "5"),
        ("AZAI-206", "max_average_percent", "2.5"),
        ("AZAI-106", "require_user_assigned", "true"),
        ("AZAI-201", "max_idle_before_shutdown", '"PT2H"'),
        ("AZAI-205", "max_scale_down_delay", "'P1DT2H'"),
        ("AZAI-305", "residency", '"region"'),
        ("AZAI-401", "production_tag", '"1"'),
    ],
)
def test_every_value_a_config_file_takes_is_typed_the_same_on_the_command_line(rule: str, key: str, value: str) -> None:
    from_file = parse_config(tomllib.loads(f"[rules.{rule}]\n{key} = {value}\n"), CHECKS, "azai.toml").options
    from_command_line = parse_rule_options([f"{rule}:{key}={value}"], CHECKS)
    assert from_command_line == from_file
    assert type(from_command_line[rule][key]) is type(from_file[rule][key])


@pytest.mark.parametrize(
    ("bare", "typed"),
    [
        ("AZAI-402:zone_regions=eastus", ["eastus"]),
        ("AZAI-203:marker_values=ai,ml", ["ai", "ml"]),
        ("AZAI-204:exempt_values=false", ["false"]),  # bare text azai.toml reads as a flag
        ("AZAI-401:production_tag=1", "1"),  # and as a number
        ("AZAI-201:max_idle_before_shutdown=PT2H", "PT2H"),
        ("AZAI-305:residency=region", "region"),
    ],
)
def test_bare_text_is_a_string_or_a_list_of_names(bare: str, typed: object) -> None:
    rule, key = bare.split(":")[0], bare.split(":")[1].split("=")[0]
    assert parse_rule_options([bare], CHECKS) == {rule: {key: typed}}


@pytest.mark.parametrize(
    ("value", "says"),
    [
        ('AZAI-402:zone_regions=["eastus"', "not a value azai.toml could hold: unclosed array"),
        ('AZAI-402:zone_regions=eastus"]', "not a value azai.toml could hold: invalid value"),
        ("AZAI-402:zone_regions=[1]", "zone_regions must be a list of names"),
        ('AZAI-402:zone_regions="eastus"', "zone_regions must be a list of names"),
        ("AZAI-303:max_nodes=3\nmax_nodes = 4", "not one value"),
        ("AZAI-303:max_nodes=many", "max_nodes must be a int"),
        ("AZAI-106:require_user_assigned=yes", "require_user_assigned must be a bool"),
        (
            "AZAI-201:max_idle_before_shutdown=PT2X",
            "max_idle_before_shutdown must be an ISO-8601 duration, such as PT4H or P1D",
        ),
        (
            "AZAI-205:max_scale_down_delay=30m",
            "max_scale_down_delay must be an ISO-8601 duration, such as PT30M or P1D",
        ),
    ],
)
@CHILD_PROCESS
def test_a_value_that_cannot_be_read_is_exit_2_with_one_line(value: str, says: str) -> None:
    done = run_cli("scan", "--rule-option", value, ZONES, process=True)
    assert (done.returncode, done.stdout) == (2, "")
    assert done.stderr == f"azai: error: --rule-option {value!r}: {says}\n"


def test_a_duration_the_rule_cannot_read_is_refused_in_the_config_file_too(tmp_path: Path) -> None:
    (tmp_path / "azai.toml").write_text("[rules.AZAI-201]\nmax_idle_before_shutdown = 'PT2X'\n")
    done = run_cli("scan", ZONES, cwd=tmp_path)
    assert (done.returncode, done.stderr) == (
        2,
        f"azai: error: {tmp_path / 'azai.toml'}: rules.AZAI-201.max_idle_before_shutdown must be an ISO-8601 "
        "duration, such as PT4H or P1D\n",
    )
