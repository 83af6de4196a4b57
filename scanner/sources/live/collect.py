"""Collecting a live estate: Resource Graph discovery, then details only where Graph lacks them.

Resource Graph returns the AI-relevant resources of up to 300 subscriptions per query, in
pages of 1000, with their full ARM properties. Three things it does not hold in full are read
per parent, concurrently: a cluster's agent pools (containerservice client), a workspace's
computes and online and serverless endpoints, with the environment versions the deployments
run (through the SDK pipeline with a current api-version, since
azure-mgmt-machinelearningservices 1.0.1 targets 2020-08-01 and has neither endpoints nor idle
shutdown), a Container App's auth configurations, and the diagnostic settings of workspaces and
Cognitive Services accounts (extension resources Graph lacks).

What is read follows the selected rules (`LiveNeeds`, derived by the engine from their
declarations): Resource Graph is asked for the types they read, and for the parents that the
children among those types are listed under; per-resource reads (diagnostic settings,
environment versions, metrics) are made only for the resources a rule declared them for.

A 403, 404, timeout, exhausted retry, or an answer the live boundary refuses (a link off the
ARM endpoint, a repeating link, a shape the API does not promise: `boundary`, `shapes`)
narrows coverage and never stops the scan; each becomes a `CoverageGap` that every report
shows, its reason redacted of secrets. A per-resource read that failed also leaves an
`Unknown` in that resource's body under the read's ARM type (``body[LiveRead.X.value]``), so a
rule that needed it is undetermined there rather than deciding on a read that never happened.
Reads refused because the scan's time limit passed are reported as one gap. An authentication
failure ends the run.
"""

from __future__ import annotations

import datetime as dt
import functools
import sys
import threading
from collections import defaultdict
from collections.abc import Callable, Iterator
from concurrent.futures import Executor, Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import unquote, urlsplit, urlunsplit

from scanner.errors import InputError
from scanner.model import azure_types as T
from scanner.model import vmsizes
from scanner.model.needs import LiveNeeds, LiveRead
from scanner.model.resources import LIVE_KIND, CoverageGap, Origin, Resource, parse_resource_id
from scanner.model.unknown import Unknown
from scanner.model.utilization import LOOKBACK_DAYS
from scanner.model.vmsizes import SizeCatalog
from scanner.sources.live import shapes
from scanner.sources.live.boundary import BoundaryError, Limits, PageTrail, ScanTimeout, every_item
from scanner.sources.live.clients import GRAPH_API, ClientFactory
from scanner.sources.live.metrics import LiveUtilization, collect_utilization, timespan
from scanner.sources.live.monitor import MetricsReader
from scanner.sources.live.scope import LiveScope
from scanner.sources.live.transport import GRAPH_QUERY_PATH

# The types Resource Graph holds in full that the collector knows: what it discovers for a rule
# that does not declare what it looks up.
GRAPH_TYPES = (
    T.WORKSPACE,
    T.MANAGED_CLUSTER,
    T.STORAGE_ACCOUNT,
    T.COGNITIVE_ACCOUNT,
    T.CONTAINER_APP,
    T.CONTAINER_APP_ENVIRONMENT,
    T.VIRTUAL_MACHINE,
    T.VM_SCALE_SET,
    T.KEY_VAULT,
    T.CONTAINER_REGISTRY,
    T.PRIVATE_ENDPOINT,
    T.AUTOSCALE_SETTING,
    T.SEARCH_SERVICE,
)
SUBSCRIPTIONS_QUERY = (
    "resourcecontainers | where type =~ 'microsoft.resources/subscriptions' "
    "| project id, subscriptionId | order by id asc"
)
# The columns every discovered row must have, as strings: the rest of the collector reads them.
ROW_COLUMNS = ("id", "name", "type", "subscriptionId", "resourceGroup")
SUBSCRIPTIONS_PER_QUERY = 300
# A tenant or management-group query evaluates at most 10,000 subscriptions, and this header of
# its answer says when it stopped there (docs/emulator-contract.md); a group's descendants are
# then listed through the Management Groups API (Get Descendants), which has no such limit.
SUBSCRIPTION_LIMIT_HEADER = "x-ms-tenant-subscription-limit-hit"
MANAGEMENT_GROUPS_API = "2021-04-01"
GROUP_SUBSCRIPTION = "microsoft.management/managementgroups/subscriptions"
PAGE_SIZE = 1000
ML_API = "2025-12-01"
APPS_API = "2024-03-01"
WORKSPACE_CHILDREN = (
    ("computes", T.COMPUTE),
    ("onlineEndpoints", T.ONLINE_ENDPOINT),
    ("serverlessEndpoints", T.SERVERLESS_ENDPOINT),
    ("connections", T.WORKSPACE_CONNECTION),
    ("schedules", T.ML_SCHEDULE),
)
# Schedules list only enabled ones unless asked for all (2025-12-01 ``listViewType``). Jobs are
# listed in their default view, without archived ones: archiving changes a job's
# ``lastModifiedAt``, which is all that says when a job ended.
EVERY_ENTRY = {"listViewType": "All"}
# Workspace children read otherwise than as plain ARM resources: how each entry is checked and
# kept, and the query. Schedules, disabled ones too, are cut to what the rules read.
LISTED_AS: dict[str, tuple[Callable[[Any], dict[str, Any]], dict[str, str] | None]] = {
    "schedules": (shapes.schedule, EVERY_ENTRY),
}

