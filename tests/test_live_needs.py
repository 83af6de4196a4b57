"""A live scan reads what its selected rules declare, and no more.

The rules' declarations (`reads=` in `@rule`) become a `LiveNeeds` (`live_needs`), and the
collector derives from it the Resource Graph types, the child lists and the per-resource reads.
These tests drive the real azure-mgmt clients against the project's ARM emulator and count what
it receives, through the collector and through a whole scan.
"""

from __future__ import annotations

import collections
import dataclasses
import time
from collections.abc import Callable, Iterable

import pytest

from scanner.emulator.estate import Estate, demo_estate_path
from scanner.emulator.server import Emulator
from scanner.engine.checkapi import Check
from scanner.engine.evaluate import evaluate
from scanner.engine.registry import every_live_read, find_check, live_needs, load_checks
from scanner.model import azure_types as T
from scanner.model.needs import LiveNeeds, LiveRead, ReadSubject
from scanner.model.resources import Inventory
from scanner.pipeline.scan import ScanRequest, run_scan
from scanner.sources.live.clients import ClientFactory
from scanner.sources.live.collect import (
    LiveInventory,
    LiveScope,
    Progress,
    collect_live,
    collected_types,
    graph_types,
)
from tests.conftest import FIXTURES
from tests.live_estates import estate_from_whatif

CHECKS = load_checks()
LIVE_RULES = sorted(c.id for c in CHECKS if "live" in c.sources)
EVERYTHING = every_live_read(CHECKS)


def selected(*ids: str) -> list[Check]:
    return [c for c in CHECKS if c.id in ids]


def collect(emulator: Emulator, needs: LiveNeeds) -> tuple[LiveInventory, list[str]]:
    """One live collection, and the paths the emulator received for it (the token excepted)."""
    emulator.log.clear()
    factory = ClientFactory("AzureCloud", emulator.endpoint)
    try:
        inventory = collect_live(LiveScope(all_subscriptions=True), factory, Progress(False), needs=needs)
    finally:
        factory.close()
    # The emulator logs a request after it has answered it: wait for the last one to land.
    deadline = time.monotonic() + 5
    while len(_paths(emulator)) < inventory.requests and time.monotonic() < deadline:
        time.sleep(0.01)
    return inventory, _paths(emulator)


def _paths(emulator: Emulator) -> list[str]:
    return [r.path.lower() for r in list(emulator.log) if r.path != "/msi/token"]


def kind_of(path: str) -> str:
    """What a request read, by its path."""
    if path.endswith("/providers/microsoft.insights/diagnosticsettings"):
        return "diagnostic-settings"
    if path.endswith("/providers/microsoft.insights/metrics"):
        return "metrics"
    if "/environments/" in path:
        return "environment-versions"
    if path.endswith("/providers/microsoft.resourcegraph/resources"):
        return "resource-graph"
    return path.rsplit("/", 1)[-1]  # a child list (computes, agentpools, ...) or the subscriptions


def kinds(paths: Iterable[str]) -> collections.Counter[str]:
    return collections.Counter(kind_of(p) for p in paths)


PER_RESOURCE = {"diagnostic-settings", "environment-versions", "metrics"}


def fixture_estate(rule: str) -> Estate:
    return estate_from_whatif(FIXTURES / "rules" / rule / "whatif.json")


# Estates on which every per-resource read happens: the demo (diagnostic settings, metrics),
# AZAI-501's (accounts of several kinds and Search services) and AZAI-503's (environments).
ESTATES: dict[str, Callable[[], Estate]] = {
    "demo": lambda: Estate.load(demo_estate_path()),
    "AZAI-501": lambda: fixture_estate("AZAI-501"),
    "AZAI-503": lambda: fixture_estate("AZAI-503"),
}


