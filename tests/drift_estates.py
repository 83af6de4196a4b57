"""Two versions of the demo estate for drift tests: BASE as reviewed, CURRENT after portal edits.

Between them: an endpoint switched to key auth, a GPU pool's taint removed, a node pool added
with `az aks nodepool add`, a cluster's minimum nodes raised, local auth re-enabled on the
OpenAI account; and noise that must not count: provisioning states, etags, system data,
the case of ids and locations.
"""

from __future__ import annotations

import copy
from typing import Any

from scanner.emulator.estate import Estate, demo_estate_path

POOL = "Microsoft.ContainerService/managedClusters/agentPools"


def _by_name(resources: list[dict[str, Any]], name: str) -> dict[str, Any]:
    return next(r for r in resources if r["name"] == name)


def base_estate() -> Estate:
    estate = Estate.load(demo_estate_path())
    resources = copy.deepcopy(estate.resources)
    _by_name(resources, "score")["properties"]["authMode"] = "AADToken"
    gpu = _by_name(resources, "gpu")
    gpu["properties"]["nodeTaints"] = ["sku=gpu:NoSchedule"]
    cluster = _by_name(resources, "aks-demo")
    next(p for p in cluster["properties"]["agentPoolProfiles"] if p["name"] == "gpu")["nodeTaints"] = [
        "sku=gpu:NoSchedule"
    ]
    _by_name(resources, "train")["properties"]["properties"]["scaleSettings"]["minNodeCount"] = 0
    _by_name(resources, "oai-demo")["properties"]["disableLocalAuth"] = True
    return Estate(estate.subscriptions, resources, metrics=estate.metrics)


def current_estate() -> Estate:
    base = base_estate()
    resources = copy.deepcopy(base.resources)
    _by_name(resources, "score")["properties"]["authMode"] = "Key"
    gpu = _by_name(resources, "gpu")
    gpu["properties"]["nodeTaints"] = []
    cluster = _by_name(resources, "aks-demo")
    next(p for p in cluster["properties"]["agentPoolProfiles"] if p["name"] == "gpu")["nodeTaints"] = []
    _by_name(resources, "train")["properties"]["properties"]["scaleSettings"]["minNodeCount"] = 1
    _by_name(resources, "oai-demo")["properties"]["disableLocalAuth"] = False
    extra = {
        "id": f"{cluster['id']}/agentPools/adhoc",
        "name": "adhoc",
        "type": POOL,
        "properties": {"vmSize": "Standard_NC4as_T4_v3", "mode": "User", "count": 1, "provisioningState": "Succeeded"},
    }
    resources.append(extra)
    cluster["properties"]["agentPoolProfiles"].append(
        {"name": "adhoc", **{k: v for k, v in extra["properties"].items()}}
    )
    # Noise: none of this is drift.
    for resource in resources:
        resource.setdefault("properties", {})["provisioningState"] = "Updating"
        resource["etag"] = '"0x8DCB1F9A2B3C4D5"'
        resource["systemData"] = {"lastModifiedAt": "2026-11-21T09:00:00Z", "lastModifiedBy": "someone@example.com"}
    storage = _by_name(resources, "stdemo")
    storage["location"] = "West Europe"
    workspace = _by_name(resources, "ws-demo")
    workspace["properties"]["storageAccount"] = workspace["properties"]["storageAccount"].upper()
    return Estate(base.subscriptions, resources, metrics=base.metrics)