# The first GA api-version with Foundry projects; it also lists deployments and content filters.
COGNITIVE_API = "2025-06-01"
ACCOUNT_CHILDREN = (
    ("deployments", T.MODEL_DEPLOYMENT),
    ("raiPolicies", T.RAI_POLICY),
    ("projects", T.AI_PROJECT),
    ("connections", T.ACCOUNT_CONNECTION),
)
# Which account kinds hold which children, so that a Speech or Vision account costs no request
# and an Azure OpenAI account is not asked for Foundry projects: models are deployed (with their
# content filters) on OpenAI and AIServices accounts; projects and connections belong to the
# Foundry resource, kind AIServices (upgrading an Azure OpenAI resource to Foundry changes its
# kind to AIServices). An account whose kind is not given is asked for everything.
CHILDREN_BY_KIND = {
    "openai": frozenset({"deployments", "raiPolicies"}),
    "aiservices": frozenset(child for child, _ in ACCOUNT_CHILDREN),
}


def held_children(kind: Any) -> frozenset[str]:
    """The children an account of ``kind`` can hold (`CHILDREN_BY_KIND`); every kind of child
    when the account's kind is not given."""
    if not isinstance(kind, str):
        return CHILDREN_BY_KIND["aiservices"]
    return CHILDREN_BY_KIND.get(kind.lower(), frozenset())


DIAGNOSTICS_API = "2021-05-01-preview"
ENVIRONMENT_TYPES = frozenset(t.lower() for t in (T.ENVIRONMENT_VERSION, T.REGISTRY_ENVIRONMENT_VERSION))
# Types Resource Graph lacks that are listed per parent: child type -> the type it is listed under.
LISTED_UNDER = {
    T.AGENT_POOL.lower(): T.MANAGED_CLUSTER.lower(),
    T.COMPUTE.lower(): T.WORKSPACE.lower(),
    T.ONLINE_ENDPOINT.lower(): T.WORKSPACE.lower(),
    T.ONLINE_DEPLOYMENT.lower(): T.ONLINE_ENDPOINT.lower(),
    T.SERVERLESS_ENDPOINT.lower(): T.WORKSPACE.lower(),
    T.ML_SCHEDULE.lower(): T.WORKSPACE.lower(),
    T.CONTAINER_APP_AUTH.lower(): T.CONTAINER_APP.lower(),
    T.WORKSPACE_CONNECTION.lower(): T.WORKSPACE.lower(),
    **{child.lower(): T.COGNITIVE_ACCOUNT.lower() for _, child in ACCOUNT_CHILDREN},
    T.PROJECT_CONNECTION.lower(): T.AI_PROJECT.lower(),
}
# Types that are neither in Resource Graph nor listed: `LiveRead`s bring them.
READ_TYPES = ENVIRONMENT_TYPES | {read.value.lower() for read in LiveRead}
KNOWN_TYPES = frozenset(t.lower() for t in GRAPH_TYPES) | frozenset(LISTED_UNDER)


@dataclass
class LiveInventory:
    resources: list[Resource]
    subscriptions: list[str]
    coverage: list[CoverageGap]
    requests: int
    sizes: SizeCatalog = field(default_factory=SizeCatalog)
    utilization: LiveUtilization = field(default_factory=LiveUtilization)


class Progress:
    """A one-line progress display on a terminal; silent in pipes and CI."""

    def __init__(self, enabled: bool) -> None:
        self.enabled = enabled
        self.scopes = self.scopes_total = self.resources = 0
        self.lock = threading.Lock()  # batches of subscriptions report from several threads

    def update(self, *, scopes: int = 0, scopes_total: int | None = None, resources: int = 0) -> None:
        with self.lock:
            self._update(scopes, scopes_total, resources)

    def _update(self, scopes: int, scopes_total: int | None, resources: int) -> None:
        self.scopes += scopes
        self.resources += resources
        if scopes_total is not None:
            self.scopes_total = scopes_total
        if self.enabled:
            sys.stderr.write(f"\razai: {self.scopes}/{self.scopes_total} scopes, {self.resources} resources")
            sys.stderr.flush()

    def done(self) -> None:
        if self.enabled:
            sys.stderr.write("\n")


