"""The shapes azai relies on in live answers, checked where it reads them.

The SDK validates little: a raw ``send_request`` answer (every list and Resource Graph page)
is whatever JSON came back, and even a typed model's fields are whatever the server put there. Each reader below
accepts the shape the API reference promises and raises `BoundaryError` on anything else, so a
broken or hostile answer becomes a coverage gap instead of a crash, and an answer that cannot
be true (an empty Resource Graph body) is never read as "nothing there".
"""

from __future__ import annotations

import datetime as dt
import json
import math
from collections.abc import Callable
from typing import Any

from scanner.model import amljobs
from scanner.sources.live.boundary import BoundaryError


def _describe(value: Any) -> str:
    return "nothing" if value is None else f"a JSON {type(value).__name__}"


def json_body(response: Any) -> Any:
    """A raw response's JSON; an empty or malformed body is a `BoundaryError`, with the status
    when there was a body, as the SDK's decoding policy reported it. The bytes are parsed as they
    are: ARM answers UTF-8 and says so (JSON must be UTF-8, RFC 8259), and ``json.loads`` takes a
    BOM too. The SDK's ``json()`` first worked the charset out of the Content-Type header with the
    email parser and decoded to text: 3 % of a live scan's CPU. Bytes that are not UTF-8 are
    refused here as they were there."""
    content = response.content
    if not content:
        raise BoundaryError("the answer is not JSON")
    try:
        return json.loads(content)
    except ValueError as exc:
        raise BoundaryError(f"JSON is invalid: {exc}", response.status_code) from None


def arm_object(value: Any, what: str = "resource") -> dict[str, Any]:
    """One ARM resource body: an object whose ``id`` is a path, and whose ``name`` and
    ``type``, when present, are strings."""
    if not isinstance(value, dict):
        raise BoundaryError(f"a {what} in the answer is {_describe(value)}, not an object")
    identifier = value.get("id")
    if not isinstance(identifier, str) or not identifier.startswith("/"):
        raise BoundaryError(f"a {what} in the answer has no ARM id")
    for key in ("name", "type"):
        if key in value and not isinstance(value[key], str):
            raise BoundaryError(f"a {what} in the answer has a {key} that is {_describe(value[key])}")
    return value


def arm_page(
    payload: Any, item: Callable[[Any], dict[str, Any]] = arm_object
) -> tuple[list[dict[str, Any]], str | None]:
    """An ARM list page (``{"value": [...], "nextLink": "..."}``): its items, each checked by
    ``item`` (by default: an ARM resource), and its next link."""
    if not isinstance(payload, dict) or not isinstance(payload.get("value"), list):
        raise BoundaryError("the answer is not an ARM list (an object with a 'value' array)")
    link = payload.get("nextLink")
    if link is not None and not isinstance(link, str):
        raise BoundaryError(f"the answer's nextLink is {_describe(link)}, not a URL")
    return [item(entry) for entry in payload["value"]], link or None


def model_entry(value: Any) -> dict[str, Any]:
    """One entry of an account's models list (Accounts - List Models): an object whose
    ``format``, ``name`` and ``version`` are strings when present, whose ``lifecycleStatus``
    is a string and whose ``deprecation`` an object of date strings when present. The entries
    are not ARM resources: they have no id."""
    if not isinstance(value, dict):
        raise BoundaryError(f"a model in the answer is {_describe(value)}, not an object")
    for key in ("format", "name", "version", "lifecycleStatus"):
        if key in value and value[key] is not None and not isinstance(value[key], str):
            raise BoundaryError(f"a model in the answer has a {key} that is {_describe(value[key])}")
    deprecation = value.get("deprecation")
    if deprecation is not None and (
        not isinstance(deprecation, dict) or not all(isinstance(v, str) for v in deprecation.values() if v is not None)
    ):
        raise BoundaryError("a model in the answer has a deprecation that is not an object of dates")
    return value


def location_model(value: Any) -> dict[str, Any]:
    """One entry of Models - List (a region's models): an object with a ``model`` object that
    the account models list's checks accept."""
    if not isinstance(value, dict) or not isinstance(value.get("model"), dict):
        raise BoundaryError("a model in the answer has no 'model' object")
    model_entry(value["model"])
    return value


