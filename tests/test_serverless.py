"""Serverless compute used full-time (AZAI-207) and serverless GPUs kept warm (AZAI-208), read
live through the real azure-mgmt pipeline against the project's ARM emulator, plus the schedule
arithmetic both IaC and live judgements rest on.

The four IaC forms of each rule are in fixtures/rules/AZAI-207 and AZAI-208 (test_rules) and
their what-if twins are scanned live by test_live; these tests cover what only a live scan
reads: a workspace's jobs, and a Container App's requests.
"""

from __future__ import annotations

import datetime as dt
import json
from collections.abc import Callable
from typing import Any
from urllib.parse import parse_qs

import pytest

from scanner.emulator.estate import Estate
from scanner.emulator.server import Answer, Emulator, Faults
from scanner.model import amljobs
from scanner.model.schedules import runs_per_day
from scanner.model.tokens import TokenBook
from scanner.model.unknown import Unknown, UnknownValueError
from scanner.pipeline.scan import ScanResult
from scanner.sources.live import shapes
from tests.live_estates import live_scan, model_account, model_deployment, rule_outcomes

SUB = "00000000-0000-0000-0000-0000000000e7"
GROUP = f"/subscriptions/{SUB}/resourceGroups/rg-train"
A100 = "Standard_NC24ads_A100_v4"
A100_EASTUS = 3.673  # scanner/data/vm_prices.csv
HOURS = 168


def _stamp(moment: dt.datetime) -> str:
    return moment.strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def _workspace(name: str) -> dict[str, Any]:
    return {
        "id": f"{GROUP}/providers/Microsoft.MachineLearningServices/workspaces/{name}",
        "name": name,
        "type": "Microsoft.MachineLearningServices/workspaces",
        "location": "eastus",
        "properties": {"publicNetworkAccess": "Disabled"},
    }


def _job(
    workspace: str,
    name: str,
    age_hours: float,
    ran_hours: float,
    status: str = "Completed",
    compute: str | None = None,
    size: Any = A100,
    **more: Any,
) -> dict[str, Any]:
    created = dt.datetime.now(dt.UTC) - dt.timedelta(hours=age_hours)
    properties: dict[str, Any] = {"jobType": "Command", "status": status, "command": "python train.py", **more}
    if compute:
        properties["computeId"] = compute
    if size:
        properties["resources"] = {"instanceType": size, "instanceCount": 1}
    return {
        "id": f"{GROUP}/providers/Microsoft.MachineLearningServices/workspaces/{workspace}/jobs/{name}",
        "name": name,
        "type": "Microsoft.MachineLearningServices/workspaces/jobs",
        "properties": properties,
        "systemData": {
            "createdAt": _stamp(created),
            "lastModifiedAt": _stamp(created + dt.timedelta(hours=ran_hours)),
        },
    }


def _estate(
    resources: list[dict[str, Any]],
    metrics: dict[str, Any] | None = None,
    errors: dict[str, dict[str, tuple[str, str]]] | None = None,
) -> Estate:
    """``errors``: by resource id and lower-case metric name, the errorCode Azure Monitor
    answers for that metric instead of its series."""
    return Estate(
        [{"id": f"/subscriptions/{SUB}", "subscriptionId": SUB, "displayName": "train", "state": "Enabled"}],
        resources,
        metrics={k.lower(): v for k, v in (metrics or {}).items()},
        metric_errors={k.lower(): v for k, v in (errors or {}).items()},
    )


def _scan(
    serve: Callable[..., Emulator], estate: Estate, select: tuple[str, ...], faults: Faults | None = None
) -> tuple[ScanResult, Emulator]:
    emulator = serve(estate, faults)
    return live_scan(emulator, select=select), emulator