def collected_types(needs: LiveNeeds) -> frozenset[str]:
    """The types to collect for ``needs``: those the rules read, and every type that one of
    them is listed under (deployments are listed per endpoint, endpoints per workspace), which
    is also the parent that rules and the model look up (a pool's cluster, a compute's workspace)."""
    wanted = set(needs.types | (KNOWN_TYPES if needs.every_type else frozenset()))
    wanted.update(s.type for s in needs.subjects)
    for resource_type in list(wanted):
        while resource_type in LISTED_UNDER:
            resource_type = LISTED_UNDER[resource_type]
            wanted.add(resource_type)
    return frozenset(wanted)


def graph_types(collected: frozenset[str]) -> list[str]:
    """The types Resource Graph is asked for: the collected ones that are neither listed per
    parent nor read per resource; the known ones in their usual order, then any other."""
    wanted = {t for t in collected if t not in LISTED_UNDER and t not in READ_TYPES}
    known = [t.lower() for t in GRAPH_TYPES if t.lower() in wanted]
    return known + sorted(wanted.difference(known))


RETRIED_METHODS = frozenset({"GET", "HEAD", "POST"})  # POST: Resource Graph queries only


def _kql(types: list[str]) -> str:
    listed = ", ".join(f"'{t}'" for t in types)
    return (
        f"resources | where type in~ ({listed}) "
        "| project id, name, type, location, kind, sku, identity, tags, properties, zones, "
        "subscriptionId, resourceGroup "
        "| order by id asc"
    )


def _status(exc: Exception) -> int | None:
    response = getattr(exc, "response", None)
    return getattr(exc, "status_code", None) or getattr(response, "status_code", None)


def _reason(exc: Exception) -> str:
    """What went wrong, in one line: the service's error code and message when its body gave
    them (ARM's ``{"error": {...}}`` or Azure Monitor's flat ``{"code", "message"}``), else the
    exception's first line."""
    error = getattr(exc, "error", None)
    code = getattr(error, "code", None)
    message = getattr(error, "message", None)
    if code and isinstance(message, str) and message.strip():
        return f"{code}: {message.strip().splitlines()[0]}"
    text = str(getattr(exc, "message", None) or exc).splitlines()[0]
    return f"{code}: {text}" if code else text


def _is_auth_failure(exc: Exception) -> bool:
    from azure.core.exceptions import ClientAuthenticationError

    return isinstance(exc, ClientAuthenticationError) or _status(exc) == 401


