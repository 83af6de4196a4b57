"""Drift with a witness (issue 40): who changed each drifted setting, when, and through what.

The matching is tested pure (`scanner.drift.attribution`), then end to end: two versions of an
estate over three subscriptions served by the emulator, the newer one carrying Resource Graph
change records, compared through the real SDK. The cases: a change by a user through the
portal; one by the pipeline's own principal (``--expected-writer``); two changes to one
property; a change older than Resource Graph's 14 days; a resource without any record; a
throttled ``resourcechanges`` query; and the request counts (one query page per subscription
with drift, none for the subscription without, no write).
"""

from __future__ import annotations

import copy
import datetime as dt
import http.client
import json
import ssl
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from reports.json_report import drift_json
from scanner.drift.attribution import (
    NO_FULL_ID,
    NO_RECORD,
    NOT_READ,
    ChangeRecord,
    PropertyChange,
    Subject,
    attribute,
    decoded,
    no_record_reason,
    parse_record,
    queryable,
)
from scanner.drift.compare import placed
from scanner.emulator import contract
from scanner.emulator.estate import Estate, demo_estate_path
from scanner.emulator.server import Emulator, Faults
from scanner.engine.results import ScanResult
from scanner.errors import InputError
from scanner.model.resources import LIVE_KIND, Origin, Resource
from scanner.pipeline.drift import DriftRequest, run_drift
from scanner.pipeline.scan import ScanRequest, run_scan
from scanner.policy.config import parse_config
from scanner.sources.live.changes import changes_query
from scanner.sources.live.scope import LiveScope
from tests.conftest import FIXTURES, run_cli

NOW = dt.datetime.now(dt.UTC).replace(second=0, microsecond=0)
LIVE = LiveScope(all_subscriptions=True)
PIPELINE = "9f1c7a52-3b4e-4d8a-a6e1-2c5b7d9e0f13"  # the deploying service principal's application id
SECRET = "sk-do-not-show-4f9c"  # a value a change record holds for a property that is not watched
SUBS = [f"11111111-0000-4000-8000-00000000000{n}" for n in (1, 2, 3)]


def _id(sub: int, kind: str, name: str) -> str:
    return f"/subscriptions/{SUBS[sub]}/resourceGroups/rg-ai/providers/{kind}/{name}"


ACCOUNT = "Microsoft.CognitiveServices/accounts"
SEARCH = "Microsoft.Search/searchServices"
PORTAL = _id(0, ACCOUNT, "oai-portal")  # alice switched key auth on in the portal
TWICE = _id(0, SEARCH, "srch-twice")  # replicas 1 -> 2 (carol) -> 3 (dave)
DEPLOYED = _id(0, ACCOUNT, "oai-pipeline")  # the pipeline's principal opened public access
OLD = _id(1, ACCOUNT, "oai-old")  # changed 20 days ago: Resource Graph no longer holds it
SILENT = _id(1, ACCOUNT, "oai-silent")  # changed, and no record of it at all
STILL = _id(2, ACCOUNT, "oai-still")  # the third subscription: nothing drifts


def _when(**ago: float) -> str:
    return (NOW - dt.timedelta(**ago)).isoformat()


def _shown(**ago: float) -> str:
    return f"{NOW - dt.timedelta(**ago):%Y-%m-%d %H:%M} UTC"


def _account(resource_id: str, **properties: Any) -> dict[str, Any]:
    name = resource_id.rsplit("/", 1)[-1]
    body = {"disableLocalAuth": True, "publicNetworkAccess": "Disabled", **properties}
    return {
        "id": resource_id,
        "name": name,
        "type": ACCOUNT,
        "location": "eastus",
        "kind": "OpenAI",
        "properties": body,
    }


def _search(resource_id: str, replicas: int) -> dict[str, Any]:
    name = resource_id.rsplit("/", 1)[-1]
    body = {"replicaCount": replicas, "disableLocalAuth": True, "publicNetworkAccess": "disabled"}
    return {
        "id": resource_id,
        "name": name,
        "type": SEARCH,
        "location": "eastus",
        "sku": {"name": "basic"},
        "properties": body,
    }