def jobs_estate() -> Estate:
    cluster = f"{GROUP}/providers/Microsoft.MachineLearningServices/workspaces/busy/computes/gpu"
    busy = [_job("busy", f"sweep-{i}", age_hours=i * 0.8 + 1, ran_hours=1.0) for i in range(200)]
    busy += [_job("busy", "running-now", age_hours=3, ran_hours=0.1, status="Running")]
    busy += [_job("busy", "queued", age_hours=30, ran_hours=0, status="Queued")]
    # on a cluster, or older than the window: neither counts
    busy += [_job("busy", f"cluster-{i}", age_hours=i + 1, ran_hours=5, compute=cluster) for i in range(50)]
    busy += [_job("busy", f"old-{i}", age_hours=24 * 10 + i, ran_hours=20) for i in range(20)]
    quiet = [_job("quiet", f"nightly-{d}", age_hours=24 * d + 2, ran_hours=2) for d in range(7)]
    unsized = [_job("unsized", f"auto-{i}", age_hours=i * 0.5 + 1, ran_hours=1, size=None) for i in range(300)]
    # records last changed 10 h after creation, but a job cannot outlive its 1-hour timeout: 30 h
    capped = [
        _job("capped", f"probe-{i}", age_hours=i * 5 + 11, ran_hours=10, limits={"timeout": "PT1H"}) for i in range(30)
    ]
    # a size that is not a string, a pipeline's own record: left out of the sum, never a crash
    odd = [_job("odd", f"odd-{i}", age_hours=i * 5 + 11, ran_hours=10, size={"sku": "A100"}) for i in range(30)]
    odd += [_job("odd", f"pipe-{i}", age_hours=i * 5 + 11, ran_hours=10, jobType="Pipeline") for i in range(30)]
    # two sizes, each priced from its own row
    mixed = [_job("mixed", f"a100-{i}", age_hours=i + 1, ran_hours=1) for i in range(100)]
    mixed += [_job("mixed", f"t4-{i}", age_hours=i + 1, ran_hours=1, size="Standard_NC4as_T4_v3") for i in range(100)]
    workspaces = [_workspace(n) for n in ("busy", "quiet", "unsized", "denied", "capped", "odd", "mixed")]
    return _estate(workspaces + busy + quiet + unsized + capped + odd + mixed)


def test_a_workspace_whose_serverless_jobs_add_up_to_full_time_fails_with_its_spend(serve) -> None:  # type: ignore[no-untyped-def]
    faults = Faults(answers={"/workspaces/denied/jobs": Answer(status=403, body={"error": {"code": "Denied"}})})
    result, emulator = _scan(serve, jobs_estate(), ("AZAI-210",), faults)
    failed, passed, undetermined = rule_outcomes(result, "AZAI-210")
    assert set(failed) == {"busy", "unsized", "mixed"}
    assert passed == {"quiet", "capped", "odd"}
    assert undetermined == {"denied"}  # its jobs could not be read

    busy = failed["busy"]
    # 200 finished one-hour jobs and one running for 3 hours, in 7 days; queued, cluster and old jobs count nothing
    assert busy.violation.observed["jobs"] == 201
    assert busy.violation.observed["instance_hours"] == pytest.approx(203.0, abs=0.1)
    # 203 h / 7 days / 24 h = 1.2083 A100 instances x 730 h x $3.673 (the running job adds seconds)
    assert busy.cost is not None and busy.cost.monthly_usd == pytest.approx(3239.89, abs=0.02)
    assert busy.cost.price is not None and busy.cost.price.as_of
    # 100 h of each size in 7 days: 0.5952 instances of each x 730 h x ($3.673 A100 + $0.526 T4)
    mixed = failed["mixed"].cost
    assert mixed is not None and mixed.monthly_usd == 1824.57  # 1,596.01 + 228.56
    assert mixed.basis.count("h/month") == 2
    # Azure picks the VM when a job names none: unknown, never $0
    unsized = failed["unsized"].cost
    assert unsized is not None and unsized.monthly_usd is None and "instanceType" in (unsized.unknown_reason or "")

    reads = [r for r in emulator.log if r.path.lower().endswith("/jobs")]
    firsts = [r for r in reads if "skiptoken" not in r.query.lower()]  # then each page's nextLink
    assert sorted(r.path.rsplit("/", 2)[-2] for r in firsts) == [
        "busy",
        "capped",
        "denied",
        "mixed",
        "odd",
        "quiet",
        "unsized",
    ]
    # archived jobs are not listed: archiving changes lastModifiedAt, all that says when a job ended
    assert all("listviewtype" not in r.query.lower() for r in firsts)
    writes = [r for r in emulator.log if r.method != "GET" and not r.path.lower().endswith("/resources")]
    assert not writes  # reads only: GETs, and Resource Graph's query POST