class Collector:
    """Reads what ``needs`` asks for, and no more."""

    def __init__(
        self,
        factory: ClientFactory,
        progress: Progress,
        needs: LiveNeeds,
        workers: int = 32,
    ) -> None:
        self.factory = factory
        self.progress = progress
        self.workers = workers
        self.needs = needs
        self.collected = collected_types(self.needs)
        self.graph_types = graph_types(self.collected)
        # The discovered types whose rows have children to list.
        self.parents = frozenset(LISTED_UNDER[t] for t in self.collected if t in LISTED_UNDER) - set(LISTED_UNDER)
        self.coverage: list[CoverageGap] = []
        self.boundary = factory.boundary
        self.timed_out: list[str] = []  # scopes not read because the scan's time limit passed

    def wants(self, read: LiveRead, body: dict[str, Any] | Resource) -> bool:
        """Whether ``read`` is to be made for this resource (a row, a listed body or a Resource)."""
        if isinstance(body, Resource):
            return self.needs.wants(read, body.type, body.body.get("kind"))
        return self.needs.wants(read, str(body.get("type", "")), body.get("kind"))

    def has_details(self, row: dict[str, Any]) -> bool:
        """Whether a discovered row has children to list or settings or jobs to read."""
        return (
            row["type"].lower() in self.parents
            or self.wants(LiveRead.DIAGNOSTIC_SETTINGS, row)
            or self.wants(LiveRead.ML_JOBS, row)
        )

    def guard(self, scope: str, action: Callable[[], Any], gaps: list[CoverageGap] | None = None) -> Any:
        """Run one call; an access or availability failure, or an answer the boundary refuses,
        becomes a coverage gap (the scan's time limit, one gap for every scope it stopped)."""
        from azure.core.exceptions import AzureError

        try:
            return action()
        except ScanTimeout:
            self.timed_out.append(scope)
        except RecursionError:  # JSON nested deeper than Python parses, wherever it was decoded
            (self.coverage if gaps is None else gaps).append(CoverageGap(scope, None, "the answer nests too deeply"))
        except (AzureError, BoundaryError) as exc:
            reason = self.boundary.redactor.quote(_reason(exc))
            if _is_auth_failure(exc):
                raise InputError(f"authentication failed: {reason}") from None
            (self.coverage if gaps is None else gaps).append(CoverageGap(scope, _status(exc), reason))
        return None

    def time_limit_gap(self) -> list[CoverageGap]:
        """One gap for the reads the scan's time limit stopped, naming the first few."""
        if not self.timed_out:
            return []
        named = ", ".join(sorted(self.timed_out)[:3]) + (", ..." if len(self.timed_out) > 3 else "")
        reason = f"the scan's time limit of {self.boundary.timeout:g} s was reached before these were read: {named}"
        return [CoverageGap(f"{len(self.timed_out)} read(s)", None, reason)]

    def subscriptions(self, scope: LiveScope) -> list[str]:
        """The subscriptions in scope, lower-case, each once, in the order named, listed and
        found under the management groups."""
        found = dict.fromkeys(s.lower() for s in scope.subscriptions)
        if scope.all_subscriptions:
            listed = self.guard(
                "/subscriptions",
                lambda: [
                    shapes.subscription_id(s)
                    for s in every_item(self.factory.subscriptions().subscriptions.list(), self.boundary.limits)
                ],
            )
            found.update(dict.fromkeys(s.lower() for s in listed or []))
        for group in scope.management_groups:
            found.update(dict.fromkeys(self._group_subscriptions(group)))
        return list(found)

    def _group_subscriptions(self, group: str) -> list[str]:
        """A management group's subscriptions, from one Resource Graph query. Such a query
        evaluates at most 10,000 subscriptions and says so in ``x-ms-tenant-subscription-limit-hit``;
        then the group's descendants are listed through the Management Groups API, which has no
        such limit, and when that fails too a coverage gap says the rest were not scanned."""
        scope = f"/providers/Microsoft.Management/managementGroups/{group}"
        limited: list[str] = []
        columns = ("id", "subscriptionId")
        pages = self.graph_pages(SUBSCRIPTIONS_QUERY, columns, scope, management_groups=[group], limited=limited)
        found = [r["subscriptionId"].lower() for page in pages for r in page]
        if not limited:
            return found
        descendants = self._list_raw(f"{scope}/descendants", MANAGEMENT_GROUPS_API)
        if descendants is None:
            reason = (
                f"Resource Graph evaluated only {len(found):,} of the management group's subscriptions "
                f"({SUBSCRIPTION_LIMIT_HEADER}) and its descendants could not be listed: the rest were not scanned"
            )
            self.coverage.append(CoverageGap(scope, None, reason))
            return found
        return found + [
            d["id"].rsplit("/", 1)[-1].lower() for d in descendants if d.get("type", "").lower() == GROUP_SUBSCRIPTION
        ]

    def graph_pages(
        self,
        query: str,
        columns: tuple[str, ...],
        scope: str,
        subscriptions: list[str] | None = None,
        management_groups: list[str] | None = None,
        gaps: list[CoverageGap] | None = None,
        limited: list[str] | None = None,
    ) -> Iterator[list[dict[str, Any]]]:
        """Resource Graph result pages, following ``skip_token`` (held to a `PageTrail`), each
        row with string ``columns``; a failure ends them with a gap. A page whose answer says
        the query evaluated only part of its subscriptions (`SUBSCRIPTION_LIMIT_HEADER`) adds
        ``scope`` to ``limited``, or, when the caller keeps no such list, a coverage gap."""
        client = self.factory.raw()
        url = self.factory.url(GRAPH_QUERY_PATH, {"api-version": GRAPH_API})
        trail = PageTrail(self.boundary.limits)
        token: str | None = None
        while True:
            options: dict[str, Any] = {"$top": PAGE_SIZE, "resultFormat": "objectArray", "allowPartialScopes": True}
            if token:
                options["$skipToken"] = token
            body: dict[str, Any] = {"query": query, "options": options}  # neither scope: the tenant
            if subscriptions is not None:
                body["subscriptions"] = subscriptions
            if management_groups is not None:
                body["managementGroups"] = management_groups
            page = self.guard(scope, functools.partial(self._graph_page, client, url, body, columns, trail), gaps)
            if page is None:
                return
            rows, token, partial = page
            if partial:
                self._limited(scope, limited)
            yield rows
            if not token:
                return

    def _limited(self, scope: str, limited: list[str] | None) -> None:
        if limited is not None:
            limited.append(scope)
        else:
            reason = f"Resource Graph evaluated only part of the subscriptions ({SUBSCRIPTION_LIMIT_HEADER})"
            self.coverage.append(CoverageGap(scope, None, reason))

    @staticmethod
    def _graph_page(
        client: Any, url: str, body: dict[str, Any], columns: tuple[str, ...], trail: PageTrail
    ) -> tuple[list[dict[str, Any]], str | None, bool]:
        """One page of a Resource Graph query (REST API 2021-03-01, ``POST
        /providers/Microsoft.ResourceGraph/resources``), sent through the raw pipeline
        (`ClientFactory.raw`) and read as JSON. azure-mgmt-resourcegraph's typed call deserialized every row of
        ``data`` field by field into the same dicts: 3 % of a live scan's CPU, for nothing."""
        from azure.core.exceptions import HttpResponseError
        from azure.core.rest import HttpRequest

        accept = {"Accept": "application/json"}
        request = HttpRequest("POST", url, json=body, headers=accept)
        # A query reads: retried like a GET (azure-core retries no POST on 429 or a dropped
        # connection), within the same retry budget, waiting as x-ms-user-quota-resets-after says.
        response = client.send_request(request, retry_on_methods=RETRIED_METHODS)
        if response.status_code != 200:  # as the typed call: any other answer, a 204 or 3xx too, is an error
            raise HttpResponseError(response=response)
        rows, token = shapes.graph_page(shapes.json_body(response), columns)
        partial = str(response.headers.get(SUBSCRIPTION_LIMIT_HEADER, "")).strip().lower() == "true"
        return rows, trail.follow(token) if token else None, partial

    def discover(self, subscriptions: list[str], pool: Executor) -> list[dict[str, Any]]:
        """AI-relevant resources of these subscriptions, and the details of those that have
        them, all read in ``pool``: the batches of subscriptions run concurrently (the pages of
        one follow each other, since each page needs the last one's ``$skipToken``), held to
        Resource Graph's quota by the transport, and a row's details are read as soon as its
        page arrives. No query is sent when the rules read no type that Resource Graph holds.
        """
        if not self.graph_types:
            self.progress.update(scopes=len(subscriptions))
            return []
        reads: list[Future[list[dict[str, Any]]]] = []

        def batch(subscriptions: list[str]) -> list[dict[str, Any]]:
            rows = []
            for row in self._discover_batch(subscriptions):
                rows.append(row)
                if self.has_details(row):
                    reads.append(pool.submit(self.details, row))
            return rows

        step = SUBSCRIPTIONS_PER_QUERY
        batches = [pool.submit(batch, subscriptions[i : i + step]) for i in range(0, len(subscriptions), step)]
        bodies = [row for done in batches for row in done.result()]
        for done in reads:  # complete: every batch, which submits them, has returned
            children = done.result()
            bodies.extend(children)
            self.progress.update(resources=len(children))
        return bodies

    def _discover_batch(self, batch: list[str]) -> Iterator[dict[str, Any]]:
        """One query over a batch; a 403 before any row is narrowed down to the denied subscriptions."""
        gaps: list[CoverageGap] = []
        scope = f"/subscriptions/{batch[0]}" if len(batch) == 1 else f"{len(batch)} subscriptions"
        found = False
        for page in self.graph_pages(_kql(self.graph_types), ROW_COLUMNS, scope, subscriptions=batch, gaps=gaps):
            found = True
            self.progress.update(resources=len(page))
            yield from page
        if gaps and gaps[0].status == 403 and len(batch) > 1 and not found:
            half = len(batch) // 2
            yield from self._discover_batch(batch[:half])
            yield from self._discover_batch(batch[half:])
            return
        self.coverage.extend(gaps)
        self.progress.update(scopes=len(batch))

    def details(self, parent: dict[str, Any]) -> list[dict[str, Any]]:
        """A discovered row's children that the rules read, and the diagnostic settings of the
        row and its children where a rule declared them."""
        found = self._children(parent)
        if self.wants(LiveRead.ML_JOBS, parent):
            parent[LiveRead.ML_JOBS.value] = self._recent_jobs(parent)
        logged = [body for body in (parent, *found) if self.wants(LiveRead.DIAGNOSTIC_SETTINGS, body)]
        for body in logged:
            url = f"{body['id']}/providers/Microsoft.Insights/diagnosticSettings"
            settings = self._list_raw(url, DIAGNOSTICS_API)
            if settings is None:
                body[LiveRead.DIAGNOSTIC_SETTINGS.value] = Unknown("its diagnostic settings could not be read")
            found += settings or []
        return found

    def _children(self, parent: dict[str, Any]) -> list[dict[str, Any]]:
        kind = parent["type"].lower()
        if kind == T.MANAGED_CLUSTER.lower() and T.AGENT_POOL.lower() in self.collected:
            return self._agent_pools(parent)
        if kind == T.WORKSPACE.lower():
            return self._workspace_children(parent)
        if kind == T.COGNITIVE_ACCOUNT.lower():
            return self._account_children(parent)
        if kind == T.CONTAINER_APP.lower() and T.CONTAINER_APP_AUTH.lower() in self.collected:
            return self._list_raw(f"{parent['id']}/authConfigs", APPS_API) or []
        return []

    def _recent_jobs(self, workspace: dict[str, Any]) -> dict[str, Any] | Unknown:
        """The workspace's jobs created in the last `LOOKBACK_DAYS` days, each cut to what
        the serverless rules read (`shapes.job_summary`): the jobs API has no date filter, so
        every page is read and the rest dropped. An Unknown when they could not be read."""
        now = dt.datetime.now(dt.UTC)
        jobs = self._list_raw(f"{workspace['id']}/jobs", ML_API)
        if jobs is None:
            return Unknown("the workspace's jobs could not be read")
        start = (now - dt.timedelta(days=LOOKBACK_DAYS)).isoformat()
        summaries = (shapes.job_summary(job, now) for job in jobs)
        return {"window_days": LOOKBACK_DAYS, "jobs": [job for job in summaries if job and job["created"] >= start]}

    def _account_children(self, account: dict[str, Any]) -> list[dict[str, Any]]:
        """An AI services account's model deployments, content filters, Foundry projects and
        connections, and each project's connections: Resource Graph holds none of them."""
        held = held_children(account.get("kind"))
        out: list[dict[str, Any]] = []
        deployments: list[dict[str, Any]] | None = None
        for child, child_type in ACCOUNT_CHILDREN:
            if child_type.lower() not in self.collected or child not in held:
                continue
            if child == "raiPolicies" and deployments is not None and not names_custom_filter(deployments):
                continue  # a content filter no deployment uses filters nothing: not worth a request
            found = self._list_raw(f"{account['id']}/{child}", COGNITIVE_API) or []
            out += found
            if child == "projects" and T.PROJECT_CONNECTION.lower() in self.collected:
                for project in found:
                    out += self._list_raw(f"{project['id']}/connections", COGNITIVE_API) or []
            if child == "deployments":
                deployments = found
                self._account_models(account, found)
        return out

    def _account_models(self, account: dict[str, Any], deployments: list[dict[str, Any]]) -> None:
        """The account's models list (``GET {account}/models``), read once for the account when a
        rule declared `LiveRead.ACCOUNT_MODELS` for its deployments; each such deployment keeps
        the entries for its own model (format, name, version), so a saved inventory holds what
        was judged and not the whole catalog. A failed read leaves an Unknown there instead."""
        wanting = [body for body in deployments if self.wants(LiveRead.ACCOUNT_MODELS, body)]
        if not wanting:
            return
        models = self._list_raw(f"{account['id']}/models", COGNITIVE_API, shapes.model_entry)
        for body in wanting:
            if models is None:
                body[LiveRead.ACCOUNT_MODELS.value] = Unknown("the account's models list could not be read")
            else:
                body[LiveRead.ACCOUNT_MODELS.value] = [m for m in models if shapes.same_model(m, body)]

    def _agent_pools(self, cluster: dict[str, Any]) -> list[dict[str, Any]]:
        client = self.factory.containers(cluster["subscriptionId"])
        group, name = cluster["resourceGroup"], cluster["name"]
        pools = self.guard(
            f"{cluster['id']}/agentPools",
            lambda: [p.as_dict() for p in every_item(client.agent_pools.list(group, name), self.boundary.limits)],
        )
        return [self._arm_body(p, f"{cluster['id']}/agentPools") for p in pools or []]

    def _workspace_children(self, workspace: dict[str, Any]) -> list[dict[str, Any]]:
        deployments = T.ONLINE_DEPLOYMENT.lower() in self.collected
        out: list[dict[str, Any]] = []
        for child, child_type in WORKSPACE_CHILDREN:
            if child_type.lower() not in self.collected:
                continue
            item, params = LISTED_AS.get(child, (shapes.arm_object, None))
            found = self._list_raw(f"{workspace['id']}/{child}", ML_API, item, params) or []
            out += found
            if child == "onlineEndpoints" and deployments:  # deployments made in Studio or the CLI are AI resources too
                for endpoint in found:
                    out += self._list_raw(f"{endpoint['id']}/deployments", ML_API) or []
        return out + self._environments(out)

    def _environments(self, bodies: list[dict[str, Any]]) -> list[dict[str, Any]]:
        """The environment versions the online deployments run, read by id, once each: Resource
        Graph does not hold them, and their image decides whether what serves is pinned."""
        wanted = {
            ref.lower(): ref
            for body in bodies
            if self.wants(LiveRead.ENVIRONMENT_VERSIONS, body) and (ref := environment_reference(body))
        }
        found = (self.get_json(wanted[key], {"api-version": ML_API}) for key in sorted(wanted))
        return [body for body in found if body is not None]

    def _arm_body(self, model: dict[str, Any], collection: str) -> dict[str, Any]:
        """An SDK model's dict in ARM REST shape (the SDK flattens ``properties``)."""
        if "properties" in model:
            return model
        top: dict[str, Any] = {k: model[k] for k in ("id", "name", "type") if k in model}
        top["id"] = top.get("id") or f"{collection}/{model.get('name')}"
        top["type"] = top.get("type") or T.AGENT_POOL
        top["properties"] = {k: v for k, v in model.items() if k not in ("id", "name", "type")}
        return top

    def get_json(self, url: str, params: dict[str, str], read: Callable[[Any], Any] = shapes.arm_object) -> Any:
        """One guarded GET through the SDK pipeline, its JSON checked and read by ``read`` (by
        default: one ARM resource); None (and a coverage gap) on failure."""
        from azure.core.rest import HttpRequest

        client = self.factory.raw()

        def fetch() -> Any:
            response = client.send_request(HttpRequest("GET", self.factory.url(url, params)))
            response.raise_for_status()
            return read(shapes.json_body(response))

        return self.guard(url, fetch)

    def metrics_reader(self) -> MetricsReader:
        """Azure Monitor reads over the last `LOOKBACK_DAYS` days, through the raw pipeline,
        their failures coverage gaps of this scan."""
        from azure.core.rest import HttpRequest

        client = self.factory.raw()
        return MetricsReader(
            lambda url: client.send_request(HttpRequest("GET", url)),
            self.factory.url,
            self.guard,
            self.coverage,
            self.boundary.redactor.quote,
            timespan(dt.datetime.now(dt.UTC)),
        )

    def gpu_sizes(self, subscription: str, resources: list[Resource]) -> SizeCatalog:
        """Confirm GPU capability, through the resource SKUs API, of sizes the bundled table lacks."""
        unlisted = _unlisted_sizes(resources)
        if not unlisted:
            return SizeCatalog()
        client = self.factory.compute(subscription)
        confirmed: set[str] = set()

        def region_gpus(region: str, wanted: set[str]) -> list[str]:
            skus = every_item(client.resource_skus.list(filter=f"location eq '{region}'"), self.boundary.limits)
            return [sku.name.lower() for sku in skus if _is_gpu_sku(sku, wanted)]

        for region, wanted in sorted(unlisted.items()):
            gpus = self.guard(
                f"/subscriptions/{subscription}/providers/Microsoft.Compute/skus?location={region}",
                functools.partial(region_gpus, region, wanted),
            )
            confirmed.update(gpus or [])
        return SizeCatalog(frozenset(confirmed))

    def _list_raw(
        self,
        url: str,
        api_version: str,
        item: Callable[[Any], dict[str, Any]] = shapes.arm_object,
        params: dict[str, str] | None = None,
    ) -> list[dict[str, Any]] | None:
        """An ARM collection through the SDK pipeline, following ``nextLink`` (held to a
        `PageTrail`; the origin policy refuses one off the endpoint); None (and a coverage gap)
        when it could not be read. ``item`` checks each entry (by default: an ARM resource);
        ``params`` are query parameters for the first page besides the api-version."""
        first = self.factory.url(url, {"api-version": api_version, **(params or {})})
        fetch = functools.partial(arm_collection, self.factory.raw(), first, self.boundary.limits, item)
        listed: list[dict[str, Any]] | None = self.guard(url, fetch)
        return listed