def _subscriptions() -> list[dict[str, Any]]:
    return [{"id": f"/subscriptions/{s}", "subscriptionId": s, "displayName": f"ai-{i}"} for i, s in enumerate(SUBS)]


def base_estate() -> Estate:
    resources = [_account(i) for i in (PORTAL, DEPLOYED, OLD, SILENT, STILL)] + [_search(TWICE, 1)]
    return Estate(_subscriptions(), resources)


def _record(target: str, who: str | None, client: str | None, changes: dict[str, Any], **ago: float) -> dict[str, Any]:
    record: dict[str, Any] = {"targetResourceId": target, "changeType": "Update", "timestamp": _when(**ago)}
    if who is not None:
        record |= {"changedBy": who, "changedByType": "Application" if who == PIPELINE else "User"}
    if client is not None:
        record["clientType"] = client
    return record | {"operation": "microsoft.cognitiveservices/accounts/write", "changes": changes}


def current_estate(records: list[dict[str, Any]] | None = None) -> Estate:
    estate = base_estate()
    resources = copy.deepcopy(estate.resources)
    by_id = {r["id"]: r for r in resources}
    for changed in (PORTAL, OLD, SILENT):
        by_id[changed]["properties"]["disableLocalAuth"] = False
    by_id[DEPLOYED]["properties"]["publicNetworkAccess"] = "Enabled"
    by_id[TWICE]["properties"]["replicaCount"] = 3
    default = [
        _record(
            PORTAL,
            "alice@contoso.com",
            "Azure Portal",
            {
                "properties.disableLocalAuth": {"previousValue": "true", "newValue": "false"},
                "properties.apiProperties.searchKey": {"previousValue": "null", "newValue": SECRET},
            },
            hours=2,
        ),
        _record(
            TWICE,
            "carol@contoso.com",
            "Azure Portal",
            {"properties.replicaCount": {"previousValue": 1, "newValue": 2}},
            days=3,
        ),
        _record(
            TWICE,
            "dave@contoso.com",
            "CLI",
            {"properties.replicaCount": {"previousValue": "2", "newValue": "3"}},
            days=1,
        ),
        _record(
            DEPLOYED,
            PIPELINE,
            "ARM Template",
            {"properties.publicNetworkAccess": {"previousValue": "Disabled", "newValue": "Enabled"}},
            hours=5,
        ),
        _record(
            OLD,
            "erin@contoso.com",
            "Azure Portal",
            {"properties.disableLocalAuth": {"previousValue": "true", "newValue": "false"}},
            days=20,
        ),
        _record(
            STILL,
            "frank@contoso.com",
            "Azure Portal",
            {"tags.team": {"previousValue": "null", "newValue": "ml"}},
            hours=1,
        ),
    ]
    return Estate(estate.subscriptions, resources, resource_changes=default if records is None else records)


# --- the matching, pure -------------------------------------------------------------------------


def _subject(current: Any = False, baseline: Any = True, path: str = "properties.disableLocalAuth") -> Subject:
    return Subject(PORTAL, ACCOUNT, "changed", path, current, baseline)


def _change(key: str, previous: Any, new: Any, hours: float, who: str = "alice@contoso.com") -> ChangeRecord:
    return ChangeRecord(
        f"c{hours}", PORTAL, "Update", NOW - dt.timedelta(hours=hours), who, "User", "Azure Portal",
        "microsoft.cognitiveservices/accounts/write", "corr", (PropertyChange(key, decoded(previous), decoded(new)),),
    )  # fmt: skip


def test_the_latest_record_that_set_the_current_value_is_the_witness() -> None:
    records = [
        _change("properties.disableLocalAuth", "true", "false", 5, "bob@contoso.com"),
        _change("tags.x", "1", "2", 1),
    ]
    found = attribute(_subject(), records, frozenset())
    assert found.line == f"changed by bob@contoso.com through Azure Portal on {_shown(hours=5)}"
    assert (found.previous, found.new, found.more_than_once, found.expected_writer) == (True, False, False, False)
    assert [r.change_id for r in found.history] == ["c5"]  # the tags change touches another property


