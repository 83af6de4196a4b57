"""Undetermined only when it matters, and never decided on a guess: every input a rule reads,
flipped to Unknown one at a time (issue 37, item 3).

For each rule's fixture estate, in its what-if form (ARM bodies, every value known), the rule is
evaluated once on bodies that record every property it reads, on any resource: its own, or one it
looks up (a compute's workspace, a workspace's storage account, a connection). Then each value read,
present or absent, is replaced in turn by

- `Unknown`: a value that is set but not known before deploy (a Terraform value known after apply,
  an ARM expression that needs the deployment), and
- each concrete value of its domain: the original; every value any rule fixture gives the same
  property of the same resource type (list indices ignored); for a resource id, the id of every
  scanned resource of its type and of one that is not scanned; and, only to reach every branch,
  the one-word text constants of the rule's module and of `checks/_common.py` (the enum values it
  compares with), both booleans, and a few counts,

and the rule is evaluated on the whole estate again. Two properties must hold:

1. **Undetermined only when it matters.** If the Unknown leaves a resource undetermined that the
   original decided, then two concrete values give some resource different outcomes: a verdict
   would be a guess. An undetermined outcome counts as an outcome for a value a real input holds
   (the original, a fixture's, an id: for such a value the rule cannot decide either, as for an id
   naming a resource that was not scanned), not for a word tried only to reach a branch. Which
   resource carries the undetermined entry is the rule's choice: AZAI-111 puts it on the workspace
   whose storage account it cannot see.
2. **Never decided on a guess.** If the Unknown leaves nothing undetermined that the original
   decided, and not the flipped resource itself (which may carry the doubt for the others, as
   that workspace does), every concrete value gives every resource the findings the Unknown
   gave; and any finding reported beside an undetermined entry holds for every concrete value.

Findings compare by the property that decides them, not by severity: AZAI-101 reports a key
endpoint whose network access is unknown at the severity of a public one, by design.

The check is sound as far as its domains reach, and cheap (the whole catalog in seconds), not
complete: it flips one input at a time (a value that matters only jointly with another is not
seen); it leaves out names and ids of the resources themselves, which link resources rather than
decide (deployment-time names are item 1 of issue 37); a plain Unknown is never absent (a value
that may be null is `Unknown(may_be_null=True)`, which the rule fixtures cover); and live-only
rules have no fixture estate. Where a rule knowingly departs from the two properties, the flip is
listed in `ACCEPTED` with the reason.
"""

from __future__ import annotations

import ast
import copy
import dataclasses
import fnmatch
import importlib
import json
import re
from collections.abc import Iterable, Iterator
from functools import cache
from pathlib import Path
from typing import Any

import pytest

from scanner.engine.checkapi import Check, CheckContext, Pillar, Principle, Remediation, Severity, Violation, rule
from scanner.engine.evaluate import Evaluation, evaluate
from scanner.engine.registry import load_checks
from scanner.engine.setting_checks import require
from scanner.model.pricing import PriceBook
from scanner.model.resources import Inventory, Origin, Resource, parse_resource_id
from scanner.model.retirements import RetirementTable
from scanner.model.unknown import Unknown, known
from scanner.sources import load_file
from tests.conftest import FIXTURE_DATE, FIXTURES

# Each rule's estate, and the smaller ones beside it (fixtures/rules/AZAI-104/unscanned-workspace).
ESTATES = sorted([*(FIXTURES / "rules").glob("*/whatif.json"), *(FIXTURES / "rules").glob("*/*/whatif.json")])


def _rule_of(estate: Path) -> str:
    return str(json.loads((estate.parent / "expected.json").read_text())["rule"])


# Keys that name or place a resource rather than configure it: flipping them is issue 37's item 1.
IDENTITY_KEYS = frozenset({"id", "name", "type", "apiversion"})
COUNTS = (0, 1, 2, 3, 10, 100, 1000)
# A word a rule compares text with ("Disabled", "AmlCompute", "accessKey"), as its source spells it.
WORD = re.compile(r"^[A-Za-z][A-Za-z0-9_-]{0,40}$")
FLIPPED = "flipped by the test"

