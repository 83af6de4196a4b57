"""Container Apps on serverless GPUs: which workload profile an app runs on, and how many
replicas it keeps running.

An app names a profile (``properties.workloadProfileName``) among its environment's
``properties.workloadProfiles`` entries (``{name, workloadProfileType}``); the serverless GPU
types are ``Consumption-GPU-NC24-A100`` and ``Consumption-GPU-NC8as-T4``, one GPU per replica
("Multi and fractional GPU replicas aren't supported", serverless GPU overview). An app without
a profile name runs on the environment's plain Consumption profile. ``template.scale.minReplicas``
has no default in the REST spec; the service applies 0 (scale to zero), and azurerm sends it only
when it is not 0.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

from scanner.model.resources import Resource
from scanner.model.unknown import Unknown, UnknownValueError, known

SERVERLESS_GPU_PREFIX = "consumption-gpu-"
MIN_REPLICAS = "properties.template.scale.minReplicas"


def min_replicas(app: Resource) -> float:
    """The replicas the app never scales below (0 when unset)."""
    value = known(app.get(MIN_REPLICAS, 0))
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value) or value < 0:
        raise UnknownValueError(Unknown(f"minReplicas is {value!r}, not a number of replicas", path=MIN_REPLICAS))
    return float(value)


Find = Callable[[Any], Resource | None]


def environment(app: Resource, find: Find) -> Resource | None:
    """The app's Container Apps environment, when the scanned estate holds it (``find`` looks a
    resource up by id, as `Inventory.get` does)."""
    references = (app.get("properties.managedEnvironmentId"), app.get("properties.environmentId"))
    for reference in references:
        known(reference)
        found = find(reference) if isinstance(reference, str) else None
        if found is not None:
            return found
    return None


def serverless_gpu_profile(app: Resource, find: Find) -> str | None:
    """The serverless GPU profile type the app runs on (``Consumption-GPU-NC24-A100``), None when
    it runs on anything else; raises through `known` when that cannot be told."""
    name = known(app.get("properties.workloadProfileName"))
    if not isinstance(name, str) or not name:
        return None  # the environment's Consumption profile
    env = environment(app, find)
    if env is None:
        raise UnknownValueError(
            Unknown("the app's environment is not in the scanned estate, so its profile type is not known")
        )
    profiles = known(env.get("properties.workloadProfiles"))
    for profile in profiles if isinstance(profiles, list) else []:
        if isinstance(profile, dict) and str(known(profile.get("name", ""))).lower() == name.lower():
            kind = known(profile.get("workloadProfileType"))
            return kind if isinstance(kind, str) and kind.lower().startswith(SERVERLESS_GPU_PREFIX) else None
    raise UnknownValueError(
        Unknown(f"the environment has no workload profile named {name!r}", path="properties.workloadProfileName")
    )