def test_a_record_whose_previous_value_is_not_the_baselines_says_the_setting_changed_more_than_once() -> None:
    records = [
        _change("properties.replicaCount", 1, 2, 48, "carol"),
        _change("properties.replicaCount", "2", "3", 24, "dave"),
    ]
    found = attribute(_subject(3, 1, "properties.replicaCount"), records, frozenset())
    assert found.record is records[1] and found.more_than_once
    assert found.line.endswith("; changed more than once: Azure recorded 2 before this change, the base scan held 1")


def test_records_that_never_set_the_current_value_are_no_witness() -> None:
    found = attribute(_subject(), [_change("properties.disableLocalAuth", "false", "true", 3)], frozenset())
    assert found.record is None
    assert found.line == "no change record sets its current value (1 recorded change(s) of it)"


def test_nothing_recorded_is_no_change_record_never_a_guess() -> None:
    found = attribute(_subject(), [_change("tags.x", "1", "2", 1)], frozenset())
    assert (found.record, found.line) == (None, NO_RECORD)
    base = NOW - dt.timedelta(days=20, hours=1)
    assert no_record_reason(base, NOW) == (
        "no change record: the base scan is 20 days old and Resource Graph keeps 14 days of changes"
    )
    assert no_record_reason(NOW - dt.timedelta(days=13), NOW) == NO_RECORD


def test_an_expected_writer_is_matched_case_insensitively_and_said_so() -> None:
    record = _change("properties.disableLocalAuth", "true", "false", 2, PIPELINE.upper())
    found = attribute(_subject(), [record], frozenset({PIPELINE}))
    assert found.expected_writer
    assert found.line.endswith("; an expected writer: deployed outside the IaC under review")


def test_absent_values_read_as_the_platform_default_and_json_text_as_json() -> None:
    # disableLocalAuth's default is false: a record from "null" (absent) to "true" set true
    found = attribute(_subject(True, False), [_change("properties.disableLocalAuth", "null", "true", 1)], frozenset())
    assert found.record is not None and not found.more_than_once
    assert [decoded(v) for v in ("null", "3", '["a"]', "Enabled", 7)] == [None, 3, ["a"], "Enabled", 7]


def test_items_of_a_list_explain_the_list_when_no_record_names_it_whole() -> None:
    record = _change("properties.networkAcls.ipRules[0].value", "203.0.113.9", None, 1)
    found = attribute(_subject([], [{"value": "203.0.113.9"}], "properties.networkAcls.ipRules"), [record], frozenset())
    assert found.record is record and not found.more_than_once
    assert (found.previous, found.new) == ({record.changes[0].key: "203.0.113.9"}, {record.changes[0].key: None})


def test_created_and_deleted_resources_take_their_create_and_delete_records() -> None:
    create = dataclass_replace(_change("x", 1, 2, 4), change_type="Create", changes=())
    delete = dataclass_replace(_change("x", 1, 2, 2), change_type="Delete", changes=())
    made = attribute(Subject(PORTAL, ACCOUNT, "created"), [create, delete], frozenset())
    gone = attribute(Subject(PORTAL, ACCOUNT, "deleted"), [create, delete], frozenset())
    assert made.line == f"created by alice@contoso.com through Azure Portal on {_shown(hours=4)}"
    assert gone.record is delete and not gone.shown and gone.as_json()["previous_value"] is None


def dataclass_replace(record: ChangeRecord, **changes: Any) -> ChangeRecord:
    import dataclasses

    return dataclasses.replace(record, **changes)