# (rule, flipped resource, property path; shell patterns): why the rule may depart from the two
# properties there. Each entry must still be needed: an entry nothing matches fails the test.
ACCEPTED: dict[tuple[str, str, str], str] = {
    # The flip's domain, not the rule: no fixture gives a private endpoint a list of manual
    # connections, so every value tried names nothing; an unknown list may name the account.
    ("AZAI-108", "pe-oai-private", "properties.manualPrivateLinkServiceConnections"): (
        "an unknown list of manual connections may name the account; the domain has no such list"
    ),
    # `forbid(path, None)` (scanner/engine/setting_checks.py) reads the value through known():
    # an Unknown that is set cannot be None, yet the cluster is undetermined. Proposed to the
    # engine's owner: pass an Unknown that is not may_be_null when only None is rejected.
    ("AZAI-113", "aks-*", "properties.aadProfile"): "setting_checks.forbid asks known() of a set Unknown",
    # One finding per kind of weakness points at the first weak entry of that kind: an earlier
    # entry whose setting is unknown may become the first, which moves the pointer (and the
    # fingerprint), not the finding.
    ("AZAI-114", "oai-chat/cf-threshold", "properties.contentFilters.0.*"): "the pointer moves, not the finding",
    ("AZAI-114", "oai-chat/cf-annotate", "properties.contentFilters.[0-4].*"): "the pointer moves, not the finding",
    # Whether a schedule still starts a serverless job is read by amljobs.scheduled_serverless_job
    # (scanner/model/amljobs.py), which asks isEnabled, endTime, the action and the compute one
    # after another through known(): an unknown one is undetermined even where a later one,
    # known, already says no. Proposed to its owner: decide the conjunction three-valued.
    ("AZAI-204", "ws-train/nightly-*", "properties.isEnabled"): "amljobs reads the conditions in order",
    ("AZAI-204", "ws-train/nightly-*", "properties.trigger.endTime"): "amljobs reads the conditions in order",
    ("AZAI-204", "ws-train/nightly-*", "properties.action.*"): "amljobs reads the conditions in order",
    ("AZAI-207", "mlw-train/*", "properties.isEnabled"): "amljobs reads the conditions in order",
    ("AZAI-207", "mlw-train/*", "properties.trigger.endTime"): "amljobs reads the conditions in order",
    ("AZAI-207", "mlw-train/*", "properties.action.*"): "amljobs reads the conditions in order",
    # runs_per_day (scanner/model/schedules.py) has no bound for a trigger with an unknown part;
    # a Day recurrence fires at most len(hours) x len(minutes) times a day whatever its interval
    # or days, which would pass a nightly schedule. Proposed to its owner.
    ("AZAI-207", "mlw-train/*", "properties.trigger.*"): "runs_per_day has no bound for an unknown part",
    # A connection names its Search service twice, by id and by endpoint; with one unknown the
    # other decides, while the flip tries ids that contradict the endpoint it keeps.
    ("AZAI-301", "*", "properties.metadata.ResourceId"): "the endpoint names the service as well",
    ("AZAI-305", "*", "properties.metadata.ResourceId"): "the endpoint names the service as well",
    ("AZAI-305", "*", "properties.target"): "the id names the service as well",
    # A workspace that names a hub is taken as a project whatever its kind
    # (Inventory.workspace_dependency, scanner/model/resources.py): only a project has a hub.
    ("AZAI-302", "proj-*", "kind"): "a workspace with a hub is a project",
}

# One outcome of a rule on one resource: the paths of its findings, or None when undetermined.
Outcome = frozenset[str] | None
UNDETERMINED: Outcome = None


class _Reading(dict[str, Any]):
    """A JSON object that writes down each key a rule asks of it, present or absent."""

    def __init__(self, data: dict[str, Any], prefix: str, log: set[str]) -> None:
        super().__init__(data)
        self.prefix = prefix
        self.log = log

    def _note(self, key: object) -> None:
        if isinstance(key, str):
            self.log.add(f"{self.prefix}.{key}" if self.prefix else key)

    def __contains__(self, key: object) -> bool:
        self._note(key)
        return super().__contains__(key)

    def __getitem__(self, key: str) -> Any:
        self._note(key)
        return super().__getitem__(key)

    def get(self, key: str, default: Any = None) -> Any:
        self._note(key)
        return super().get(key, default)


def _reading(value: Any, prefix: str, log: set[str]) -> Any:
    if isinstance(value, dict):
        inner = {k: _reading(v, f"{prefix}.{k}" if prefix else k, log) for k, v in value.items()}
        return _Reading(inner, prefix, log)
    if isinstance(value, list):
        return [_reading(v, f"{prefix}.{i}", log) for i, v in enumerate(value)]
    return value


@cache
def _prices() -> PriceBook:
    return PriceBook.load()