def threshold_estate() -> Estate:
    """Workspaces either side of AZAI-210's default line, 126 instance-hours in 7 days (0.75 of
    one instance's week), each job on one A100."""
    # evaluation jobs of 0.97 h back to back from 165.5 h before the scan: one A100 busy 97% of the week
    evals = [_job("evals", f"eval-{i}", age_hours=165.5 - 0.97 * i, ran_hours=0.97) for i in range(168)]
    nightly = [_job("nightly-2h", f"run-{d}", age_hours=24 * d + 4, ran_hours=2) for d in range(7)]
    nightly += [_job("nightly-8h", f"run-{d}", age_hours=24 * d + 10, ran_hours=8) for d in range(7)]
    # around the clock from Monday to Friday, idle at the weekend: 120 h
    weekdays = [_job("weekdays", f"hour-{h}", age_hours=h + 1.5, ran_hours=1) for h in range(120)]
    at_line = [_job("at-line", f"hour-{h}", age_hours=h + 1.5, ran_hours=1) for h in range(126)]
    # 0.0001 h (0.36 s, the collector's resolution) short of the line
    under = [_job("under-line", f"hour-{h}", age_hours=h + 1.5, ran_hours=1) for h in range(125)]
    under += [_job("under-line", "hour-125", age_hours=126.5, ran_hours=0.9999)]
    names = ("evals", "nightly-2h", "nightly-8h", "weekdays", "at-line", "under-line")
    return _estate([_workspace(n) for n in names] + evals + nightly + weekdays + at_line + under)


def test_serverless_jobs_are_full_time_from_three_quarters_of_one_instances_week(serve) -> None:  # type: ignore[no-untyped-def]
    result, _ = _scan(serve, threshold_estate(), ("AZAI-210",))
    failed, passed, undetermined = rule_outcomes(result, "AZAI-210")
    assert set(failed) == {"evals", "at-line"}
    assert passed == {"nightly-2h", "nightly-8h", "weekdays", "under-line"}
    assert not undetermined

    evals = failed["evals"].violation
    assert evals.message == (
        "Workspace 'evals' ran 168 serverless job(s) for 163.0 instance-hours in 7 days, 97% of one "
        "instance's 168 hours: at or over the full-time threshold of 126 instance-hours (full_time_instances 0.75)"
    )
    assert evals.observed == {
        "jobs": 168,
        "instance_hours": 163.0,
        "window_days": 7,
        "threshold_instance_hours": 126.0,
        "share_of_one_instance": 0.97,
    }
    assert evals.expected == "serverless jobs under 126 instance-hours in 7 days, or a compute cluster"
    # the estimate is the spend at this rate: 162.96 h / 7 days / 24 h = 0.97 A100 x 730 h x $3.673
    cost = failed["evals"].cost
    assert cost is not None and cost.monthly_usd == round(162.96 / 7 / 24 * 730 * A100_EASTUS, 2) == 2600.85

    line = failed["at-line"].violation.observed
    assert (line["instance_hours"], line["threshold_instance_hours"], line["share_of_one_instance"]) == (
        126.0,
        126.0,
        0.75,
    )


@pytest.mark.parametrize(
    ("option", "fails"),
    [
        # one whole instance, the former default: even 97% of the week passes
        ("AZAI-210:full_time_instances=1", set()),
        # half the week: the weekday workload and the one just under 0.75 fail, nightly jobs still pass
        ("AZAI-210:full_time_instances=0.5", {"evals", "at-line", "under-line", "weekdays"}),
    ],
)
def test_full_time_instances_moves_the_line(serve, option: str, fails: set[str]) -> None:  # type: ignore[no-untyped-def]
    emulator = serve(threshold_estate())
    failed, passed, undetermined = rule_outcomes(
        live_scan(emulator, select=("AZAI-210",), rule_options=(option,)), "AZAI-210"
    )
    assert set(failed) == fails
    assert passed == {"evals", "nightly-2h", "nightly-8h", "weekdays", "at-line", "under-line"} - fails
    assert not undetermined