def test_a_rule_that_declares_no_read_costs_no_per_resource_request(serve) -> None:  # type: ignore[no-untyped-def]
    """--select AZAI-101: no diagnostic settings, environment versions or metrics are read;
    with every rule, each of them is."""
    for name in ("demo", "AZAI-503"):
        emulator = serve(ESTATES[name]())
        _, every = collect(emulator, live_needs(CHECKS))
        _, alone = collect(emulator, live_needs(selected("AZAI-101")))
        assert not PER_RESOURCE & set(kinds(alone)), kinds(alone)
        assert len(alone) < len(every)
    demo = serve(ESTATES["demo"]())
    _, every = collect(demo, live_needs(CHECKS))
    assert {"diagnostic-settings", "metrics"} <= set(kinds(every))
    environments = serve(ESTATES["AZAI-503"]())
    _, every = collect(environments, live_needs(CHECKS))
    assert kinds(every)["environment-versions"] == 6


def test_each_per_resource_read_is_made_only_for_the_rule_that_declares_it(serve) -> None:  # type: ignore[no-untyped-def]
    emulator = serve(ESTATES["demo"]())
    for rule, read in (("AZAI-501", "diagnostic-settings"), ("AZAI-202", "metrics")):
        _, paths = collect(emulator, live_needs(selected(rule)))
        assert PER_RESOURCE & set(kinds(paths)) == {read}, (rule, kinds(paths))
    emulator = serve(ESTATES["AZAI-503"]())
    _, paths = collect(emulator, live_needs(selected("AZAI-503")))
    assert PER_RESOURCE & set(kinds(paths)) == {"environment-versions"}
    emulator = serve(ESTATES["AZAI-501"]())
    _, paths = collect(emulator, live_needs(selected("AZAI-501")))
    logged = [p for p in paths if kind_of(p) == "diagnostic-settings"]
    # the two workspaces, the three accounts whatever their kind (Speech too) and the two Search services
    assert len(logged) == 7 and [p for p in logged if "/accounts/speech/" in p]
    assert len([p for p in logged if "/microsoft.search/searchservices/" in p]) == 2


@pytest.mark.parametrize("name", sorted(ESTATES))
def test_every_rule_selected_sends_the_requests_a_scan_always_sent(serve, name: str) -> None:  # type: ignore[no-untyped-def]
    """Every rule selected reads what a snapshot or a drift audit reads (`every_live_read`: every
    known type), request for request, and collects the same estate: the rules declare it all."""
    emulator = serve(ESTATES[name]())
    default, default_paths = collect(emulator, EVERYTHING)
    derived, derived_paths = collect(emulator, live_needs(CHECKS))
    assert collections.Counter(derived_paths) == collections.Counter(default_paths)
    assert [(r.id, r.body) for r in derived.resources] == [(r.id, r.body) for r in default.resources]
    assert derived.utilization == default.utilization and derived.sizes.extra_gpu == default.sizes.extra_gpu
    assert collected_types(live_needs(CHECKS)) >= collected_types(EVERYTHING)


def test_resource_graph_and_child_lists_follow_the_selected_rules(serve) -> None:  # type: ignore[no-untyped-def]
    """AZAI-303 reads agent pools: Resource Graph is asked for clusters only (the pools are
    listed per cluster), and no workspace child is listed."""
    assert graph_types(collected_types(live_needs(selected("AZAI-303")))) == [T.MANAGED_CLUSTER.lower()]
    emulator = serve(ESTATES["demo"]())
    inventory, paths = collect(emulator, live_needs(selected("AZAI-303")))
    assert kinds(paths) == {"subscriptions": 1, "resource-graph": 1, "agentpools": 1}
    assert {r.type for r in inventory.resources} == {T.MANAGED_CLUSTER, T.AGENT_POOL}
    # a deployment rule needs its endpoint listed, and the workspace that lists it discovered
    needs = live_needs(selected("AZAI-401"))
    collected = collected_types(needs)
    assert {T.ONLINE_ENDPOINT.lower(), T.WORKSPACE.lower(), T.AUTOSCALE_SETTING.lower()} <= collected
    assert graph_types(collected) == [T.WORKSPACE.lower(), T.AUTOSCALE_SETTING.lower()]
    inventory, paths = collect(emulator, needs)
    assert set(kinds(paths)) == {"subscriptions", "resource-graph", "onlineendpoints", "deployments"}