@cache
def _retirements() -> RetirementTable:
    return RetirementTable.load()


def _evaluate(check: Check, resources: Iterable[Resource]) -> Evaluation:
    return evaluate(Inventory(resources), [check], prices=_prices(), today=FIXTURE_DATE, retirements=_retirements())


def _outcomes(result: Evaluation) -> dict[str, Outcome]:
    """Each resource the rule judges: the paths of its findings, or UNDETERMINED."""
    found: dict[str, set[str]] = {r.name: set() for _, r in result.passed}
    for finding in result.findings:
        found.setdefault(finding.resource.name, set()).add(finding.violation.path.lower())
    outcomes: dict[str, Outcome] = {name: frozenset(paths) for name, paths in found.items()}
    for pair in result.undetermined:
        outcomes[pair.resource.name] = UNDETERMINED
    return outcomes


def _beside(result: Evaluation) -> dict[str, frozenset[str]]:
    """The findings a rule reports on resources it also leaves undetermined."""
    doubted = {u.resource.name for u in result.undetermined}
    found: dict[str, set[str]] = {}
    for finding in result.findings:
        if finding.resource.name in doubted:
            found.setdefault(finding.resource.name, set()).add(finding.violation.path.lower())
    return {name: frozenset(paths) for name, paths in found.items()}


def _declared(inventory: Inventory) -> list[Resource]:
    """The resources a source gave, without the agent pools the inventory derives from clusters."""
    return [r for r in inventory.resources if r.origin.path_rewrite is None]


def _reads(check: Check, resources: list[Resource]) -> list[tuple[Resource, str]]:
    """Each (declared resource, property path) the rule reads a value at: the innermost paths
    asked, mapped from a derived agent pool into its cluster's ``agentPoolProfiles``."""
    logs: dict[str, set[str]] = {r.name: set() for r in resources}
    recorded = [dataclasses.replace(r, body=_reading(copy.deepcopy(r.body), "", logs[r.name])) for r in resources]
    inventory = Inventory(recorded)
    for resource in inventory.resources:
        if resource.origin.path_rewrite is not None:
            logs[resource.name] = set()
            resource.body = _reading(dict(resource.body), "", logs[resource.name])
    for log in logs.values():
        log.clear()  # what building the inventory read is not what the rule reads
    evaluate(inventory, [check], prices=_prices(), today=FIXTURE_DATE, retirements=_retirements())
    by_name = {r.name: r for r in inventory.resources}
    declared = {r.name: r for r in resources}
    found: list[tuple[Resource, str]] = []
    for name, log in logs.items():
        resource = by_name[name]
        rewrite = resource.origin.path_rewrite
        for path in _innermost(log):
            if path.rsplit(".", 1)[-1].lower() in IDENTITY_KEYS:
                continue
            if rewrite is None:
                found.append((declared[name], path))
            elif path.lower().startswith(rewrite[0].lower()):
                cluster = inventory.parent(resource)
                assert cluster is not None
                found.append((declared[cluster.name], rewrite[1] + path[len(rewrite[0]) :]))
    return [(r, p) for r, p in found if not isinstance(_value(r.body, p), (dict, list))]


def _innermost(paths: set[str]) -> list[str]:
    ordered = sorted(paths)
    return [p for p in ordered if not any(q.startswith(p + ".") for q in ordered)]


def _value(body: Any, path: str) -> Any:
    for key in path.split("."):
        if isinstance(body, dict):
            body = body.get(key)
        elif isinstance(body, list) and key.isdigit() and int(key) < len(body):
            body = body[int(key)]
        else:
            return None
    return body


def _with(body: dict[str, Any], path: str, value: Any) -> dict[str, Any]:
    """A copy of ``body`` with ``value`` at ``path``, creating the objects on the way."""
    copied = copy.deepcopy(body)
    keys = path.split(".")
    target: Any = copied
    for key in keys[:-1]:
        if isinstance(target, list):
            target = target[int(key)]
            continue
        if not isinstance(target.get(key), (dict, list)):
            target[key] = {}
        target = target[key]
    if isinstance(target, list):
        target[int(keys[-1])] = value
    else:
        target[keys[-1]] = value
    return copied


def _swap(resources: list[Resource], target: Resource, path: str, value: Any) -> list[Resource]:
    return [dataclasses.replace(r, body=_with(r.body, path, value)) if r is target else r for r in resources]