def test_jobs_are_listed_only_when_the_jobs_rule_is_selected(serve) -> None:  # type: ignore[no-untyped-def]
    _, emulator = _scan(serve, jobs_estate(), ("AZAI-103",))
    assert not [r for r in emulator.log if r.path.lower().endswith("/jobs")]


def _app(name: str, profile: str, minimum: int) -> dict[str, Any]:
    return {
        "id": f"{GROUP}/providers/Microsoft.App/containerApps/{name}",
        "name": name,
        "type": "Microsoft.App/containerApps",
        "location": "eastus",
        "properties": {
            "managedEnvironmentId": f"{GROUP}/providers/Microsoft.App/managedEnvironments/cae",
            "workloadProfileName": profile,
            "template": {"scale": {"minReplicas": minimum, "maxReplicas": 2}},
        },
    }


def test_a_warm_serverless_gpu_app_says_whether_it_served_anyone(serve) -> None:  # type: ignore[no-untyped-def]
    environment = {
        "id": f"{GROUP}/providers/Microsoft.App/managedEnvironments/cae",
        "name": "cae",
        "type": "Microsoft.App/managedEnvironments",
        "location": "eastus",
        "properties": {
            "workloadProfiles": [
                {"name": "Consumption", "workloadProfileType": "Consumption"},
                {"name": "gpu", "workloadProfileType": "Consumption-GPU-NC24-A100"},
            ]
        },
    }
    idle, busy, cold = _app("idle", "gpu", 1), _app("busy", "gpu", 2), _app("cold", "gpu", 0)
    metrics = {
        idle["id"]: {"Requests": {}, "Replicas": {"": [1.0] * HOURS}},
        busy["id"]: {"Requests": {"": [40.0] * HOURS}, "Replicas": {"": [2.0] * HOURS}},
    }
    result, emulator = _scan(serve, _estate([environment, idle, busy, cold], metrics), ("AZAI-208",))
    failed, passed, undetermined = rule_outcomes(result, "AZAI-208")
    assert set(failed) == {"idle", "busy"}
    assert passed == {"cold"} and not undetermined

    assert failed["idle"].violation.message.endswith("and it took no requests in 7 days (hourly)")
    assert failed["idle"].violation.observed["requests"] == 0
    assert "took no requests" not in failed["busy"].violation.message
    assert failed["busy"].violation.observed["requests"] == 40.0 * HOURS
    # 2 GPUs x 730 h x $1.9044 (Container Apps A100 GPU-second x 3600, eastus)
    cost = failed["busy"].cost
    assert cost is not None and cost.monthly_usd == round(2 * 730 * 1.9044, 2)
    assert cost.price is not None and cost.price.as_of == "2026-08-01"

    measured = sorted(
        (r.path.split("/containerApps/")[1].split("/")[0], parse_qs(r.query)["aggregation"][0])
        for r in emulator.log
        if r.path.lower().endswith("/metrics")
    )
    # per warm GPU app, Requests (Total) and Replicas (Maximum), each with the aggregation it
    # publishes; none for the app at zero
    assert measured == [("busy", "Maximum"), ("busy", "Total"), ("idle", "Maximum"), ("idle", "Total")]


