"""Named regression cases for what the fuzzing suite (tests/test_fuzz.py) found.

Each signature the suite or its longer runs found is pinned by a test named for it. Most live
beside the code that fixed them:

- strings where a rule compares counts (AZAI-201 ``minCount``/``count`` ``""``):
  tests/test_arm_limits.py::test_a_pool_count_given_as_a_string_is_undetermined_not_a_crash;
- a plan's ``actions`` holding a number: tests/test_plan_boundary.py (``actions-holds-number``);
- lone surrogates and ``Infinity`` in any input file: tests/test_json_reading.py;
- a NUL or other control character in a name or tag, in every report format:
  tests/test_report_escaping.py::test_every_report_quotes_hostile_input_inertly;
- ``range()``, ``padLeft()`` and ``replace()`` building gigabytes: tests/test_arm_limits.py.

The ones below had no home of their own.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from tests.conftest import FIXTURES, ROOT, run_cli

AUTOSCALE = FIXTURES / "regressions" / "autoscale-trigger"


def _demo_template(tmp_path: Path, change: Any) -> Path:
    template = json.loads((FIXTURES / "demo" / "template.json").read_text(encoding="utf-8"))
    change(template["resources"])
    path = tmp_path / "template.json"
    path.write_text(json.dumps(template), encoding="utf-8")
    return path


def test_an_owner_tag_nobody_can_evaluate_is_owned_by_nobody_known(tmp_path: Path) -> None:
    """``bool()`` of an unknown owner tag crashed the cost summary (exit 70) in every format."""

    def malformed_owner(resources: dict[str, Any]) -> None:
        resources["ws"]["tags"] = {"owner": "[concat('a',,'b')]"}

    path = _demo_template(tmp_path, malformed_owner)
    done = run_cli("scan", "--format", "json", "--fail-on", "none", str(path))
    assert done.returncode == 0, done.stderr
    owners = json.loads(done.stdout)["cost"]["by_owner"]
    # the workspace's computes and schedule (2973.96 + 5362.58); the GPU app carries its own tag
    assert owners == {"(untagged)": 2681.29, "(set at deploy)": 8336.54, "ml-platform": 191.84}


def test_workload_profiles_that_are_not_an_array_leave_the_environment_undetermined(tmp_path: Path) -> None:
    """AZAI-203 iterated ``workloadProfiles`` whatever it was: a number crashed it (exit 70)."""
    template = {
        "$schema": "https://schema.management.azure.com/schemas/2019-04-01/deploymentTemplate.json#",
        "contentVersion": "1.0.0.0",
        "resources": [
            {
                "type": "Microsoft.App/managedEnvironments",
                "apiVersion": "2024-03-01",
                "name": "cae",
                "location": "eastus",
                "properties": {"workloadProfiles": -1},
            }
        ],
    }
    path = tmp_path / "template.json"
    path.write_text(json.dumps(template), encoding="utf-8")
    done = run_cli("scan", "--format", "json", "--fail-on", "none", "--select", "AZAI-203", str(path))
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    assert report["findings"] == []
    assert [(u["resource_name"], u["reason"]) for u in report["undetermined"]] == [
        ("cae", "properties.workloadProfiles is unknown (properties.workloadProfiles is int, not an array)")
    ]


def test_a_whatif_autoscale_trigger_that_is_false_is_one_line_and_exit_2() -> None:
    """Issue 37: AZAI-304 read ``metricTrigger`` as an object whatever it was; ``false`` ended in
    an internal error (exit 70). The what-if reader now refuses it, naming file and pointer."""
    done = run_cli("scan", str((AUTOSCALE / "whatif.json").relative_to(ROOT)))
    assert (done.returncode, done.stdout, done.stderr) == (
        2,
        "",
        "azai: error: fixtures/regressions/autoscale-trigger/whatif.json: "
        "/properties/changes/1/after/properties/profiles/0/rules/1/metricTrigger: expected an object, "
        "found true or false\n",
    )


def test_a_template_trigger_written_false_is_one_line_and_exit_2(tmp_path: Path) -> None:
    template = json.loads((AUTOSCALE / "template.json").read_text(encoding="utf-8"))
    template["resources"][1]["properties"]["profiles"][0]["rules"][1]["metricTrigger"] = False
    path = tmp_path / "template.json"
    path.write_text(json.dumps(template), encoding="utf-8")
    done = run_cli("scan", str(path))
    assert (done.returncode, done.stderr) == (
        2,
        f"azai: error: {path}: /resources/1/properties/profiles/0/rules/1/metricTrigger: expected an object, "
        "found true or false\n",
    )


def test_a_template_trigger_an_expression_makes_false_names_no_metric() -> None:
    """An expression can build any value, which only deploy would refuse: the setting whose
    trigger is ``[parameters('trigger')]`` (false) is undetermined, and its CPU-only sibling
    still fails."""
    done = run_cli(
        "scan", "--format", "json", "--fail-on", "none", "--select", "AZAI-304",
        str((AUTOSCALE / "template.json").relative_to(ROOT)),
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    assert [f["resource_name"] for f in report["findings"]] == ["as-blue-cpu"]
    assert [(u["resource_name"], u["reason"]) for u in report["undetermined"]] == [
        (
            "as-blue",
            "properties.profiles.0.rules.1.metricTrigger is unknown "
            "(properties.profiles.0.rules.1.metricTrigger is bool, not an object)",
        )
    ]


def test_a_lambda_written_where_arm_takes_a_value_is_undetermined_in_every_report(tmp_path: Path) -> None:
    """A bare ``lambda()`` as a property (or as any function's argument but map(), filter() and
    the like) is not a value ARM deploys; the JSON and SARIF reports crashed on it (exit 70:
    "Object of type Lambda is not JSON serializable"), found by the fuzzing suite."""
    template = json.loads((FIXTURES / "rules" / "AZAI-201" / "template.json").read_text(encoding="utf-8"))
    taints = template["resources"][6]["properties"]["agentPoolProfiles"][4]["nodeTaints"]
    for written in ("[lambda('x', lambdaVariables('y'))]", "[createArray(lambda('x', lambdaVariables('x')))]"):
        taints[0] = written
        path = tmp_path / "template.json"
        path.write_text(json.dumps(template), encoding="utf-8")
        for fmt in ("json", "sarif"):
            done = run_cli("scan", "--format", fmt, "--fail-on", "none", str(path))
            assert done.returncode == 0, done.stderr
            json.loads(done.stdout)
        report = json.loads(run_cli("scan", "--format", "json", "--fail-on", "none", str(path)).stdout)
        reasons = {(u["rule_id"], u["resource_name"]): u["reason"] for u in report["undetermined"]}
        assert "lambda" in reasons[("AZAI-102", "akstrain/gpuzero")]
