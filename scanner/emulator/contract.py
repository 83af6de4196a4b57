"""What Azure refuses, for every request azai sends: the emulator's contract (issue 35, item 4).

A typo in an api-version, a metric name, a dimension or an aggregation passes an emulator that
accepts anything and fails only against Azure. This module says what Azure would answer
instead, from looked-up facts, so the server (`scanner.emulator.server`) can refuse what Azure
refuses. It decides nothing else: a request it does not know is the server's to judge.

- api-versions: for each route azai or the installed SDK sends, the versions whose spec folder
  (Azure/azure-rest-api-specs, stable and preview) defines the operation; each row in
  ``data/contract.json`` cites its spec folder and how the versions were enumerated.
- Azure Monitor metrics: the names, aggregations and dimensions of Learn's "Supported metrics"
  tables for the types azai measures (names and dimensions compare case-insensitively).
- Resource Graph: page and subscription limits from Learn and the REST spec; the
  ``resourcechanges`` table's rows, retention and the query forms the emulator reads
  (`changes_query`), a query it cannot read answered as Resource Graph answers one it cannot
  parse.

`markdown` renders all of it as docs/emulator-contract.md (``python -m
scanner.emulator.contract > docs/emulator-contract.md``); a test keeps the file current.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import functools
import json
import re
import uuid
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

DATA = Path(__file__).parent / "data" / "contract.json"
Answer = tuple[int, dict[str, Any]]

# Resource Graph (the sources are cited in GRAPH_LIMITS, which the doc renders).
GRAPH_PAGE_LIMIT = 1000
GRAPH_SUBSCRIPTIONS_PER_REQUEST = 1000
TENANT_SUBSCRIPTION_LIMIT = 10_000
SUBSCRIPTION_LIMIT_HEADER = "x-ms-tenant-subscription-limit-hit"
AZURE_DOCS = "MicrosoftDocs/azure-docs articles/governance/resource-graph/"
GRAPH_LIMITS = (
    (
        "`options.$top` (page size)",
        f"A page holds at most {GRAPH_PAGE_LIMIT} rows, {GRAPH_PAGE_LIMIT} when `$top` is absent. A larger "
        "`$top` is not refused: the page is cut to 1000 rows and `$skipToken` leads on.",
        "Azure/azure-rest-api-specs resourcegraph/.../stable/2021-03-01/resourcegraph.json@34f4e67 "
        "(`$top`: minimum 1, maximum 1000); Learn work-with-data (learn.microsoft.com/zh-cn and "
        "docs.azure.cn renderings: default and maximum 1000; "
        + AZURE_DOCS
        + "concepts/work-with-data.md@091a899, ms.date 05/17/2021: pages of 1000); Azure/azure-cli-extensions#498 "
        "(Microsoft: the service only returns 1000 records at once)",
    ),
    (
        "`subscriptions` array",
        f"More than {GRAPH_SUBSCRIPTIONS_PER_REQUEST} subscriptions in one request: 400 BadRequest. Azure's "
        "wording for this case is not published: the emulator answers Graph's error envelope without details.",
        AZURE_DOCS + "troubleshoot/general.md@09998bb, ms.date 08/07/2019 (Too many subscriptions: "
        "the REST API accepts a maximum number; batch under the 1000 limit)",
    ),
    (
        "Subscriptions a tenant or management-group query evaluates",
        f"Over {TENANT_SUBSCRIPTION_LIMIT:,} subscriptions in scope, with `allowPartialScopes`: 200, only the "
        f"first {TENANT_SUBSCRIPTION_LIMIT:,} are evaluated (Learn does not say which; the emulator takes the first "
        f"it holds) and `{SUBSCRIPTION_LIMIT_HEADER}: true` is set; at or under the limit the header "
        "is absent.",
        AZURE_DOCS + "concepts/guidance-for-throttled-requests.md@03adcc3, ms.date 01/04/2024",
    ),
    (
        "The same, without `allowPartialScopes`",
        "400 BadRequest with the detail `TooManySubscriptionsUnderScope` (Azure's message, the limit "
        f"substituted: {TENANT_SUBSCRIPTION_LIMIT:,}; an answer seen in 2024 named 18000).",
        "Azure/cosmos-explorer#1986 (the error body); REST spec 2021-03-01 `allowPartialScopes` "
        '("in case the number of subscriptions exceed allowed limits")',
    ),
    (
        "Subscriptions per request, recommended",
        "Fewer than 300 (azai sends 300); a recommendation, not refused.",
        AZURE_DOCS + "concepts/guidance-for-throttled-requests.md@03adcc3 (Grouping queries)",
    ),
)

# Message shapes, with the public answers they were taken from (rendered in the doc).
MESSAGE_SOURCES = (
    (
        "InvalidApiVersionParameter (ARM's own routes)",
        "The api-version '{v}' is invalid. The supported versions are '{newest first, comma-separated}'.",
        "Azure/azure-sdk-for-net#2276, hashicorp/vault-plugin-secrets-azure#13, Azure/azure-cli#28038",
    ),
    (
        "NoRegisteredProviderFound (a resource provider's routes)",
        "No registered resource provider found for location '{location}' and API version '{v}' for type "
        "'{type}'. The supported api-versions are '{oldest first, comma and space}'. The supported locations "
        "are '{locations}'.",
        "Azure/azure-cli#28496, Azure/azure-cli#28368, Azure/azure-sdk-for-js#4097 (ML workspaces), "
        "MicrosoftDocs/azure-docs#95573 (location 'global'). Azure has also named the target's type for an "
        "extension route (Azure/azure-cli#7312, Azure/azure-rest-api-specs#896): not reproduced.",
    ),
    (
        "Unknown metric name (400, flat body)",
        "Failed to find metric configuration for provider: {namespace}, resource Type: {type}, metric: {name}, "
        "Valid metrics: {A,B,C}",
        "Azure/azure-sdk-for-net#29584 (body {code: BadRequest, message}), Azure/azure-sdk-for-java#18777: namespace "
        "and type as the request's resource id spells them",
    ),
    (
        "Unsupported dimension (400, flat body)",
        "Metric: {name} does not support requested dimension combination: {dimension, lower-case}, supported "
        "ones are: {A,B,C}, TraceId: {{guid}}",
        "tomkerkhove/promitor#2084",
    ),
    (
        "Aggregation a metric lacks (200, per metric)",
        "errorCode InvalidSamplingType, errorMessage Sampling type is not found. Metric:{name}, "
        "SamplingType:Nullable{Aggregation}.",
        "azure-rest-api-specs monitor stable/2021-05-01/examples/GetMetricError.json@969fd0c (via the Go SDK "
        "example ExampleMetricsClient_List_getMetricWithError); Azure names its internal account and namespace "
        "before the metric, the emulator the REST name only",
    ),
)


@dataclass(frozen=True)
class Route:
    """One operation azai or the SDK sends: ``path`` in the spec's form (``{name}`` a segment,
    ``{resourceUri}`` any resource id), ``type`` as ARM names it in errors, ``owner`` "arm" for
    ARM's own routes (Microsoft.Resources) and "provider" for a resource provider's."""

    method: str
    path: str
    type: str
    owner: str
    sender: str
    source: str
    versions: tuple[str, ...]

    @functools.cached_property
    def pattern(self) -> re.Pattern[str]:
        parts = re.split(r"(\{[^}]+\})", self.path)
        regex = "".join(
            ".+" if part == "{resourceUri}" else "[^/]+" if part.startswith("{") else re.escape(part) for part in parts
        )
        return re.compile(regex, re.IGNORECASE)

    def accepts(self, api_version: str) -> bool:
        return api_version.lower() in {v.lower() for v in self.versions}


@dataclass(frozen=True)
class Metric:
    name: str
    aggregations: tuple[str, ...]
    dimensions: tuple[str, ...]


@dataclass(frozen=True)
class MetricTable:
    resource_type: str
    source: str
    metrics: tuple[Metric, ...]

    def find(self, name: str) -> Metric | None:
        return next((m for m in self.metrics if m.name.lower() == name.lower()), None)


@functools.cache
def _data() -> dict[str, Any]:
    """The looked-up tables, read once, on first use (the emulator serves many requests)."""
    loaded: dict[str, Any] = json.loads(DATA.read_text(encoding="utf-8"))
    return loaded


@functools.cache
def routes() -> tuple[Route, ...]:
    return tuple(
        Route(r["method"], r["path"], r["type"], r["owner"], r["sender"], r["source"], tuple(r["versions"]))
        for r in _data()["routes"]
    )


@functools.cache
def metric_tables() -> dict[str, MetricTable]:
    """The Supported-metrics tables by lower-case resource type."""
    return {
        kind.lower(): MetricTable(
            kind, table["source"], tuple(Metric(n, tuple(a), tuple(d)) for n, a, d in table["metrics"])
        )
        for kind, table in _data()["metrics"].items()
    }


def route_for(method: str, path: str) -> Route | None:
    """The route ``method path`` (path without query) is an instance of, if azai sends it."""
    path = path.rstrip("/")
    return next((r for r in routes() if r.method == method.upper() and r.pattern.fullmatch(path)), None)


def api_version_error(method: str, path: str, api_version: str, *, location: str = "global") -> Answer | None:
    """Azure's 400 for an api-version the spec does not define for the route; None when the
    version is defined or the route is not one azai sends (the server decides a 404).

    ARM answers its own routes with InvalidApiVersionParameter and a resource provider's with
    NoRegisteredProviderFound, which names the ``location`` ARM routed by (the resource's; the
    emulator names that one location as the supported one: it knows no other)."""
    route = route_for(method, path)
    if route is None or route.accepts(api_version):
        return None
    if route.owner == "arm":
        newest_first = ",".join(sorted(route.versions, reverse=True))
        message = f"The api-version '{api_version}' is invalid. The supported versions are '{newest_first}'."
        return 400, {"error": {"code": "InvalidApiVersionParameter", "message": message}}
    message = (
        f"No registered resource provider found for location '{location}' and API version '{api_version}' "
        f"for type '{route.type}'. The supported api-versions are '{', '.join(sorted(route.versions))}'. "
        f"The supported locations are '{location}'."
    )
    return 400, {"error": {"code": "NoRegisteredProviderFound", "message": message}}


def _names(value: str | Iterable[str]) -> list[str]:
    """Names from a comma-separated query value, or from a list of them (``parse_qs``'s), without blanks."""
    items = [value] if isinstance(value, str) else value
    return [name.strip() for item in items for name in item.split(",") if name.strip()]


def filter_dimensions(filter: str | None) -> list[str]:
    """The dimensions a metrics ``$filter`` names (``Name eq 'x' and Other eq '*'``)."""
    return re.findall(r"([A-Za-z_][\w.]*)\s+(?:eq|ne|sw)\s+'", filter or "", flags=re.IGNORECASE)


def metrics_request_error(
    resource_type: str,
    metric_names: str | Iterable[str],
    filter: str | None,
    published: Iterable[str] | None = None,
) -> Answer | None:
    """Azure Monitor's 400 for a metric name the type does not publish, or for a ``$filter``
    dimension one of the named metrics lacks; None when the request is fine or the type has no
    table here. ``published`` narrows the names one resource publishes (an estate's account
    may publish fewer names than its type)."""
    table = metric_tables().get(resource_type.lower())
    if table is None:
        return None
    allowed = {n.lower() for n in published} if published is not None else None
    valid = [m for m in table.metrics if allowed is None or m.name.lower() in allowed]
    names = _names(metric_names)
    refused = _unpublished_metric_error(resource_type, names, valid)
    if refused is None:
        refused = _dimension_error(table, names, filter)
    return refused


def _unpublished_metric_error(resource_type: str, names: list[str], valid: list[Metric]) -> Answer | None:
    """The 400 for the first of ``names`` that is none of the ``valid`` metrics, which it lists:
    Azure Monitor refuses the whole request for one name the resource does not publish."""
    for name in names:
        if not any(m.name.lower() == name.lower() for m in valid):
            namespace, _, kind = resource_type.partition("/")  # as the request spells them
            message = (
                f"Failed to find metric configuration for provider: {namespace}, resource Type: {kind}, "
                f"metric: {name}, Valid metrics: {','.join(m.name for m in valid)}"
            )
            return 400, {"code": "BadRequest", "message": message}
    return None


def _dimension_error(table: MetricTable, names: list[str], filter: str | None) -> Answer | None:
    """The 400 for the first ``$filter`` dimension one of the named metrics lacks (a name the
    table does not have is not judged here): Azure Monitor refuses the whole request for it."""
    for dimension in filter_dimensions(filter):
        for name in names:
            metric = table.find(name)
            if metric is not None and dimension.lower() not in {d.lower() for d in metric.dimensions}:
                message = (
                    f"Metric: {metric.name} does not support requested dimension combination: {dimension.lower()}, "
                    f"supported ones are: {','.join(metric.dimensions)}, TraceId: {{{uuid.uuid4()}}}"
                )
                return 400, {"code": "BadRequest", "message": message}
    return None


def metric_error(resource_type: str, metric_name: str, aggregations: str | Iterable[str]) -> tuple[str, str] | None:
    """The ``errorCode`` and ``errorMessage`` a 200 answer carries for a metric asked for an
    aggregation it does not support (the first such one, in the order asked); None when all
    are supported, or the type or metric has no table row here."""
    table = metric_tables().get(resource_type.lower())
    metric = table.find(metric_name) if table else None
    if metric is None:
        return None
    supported = {a.lower() for a in metric.aggregations}
    lacking = next((a for a in _names(aggregations) if a.lower() not in supported), None)
    if lacking is None:
        return None
    return (
        "InvalidSamplingType",
        f"Sampling type is not found. Metric:{metric.name}, SamplingType:Nullable{lacking.capitalize()}.",
    )


def _graph_error(details: list[dict[str, str]]) -> Answer:
    """Graph's 400 envelope: a support line with a timestamp and correlation id, and details."""
    stamp = dt.datetime.now(dt.UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")
    message = f"Please provide below info when asking for support: timestamp = {stamp}, correlationId = {uuid.uuid4()}."
    error: dict[str, Any] = {"code": "BadRequest", "message": message}
    if details:
        error["details"] = details
    return 400, {"error": error}


def graph_request_error(body: Mapping[str, Any], subscription_count_in_scope: int = 0) -> Answer | None:
    """Resource Graph's 400 for a query it refuses: more subscriptions in ``subscriptions`` than
    one request takes, or a tenant or management-group query (no ``subscriptions``) whose scope
    holds more subscriptions than Graph evaluates (``subscription_count_in_scope``), without
    ``allowPartialScopes``. None
    otherwise: a ``$top`` over 1000 is cut (`graph_page_size`), not refused."""
    subscriptions = body.get("subscriptions")
    if subscriptions is not None:
        return _graph_error([]) if len(subscriptions) > GRAPH_SUBSCRIPTIONS_PER_REQUEST else None
    partial = bool((body.get("options") or {}).get("allowPartialScopes"))
    if subscription_count_in_scope > TENANT_SUBSCRIPTION_LIMIT and not partial:
        message = (
            "The number of subscriptions under provided tenant or management groups in the request has exceeded "
            f"the allowed limit {TENANT_SUBSCRIPTION_LIMIT}. Please select a more granular scope or allow "
            "partial scopes results by passing AllowPartialScopes flag in the query options."
        )
        return _graph_error([{"code": "TooManySubscriptionsUnderScope", "message": message}])
    return None


CHANGES_TABLE = "resourcechanges"
INVALID_QUERY = (
    "Query is invalid. Please refer to the documentation for the Azure Resource Graph service and fix the error "
    "before retrying."
)
# What a ``where`` clause of a change query may name, and what the emulator reads it as: the
# record's target, or the time it was detected (Learn's samples write both forms).
_TARGET_TERMS = ("properties.targetResourceId", "tostring(properties.targetResourceId)")
_TIME_TERMS = ("properties.changeAttributes.timestamp", "todatetime(properties.changeAttributes.timestamp)")
_AGO = re.compile(r"^(?P<term>.+?)\s*(?:>=|>)\s*ago\(\s*(?P<count>\d+)\s*(?P<unit>[dhm])\s*\)$")
_IN = re.compile(r"^(?P<term>.+?)\s+in~\s*\((?P<items>.*)\)$", re.DOTALL)
_UNITS = {"d": "days", "h": "hours", "m": "minutes"}


class QueryError(ValueError):
    """A change query the emulator cannot read; its text is the token Resource Graph would name."""


@dataclass(frozen=True)
class ChangesQuery:
    """What a ``resourcechanges`` query asks, in the forms Learn's samples and azai write:
    ``extend`` aliases, ``where`` conjunctions of ``<target> in~ (...)`` and ``<time> > ago(N)``,
    ``project`` of columns and ``order by id``. ``targets``: lower-case ids (None: any);
    ``since``: only records newer than that long ago (None: the whole retention)."""

    targets: frozenset[str] | None = None
    since: dt.timedelta | None = None
    columns: tuple[str, ...] | None = None
    descending: bool = False


def changes_query(query: str) -> ChangesQuery | Answer:
    """The query read, or Resource Graph's 400 for a query that cannot be parsed (an
    unterminated string, a clause the emulator does not know). The emulator reads only the
    forms above: a valid query in another form is refused too, which is stricter than Azure."""
    try:
        masked, literals = _mask_literals(query)
        table, *operators = (part.strip() for part in masked.split("|"))
        if table.lower() != CHANGES_TABLE:
            raise QueryError(table)
        return _read_operators(operators, literals)
    except QueryError as exc:
        token = re.sub("\x00\\d+\x00", "'...'", str(exc))[:80]  # a literal's place, not its text
        details = [
            {"code": "InvalidQuery", "message": INVALID_QUERY},
            {"code": "ParserFailure", "message": "ParserFailure", "token": token},
        ]
        return _graph_error(details)


def _mask_literals(query: str) -> tuple[str, list[str]]:
    """The query with each string literal (single or double quotes, backslash escapes) replaced
    by ``\x00N\x00``, and the literals' values: pipes and commas inside a name are not syntax."""
    out: list[str] = []
    literals: list[str] = []
    index = 0
    while index < len(query):
        char = query[index]
        if char not in "'\"":
            out.append(char)
            index += 1
            continue
        value, index = _literal(query, index)
        out.append(f"\x00{len(literals)}\x00")
        literals.append(value)
    return "".join(out), literals


def _literal(query: str, start: int) -> tuple[str, int]:
    """The value of the string literal that opens at ``start``, and the index after it."""
    quote, index, value = query[start], start + 1, []
    while index < len(query):
        char = query[index]
        if char == "\\" and index + 1 < len(query):
            value.append(query[index + 1])
            index += 2
        elif char == quote:
            return "".join(value), index + 1
        else:
            value.append(char)
            index += 1
    raise QueryError(query[start : start + 40])


def _read_operators(operators: list[str], literals: list[str]) -> ChangesQuery:
    aliases: dict[str, str] = {}
    query = ChangesQuery()
    for operator in operators:
        verb, _, rest = operator.partition(" ")
        verb = verb.lower()
        if verb == "extend":
            for assignment in _top_level(rest, ","):
                name, equals, expression = assignment.partition("=")
                if not equals:
                    raise QueryError(assignment)
                aliases[name.strip()] = "".join(expression.split())
        elif verb == "where":
            for clause in _top_level(rest, " and "):
                query = _where(query, clause.strip(), aliases, literals)
        elif verb == "project":
            query = dataclasses.replace(query, columns=tuple(c.strip() for c in rest.split(",")))
        elif verb in ("order", "sort") and re.fullmatch(r"by\s+id(\s+(asc|desc))?", rest.strip(), re.IGNORECASE):
            query = dataclasses.replace(query, descending=rest.strip().lower().endswith("desc"))
        else:
            raise QueryError(operator)
    return query


def _top_level(text: str, separator: str) -> list[str]:
    """``text`` split at ``separator`` (case-insensitive) outside parentheses."""
    parts, depth, start, index = [], 0, 0, 0
    lowered = text.lower()
    while index < len(text):
        depth += {"(": 1, ")": -1}.get(text[index], 0)
        if depth == 0 and lowered.startswith(separator, index):
            parts.append(text[start:index])
            start = index = index + len(separator)
            continue
        index += 1
    return [*parts, text[start:]]


def _where(query: ChangesQuery, clause: str, aliases: dict[str, str], literals: list[str]) -> ChangesQuery:
    """One ``where`` conjunct read into the query: a target list or a time filter."""
    listed = _IN.match(clause)
    if listed and _term(listed.group("term"), aliases) in _TARGET_TERMS:
        items = [item.strip() for item in listed.group("items").split(",")]
        if not all(re.fullmatch(r"\x00\d+\x00", item) for item in items):
            raise QueryError(clause)
        wanted = frozenset(literals[int(item.strip("\x00"))].lower() for item in items)
        return dataclasses.replace(query, targets=wanted if query.targets is None else query.targets & wanted)
    recent = _AGO.match(clause)
    if recent and _term(recent.group("term"), aliases) in _TIME_TERMS:
        since = dt.timedelta(**{_UNITS[recent.group("unit")]: int(recent.group("count"))})
        return dataclasses.replace(query, since=since if query.since is None else min(since, query.since))
    raise QueryError(clause)


def _term(text: str, aliases: dict[str, str]) -> str:
    """A term without spaces, an ``extend`` alias replaced by what it stands for."""
    compact = "".join(text.split())
    return aliases.get(compact, compact)


def tenant_scope(subscription_count: int) -> tuple[int, dict[str, str]]:
    """How many of a tenant or management-group scope's subscriptions a query evaluates (the
    first ones), and the headers its answer carries."""
    if subscription_count > TENANT_SUBSCRIPTION_LIMIT:
        return TENANT_SUBSCRIPTION_LIMIT, {SUBSCRIPTION_LIMIT_HEADER: "true"}
    return subscription_count, {}


def graph_page_size(options: Mapping[str, Any] | None) -> int:
    """The rows one page of a query holds: ``$top``, at most 1000 (1000 when absent)."""
    top = (options or {}).get("$top")
    return min(int(top), GRAPH_PAGE_LIMIT) if top is not None else GRAPH_PAGE_LIMIT


def _table(header: tuple[str, ...], rows: Iterable[tuple[str, ...]]) -> list[str]:
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    return lines + ["| " + " | ".join(cell.replace("|", "\\|") for cell in row) + " |" for row in rows]


def markdown() -> str:
    """docs/emulator-contract.md, from the tables above: the doc cannot drift from the code."""
    out = [
        "# The emulator's contract: what Azure refuses",
        "",
        "Generated by `python -m scanner.emulator.contract > docs/emulator-contract.md` from",
        "`scanner/emulator/contract.py` and `scanner/emulator/data/contract.json`; a test keeps it current.",
        f"Facts read on {_data()['read_on']}.",
        "",
        "## Method",
        "",
        "- **api-versions.** A route is accepted in every api-version folder of the REST spec",
        "  (Azure/azure-rest-api-specs, `stable` and `preview`) that defines its operation. Per resource type,",
        "  the folders that define it were enumerated with Azure/bicep-types-az (generated from the spec, per",
        "  version folder); versions newer than that index, list-only operations and non-resource routes were",
        "  read from the spec's readme tags, example folders and the multi-API folders of released azure-mgmt",
        "  packages, as each row says. Where only the first defining version was found, every later folder of the",
        "  provider is accepted. ARM itself may accept more (an undocumented version, or for its own routes any",
        "  version of its own list): the emulator is the stricter, so a version azai sends is one the spec defines.",
        "  A version published after these sources and not listed is refused: add it here with its source.",
        "- **Metrics.** Learn's Supported-metrics tables: the REST name, the aggregations the table lists (its",
        "  heading calls the column the default aggregation, but it lists the types the metric definitions",
        "  support, and the emulator treats them as the supported set), and the dimensions.",
        "  Names and dimensions compare case-insensitively.",
        "- **Resource Graph.** Learn and the REST spec, below.",
        "",
        "## api-versions by route",
        "",
    ]
    rows = (
        (f"`{r.method} {r.path}`", r.sender, f"{r.versions[0]} … {r.versions[-1]} ({len(r.versions)})", r.source)
        for r in routes()
    )
    out += _table(("Route", "Sent by", "Accepted (first … last, count)", "Source"), rows)
    out += ["", "Every accepted version:", ""]
    out += [f"- `{r.method} {r.path}`: {', '.join(r.versions)}" for r in routes()]
    out += [
        "",
        "The emulator's other routes are not sent by azai (nor by the installed SDK calls it makes), so no",
        "version is listed for them: `GET /subscriptions/{id}`, `GET /subscriptions/{id}/resourcegroups`,",
        "`GET /subscriptions/{id}/resources`, and `GET` of a top-level resource by id (azai reads top-level",
        "resources through Resource Graph; the only resources it reads by id are environment versions, above).",
        "",
        "## Error shapes",
        "",
    ]
    out += _table(("Answer", "Shape", "Source"), MESSAGE_SOURCES)
    for table in metric_tables().values():
        out += ["", f"## Metrics: {table.resource_type}", "", f"Source: {table.source}.", ""]
        metric_rows = (
            (f"`{m.name}`", ", ".join(m.aggregations), ", ".join(m.dimensions) or "(none)") for m in table.metrics
        )
        out += _table(("Metric", "Aggregations", "Dimensions"), metric_rows)
    out += ["", "## Resource Graph limits", ""]
    out += _table(("Limit", "Behaviour", "Source"), GRAPH_LIMITS)
    return "\n".join(out + _changes_markdown()) + "\n"


def change_table() -> dict[str, Any]:
    """The looked-up facts of the ``resourcechanges`` table (``data/contract.json``)."""
    table: dict[str, Any] = _data()["resourceChanges"]
    return table


def _changes_markdown() -> list[str]:
    """The ``resourcechanges`` section of the doc: each fact with its source."""
    table = change_table()
    sources = table["sources"]
    out = [
        "",
        f"## Resource Graph: the `{table['table']}` table",
        "",
        f"Each row is a `{table['row_type']}` resource extending the resource that changed ({sources['get']};",
        f"the table reference lists the same type for the other change tables: {sources['tables']}); what a",
        "row's `properties` hold:",
        "",
    ]
    out += _table(("Field", "Meaning", "Source"), ((f"`{f}`", m, sources[s]) for f, m, s in table["fields"]))
    out += ["", "What the emulator keeps to:", ""]
    out += _table(("Fact", "Behaviour", "Source"), ((f, b, sources[s]) for f, b, s in table["limits"]))
    out += [
        "",
        "The emulator reads change queries in Learn's forms only (`changes_query`): `extend` aliases, `where`",
        "conjunctions of `<target> in~ ('id', ...)` and `<time> > ago(Nd)` (also `h`, `m`; `>=`), `project` and",
        "`order by id`. Any other query of the table, and one it cannot parse, is answered as Resource Graph",
        "answers a query it cannot parse: 400, `BadRequest`, details `InvalidQuery` and `ParserFailure`",
        f"({sources['refusal']}).",
        "A valid query in another form is refused too: the emulator is the stricter.",
    ]
    return out


if __name__ == "__main__":
    print(markdown(), end="")