def _shape(path: str) -> str:
    return ".".join("*" if key.isdigit() else key.lower() for key in path.split("."))


@cache
def _fixture_values() -> dict[tuple[str, str], tuple[Any, ...]]:
    """Every value the rule fixtures give each (type, property), objects and arrays included."""
    values: dict[tuple[str, str], dict[str, Any]] = {}

    def walk(type_key: str, value: Any, path: str) -> None:
        if path:
            values.setdefault((type_key, _shape(path)), {})[json.dumps(value, sort_keys=True)] = value
        if isinstance(value, dict):
            for key, inner in value.items():
                walk(type_key, inner, f"{path}.{key}" if path else key)
        elif isinstance(value, list):
            for index, inner in enumerate(value):
                walk(type_key, inner, f"{path}.{index}")

    for estate in ESTATES:
        for resource in load_file(estate, str(estate)).inventory.resources:
            walk(resource.type_key, resource.body, "")
    return {key: tuple(found.values()) for key, found in values.items()}


@cache
def _words(module: str) -> tuple[str, ...]:
    """The words a rule compares text with, in its module and in the helper modules it imports
    (``checks._common``, ``scanner.model.amljobs``): the one-word text constants in a comparison,
    in a call to `same_text`, `require` or `forbid`, or in an upper-case collection
    (``KEY_BY_DEFAULT``, ``SERVERLESS_COMPUTE``). Peer ids, slugs and messages are not values."""
    words: set[str] = set()
    tree = ast.parse(_source(module))
    helpers = {
        node.module
        for node in ast.walk(tree)
        if isinstance(node, ast.ImportFrom) and node.module and node.module.startswith(("checks.", "scanner.model."))
    }
    for source in [tree, *(ast.parse(_source(name)) for name in sorted(helpers))]:
        for node in ast.walk(source):
            if _compares(node):
                words.update(_constants(node))
    return tuple(sorted(words))


def _source(module: str) -> str:
    return Path(importlib.import_module(module).__file__ or "").read_text(encoding="utf-8")


def _compares(node: ast.AST) -> bool:
    if isinstance(node, ast.Compare):
        return True
    if isinstance(node, ast.Call):
        return isinstance(node.func, ast.Name) and node.func.id in ("same_text", "require", "forbid")
    if isinstance(node, ast.Assign):  # KINDS = ("OpenAI", "AIServices"), not CHECKOV = "Checkov"
        named = all(isinstance(t, ast.Name) and t.id.isupper() for t in node.targets)
        value = node.value
        collection = isinstance(value, ast.Call) and isinstance(value.func, ast.Name) and value.func.id == "frozenset"
        return named and (collection or isinstance(value, (ast.Tuple, ast.List, ast.Set)))
    return False


def _constants(node: ast.AST) -> Iterator[str]:
    for inner in ast.walk(node):
        if isinstance(inner, ast.Constant) and isinstance(inner.value, str) and WORD.match(inner.value):
            yield inner.value


def _domain(check: Check, resource: Resource, path: str, resources: list[Resource]) -> list[tuple[Any, bool]]:
    """The concrete values a flipped property is tried with, each with whether a real input holds
    it (the original, a fixture's, an id) rather than being tried only to reach a branch. A
    property that holds a resource id (one some input gives an id, or named ``...Id``/``...Uri``)
    is tried with the id of each scanned resource (of its type, when an input shows the type)
    and of one that is not scanned, and with the rule's words ("serverless"), but not with
    booleans or counts."""
    original = _value(resource.body, path)
    real: list[Any] = [original, *_fixture_values().get((resource.type_key, _shape(path)), ())]
    if path.lower().rsplit(".", 1)[-1] == "tags":  # the tags any fixture gives any resource
        real += [v for (_, shape), values in _fixture_values().items() if shape == "tags" for v in values]
    ids = [v for v in real if isinstance(v, str) and v.lower().startswith("/subscriptions/")]
    if ids or path.lower().endswith(("id", "uri")):
        types = {(parse_resource_id(i).resource_type or "").lower() for i in ids}
        wanted = types.pop() if len(types) == 1 else ""
        real += [r.id for r in resources if r.type_key == wanted or not wanted]
        real.append((ids[0] if ids else resources[0].id).rsplit("/", 1)[0] + "/not-scanned")
        return _unique([(v, True) for v in real] + [(v, False) for v in _words(check.module)])
    tried: list[Any] = []
    if path.lower().endswith("time"):  # a date-time: one long past, one far ahead
        tried += ["2000-01-01T00:00:00", "2999-01-01T00:00:00"]
    if original is None or isinstance(original, str):
        tried += _words(check.module)
    if original is None or isinstance(original, bool):
        tried += [True, False]
    elif isinstance(original, (int, float)):
        tried += list(COUNTS)
    return _unique([(v, True) for v in real] + [(v, False) for v in tried])


