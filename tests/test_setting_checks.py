"""`require` and `forbid`, the declared single-property checks: how they read a value."""

from __future__ import annotations

from typing import Any

import pytest

from scanner.engine.checkapi import Severity
from scanner.engine.setting_checks import forbid, require
from scanner.model.resources import Origin, Resource
from scanner.model.unknown import Unknown, UnknownValueError

ID = "/subscriptions/s/resourceGroups/g/providers/Microsoft.Storage/storageAccounts/st"


def account(**properties: Any) -> Resource:
    body = {"properties": properties}
    return Resource(id=ID, type="Microsoft.Storage/storageAccounts", name="st", body=body, origin=Origin("arm", None))


def test_require_passes_only_the_accepted_values_as_arm_compares_them() -> None:
    def fails(value: Any = None, **present: Any) -> bool:
        resource = account(publicNetworkAccess=value) if not present else account(**present)
        return bool(list(require(resource, "properties.publicNetworkAccess", "Disabled", message="open")))

    assert not fails("Disabled") and not fails("disabled")  # enum text is case-insensitive
    assert fails("Enabled") and fails(other=1)  # absent fails unless None is accepted
    assert not list(require(account(flag=True), "properties.flag", True, message="m"))
    assert list(require(account(flag=1), "properties.flag", True, message="m"))  # 1 is not true


def test_a_violation_carries_the_value_seen_what_passes_and_the_severity() -> None:
    [violation] = require(account(allowSharedKeyAccess=True), "properties.allowSharedKeyAccess", False, message="keys")
    assert (violation.message, violation.path, violation.observed, violation.expected, violation.severity) == (
        "keys",
        "properties.allowSharedKeyAccess",
        True,
        "false",
        None,
    )
    [absent] = forbid(
        account(), "properties.policy", None, "none", message="m", expected="azure", severity=Severity.LOW
    )
    assert (absent.observed, absent.expected, absent.severity) == (None, "azure", Severity.LOW)
    assert not list(forbid(account(policy="azure"), "properties.policy", None, "none", message="m", expected="azure"))
    assert list(forbid(account(policy="None"), "properties.policy", None, "none", message="m", expected="azure"))


@pytest.mark.parametrize("check", [require, forbid])
def test_an_unknown_value_is_undetermined_never_passed(check: Any) -> None:
    resource = account(publicNetworkAccess=Unknown("known after apply"))
    with pytest.raises(UnknownValueError):
        list(check(resource, "properties.publicNetworkAccess", "Disabled", message="m", expected="Disabled"))