def test_a_row_is_read_as_learn_documents_it() -> None:
    row = {
        "id": f"{PORTAL}/providers/Microsoft.Resources/changes/abc",
        "properties": {
            "targetResourceId": PORTAL,
            "changeType": "Update",
            "changeAttributes": {"changedBy": "john@contoso.com", "clientType": "Azure Portal",
                                 "timestamp": "2024-06-12T13:26:17.347+00:00", "correlationId": "11"},
            "changes": {"properties.disableLocalAuth": {"newValue": "false", "previousValue": "true"}},
        },
    }  # fmt: skip
    record = parse_record(row)
    assert (record.changed_by, record.changed_by_type, record.operation) == ("john@contoso.com", None, None)
    assert record.timestamp == dt.datetime(2024, 6, 12, 13, 26, 17, 347000, tzinfo=dt.UTC)
    assert record.changes == (PropertyChange("properties.disableLocalAuth", True, False),)


def test_ids_with_placeholders_are_looked_up_only_when_where_the_iac_landed_says_what_they_stand_for() -> None:
    assert queryable("/subscriptions/{subscription}/resourceGroups/rg/providers/A/b/c", [SUBS[0]]) == NO_FULL_ID
    assert queryable(PORTAL, [SUBS[0].upper()]) is None
    assert queryable(OLD, [SUBS[0]]) == "no change record looked up: its subscription is outside the live scope"
    live = _resource(_id(0, ACCOUNT, "found"))
    pairs = [(live, live)]
    template_id = "/subscriptions/{subscriptionId}/resourceGroups/{resourceGroupName}/providers/A/b/gone"
    assert placed(template_id, pairs) == f"/subscriptions/{SUBS[0]}/resourceGroups/rg-ai/providers/A/b/gone"
    elsewhere = _resource(_id(1, ACCOUNT, "other"))
    assert placed(template_id, [*pairs, (elsewhere, elsewhere)]) is None  # two places: not told
    assert placed("/subscriptions/{s}/resourceGroups/rg/providers/A/b/{name}", pairs) is None


def _resource(resource_id: str) -> Resource:
    return Resource(
        id=resource_id, type=ACCOUNT, name=resource_id.rsplit("/", 1)[-1], body={}, origin=Origin(LIVE_KIND, None)
    )


def test_the_query_is_one_per_subscription_quoted_and_read_back_by_the_emulator_as_sent() -> None:
    query = changes_query([PORTAL, "/x/it's\\odd"])
    assert query == (
        "resourcechanges | extend targetResourceId = tostring(properties.targetResourceId), "
        "changeTime = todatetime(properties.changeAttributes.timestamp) "
        f"| where targetResourceId in~ ('{PORTAL}', '/x/it\\'s\\\\odd') | where changeTime > ago(14d) "
        "| project id, properties | order by id asc"
    )
    assert contract.changes_query(query) == contract.ChangesQuery(
        frozenset({PORTAL.lower(), "/x/it's\\odd"}), dt.timedelta(days=14), ("id", "properties")
    )


@pytest.mark.parametrize(
    ("query", "token"),
    [
        ("resourcechanges | where properties.targetResourceId in~ ('/a", "'/a"),
        ("resourcechanges | where properties.changeType == 'Delete'", "properties.changeType == '...'"),
        ("resourcechange | limit 5", "resourcechange"),
    ],
)
def test_a_change_query_the_emulator_cannot_read_is_refused_as_graph_refuses_a_parser_failure(
    query: str, token: str
) -> None:
    status, body = contract.changes_query(query)  # type: ignore[misc]
    details = body["error"]["details"]
    assert status == 400 and body["error"]["code"] == "BadRequest"
    assert [d["code"] for d in details] == ["InvalidQuery", "ParserFailure"] and details[1]["token"] == token


def test_expected_writers_come_from_the_configuration_file_too() -> None:
    assert parse_config({"expected-writers": [f" {PIPELINE} "]}, [], "azai.toml").expected_writers == [PIPELINE]
    with pytest.raises(InputError, match="'expected-writers' must be a list of identity ids"):
        parse_config({"expected-writers": PIPELINE}, [], "azai.toml")


# --- end to end, through the real SDK against the emulator ---------------------------------------