def collect_live(
    scope: LiveScope,
    factory: ClientFactory,
    progress: Progress,
    needs: LiveNeeds,
) -> LiveInventory:
    """Collect what ``needs`` asks for (`scanner.engine.registry.live_needs` of the rules)."""
    collector = Collector(factory, progress, needs)
    subscriptions = collector.subscriptions(scope)
    progress.update(scopes_total=len(subscriptions))
    with ThreadPoolExecutor(max_workers=collector.workers) as pool:
        resources = [_resource(body) for body in collector.discover(subscriptions, pool)]
        resources.sort(key=lambda r: r.id.lower())
        sizes = collector.gpu_sizes(subscriptions[0], resources) if subscriptions else SizeCatalog()
        metered = [r for r in resources if collector.wants(LiveRead.METRICS, r)]
        by_id = {r.id.lower(): r for r in resources}
        find = functools.partial(_find, by_id)
        utilization = collect_utilization(metered, sizes, collector.metrics_reader(), pool, find)
    progress.done()
    coverage = sorted(collector.coverage + collector.time_limit_gap(), key=lambda g: g.scope.lower())
    return LiveInventory(resources, subscriptions, coverage, factory.requests, sizes, utilization)


def arm_collection(client: Any, url: str, limits: Limits, item: Callable[[Any], Any]) -> list[Any]:
    """Every entry of an ARM collection, from its first page's absolute ``url`` (query and all:
    `ClientFactory.url`) through ``client``'s pipeline page by page, following ``nextLink`` held
    to a `PageTrail` under ``limits``; ``item`` checks each entry. Errors propagate: the caller
    decides whether one is a coverage gap or the command's end."""
    from azure.core.rest import HttpRequest

    items: list[Any] = []
    trail = PageTrail(limits)
    request = HttpRequest("GET", url)
    while True:
        response = client.send_request(request)
        response.raise_for_status()
        page, link = shapes.arm_page(shapes.json_body(response), item)
        items.extend(page)
        if not link:
            return items
        request = HttpRequest("GET", trail.follow(continuation(link, url)))


