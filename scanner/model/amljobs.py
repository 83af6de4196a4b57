"""Azure Machine Learning job definitions: whether one runs on serverless compute, on what, for
how long at most, and on which tier.

The same ``JobBase`` object is a job's ``properties`` (``workspaces/jobs``) and a schedule's
``properties.action.jobDefinition`` (``CreateJob``), so the schedule and job rules read both
through here. Facts are from the 2025-12-01 REST spec (``mfe.json``) and Microsoft Learn's
"Model training on serverless compute":

- "When ``compute`` isn't specified for a job, the job runs on serverless compute": an absent or
  empty ``computeId``. A pipeline chooses with ``settings.default_compute`` (``serverless`` or
  ``azureml:serverless``); its steps' own compute is untyped in the spec and not read.
- Size and node count are ``resources.instanceType``/``instanceCount`` (``instanceCount``
  defaults to 1), under ``trial.resources`` for a sweep. Without ``instanceType`` Azure picks a
  CPU VM "based on quota, performance, cost, and disk size": no price can be named.
- ``queueSettings.jobTier`` is ``Spot`` (low priority) or ``Standard`` (dedicated), "the default
  is Standard"; ``Basic`` and ``Premium`` are in the enum, undocumented, and not Spot.
"""

from __future__ import annotations

import datetime as dt
import math
from datetime import timedelta
from typing import Any

from scanner.model.durations import parse_duration
from scanner.model.resources import Resource, get_path
from scanner.model.unknown import Unknown, UnknownValueError, known

SERVERLESS_COMPUTE = frozenset({"serverless", "azureml:serverless"})
SPOT_TIER = "spot"
# The spec's "not set" value, which the service takes as its default tier (Standard).
UNSET_TIER = "null"


def is_serverless(definition: Any) -> bool:
    """Whether a job definition runs on serverless compute; Unknown when it cannot be told."""
    definition = known(definition)
    if not isinstance(definition, dict):
        raise UnknownValueError(Unknown("the job definition is not an object"))
    if str(known(get_path(definition, "jobType")) or "").lower() == "pipeline":
        settings = known(get_path(definition, "settings"))
        default = known(get_path(settings, "default_compute") or get_path(settings, "defaultCompute"))
        if not isinstance(default, str) or not default:
            raise UnknownValueError(
                Unknown("a pipeline without a default compute runs each step on its own compute (not read)")
            )
        return default.lower() in SERVERLESS_COMPUTE
    compute = known(get_path(definition, "computeId"))
    return not compute or (isinstance(compute, str) and compute.lower() in SERVERLESS_COMPUTE)


def _resource(definition: dict[str, Any], key: str) -> Any:
    """One of the job's ``resources`` (a sweep's are its trial's), through `known`."""
    kind = str(known(get_path(definition, "jobType")) or "").lower()
    return known(get_path(definition, f"{'trial.resources' if kind == 'sweep' else 'resources'}.{key}"))


def instance_type(definition: dict[str, Any]) -> str | None:
    """The VM size it asks for, or None when Azure chooses."""
    size = _resource(definition, "instanceType")
    if size is None or size == "":
        return None
    if not isinstance(size, str):
        raise UnknownValueError(Unknown(f"instanceType is {size!r}, not a VM size"))
    return size


def instance_count(definition: dict[str, Any]) -> float:
    """Its nodes: ``instanceCount``, 1 when unset."""
    count = _resource(definition, "instanceCount")
    count = 1 if count is None else count
    if isinstance(count, bool) or not isinstance(count, (int, float)) or not math.isfinite(count) or count < 1:
        raise UnknownValueError(Unknown(f"instanceCount {count!r} is not a positive number"))
    return float(count)


def job_tier(definition: dict[str, Any]) -> str:
    """``queueSettings.jobTier`` lower-case, ``standard`` when unset (the documented default)."""
    tier = known(get_path(definition, "queueSettings.jobTier"))
    if tier is None or (isinstance(tier, str) and tier.lower() in ("", UNSET_TIER)):
        return "standard"
    if not isinstance(tier, str):
        raise UnknownValueError(Unknown(f"jobTier is {tier!r}, not a tier"))
    return tier.lower()


def timeout(definition: dict[str, Any]) -> timedelta | None:
    """``limits.timeout``, the longest a run may take, when the definition sets one."""
    parsed = parse_duration(known(get_path(definition, "limits.timeout")))
    return parsed if parsed and parsed.total_seconds() > 0 else None


def scheduled_serverless_job(schedule: Resource, today: dt.date) -> dict[str, Any] | None:
    """The job definition a schedule starts on serverless compute, while the schedule still
    fires: enabled (``isEnabled`` defaults to true) and not past its trigger's ``endTime``.
    None for anything else (batch endpoint invocations, monitors, jobs on a cluster)."""
    if known(schedule.get("properties.isEnabled", True)) is False or _ended(schedule, today):
        return None
    action = known(schedule.get("properties.action"))
    if not isinstance(action, dict) or str(known(action.get("actionType", ""))).lower() != "createjob":
        return None
    definition = known(action.get("jobDefinition"))
    return definition if is_serverless(definition) else None


def _ended(schedule: Resource, today: dt.date) -> bool:
    end = known(schedule.get("properties.trigger.endTime"))
    if not isinstance(end, str) or not end:
        return False
    try:
        return dt.date.fromisoformat(end[:10]) < today
    except ValueError:
        raise UnknownValueError(Unknown(f"endTime {end!r} is not a date", path="properties.trigger.endTime")) from None