@pytest.mark.parametrize(
    ("trigger", "runs"),
    [
        ({"triggerType": "Cron", "expression": "*/30 * * * *"}, 48.0),
        ({"triggerType": "Cron", "expression": "0 2 * * *"}, 1.0),
        ({"triggerType": "Cron", "expression": "15 16 * * 1"}, 1 / 7),
        ({"triggerType": "Cron", "expression": "0 9-17 * * MON-FRI"}, 9 * 5 / 7),
        ({"triggerType": "Cron", "expression": "0,30 */6 * * *"}, 8.0),
        ({"triggerType": "Cron", "expression": "5/15 * * * 0,6"}, 4 * 24 * 2 / 7),
        # AML ignores the day-of-month and month fields ("always treated as *")
        ({"triggerType": "Cron", "expression": "0 0 1 1 *"}, 1.0),
        ({"triggerType": "Recurrence", "frequency": "Minute", "interval": 10}, 144.0),
        ({"triggerType": "Recurrence", "frequency": "Hour", "interval": 2}, 12.0),
        (
            {
                "triggerType": "Recurrence",
                "frequency": "Day",
                "interval": 1,
                "schedule": {"hours": [4, 5], "minutes": [0, 30]},
            },
            4.0,
        ),
        (
            {
                "triggerType": "Recurrence",
                "frequency": "Week",
                "interval": 1,
                "schedule": {"hours": [2], "minutes": [0], "weekDays": ["Monday", "Friday"]},
            },
            2 / 7,
        ),
        ({"triggerType": "Recurrence", "frequency": "Month", "interval": 1}, 12 / 365.25),
        # listed week days thin a daily recurrence out; a day named twice is one day
        (
            {
                "triggerType": "Recurrence",
                "frequency": "Day",
                "interval": 1,
                "schedule": {"hours": [9], "minutes": [0], "weekDays": ["Monday", "monday", "Tuesday", "Friday"]},
            },
            3 / 7,
        ),
        (
            {"triggerType": "Recurrence", "frequency": "Hour", "interval": 1, "schedule": {"weekDays": ["Sunday"]}},
            24 / 7,
        ),
    ],
)
def test_runs_per_day_of_every_trigger_form(trigger: dict[str, Any], runs: float) -> None:
    assert runs_per_day(trigger) == pytest.approx(runs)


@pytest.mark.parametrize(
    "trigger",
    [
        {"triggerType": "Cron", "expression": "* * * *"},
        {"triggerType": "Cron", "expression": "61 * * * *"},
        {"triggerType": "Cron", "expression": "*/0 * * * *"},
        {"triggerType": "Cron", "expression": "@hourly x y z w"},
        {"triggerType": "Recurrence", "frequency": "Fortnight", "interval": 1},
        {"triggerType": "Recurrence", "frequency": "Hour", "interval": 0},
        {"triggerType": "Recurrence", "frequency": "Day", "interval": 1, "schedule": {"hours": 4}},
        {"triggerType": "Once"},
        "every day",
        {"triggerType": "Recurrence", "frequency": "Hour", "interval": float("nan")},
        {"triggerType": "Recurrence", "frequency": "Hour", "interval": float("inf")},
        {"triggerType": "Recurrence", "frequency": "Day", "interval": 1, "schedule": {"hours": [24], "minutes": [0]}},
        {"triggerType": "Recurrence", "frequency": "Week", "interval": 1, "schedule": {"weekDays": ["Someday"]}},
        {"triggerType": "Recurrence", "frequency": "Day", "interval": 1, "schedule": {"hours": [Unknown("param")]}},
        # a monthly recurrence on week days: not a documented form
        {"triggerType": "Recurrence", "frequency": "Month", "interval": 1, "schedule": {"weekDays": ["Monday"]}},
    ],
)
def test_a_trigger_that_cannot_be_read_is_undetermined(trigger: Any) -> None:
    with pytest.raises(UnknownValueError):
        runs_per_day(trigger)


def _account(name: str, region: str) -> dict[str, Any]:
    return model_account(GROUP, name, "OpenAI", region)


def _deployment(
    account: str, name: str, sku: str, model: str = "gpt-4o", version: str = "2024-11-20"
) -> dict[str, Any]:
    return model_deployment(GROUP, account, name, sku, 1000, model, version)


STEADY_IN, STEADY_OUT = [9.0e6] * (HOURS - 1) + [9.5e6], [0.3e6] * (HOURS - 1) + [0.32e6]