def same_model(entry: dict[str, Any], deployment: dict[str, Any]) -> bool:
    """Whether a models-list entry is the model a deployment body runs (same format, name and
    version, ignoring case; a format the entry or the deployment lacks matches any)."""
    model = (deployment.get("properties") or {}).get("model")
    if not isinstance(model, dict):
        return False
    for key in ("name", "version"):
        if str(entry.get(key, "")).lower() != str(model.get(key, "")).lower():
            return False
    formats = {str(f).lower() for f in (entry.get("format"), model.get("format")) if f}
    return len(formats) <= 1


# What the serverless rules read of a job definition (``JobBase``, 2025-12-01), with a sweep's
# trial resources and a pipeline's default compute: never its command, inputs or environment
# variables, which may hold secrets.
JOB_FIELDS = ("jobType", "status", "computeId", "resources", "queueSettings", "limits")
JOB_TIMES = ("createdAt", "lastModifiedAt")
FINISHED_JOBS = frozenset({"completed", "failed", "canceled", "notresponding"})
RUNNING_JOBS = frozenset({"running", "finalizing"})
SCHEDULE_FIELDS = ("displayName", "description", "isEnabled", "provisioningState", "trigger", "tags")


def job_definition(properties: Any) -> Any:
    """A job definition cut to `JOB_FIELDS`; anything but an object is left for the rules to
    refuse."""
    if not isinstance(properties, dict):
        return properties
    kept = {key: properties[key] for key in JOB_FIELDS if key in properties}
    trial, settings = properties.get("trial"), properties.get("settings")
    if isinstance(trial, dict) and "resources" in trial:
        kept["trial"] = {"resources": trial["resources"]}
    if isinstance(settings, dict):
        kept["settings"] = {k: v for k, v in settings.items() if k in ("default_compute", "defaultCompute")}
    return kept


def schedule(value: Any) -> dict[str, Any]:
    """An AML schedule (an ARM object) cut to its trigger, state, tags and what its action runs
    where, so that a saved inventory never holds the job's command or environment variables."""
    body = arm_object(value)
    properties = body.get("properties")
    if not isinstance(properties, dict):
        return body
    kept = {key: properties[key] for key in SCHEDULE_FIELDS if key in properties}
    action = properties.get("action")
    if isinstance(action, dict):
        kept["action"] = {
            "actionType": action.get("actionType"),
            "jobDefinition": job_definition(action.get("jobDefinition")),
        }
    return {**{k: v for k, v in body.items() if k != "properties"}, "properties": kept}


def job_summary(job: dict[str, Any], now: dt.datetime) -> dict[str, Any] | None:
    """An AML job (an ARM object) cut to its definition (`job_definition`), with ``created`` (in
    UTC) and ``ran_hours``: the jobs API records no run times, so a finished job (Completed,
    Failed, Canceled, NotResponding) ran from ``systemData.createdAt`` to its record's last
    change (``lastModifiedAt``), at most its ``limits.timeout``; a running one (Running,
    Finalizing) until ``now``; any other (queued, starting, preparing) not yet. None for a job
    whose creation time is not an ISO 8601 time, which cannot be placed in a window."""
    system = job.get("systemData")
    created, modified = (_time(system.get(key) if isinstance(system, dict) else None) for key in JOB_TIMES)
    properties = job.get("properties")
    if created is None or not isinstance(properties, dict):
        return None
    status = str(properties.get("status", "")).lower()
    ended = modified if status in FINISHED_JOBS else now if status in RUNNING_JOBS else created
    hours = max(0.0, ((ended or created) - created).total_seconds() / 3600)
    limit = amljobs.timeout(properties)
    if limit is not None:
        hours = min(hours, limit.total_seconds() / 3600)
    return {
        "name": job.get("name"),
        "properties": job_definition(properties),
        "created": created.isoformat(),
        "ran_hours": round(hours, 4),
    }


def _time(text: Any) -> dt.datetime | None:
    """An ISO 8601 time in UTC (one without an offset is taken as UTC)."""
    try:
        stamp = dt.datetime.fromisoformat(text.replace("Z", "+00:00")) if isinstance(text, str) else None
    except ValueError:
        return None
    if stamp is None:
        return None
    return stamp.astimezone(dt.UTC) if stamp.tzinfo else stamp.replace(tzinfo=dt.UTC)