def test_rules_that_read_nothing_live_send_no_resource_graph_query(serve) -> None:  # type: ignore[no-untyped-def]
    emulator = serve(ESTATES["demo"]())
    inventory, paths = collect(emulator, live_needs([c for c in CHECKS if "drift" in c.sources]))
    assert kinds(paths) == {"subscriptions": 1} and inventory.resources == [] and not inventory.coverage


def test_a_rule_that_does_not_declare_its_reads_gets_every_type_but_no_per_resource_read() -> None:
    """A plug-in rule without ``reads=`` may look up anything: it is collected every type,
    conservatively, and no per-resource read. Declared, AZAI-101 needs only its own types."""
    declared = selected("AZAI-101")[0]
    undeclared = dataclasses.replace(declared, reads=(), reads_declared=False)
    needs = live_needs([undeclared])
    assert needs.every_type and not needs.reads
    assert graph_types(collected_types(needs)) == graph_types(collected_types(EVERYTHING))
    assert set(graph_types(collected_types(live_needs([declared])))) == {
        T.WORKSPACE.lower(),
        T.COGNITIVE_ACCOUNT.lower(),
        T.CONTAINER_APP.lower(),
        T.CONTAINER_APP_ENVIRONMENT.lower(),
    }


RULE_ESTATES = [
    *(pytest.param(rule, rule, id=rule) for rule in LIVE_RULES if (FIXTURES / "rules" / rule).is_dir()),
    *(pytest.param(rule, "demo", id=f"{rule}-demo") for rule in LIVE_RULES),
]


@pytest.mark.parametrize(("rule", "estate"), RULE_ESTATES)
def test_a_rule_judges_what_is_collected_for_it_alone_as_it_judges_everything(serve, rule: str, estate: str) -> None:  # type: ignore[no-untyped-def]
    """What a rule declares is enough: on its fixture estate and on the demo estate, it fails,
    passes and leaves undetermined the same resources, with the same evidence and cost, as on
    the full collection."""
    check = find_check(CHECKS, rule)
    assert check is not None
    emulator = serve(Estate.load(demo_estate_path()) if estate == "demo" else fixture_estate(estate))
    verdicts = []
    for needs in (live_needs(CHECKS), live_needs([check])):
        inventory, _ = collect(emulator, needs)
        evaluation = evaluate(Inventory(inventory.resources), [check], {}, inventory.utilization, None, inventory.sizes)
        findings = [
            (f.resource.id, f.violation.path, f.violation.message, repr(f.violation.cost)) for f in evaluation.findings
        ]
        verdicts.append(
            (
                sorted(findings),
                sorted(u.resource.id for u in evaluation.undetermined),
                sorted(r.id for _, r in evaluation.passed),
            )
        )
    assert verdicts[0] == verdicts[1]


def test_needs_come_from_declarations() -> None:
    diagnostic = find_check(CHECKS, "AZAI-501")
    assert diagnostic is not None and diagnostic.reads == (LiveRead.DIAGNOSTIC_SETTINGS,)
    assert T.DIAGNOSTIC_SETTING in diagnostic.reads  # a member is named by the ARM type it reads
    needs = live_needs([diagnostic])
    assert needs.wants(LiveRead.DIAGNOSTIC_SETTINGS, T.COGNITIVE_ACCOUNT, "OpenAI")
    # Azure Policy 1b4d1c4e audits accounts of every kind, and Search services
    assert needs.wants(LiveRead.DIAGNOSTIC_SETTINGS, T.COGNITIVE_ACCOUNT, "SpeechServices")
    assert needs.wants(LiveRead.DIAGNOSTIC_SETTINGS, T.COGNITIVE_ACCOUNT, None)
    assert needs.wants(LiveRead.DIAGNOSTIC_SETTINGS, T.SEARCH_SERVICE)
    assert needs.wants(LiveRead.DIAGNOSTIC_SETTINGS, T.WORKSPACE.upper())
    assert not needs.wants(LiveRead.DIAGNOSTIC_SETTINGS, T.KEY_VAULT)
    assert not needs.every_type and needs.reads == {LiveRead.DIAGNOSTIC_SETTINGS}
    # an ARM type that names a read is that read, in a Check built without the decorator too
    legacy = dataclasses.replace(diagnostic, reads=(T.DIAGNOSTIC_SETTING.lower(),))
    assert live_needs([legacy]) == needs
    # drift rules judge pairs of inventories: they ask nothing of a live scan
    drift = [c for c in CHECKS if "drift" in c.sources]
    assert drift and live_needs(drift) == LiveNeeds()
    # the five reads, and a subject narrowed to kinds
    assert {r.value for r in LiveRead} == {
        T.DIAGNOSTIC_SETTING,
        T.ENVIRONMENT_VERSION,
        "Microsoft.Insights/metrics",
        "Microsoft.CognitiveServices/accounts/models",
        T.ML_JOB,
    }
    subject = ReadSubject(LiveRead.METRICS, T.COMPUTE.lower())
    assert subject.covers(T.COMPUTE, None) and not subject.covers(T.VIRTUAL_MACHINE, None)