def tokens_estate() -> Estate:
    east, west, dark = _account("oai", "eastus"), _account("oai-eu", "westeurope"), _account("dark", "eastus")
    office = [0.0 if (h % 24) < 8 or (h % 24) > 18 else 9.0e6 for h in range(HOURS)]
    resources = [
        east,
        _deployment("oai", "steady", "GlobalStandard"),
        _deployment("oai", "office-hours", "GlobalStandard"),
        _deployment("oai", "trickle", "GlobalStandard"),
        _deployment("oai", "legacy-model", "GlobalStandard", "gpt-35-turbo", "0125"),
        _deployment("oai", "ptu", "GlobalProvisionedManaged"),
        west,
        _deployment("oai-eu", "steady-dz", "DataZoneStandard"),
        dark,
        _deployment("dark", "unmeasured", "GlobalStandard"),
    ]
    metrics = {
        east["id"]: {
            "ProcessedPromptTokens": {
                "steady": STEADY_IN,
                "office-hours": office,
                "trickle": [1000.0] * HOURS,
                "legacy-model": STEADY_IN,
            },
            "GeneratedTokens": {"steady": STEADY_OUT, "office-hours": office, "trickle": [50.0] * HOURS},
            "AzureOpenAIProvisionedManagedUtilizationV2": {"ptu": [50.0] * HOURS},
            "AzureOpenAIRequests": {"ptu": [10.0] * HOURS},
        },
        # the Foundry metric names
        west["id"]: {"InputTokens": {"steady-dz": STEADY_IN}, "OutputTokens": {"steady-dz": STEADY_OUT}},
    }
    # Azure Monitor could not measure `dark`'s token metrics this time
    timeout = ("TimeOut", "The metric query timed out.")
    tokens = ("processedprompttokens", "generatedtokens", "inputtokens", "outputtokens")
    return _estate(resources, metrics, {dark["id"]: dict.fromkeys(tokens, timeout)})


def test_pay_per_token_at_full_time_volume_fails_only_below_the_stated_ptu_price(serve) -> None:  # type: ignore[no-untyped-def]
    # at the bundled hourly PTU price ($1.00 Global) tokens are cheaper: the steady deployment passes
    result, _ = _scan(serve, tokens_estate(), ("AZAI-209",))
    failed, passed, undetermined = rule_outcomes(result, "AZAI-209")
    assert not failed
    assert passed == {"oai/steady", "oai/office-hours", "oai/trickle", "oai/ptu"}
    # no token price or PTU capacity for the model, no Data Zone price in westeurope, no metric at all
    assert undetermined == {"oai/legacy-model", "oai-eu/steady-dz", "dark/unmeasured"}