def _unique(values: list[tuple[Any, bool]]) -> list[tuple[Any, bool]]:
    """Each value once (the first mark wins), and never None: a plain Unknown is set."""
    unique: dict[str, tuple[Any, bool]] = {}
    for value, is_real in values:
        if value is not None:
            unique.setdefault(json.dumps(value, sort_keys=True), (value, is_real))
    return list(unique.values())


def problems(check: Check, resources: list[Resource], target: Resource, path: str) -> list[str]:
    """What is wrong with the rule's outcomes when ``path`` of ``target`` is not known."""
    original = _original(check, tuple(resources))
    result = _evaluate(check, _swap(resources, target, path, Unknown(FLIPPED)))
    flipped, beside = _outcomes(result), _beside(result)
    newly = {n for n, o in flipped.items() if o is None and not (n in original and original[n] is None)}
    # The flipped resource may carry the doubt for others (a workspace whose storage it cannot see).
    carried = bool(newly) or (target.name in flipped and flipped[target.name] is None)
    seen: dict[str, set[Outcome]] = {}
    found: dict[str, str] = {}  # one problem of each kind for each resource
    for value, real in _domain(check, target, path, resources):
        for name, outcome in _outcomes(_evaluate(check, _swap(resources, target, path, value))).items():
            if outcome is not None or real:
                seen.setdefault(name, set()).add(outcome)
            if outcome is None:
                continue
            guessed = flipped.get(name)
            if not carried and guessed is not None and guessed != outcome:
                found[f"guess {name}"] = (
                    f"'{name}' decided {sorted(guessed)} on a guess: {value!r} gives {sorted(outcome)}"
                )
            if not beside.get(name, frozenset()) <= outcome:
                found[f"beside {name}"] = f"'{name}' reported {sorted(beside[name])}, which {value!r} does not fail"
        if carried and not beside and _differs(seen):
            break  # it matters, and nothing else is left to check
    if newly and not _differs(seen):
        found["needless"] = f"undetermined {sorted(newly)}, yet every value tried gives the same outcome"
    return list(found.values())


def _differs(seen: dict[str, set[Outcome]]) -> bool:
    return any(len(outcomes) > 1 for outcomes in seen.values())


_ORIGINALS: dict[tuple[str, tuple[int, ...]], tuple[tuple[Resource, ...], dict[str, Outcome]]] = {}


def _original(check: Check, resources: tuple[Resource, ...]) -> dict[str, Outcome]:
    """The rule's outcomes on the estate as it is, once per estate. The cache holds the
    resources it is keyed by, so their ids cannot be reused while it does."""
    key = (check.id, tuple(id(r) for r in resources))
    if key not in _ORIGINALS:
        _ORIGINALS[key] = (resources, _outcomes(_evaluate(check, resources)))
    return _ORIGINALS[key][1]


@dataclasses.dataclass(frozen=True)
class Flip:
    check: Check
    estate: str  # the estate's folder under fixtures/rules: "AZAI-104/unscanned-workspace"
    resources: list[Resource]
    target: Resource
    path: str

    def __str__(self) -> str:
        return f"{self.path} of '{self.target.name}'"

    def accepted(self) -> tuple[str, str, str] | None:
        """The ACCEPTED entry that covers this flip, if any."""
        return next(
            (
                key
                for key in ACCEPTED
                if key[0] == self.check.id
                and fnmatch.fnmatchcase(self.target.name, key[1])
                and fnmatch.fnmatchcase(self.path, key[2])
            ),
            None,
        )

    def problems(self) -> list[str]:
        return problems(self.check, self.resources, self.target, self.path)


def _flips() -> Iterator[Flip]:
    checks = {c.id: c for c in load_checks()}
    for estate in ESTATES:
        check = checks[_rule_of(estate)]
        resources = _declared(load_file(estate, str(estate)).inventory)
        folder = estate.parent.relative_to(FIXTURES / "rules").as_posix()
        for target, path in _reads(check, resources):
            yield Flip(check, folder, resources, target, path)


FLIPS = list(_flips())
RULES = sorted({_rule_of(estate) for estate in ESTATES})