def test_declared_reads_are_known_to_the_collector() -> None:
    """Every built-in live rule declares what it reads, and every type it names is one the
    collector can bring."""
    assert [c.id for c in CHECKS if "live" in c.sources and not c.reads_declared] == []
    everything = collected_types(EVERYTHING)
    for check in CHECKS:
        if "live" in check.sources:
            named = {t.lower() for t in (*check.resource_types, *check.reads) if not isinstance(t, LiveRead)}
            assert named <= everything | {T.ENVIRONMENT_VERSION.lower(), T.REGISTRY_ENVIRONMENT_VERSION.lower()}, (
                check.id
            )


def test_a_scan_with_select_sends_fewer_requests_unless_it_saves_a_snapshot(serve, tmp_path) -> None:  # type: ignore[no-untyped-def]
    """``--select`` narrows what a live scan reads; ``--save-inventory`` reads everything, since a
    later drift run may compare any type. Judged on what the emulator received."""
    emulator = serve(ESTATES["demo"]())

    def requests(**request: object) -> tuple[int, set[str]]:
        emulator.log.clear()
        live = LiveScope(all_subscriptions=True)
        result = run_scan(ScanRequest(live=live, arm_endpoint=emulator.endpoint, fail_on="none", **request))  # type: ignore[arg-type]
        return result.live_requests, {f.check.id for f in result.findings}

    everything, all_rules = requests()
    narrowed, found = requests(select=["AZAI-101"])
    saved, _ = requests(select=["AZAI-101"], save_inventory=str(tmp_path / "snapshot.json"))
    assert found == {"AZAI-101"} and "AZAI-101" in all_rules
    assert narrowed < everything and saved == everything


def test_kinds_narrow_reads_whatever_their_case() -> None:
    """A `Check` built without `@rule` may name kinds in ARM's own case (``OpenAI``)."""
    diagnostic = selected("AZAI-501")[0]
    mixed = dataclasses.replace(diagnostic, kinds={T.COGNITIVE_ACCOUNT: frozenset({"OpenAI"})})
    needs = live_needs([mixed])
    assert needs.wants(LiveRead.DIAGNOSTIC_SETTINGS, T.COGNITIVE_ACCOUNT, "openai")
    assert not needs.wants(LiveRead.DIAGNOSTIC_SETTINGS, T.COGNITIVE_ACCOUNT, "SpeechServices")


def test_content_filters_are_listed_only_for_accounts_whose_deployments_name_one(serve) -> None:  # type: ignore[no-untyped-def]
    """The demo's deployments name Microsoft.Nil and Microsoft.DefaultV2, built-in policies: its
    accounts' content filters are not listed. AZAI-114's estate names custom ones: they are."""
    demo = serve(Estate.load(demo_estate_path()))
    _, paths = collect(demo, live_needs(CHECKS))
    assert [p for p in paths if p.endswith("/deployments")] and not [p for p in paths if p.endswith("/raipolicies")]
    filters = serve(estate_from_whatif(FIXTURES / "rules" / "AZAI-114" / "whatif.json"))
    _, paths = collect(filters, live_needs(CHECKS))
    assert [p for p in paths if p.endswith("/raipolicies")]