def _snapshot(serve: Callable[..., Emulator], tmp_path: Path) -> Path:
    emulator = serve(base_estate())
    path = tmp_path / "base.json"
    run_scan(ScanRequest(paths=(), live=LIVE, arm_endpoint=emulator.endpoint, fail_on="none", save_inventory=str(path)))
    return path


def _lines(result: ScanResult) -> dict[tuple[str, str], tuple[str, str]]:
    """(resource name, property) -> (severity, attribution line) of each drift finding."""
    history = result.drift.history
    return {
        (f.resource.name, f.violation.path): (f.severity.label, history.by_finding[f.fingerprint].line)
        for f in result.findings
    }


EXPECTED = {
    ("oai-portal", "properties.disableLocalAuth"): (
        "high",
        f"changed by alice@contoso.com through Azure Portal on {_shown(hours=2)}",
    ),
    ("srch-twice", "properties.replicaCount"): (
        "medium",
        f"changed by dave@contoso.com through CLI on {_shown(days=1)}; changed more than once: "
        "Azure recorded 2 before this change, the base scan held 1",
    ),
    ("oai-pipeline", "properties.publicNetworkAccess"): (
        "low",
        f"changed by {PIPELINE} through ARM Template on {_shown(hours=5)}; "
        "an expected writer: deployed outside the IaC under review",
    ),
    ("oai-old", "properties.disableLocalAuth"): ("high", NO_RECORD),
    ("oai-silent", "properties.disableLocalAuth"): ("high", NO_RECORD),
}


def _changes_requests(emulator: Emulator) -> list[tuple[str, int]]:
    return [(r.method, r.status) for r in emulator.log if r.table == "resourcechanges"]


def test_each_drift_names_who_made_it_with_one_query_per_subscription_with_drift(
    serve: Callable[..., Emulator], tmp_path: Path
) -> None:
    base = _snapshot(serve, tmp_path)
    emulator = serve(current_estate())
    result = run_drift(
        DriftRequest(base=str(base), live=LIVE, arm_endpoint=emulator.endpoint, expected_writers=[PIPELINE])
    )
    assert _lines(result) == EXPECTED
    assert _changes_requests(emulator) == [("POST", 200), ("POST", 200)]  # the first two subscriptions, not the third
    assert emulator.writes() == [] and result.coverage == []
    assert result.live_requests == len([r for r in emulator.log if r.path != "/msi/token"])  # the query counted
    timeline = [(e.record.changed_by, e.what) for e in result.drift.history.timeline()]
    assert timeline == [
        ("carol@contoso.com", ("properties.replicaCount",)),
        ("dave@contoso.com", ("properties.replicaCount",)),
        (PIPELINE, ("properties.publicNetworkAccess",)),
        ("alice@contoso.com", ("properties.disableLocalAuth",)),
    ]  # erin's change is older than 14 days; frank's is on a resource that did not drift


def test_without_the_expected_writer_the_pipelines_change_keeps_the_rules_severity(
    serve: Callable[..., Emulator], tmp_path: Path
) -> None:
    base = _snapshot(serve, tmp_path)
    emulator = serve(current_estate())
    config = tmp_path / "azai.toml"
    config.write_text(f'expected-writers = ["{PIPELINE.upper()}"]\n')
    plain = run_drift(DriftRequest(base=str(base), live=LIVE, arm_endpoint=emulator.endpoint))
    configured = run_drift(
        DriftRequest(base=str(base), live=LIVE, arm_endpoint=emulator.endpoint, config_file=str(config))
    )
    key = ("oai-pipeline", "properties.publicNetworkAccess")
    assert _lines(plain)[key] == ("high", f"changed by {PIPELINE} through ARM Template on {_shown(hours=5)}")
    assert _lines(configured)[key] == EXPECTED[key]


