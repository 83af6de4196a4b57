"""Whether the `live` extra is installed: a plan-only install has no Azure SDK.

``pip install azai-audit`` reads plans, templates and what-if results without the Azure SDK
and ``cryptography`` (about 26 MB). A live scan, ``azai demo`` and ``azai emulator`` need them;
without them each stops with one line naming the extra, before any azure import could raise a
traceback from deep inside a run.
"""

from __future__ import annotations

import importlib.util

from scanner.errors import InputError

DISTRIBUTION = "azai-audit"
# One module of each package of the `live` extra in pyproject.toml.
LIVE_MODULES = (
    "azure.identity",
    "azure.mgmt.resource",
    "azure.mgmt.resource.subscriptions",
    "azure.mgmt.compute",
    "azure.mgmt.containerservice",
    "azure.mgmt.machinelearningservices",
    "cryptography",
)


def _installed(module: str) -> bool:
    try:
        return importlib.util.find_spec(module) is not None
    except ModuleNotFoundError:  # a parent package (azure, azure.mgmt) is missing
        return False


def require_live_sdk(what: str) -> None:
    """Raise the one-line error a user sees when ``what`` needs the `live` extra and it is absent."""
    missing = [module for module in LIVE_MODULES if not _installed(module)]
    if missing:
        raise InputError(
            f"{what} needs the Azure SDK, which is not installed ({missing[0]} is missing): "
            f"pip install '{DISTRIBUTION}[live]'"
        )