def graph_page(body: Any, columns: tuple[str, ...]) -> tuple[list[dict[str, Any]], str | None]:
    """A Resource Graph answer in ``objectArray`` format: its rows, each with string
    ``columns``, and its ``$skipToken``. Resource Graph always answers with ``data``, so an
    answer without it is broken, never zero resources."""
    data = body.get("data") if isinstance(body, dict) else None
    if not isinstance(data, list):
        raise BoundaryError("Resource Graph answered without a 'data' array")
    for row in data:
        if not isinstance(row, dict) or not all(isinstance(row.get(c), str) for c in columns):
            raise BoundaryError(f"a Resource Graph row lacks one of {', '.join(columns)}")
    token = body.get("$skipToken")
    if token is not None and not isinstance(token, str):
        raise BoundaryError(f"Resource Graph's $skipToken is {_describe(token)}")
    return data, token or None


def subscription_id(model: Any) -> str:
    """A subscription list entry's id."""
    found = getattr(model, "subscription_id", None)
    if not isinstance(found, str) or not found:
        raise BoundaryError("a subscription in the list has no subscriptionId")
    return found


def metric_answer(payload: Any, aggregation: str) -> tuple[dict[str, dict[str, list[float]]], dict[str, str]]:
    """An Azure Monitor ``metrics.list`` answer asked for one ``aggregation``: the samples of
    each metric measured (``errorCode`` Success, or none given, as before 2023 versions), by
    lower-case name and dimension value ("" when not split), and the reason of each metric that
    was not (its ``errorCode`` and ``errorMessage``). A measured metric has a key even without
    a series: no dimension value had data in the window, which is "nothing happened", not
    "not measured". Samples that are not finite numbers refuse the whole answer, so a resource
    stays undetermined instead of looking idle or busy."""
    measured: dict[str, dict[str, list[float]]] = {}
    failed: dict[str, str] = {}
    field = aggregation.lower()
    for metric in _metrics(payload):
        name = metric.get("name")
        value = name.get("value") if isinstance(name, dict) else None
        if not isinstance(value, str):
            raise BoundaryError("a metric in the answer has no name")
        code = metric.get("errorCode", "Success")
        if code != "Success":
            message = metric.get("errorMessage")
            failed[value.lower()] = f"{code}: {message}" if isinstance(message, str) and message else str(code)
            continue
        measured.setdefault(value.lower(), {}).update(_series(metric, field))
    return measured, failed


def _metrics(payload: Any) -> list[dict[str, Any]]:
    """The metrics of a ``metrics.list`` answer, which must have a ``value`` array."""
    if not isinstance(payload, dict) or not isinstance(payload.get("value"), list):
        raise BoundaryError("the metrics answer has no 'value' array")
    return _list(payload, "value")


def _series(metric: dict[str, Any], field: str) -> dict[str, list[float]]:
    """One metric's samples of aggregation ``field``, per (lower-case) dimension value."""
    out: dict[str, list[float]] = {}
    for series in _list(metric, "timeseries"):
        key = next((str(m.get("value", "")) for m in _list(series, "metadatavalues")), "")
        samples = [_sample(d.get(field), field) for d in _list(series, "data")]
        out[key.lower()] = [s for s in samples if s is not None]
    return out


def _list(value: Any, key: str) -> list[dict[str, Any]]:
    items = value.get(key) if isinstance(value, dict) else None
    if items is None:
        return []
    if not isinstance(items, list) or not all(isinstance(i, dict) for i in items):
        raise BoundaryError(f"the metrics answer's '{key}' is not an array of objects")
    return items


def _sample(value: Any, field: str) -> float | None:
    if value is None:  # an interval without data
        return None
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        raise BoundaryError(f"the metrics answer has a {field} of {value!r}, not a finite number")
    return float(value)


def gpu_count(sku: Any) -> float:
    """The ``GPUs`` capability of a resource SKU (0 when absent)."""
    if not isinstance(getattr(sku, "name", None), str):
        raise BoundaryError("a resource SKU in the answer has no name")
    value = next((c.value for c in sku.capabilities or [] if getattr(c, "name", None) == "GPUs"), None)
    try:
        count = float(value or 0)
    except (TypeError, ValueError):
        raise BoundaryError(f"resource SKU {sku.name} has a GPUs capability of {value!r}") from None
    if not math.isfinite(count):
        raise BoundaryError(f"resource SKU {sku.name} has a GPUs capability of {value!r}")
    return count