def test_a_throttled_changes_query_gives_the_same_attributed_findings_after_retry(
    serve: Callable[..., Emulator], tmp_path: Path
) -> None:
    base = _snapshot(serve, tmp_path)
    emulator = serve(current_estate(), Faults(throttle_queries=("resourcechanges",), retry_after_seconds=0))
    result = run_drift(
        DriftRequest(base=str(base), live=LIVE, arm_endpoint=emulator.endpoint, expected_writers=[PIPELINE])
    )
    assert _lines(result) == EXPECTED and result.coverage == []
    assert sorted(_changes_requests(emulator)) == [("POST", 200), ("POST", 200), ("POST", 429), ("POST", 429)]


def test_change_records_are_paged_and_the_witness_can_be_on_the_last_page(
    serve: Callable[..., Emulator], tmp_path: Path
) -> None:
    base = _snapshot(serve, tmp_path)
    noise = [
        _record(PORTAL, "bot@contoso.com", None, {f"tags.n{i}": {"previousValue": "null", "newValue": str(i)}}, hours=3)
        | {"changeId": f"a{i:04d}"}
        for i in range(1000)
    ]
    witness = _record(
        PORTAL,
        "alice@contoso.com",
        "Azure Portal",
        {"properties.disableLocalAuth": {"previousValue": "true", "newValue": "false"}},
        hours=2,
    )
    emulator = serve(current_estate([*noise, witness | {"changeId": "z-last"}]))
    result = run_drift(DriftRequest(base=str(base), live=LIVE, arm_endpoint=emulator.endpoint))
    assert (
        _lines(result)[("oai-portal", "properties.disableLocalAuth")]
        == EXPECTED[("oai-portal", "properties.disableLocalAuth")]
    )
    pages = [r for r in emulator.log if r.table == "resourcechanges"]
    assert [r.status for r in pages] == [200, 200, 200]  # two pages for the first subscription, one for the second


def test_an_unreadable_changes_query_is_a_coverage_gap_and_no_change_record_read(
    serve: Callable[..., Emulator], tmp_path: Path
) -> None:
    """Resource Graph asks to wait longer than azai waits: the read fails within the boundary."""
    base = _snapshot(serve, tmp_path)
    emulator = serve(current_estate(), Faults(throttle_queries=("resourcechanges",), retry_after_seconds=120))
    result = run_drift(DriftRequest(base=str(base), live=LIVE, arm_endpoint=emulator.endpoint))
    assert {line for _, line in _lines(result).values()} == {NOT_READ}
    assert [(gap.scope, gap.status) for gap in result.coverage] == [
        (f"/subscriptions/{sub}/providers/Microsoft.Resources/changes", 429) for sub in SUBS[:2]
    ]
    assert all("azai waits at most 60 s" in gap.reason for gap in result.coverage)


def test_a_base_scan_older_than_the_window_says_the_window_has_passed(
    serve: Callable[..., Emulator], tmp_path: Path
) -> None:
    base = _snapshot(serve, tmp_path)
    snapshot = json.loads(base.read_text())
    snapshot["scan"]["time"] = (NOW - dt.timedelta(days=20)).isoformat()
    base.write_text(json.dumps(snapshot))
    emulator = serve(current_estate())
    result = run_drift(DriftRequest(base=str(base), live=LIVE, arm_endpoint=emulator.endpoint))
    assert _lines(result)[("oai-old", "properties.disableLocalAuth")] == (
        "high",
        "no change record: the base scan is 20 days old and Resource Graph keeps 14 days of changes",
    )