def continuation(link: str, first: str) -> str:
    """The next page's URL: the service's ``link``, with the api-version of the ``first``
    request and every query parameter of it that the link dropped. Azure SDK clients send the
    client's api-version on every page, whatever the link says (Azure SDK design guidelines,
    pagination; the generated pagers replace it), and a service's link may carry another
    version (a compute list example in the spec does) or lose a filter the first request
    needed (a schedules link without ``listViewType=All`` hides disabled schedules). The link's
    own parameters (its skip token) are kept byte for byte: only whole ``key=value`` pieces move."""
    parts = urlsplit(link)
    given = _pieces(parts.query)
    asked = _pieces(urlsplit(first).query)
    version = asked.pop("api-version", [])
    missing = [piece for key, pieces in asked.items() if key not in given for piece in pieces]
    if not missing and given.get("api-version") == version:
        return link
    kept = [piece for key, pieces in given.items() if key != "api-version" for piece in pieces]
    return urlunsplit(parts._replace(query="&".join(kept + missing + version)))


def _pieces(query: str) -> dict[str, list[str]]:
    """A query's ``key=value`` pieces as written, by lower-case key, in order."""
    found: dict[str, list[str]] = {}
    for piece in query.split("&"):
        if piece:
            found.setdefault(_query_key(piece), []).append(piece)
    return found