def _by_resource(flips: Iterable[Flip]) -> dict[str, list[Flip]]:
    """Flips by estate and flipped resource ("AZAI-114:oai-chat/cf-strict"): one test each, so
    that the test workers share a rule that reads many inputs (AZAI-114 reads about 300) instead
    of one worker evaluating all of them while the others wait."""
    groups: dict[str, list[Flip]] = {}
    for flip in flips:
        groups.setdefault(f"{flip.estate}:{flip.target.name}", []).append(flip)
    return groups


UNACCEPTED = _by_resource(flip for flip in FLIPS if flip.accepted() is None)


def test_every_rule_with_a_fixture_estate_reads_inputs_to_flip() -> None:
    assert {flip.check.id for flip in FLIPS} == set(RULES)


@pytest.mark.parametrize("flips", list(UNACCEPTED.values()), ids=list(UNACCEPTED))
def test_each_unknown_input_is_undetermined_exactly_when_it_matters(flips: list[Flip]) -> None:
    """Every flip that ACCEPTED does not cover keeps both properties."""
    wrong = [f"{flip}: {problem}" for flip in flips for problem in flip.problems()]
    assert not wrong, "\n".join(wrong)


@pytest.mark.parametrize("rule_id", sorted({key[0] for key in ACCEPTED}))
def test_each_accepted_departure_is_still_needed(rule_id: str) -> None:
    """A flip that ACCEPTED covers may break a property, for the reason given there; an entry
    whose flips (those it is the first entry to match) all keep both properties fails. One flip
    that breaks one shows the entry is needed: the others are not evaluated."""
    stale = [
        key
        for key in sorted(ACCEPTED)
        if key[0] == rule_id and not any(flip.problems() for flip in FLIPS if flip.accepted() == key)
    ]
    assert not stale, "\n".join(f"ACCEPTED{key} covers no flip that needs it any more" for key in stale)


# -- The harness itself, on rules written to break each property ------------------------------

STORAGE = "Microsoft.Storage/storageAccounts"


def _account(name: str, **properties: Any) -> Resource:
    return Resource(
        id=f"/subscriptions/s/resourceGroups/g/providers/{STORAGE}/{name}",
        type=STORAGE,
        name=name,
        body={"kind": "StorageV2", "properties": properties},
        origin=Origin("whatif", None),
    )


def _test_rule(function: Any) -> Check:
    return rule(
        id="TEST-001",
        slug="test-rule",
        title="A rule the harness judges",
        pillar=Pillar.SECURITY,
        severity=Severity.HIGH,
        resource_types=(STORAGE,),
        principle=Principle("Test.", "https://example.invalid"),
        remediation=Remediation("t", "b", "c"),
        help_uri="https://example.invalid",
    )(function)


def _needless(resource: Resource, ctx: CheckContext) -> Iterator[Violation]:
    """Reads the kind before the setting, although a locked account passes whatever its kind."""
    if known(resource.get("kind")) != "StorageV2":
        return
    yield from require(resource, "properties.allowSharedKeyAccess", False, message="keys")


def _guessing(resource: Resource, ctx: CheckContext) -> Iterator[Violation]:
    """Passes an unknown flag, since an Unknown is not ``True``."""
    if resource.get("properties.allowSharedKeyAccess") is not False and resource.get("properties.x") is True:
        yield Violation("keys", "properties.allowSharedKeyAccess", None, "false")


def _sound(resource: Resource, ctx: CheckContext) -> Iterator[Violation]:
    """The setting alone decides, and an unknown setting is undetermined."""
    yield from require(resource, "properties.allowSharedKeyAccess", False, message="keys")


def test_the_harness_catches_a_needless_undetermined_and_a_guess_and_passes_a_sound_rule() -> None:
    locked = _account("locked", allowSharedKeyAccess=False, x=True)
    shared = _account("shared", allowSharedKeyAccess=True, x=True)
    estate = [locked, shared]
    assert problems(_test_rule(_needless), estate, locked, "kind") == [
        "undetermined ['locked'], yet every value tried gives the same outcome"
    ]
    guess = problems(_test_rule(_guessing), estate, shared, "properties.x")
    assert guess == ["'shared' decided [] on a guess: True gives ['properties.allowsharedkeyaccess']"]
    sound = _test_rule(_sound)
    assert [problems(sound, estate, r, "properties.allowSharedKeyAccess") for r in estate] == [[], []]