def test_iac_to_live_attributes_unmanaged_and_missing_resources(serve: Callable[..., Emulator]) -> None:
    estate = Estate.load(FIXTURES / "drift" / "live-drifted.json")
    group = estate.resources[0]["id"].split("/providers/")[0]
    made = f"{group}/providers/Microsoft.MachineLearningServices/workspaces/mlw-aiplat-prod/computes/ci-jdoe-a100"
    gone = f"{group}/providers/Microsoft.ContainerService/managedClusters/aks-aiplat-prod/agentPools/cpu"
    creation = {"changeType": "Create", "timestamp": _when(hours=30), "changedBy": "jdoe@contoso.com"}
    deletion = {"changeType": "Delete", "timestamp": _when(hours=6), "changedBy": PIPELINE}
    estate.resource_changes = [
        {"targetResourceId": made, **creation, "clientType": "Azure Portal"},
        {"targetResourceId": gone, **deletion, "changedByType": "Application", "clientType": "ARM Template"},
    ]
    emulator = serve(estate)
    for form in ("plan", "template"):
        result = run_drift(
            DriftRequest(iac=[str(FIXTURES / "drift" / f"{form}.json")], live=LIVE, arm_endpoint=emulator.endpoint,
                         expected_writers=[PIPELINE])
        )  # fmt: skip
        found = {
            f.check.id: (f.severity.label, result.drift.history.by_finding[f.fingerprint].line)
            for f in result.findings
            if f.check.id != "AZAI-901"
        }
        assert found == {
            "AZAI-902": ("medium", f"created by jdoe@contoso.com through Azure Portal on {_shown(hours=30)}"),
            "AZAI-903": (
                "low",
                f"deleted by {PIPELINE} through ARM Template on {_shown(hours=6)}; "
                "an expected writer: deployed outside the IaC under review",
            ),
        }
        listed = {f.resource.id: f.check.id for f in result.findings if f.check.id != "AZAI-901"}
        moved = drift_json(result.drift)["resource_changes"]  # keyed by the ids drift.added and .removed give
        assert {i: c["change_type"] for i, c in moved.items()} == {
            i: "Create" if rule == "AZAI-902" else "Delete" for i, rule in listed.items()
        }
    assert emulator.writes() == [] and len(_changes_requests(emulator)) == 2  # one per comparison


def _query(emulator: Emulator, body: dict[str, Any]) -> tuple[int, Any]:
    context = ssl.create_default_context(cafile=str(emulator.ca_bundle))
    host, port = emulator.endpoint.removeprefix("https://").split(":")
    connection = http.client.HTTPSConnection(host, int(port), context=context, timeout=30)
    path = "/providers/Microsoft.ResourceGraph/resources?api-version=2021-03-01"
    headers = {"Authorization": "Bearer test", "Content-Type": "application/json"}
    connection.request("POST", path, json.dumps(body), headers)
    response = connection.getresponse()
    answer = json.loads(response.read())
    connection.close()
    return response.status, answer


def test_the_emulator_serves_change_rows_as_learn_shows_them_and_none_past_retention(
    serve: Callable[..., Emulator],
) -> None:
    emulator = serve(current_estate())
    asked = (
        f"resourcechanges | where properties.targetResourceId in~ ('{PORTAL}', '{OLD}') "
        "| where todatetime(properties.changeAttributes.timestamp) > ago(30d)"
    )
    status, answer = _query(emulator, {"subscriptions": SUBS, "query": asked})
    assert status == 200 and answer["count"] == 1  # the 20-day-old change of oai-old is past retention
    row = answer["data"][0]
    assert row["type"] == "microsoft.resources/changes" and row["id"].startswith(
        f"{PORTAL}/providers/Microsoft.Resources/changes/"
    )
    attributes = row["properties"]["changeAttributes"]
    assert attributes["timestamp"] == (NOW - dt.timedelta(hours=2)).isoformat(timespec="milliseconds")
    assert {k: attributes[k] for k in ("changedBy", "changedByType", "clientType", "changesCount")} == {
        "changedBy": "alice@contoso.com", "changedByType": "User", "clientType": "Azure Portal", "changesCount": 2,
    }  # fmt: skip
    assert row["properties"]["targetResourceType"] == "microsoft.cognitiveservices/accounts"
    status, answer = _query(
        emulator, {"subscriptions": SUBS, "query": "resourcechanges | where changeType == 'Delete'"}
    )
    assert status == 400 and answer["error"]["details"][0]["code"] == "InvalidQuery"


def test_an_estate_change_record_with_a_typo_is_refused_when_it_loads() -> None:
    with pytest.raises(ValueError, match=r"resourceChanges\[0\]: give either 'timestamp' or 'ago'"):
        Estate([], [], resource_changes=[{"targetResourceId": PORTAL, "changeType": "Update"}])
    with pytest.raises(ValueError, match="'changeType' must be one of Create, Update, Delete"):
        Estate([], [], resource_changes=[{"targetResourceId": PORTAL, "changeType": "update", "ago": "PT1H"}])