def _query_key(piece: str) -> str:
    """The lower-case name of one ``key=value`` piece of a query."""
    return unquote(piece.partition("=")[0]).lower()


def names_custom_filter(deployments: list[dict[str, Any]]) -> bool:
    """Whether a deployment names a content filter of its account's own (not one of
    Microsoft's), the only case where the account's content filters are read."""
    names = [(body.get("properties") or {}).get("raiPolicyName") for body in deployments]
    return any(isinstance(name, str) and name and not T.builtin_content_filter(name) for name in names)


def environment_reference(body: dict[str, Any]) -> str | None:
    """A deployment's ``environmentId`` when it is an ARM id of an environment version (curated
    ``azureml://registries/...`` references name Microsoft's assets, which are not read)."""
    if str(body.get("type", "")).lower() != T.ONLINE_DEPLOYMENT.lower():
        return None
    reference = (body.get("properties") or {}).get("environmentId")
    if not isinstance(reference, str):
        return None
    kind = (parse_resource_id(reference).resource_type or "").lower()
    return reference if kind in ENVIRONMENT_TYPES else None


def _unlisted_sizes(resources: list[Resource]) -> dict[str, set[str]]:
    """The billing sizes, lower-case by region, that the bundled size table does not list."""
    unlisted: dict[str, set[str]] = defaultdict(set)
    for resource in resources:
        size = _billing_size(resource)
        if isinstance(size, str) and vmsizes.lookup(size) is None and isinstance(resource.location, str):
            unlisted[resource.location].add(size.lower())
    return unlisted