def test_a_reservation_rate_makes_steady_volume_a_cost_finding(serve) -> None:  # type: ignore[no-untyped-def]
    emulator = serve(tokens_estate())
    result = live_scan(emulator, select=("AZAI-209",), rule_options=("AZAI-209:ptu_usd_per_hour=0.30",))
    failed, passed, undetermined = rule_outcomes(result, "AZAI-209")
    assert set(failed) == {"oai/steady"}
    assert passed == {"oai/office-hours", "oai/trickle", "oai/ptu"}  # bursty, small, provisioned
    assert undetermined == {"oai/legacy-model", "oai-eu/steady-dz", "dark/unmeasured"}

    finding = failed["oai/steady"]
    # gpt-4o Global Standard: $2.50 in / $10 out per 1M tokens; 2,500 input TPM per PTU, output x4
    spend = (sum(STEADY_IN) * 2.5 + sum(STEADY_OUT) * 10.0) / 1e6 * 730 / HOURS
    ptus = 15 + 5 * -(-((9.5e6 + 4 * 0.32e6) / 60 / 2500 - 15) // 5)  # rounded up to the step of 5
    assert ptus == 75
    provisioned = ptus * 730 * 0.30
    assert finding.severity.label == "low"
    assert finding.violation.observed["ptus"] == ptus
    assert finding.violation.observed["monthly_token_spend"] == round(spend, 2)
    assert finding.violation.observed["provisioned_monthly"] == round(provisioned, 2)
    assert finding.cost is not None and finding.cost.monthly_usd == round(spend - provisioned, 2)
    assert finding.cost.price is not None and "ptu_usd_per_hour" in finding.cost.price.source
    assert any("2026-08-11" in note for note in finding.cost.assumptions)  # the token prices' date


@pytest.mark.parametrize(
    ("definition", "read"),
    [
        # a parameter where the tier, the time limit or a sweep's trial is: never the default
        ({"jobType": "Command", "queueSettings": Unknown("[parameters('q')]")}, amljobs.job_tier),
        ({"jobType": "Command", "limits": Unknown("[parameters('limits')]")}, amljobs.timeout),
        ({"jobType": "Sweep", "trial": Unknown("[parameters('trial')]")}, amljobs.instance_count),
        ({"jobType": "Command", "resources": {"instanceCount": float("inf")}}, amljobs.instance_count),
        ({"jobType": "Command", "resources": {"instanceType": ["Standard_NC24ads_A100_v4"]}}, amljobs.instance_type),
        ({"jobType": "Command", "queueSettings": {"jobTier": 3}}, amljobs.job_tier),
    ],
)
def test_a_job_definition_that_cannot_be_read_is_undetermined(definition: dict[str, Any], read: Any) -> None:
    with pytest.raises(UnknownValueError):
        read(definition)


def test_job_definitions_are_read_case_insensitively_with_their_defaults() -> None:
    sweep = {"JobType": "Sweep", "Trial": {"Resources": {"InstanceType": A100, "InstanceCount": 2}}}
    assert amljobs.instance_type(sweep) == A100 and amljobs.instance_count(sweep) == 2.0
    assert amljobs.job_tier({"queueSettings": {"jobTier": "Null"}}) == "standard"
    assert amljobs.timeout({"limits": {"timeout": "PT5M"}}) == dt.timedelta(minutes=5)
    assert amljobs.is_serverless({"jobType": "Pipeline", "settings": {"default_compute": "azureml:serverless"}})
    assert not amljobs.is_serverless({"jobType": "Command", "computeId": f"{GROUP}/computes/gpu"})


def test_a_job_is_placed_in_the_window_in_utc_and_capped_by_its_timeout() -> None:
    now = dt.datetime(2026, 11, 25, 12, tzinfo=dt.UTC)
    # 6 days 23 hours before now, written with a -08:00 offset: inside a 7-day window
    created = (now - dt.timedelta(days=6, hours=23)).astimezone(dt.timezone(dt.timedelta(hours=-8)))
    job = {
        "name": "j",
        "properties": {"jobType": "Command", "status": "Completed", "limits": {"timeout": "PT2H"}, "command": "x"},
        "systemData": {
            "createdAt": created.isoformat(),
            "lastModifiedAt": (created + dt.timedelta(hours=9)).isoformat(),
        },
    }
    summary = shapes.job_summary(job, now)
    assert summary is not None
    assert summary["created"] == "2026-11-18T13:00:00+00:00"
    assert summary["ran_hours"] == 2.0  # 9 h to the record's last change, but a 2-hour limit
    assert "command" not in summary["properties"]  # commands and environment variables are not kept
    running = {**job, "properties": {"jobType": "Command", "status": "Running"}}
    assert shapes.job_summary(running, now)["ran_hours"] == pytest.approx(6 * 24 + 23)  # type: ignore[index]
    assert shapes.job_summary({**job, "systemData": {"createdAt": "yesterday"}}, now) is None


def test_a_saved_schedule_keeps_what_the_rules_read_and_not_the_jobs_secrets() -> None:
    body = {
        "id": f"{GROUP}/providers/Microsoft.MachineLearningServices/workspaces/w/schedules/s",
        "name": "s",
        "type": "Microsoft.MachineLearningServices/workspaces/schedules",
        "properties": {
            "isEnabled": True,
            "tags": {"interruptible": "false"},
            "trigger": {"triggerType": "Cron", "expression": "0 * * * *"},
            "action": {
                "actionType": "CreateJob",
                "jobDefinition": {
                    "jobType": "Command",
                    "command": "python train.py --token s3cret",
                    "environmentVariables": {"API_KEY": "s3cret"},
                    "resources": {"instanceType": A100},
                },
            },
        },
    }
    kept = shapes.schedule(body)
    assert "s3cret" not in json.dumps(kept)
    assert kept["properties"]["tags"] == {"interruptible": "false"}
    assert kept["properties"]["action"]["jobDefinition"] == {"jobType": "Command", "resources": {"instanceType": A100}}


def test_ptus_follow_each_deployment_types_minimum_and_step() -> None:
    gpt4o = TokenBook.bundled().capacity("GPT-4o")
    assert gpt4o is not None
    # 100,000 input + 4 x 10,000 output tokens a minute = 140,000 / 2,500 = 56 PTU
    assert gpt4o.ptus_for(100_000, 10_000, regional=False) == 60  # Global: steps of 5
    assert gpt4o.ptus_for(100_000, 10_000, regional=True) == 100  # Regional: steps of 50
    assert gpt4o.ptus_for(1_000, 0, regional=False) == 15 and gpt4o.ptus_for(1_000, 0, regional=True) == 50