def test_reports_show_the_witness_and_the_timeline_and_never_a_value_the_drift_does_not_watch(
    serve: Callable[..., Emulator], tmp_path: Path
) -> None:
    base = _snapshot(serve, tmp_path)
    emulator = serve(current_estate())
    reports = {fmt: tmp_path / f"drift.{fmt}" for fmt in ("json", "markdown", "html", "text")}
    outputs = [a for fmt, path in reports.items() for a in ("--format", fmt, "--output", str(path))]
    done = run_cli("drift", str(base), "--all-subscriptions", "--arm-endpoint", emulator.endpoint,
                   "--expected-writer", PIPELINE, *outputs, env=emulator.environment())  # fmt: skip
    assert done.returncode == 1, done.stderr
    text = {fmt: path.read_text(encoding="utf-8") for fmt, path in reports.items()}
    assert all(SECRET not in body for body in text.values())
    data = json.loads(text["json"])
    portal = next(f for f in data["findings"] if f["resource_name"] == "oai-portal")
    assert portal["change"] == {
        "recorded": True, "change_type": "Update", "changed_by": "alice@contoso.com", "changed_by_type": "User",
        "client_type": "Azure Portal", "operation": "microsoft.cognitiveservices/accounts/write",
        "timestamp": (NOW - dt.timedelta(hours=2)).isoformat(), "correlation_id": None,
        "property": "properties.disableLocalAuth", "previous_value": True, "new_value": False,
        "changed_more_than_once": False, "expected_writer": False, "reason": None,
        "summary": EXPECTED[("oai-portal", "properties.disableLocalAuth")][1],
    }  # fmt: skip
    assert data["drift"]["changes_window_days"] == 14 and len(data["drift"]["timeline"]) == 4
    assert f"    {EXPECTED[('oai-portal', 'properties.disableLocalAuth')][1]}\n" in text["text"]
    assert "### Changes in time order (Resource Graph, last 14 days)" in text["markdown"]
    assert f"| {_shown(days=3)} | carol@\u2060contoso.com | Azure Portal |" in text["markdown"]
    assert "<h2 id='timeline'>Changes in time order (Resource Graph, last 14 days)</h2>" in text["html"]
    assert f"{PIPELINE} (1 change, an expected writer)" in text["html"]


def test_the_demo_drifted_estate_says_who_made_each_portal_edit(serve: Callable[..., Emulator], tmp_path: Path) -> None:
    emulator = serve(Estate.load(demo_estate_path()))
    base = tmp_path / "before.json"
    run_scan(ScanRequest(paths=(), live=LIVE, arm_endpoint=emulator.endpoint, fail_on="none", save_inventory=str(base)))
    emulator = serve(Estate.load(demo_estate_path("drifted")))
    result = run_drift(DriftRequest(base=str(base), live=LIVE, arm_endpoint=emulator.endpoint))
    who = {
        (f.resource.name, f.violation.path): result.drift.history.by_finding[f.fingerprint].line.split(" on ")[0]
        for f in result.findings
    }
    assert who == {
        ("oai-demo", "properties.disableLocalAuth"): "changed by alice@contoso.com through Azure Portal",
        ("oai-demo", "properties.publicNetworkAccess"): "changed by alice@contoso.com through Azure Portal",
        ("aks-demo/system", "properties.nodeTaints"): "changed by alice@contoso.com through Azure Portal",
        (
            "ws-demo/train",
            "properties.properties.scaleSettings.minNodeCount",
        ): "changed by bob@contoso.com through Azure Portal",
    }
    added = result.drift.history.by_resource[f"{result.drift.added[0].id.lower()}"]
    assert added.line.split(" on ")[0] == "created by bob@contoso.com through CLI"
    assert emulator.writes() == [] and len(_changes_requests(emulator)) == 1