def _is_gpu_sku(sku: Any, wanted: set[str]) -> bool:
    """A resource SKU entry for one of the wanted VM sizes that has GPUs."""
    if sku.resource_type != "virtualMachines" or not isinstance(sku.name, str) or sku.name.lower() not in wanted:
        return False
    return shapes.gpu_count(sku) > 0


def _billing_size(resource: Resource) -> Any:
    """The VM size a resource is billed by, wherever its type keeps it."""
    for path in ("properties.hardwareProfile.vmSize", "properties.properties.vmSize", "properties.vmSize"):
        size = resource.get(path)
        if size is not None:
            return size
    return resource.get("sku.name") if resource.type_key == T.VM_SCALE_SET.lower() else None


def _find(by_id: dict[str, Resource], resource_id: Any) -> Resource | None:
    return by_id.get(resource_id.lower()) if isinstance(resource_id, str) else None


# Every resource read live comes from the same place: one Origin (frozen) serves them all.
LIVE_ORIGIN = Origin(kind=LIVE_KIND, file=None)


def _resource(body: dict[str, Any]) -> Resource:
    clean = {k: v for k, v in body.items() if k not in ("subscriptionId", "resourceGroup")}
    parsed = parse_resource_id(clean["id"])
    return Resource(
        id=clean["id"],
        type=parsed.resource_type or clean.get("type", ""),
        name=parsed.name_chain or clean.get("name", ""),
        body=clean,
        origin=LIVE_ORIGIN,
    )
