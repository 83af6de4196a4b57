"""The helpers that let a rule ask an unknown only when it matters (checks/_common.py):
`either` (three-valued "or"), `judged_if` (a rule's applicability asked last), `has_tag` on
unknown tags, and `unlinked` (a reference that may name a resource)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from checks._common import either, has_tag, judged_if, unlinked
from scanner.engine.checkapi import CheckContext, Violation
from scanner.model import azure_types as T
from scanner.model.resources import Inventory, Origin, Resource
from scanner.model.unknown import Unknown, UnknownValueError, known

GROUP = "/subscriptions/s/resourceGroups/g/providers"


def _unknown() -> bool:
    return bool(known(Unknown("not known before deploy")))


def _never() -> bool:
    raise AssertionError("asked although the answer cannot matter")


def _fails() -> Iterator[Violation]:
    yield Violation("fails", "properties.x", True, "false")


def _passes() -> Iterator[Violation]:
    yield from ()


def _fails_then_unknown() -> Iterator[Violation]:
    yield Violation("fails", "properties.x", True, "false")
    known(Unknown("not known before deploy", path="properties.y"))


def test_either_is_true_as_soon_as_one_condition_is_known_to_hold() -> None:
    assert either(_unknown, lambda: True) is True
    assert either(lambda: False, lambda: False) is False
    with pytest.raises(UnknownValueError):
        either(lambda: False, _unknown)


def test_judged_if_asks_whether_the_rule_applies_only_when_something_fails_or_is_unknown() -> None:
    assert list(judged_if(_never, _passes())) == []
    assert [v.path for v in judged_if(lambda: True, _fails(), _passes())] == ["properties.x"]
    assert list(judged_if(lambda: False, _fails())) == []
    with pytest.raises(UnknownValueError):  # it may not apply: its failure is not reported
        list(judged_if(_unknown, _fails()))


def test_judged_if_reports_failures_beside_an_unknown_once_the_rule_applies() -> None:
    reported: list[str] = []
    with pytest.raises(UnknownValueError) as raised:
        reported.extend(v.path for v in judged_if(lambda: True, _fails_then_unknown()))
    assert reported == ["properties.x"] and raised.value.path == "properties.y"
    assert list(judged_if(lambda: False, _fails_then_unknown())) == []


def _app(tags: Any) -> Resource:
    body = {"tags": tags, "properties": {}}
    return Resource(f"{GROUP}/Microsoft.App/containerApps/app", T.CONTAINER_APP, "app", body, Origin("arm", None))


def _context(*resources: Resource) -> CheckContext:
    return CheckContext(
        inventory=Inventory(resources), options={"marker_tag": "workload", "marker_values": ["inference"]}
    )


@pytest.mark.parametrize(
    ("tags", "marked"),
    [
        ({"workload": "inference"}, True),
        ({"workload": "web"}, False),
        ({}, False),
        (Unknown("tags from a module output"), None),
        ({"workload": Unknown("a parameter")}, None),
        ({"workload": Unknown("a parameter"), "Workload": "Inference"}, True),
    ],
)
def test_has_tag_is_unknown_only_when_no_known_tag_answers(tags: Any, marked: bool | None) -> None:
    app = _app(tags)
    if marked is None:
        with pytest.raises(UnknownValueError):
            has_tag(app, _context(app), "marker_tag", "marker_values")
    else:
        assert has_tag(app, _context(app), "marker_tag", "marker_values") is marked


def test_unlinked_names_a_reference_that_is_not_known_before_deploy() -> None:
    path = "properties.targetResourceUri"

    def setting(name: str, target: Any) -> Resource:
        body = {"properties": {"targetResourceUri": target}}
        return Resource(
            f"{GROUP}/Microsoft.Insights/autoscalesettings/{name}", T.AUTOSCALE_SETTING, name, body, Origin("arm", None)
        )

    known_target = setting("known", f"{GROUP}/Microsoft.Compute/virtualMachineScaleSets/vmss")
    assert unlinked(_context(known_target), T.AUTOSCALE_SETTING, path) is None
    doubt = unlinked(_context(known_target, setting("later", Unknown("a module output"))), T.AUTOSCALE_SETTING, path)
    assert doubt is not None
    assert doubt.reason == f"{path} of 'later' is not known before deploy: it may name this resource"
