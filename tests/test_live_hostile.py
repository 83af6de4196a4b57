"""Live scans against a hostile endpoint (issue 21): the real SDK clients over HTTPS against the
emulator's hostile answers. Whatever the endpoint answers, the token stays on its origin, the
scan ends (exit 0-3) within limits the code enforces, and what could not be read is a coverage
gap, never a crash and never a pass."""

from __future__ import annotations

import base64
import json
import math
from pathlib import Path
from typing import Any

import pytest

from scanner.emulator.estate import Estate, demo_estate_path
from scanner.emulator.hostile import Answer
from scanner.emulator.server import Emulator, Faults
from scanner.engine.registry import every_live_read, load_checks
from scanner.engine.results import ScanResult
from scanner.model.resources import CoverageGap
from scanner.pipeline.scan import ScanRequest, run_scan
from scanner.sources.live.boundary import Limits, retry_after
from scanner.sources.live.clients import ClientFactory
from scanner.sources.live.collect import LiveInventory, Progress, collect_live
from scanner.sources.live.scope import LiveScope
from tests.conftest import run_cli

SUB = "/subscriptions/00000000-0000-0000-0000-0000000000a1/resourceGroups/rg-ai/providers"
WORKSPACE = f"{SUB}/Microsoft.MachineLearningServices/workspaces/ws-demo"
CLUSTER = f"{SUB}/Microsoft.ContainerService/managedClusters/aks-demo"
APP = f"{SUB}/Microsoft.App/containerApps/app-demo"
GRAPH = "/providers/microsoft.resourcegraph/resources"
DIAGNOSTICS = "/providers/microsoft.insights/diagnosticsettings"
# No backoff between retries, so tests that retry do not sleep; every other bound as shipped.
QUICK = Limits(backoff_factor=0.0)
ERROR = {"error": {"code": "Hostile", "message": "no"}}

EVERYTHING = every_live_read(load_checks())


def estate() -> Estate:
    """The demo estate with a Container App and its auth configuration, so that every kind of
    collection the collector pages through is there: subscriptions, Resource Graph, AML
    children, agent pools and auth configs."""
    demo = Estate.load(demo_estate_path())
    app = {"id": APP, "name": "app-demo", "type": "Microsoft.App/containerApps", "location": "eastus", "properties": {}}
    auth = {
        "id": f"{APP}/authConfigs/current",
        "name": "current",
        "type": "Microsoft.App/containerApps/authConfigs",
        "properties": {"platform": {"enabled": True}},
    }
    return Estate(
        demo.subscriptions,
        [*demo.resources, app, auth],
        metrics=demo.metrics,
        skus=demo.skus,
        retail_prices=demo.retail_prices,
    )


def collect(emulator: Emulator, bounds: Limits = QUICK, timeout: float | None = None) -> LiveInventory:
    """The live collection with chosen limits (the CLI keeps the shipped ones)."""
    factory = ClientFactory(arm_endpoint=emulator.endpoint, bounds=bounds, timeout=timeout)
    try:
        return collect_live(LiveScope(all_subscriptions=True), factory, Progress(False), EVERYTHING)
    finally:
        factory.close()


def scan(emulator: Emulator, *select: str) -> ScanResult:
    return run_scan(
        ScanRequest(paths=(), live=LiveScope(all_subscriptions=True), arm_endpoint=emulator.endpoint, select=select)
    )


def gap(coverage: list[CoverageGap], scope_end: str) -> CoverageGap:
    """The one gap whose scope ends with ``scope_end``."""
    found = [g for g in coverage if g.scope.lower().endswith(scope_end.lower())]
    assert len(found) == 1, coverage
    return found[0]


def requests_to(emulator: Emulator, suffix: str) -> int:
    return sum(1 for r in emulator.log if r.path.lower().endswith(suffix))


@pytest.mark.parametrize(
    ("suffix", "scope"),
    [
        ("/subscriptions", "/subscriptions"),
        ("/computes", f"{WORKSPACE}/computes"),
        ("/agentpools", f"{CLUSTER}/agentPools"),
        ("/authconfigs", f"{APP}/authConfigs"),
    ],
)
def test_a_next_link_off_the_endpoint_is_refused_and_the_token_never_leaves(serve, suffix: str, scope: str) -> None:  # type: ignore[no-untyped-def]
    emulator = serve(estate(), Faults(page_size=1, next_links={suffix: "{offhost}/stolen?api-version=1"}))
    result = scan(emulator)
    assert emulator.witness.seen == []  # nothing at all reached the other port, token or not
    refused = gap(result.coverage, scope)
    host = emulator.witness.endpoint.removeprefix("https://")
    assert refused.status is None
    assert refused.reason == f"refused a link to {host}: the token goes only to {emulator.endpoint}"
    assert not result.complete and emulator.writes() == []


@pytest.mark.parametrize(
    ("url", "allowed"),
    [
        ("https://arm.example:8443/subscriptions?api-version=1", True),
        ("HTTPS://ARM.example:8443/subscriptions", True),  # the origin's case does not matter
        ("https://arm.example:8443", True),
        ("https://arm.example:8443.evil.example/subscriptions", False),
        ("https://arm.example:84430/subscriptions", False),
        ("https://arm.example:8443@evil.example/subscriptions", False),
        ("https://arm.example/subscriptions", False),  # port 443, not 8443
        ("http://arm.example:8443/subscriptions", False),
        ("https://evil.example/https://arm.example:8443/", False),
    ],
)
def test_the_origin_check_compares_scheme_host_and_port(url: str, allowed: bool) -> None:
    """A URL that begins with the endpoint's exact authority passes at once; any other is
    compared by scheme, host and port, so a longer host, another port or user information
    that hides another host is refused."""
    from scanner.sources.live.boundary import Boundary, BoundaryError

    boundary = Boundary("https://arm.example:8443")
    if allowed:
        boundary.check_origin(url)
    else:
        with pytest.raises(BoundaryError):
            boundary.check_origin(url)


def test_the_witness_sees_a_token_that_is_sent(serve) -> None:  # type: ignore[no-untyped-def]
    """The test above proves something: a request sent to the witness with a token is recorded."""
    import requests

    emulator = serve(estate())
    requests.get(
        f"{emulator.witness.endpoint}/x",
        headers={"Authorization": "Bearer t"},
        verify=str(emulator.ca_bundle),
        timeout=30,
    )
    assert emulator.witness.tokens_seen == 1


@pytest.mark.parametrize(
    ("suffix", "link", "scope"),
    [
        ("/subscriptions", "{same}", "/subscriptions"),
        ("/onlineendpoints", "{same}", f"{WORKSPACE}/onlineEndpoints"),
        ("/agentpools", "{same}", f"{CLUSTER}/agentPools"),
        (GRAPH, "0", "/subscriptions/00000000-0000-0000-0000-0000000000a1"),
    ],
)
def test_a_repeating_next_link_or_skip_token_ends_that_collection(serve, suffix: str, link: str, scope: str) -> None:  # type: ignore[no-untyped-def]
    emulator = serve(estate(), Faults(next_links={suffix: link}))
    inventory = collect(emulator)
    assert gap(inventory.coverage, scope).reason == "the next-page link repeats after 1 page(s)"
    assert requests_to(emulator, suffix) == 2


def test_a_collection_longer_than_the_page_cap_ends_with_a_gap(serve) -> None:  # type: ignore[no-untyped-def]
    emulator = serve(estate(), Faults(page_size=1))
    inventory = collect(emulator, Limits(backoff_factor=0.0, max_pages=1))
    assert gap(inventory.coverage, f"{WORKSPACE}/computes").reason == "more than 1 pages"


@pytest.mark.parametrize(("next_link", "kind"), [(5, "int"), (["x"], "list"), ({"href": "x"}, "dict")])
@pytest.mark.parametrize(
    ("suffix", "scope"),
    [
        ("/subscriptions", "/subscriptions"),
        ("/computes", f"{WORKSPACE}/computes"),
        ("/agentpools", f"{CLUSTER}/agentPools"),
    ],
)
def test_a_next_link_that_is_not_a_string_is_a_gap(serve, suffix: str, scope: str, next_link: Any, kind: str) -> None:  # type: ignore[no-untyped-def]
    emulator = serve(estate(), Faults(next_links={suffix: next_link}))
    inventory = collect(emulator)
    assert gap(inventory.coverage, scope).reason == f"the answer's nextLink is a JSON {kind}, not a URL"


@pytest.mark.parametrize(
    ("delivery", "bounds", "reason"),
    [
        ("stall", Limits(backoff_factor=0.0, read_timeout=0.3), "Read timed out. (read timeout=0.3)"),
        ("trickle", Limits(backoff_factor=0.0, response_seconds=0.3), "the answer was still arriving after 0.3 s"),
        ("trickle-head", Limits(backoff_factor=0.0, response_seconds=0.3), "the answer was still arriving after 0.3 s"),
    ],
)
def test_a_stalled_or_trickling_answer_is_ended_by_the_request_limits(  # type: ignore[no-untyped-def]
    serve, delivery: str, bounds: Limits, reason: str
) -> None:
    emulator = serve(estate(), Faults(answers={"/computes": Answer(body={"value": []}, delivery=delivery)}))
    inventory = collect(emulator, bounds)
    stopped = gap(inventory.coverage, f"{WORKSPACE}/computes")
    assert stopped.status is None and reason in stopped.reason
    assert {r.id.rsplit("/", 1)[-1] for r in inventory.resources} >= {"ws-demo", "aks-demo", "score"}


def test_the_scan_time_limit_ends_a_stall_with_exit_3_and_one_gap(serve, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    emulator = serve(estate(), Faults(answers={"/computes": Answer(delivery="stall")}))
    done = run_cli(
        "scan",
        "--arm-endpoint",
        emulator.endpoint,
        "--all-subscriptions",
        "--timeout",
        "2",
        "--select",  # one rule that lists computes and reads no metrics: the stall is the one read left
        "AZAI-104",
        "--format",
        "json",
        "--fail-on",
        "none",
        cwd=tmp_path,
        process=True,  # its timeout= fails the test if the scan hangs
    )
    assert done.returncode == 3, done.stderr
    coverage = json.loads(done.stdout)["coverage"]
    limited = [g for g in coverage if "time limit of 2 s" in g["reason"]]
    assert len(limited) == 1 and limited[0]["scope"] == "1 read(s)"
    assert f"{WORKSPACE}/computes" in limited[0]["reason"]


@pytest.mark.parametrize("delivery", ["trickle-head", "trickle"])
def test_the_scan_time_limit_ends_an_answer_trickled_a_byte_every_2_s_with_exit_3(  # type: ignore[no-untyped-def]
    serve, tmp_path: Path, delivery: str
) -> None:
    """A byte every 2 s never lets a read time out, and its status line and headers alone take
    minutes: the request's deadline, here the scan's --timeout, ends it, and the read it held is
    named in the scan's one time-limit gap."""
    trickled = Answer(body={"value": []}, delivery=delivery, interval=2.0)
    emulator = serve(estate(), Faults(answers={"/computes": trickled}))
    done = run_cli(
        "scan",
        "--arm-endpoint",
        emulator.endpoint,
        "--all-subscriptions",
        "--timeout",
        "3",
        "--select",  # one rule that lists computes and reads no metrics: the trickle is the one read left
        "AZAI-104",
        "--format",
        "json",
        "--fail-on",
        "none",
        cwd=tmp_path,
        process=True,  # its timeout= fails the test if the scan hangs
    )
    assert done.returncode == 3, done.stderr
    assert [(g["scope"], g["status"], g["reason"]) for g in json.loads(done.stdout)["coverage"]] == [
        ("1 read(s)", None, f"the scan's time limit of 3 s was reached before these were read: {WORKSPACE}/computes")
    ]


def test_timeout_is_in_the_help_of_scan_and_drift() -> None:
    for command in ("scan", "drift"):
        assert "--timeout SECONDS" in run_cli(command, "--help").stdout


@pytest.mark.parametrize(
    "header",
    [
        {"Retry-After": "86400"},
        {"Retry-After": "inf"},
        {"Retry-After": "1e400"},
        {"Retry-After": "Fri, 31 Dec 9999 23:59:59 GMT"},
        {"retry-after-ms": "86400000"},
    ],
)
def test_a_retry_after_too_long_to_wait_is_a_gap_without_waiting(serve, header: dict[str, str]) -> None:  # type: ignore[no-untyped-def]
    emulator = serve(estate(), Faults(answers={"/computes": Answer(429, ERROR, header)}))
    result = scan(emulator)
    throttled = gap(result.coverage, f"{WORKSPACE}/computes")
    assert throttled.status == 429 and throttled.reason.startswith("the server asked to retry after ")
    assert throttled.reason.endswith("; azai waits at most 60 s")
    assert requests_to(emulator, "/computes") == 1  # no retry, so no wait


def test_a_retry_after_that_is_not_a_time_falls_back_to_bounded_retries(serve) -> None:  # type: ignore[no-untyped-def]
    garbage = {"Retry-After": "soon", "retry-after-ms": "Fri, 31 Dec 9999 23:59:59 GMT"}
    emulator = serve(estate(), Faults(answers={"/computes": Answer(429, ERROR, garbage)}))
    inventory = collect(emulator)
    assert gap(inventory.coverage, f"{WORKSPACE}/computes").status == 429
    assert requests_to(emulator, "/computes") == 5  # the first try and four retries


@pytest.mark.parametrize(
    ("headers", "seconds"),
    [
        ({"Retry-After": "7"}, 7.0),
        ({"retry-after": "2.5"}, 2.5),
        ({"Retry-After": "Thu, 01 Jan 1970 00:00:00 GMT"}, 0.0),
        ({"retry-after-ms": "1500"}, 1.5),
        ({"x-ms-retry-after-ms": "250"}, 0.25),
        ({"Retry-After": "3", "retry-after-ms": "9000"}, 3.0),
        ({"Retry-After": "inf"}, math.inf),
        ({"Retry-After": "nan"}, None),
        ({"Retry-After": "-4"}, None),
        ({"retry-after-ms": "Fri, 31 Dec 9999 23:59:59 GMT"}, None),
        ({"x-ms-user-quota-resets-after": "00:00:03"}, 3.0),
        ({"x-ms-user-quota-resets-after": "00:01:00.5"}, 60.5),
        ({"x-ms-user-quota-resets-after": "3"}, None),
        ({"x-ms-user-quota-resets-after": "00:-1:00"}, None),
        ({"Retry-After": "2", "x-ms-user-quota-resets-after": "00:00:09"}, 2.0),
        ({}, None),
    ],
)
def test_retry_after_is_read_in_seconds_http_dates_and_milliseconds(
    headers: dict[str, str], seconds: float | None
) -> None:
    assert retry_after(headers) == seconds


def test_an_http_date_retry_after_is_the_time_until_it() -> None:
    import email.utils
    import time

    later = email.utils.formatdate(time.time() + 3600, usegmt=True)
    wait = retry_after({"Retry-After": later})
    assert wait is not None and 3500 < wait <= 3600


def test_a_500_storm_on_one_collection_costs_bounded_retries_and_the_rest_is_read(serve) -> None:  # type: ignore[no-untyped-def]
    emulator = serve(estate(), Faults(answers={"/computes": Answer(500, ERROR)}))
    inventory = collect(emulator)
    assert gap(inventory.coverage, f"{WORKSPACE}/computes").status == 500
    assert requests_to(emulator, "/computes") == 5
    assert {r.id.rsplit("/", 1)[-1] for r in inventory.resources} >= {"score", "gpu", "system", "current"}


def test_the_retry_budget_is_shared_by_the_whole_scan(serve) -> None:  # type: ignore[no-untyped-def]
    storm = Answer(500, ERROR)
    emulator = serve(estate(), Faults(answers={"/computes": storm, "/agentpools": storm, "/authconfigs": storm}))
    inventory = collect(emulator, Limits(backoff_factor=0.0, retry_floor=2, retry_share=0.0))
    # four collections (the demo's GPU app has auth configs too): one try each, two retries in all
    assert [g.status for g in inventory.coverage] == [500, 500, 500, 500]
    assert sum(requests_to(emulator, s) for s in ("/computes", "/agentpools", "/authconfigs")) == 4 + 2


@pytest.mark.parametrize(
    ("body", "reason"),
    [
        (b"", "the answer is not JSON"),  # an empty body: read raw, it is no JSON at all
        ({}, "Resource Graph answered without a 'data' array"),
        ({"data": "rows"}, "Resource Graph answered without a 'data' array"),
        ({"data": [5]}, "a Resource Graph row lacks one of id, name, type, subscriptionId, resourceGroup"),
        ({"data": [{"id": 5}]}, "a Resource Graph row lacks one of id, name, type, subscriptionId, resourceGroup"),
        (b"[" * 100_000 + b"]" * 100_000, "the answer nests too deeply"),
    ],
)
def test_a_resource_graph_answer_that_cannot_be_true_is_incomplete_never_a_pass(  # type: ignore[no-untyped-def]
    serve, tmp_path: Path, body: Any, reason: str
) -> None:
    emulator = serve(estate(), Faults(answers={GRAPH: Answer(body=body)}))
    done = run_cli("scan", "--arm-endpoint", emulator.endpoint, "--all-subscriptions", "--format", "json", cwd=tmp_path)
    assert done.returncode == 3, done.stderr
    report = json.loads(done.stdout)
    assert report["summary"]["complete"] is False
    assert [(g["scope"], g["reason"]) for g in report["coverage"]] == [
        ("/subscriptions/00000000-0000-0000-0000-0000000000a1", reason)
    ]


def test_an_answer_larger_than_the_limit_is_a_gap(serve) -> None:  # type: ignore[no-untyped-def]
    # a limit the demo's Resource Graph page fits under, and the padded computes list does not (a
    # week of hourly metrics does not either: those are gaps of their own)
    emulator = serve(estate(), Faults(answers={"/computes": Answer(body={"value": [], "padding": "x" * 9000})}))
    inventory = collect(emulator, Limits(backoff_factor=0.0, response_bytes=8192))
    assert gap(inventory.coverage, f"{WORKSPACE}/computes").reason == "the answer was larger than 8,192 bytes"


@pytest.mark.parametrize(
    ("body", "status", "reason"),
    [
        ({"value": "x"}, None, "the answer is not an ARM list (an object with a 'value' array)"),
        ([], None, "the answer is not an ARM list (an object with a 'value' array)"),
        ({"value": [5]}, None, "a resource in the answer is a JSON int, not an object"),
        ({"value": [{"name": "no-id"}]}, None, "a resource in the answer has no ARM id"),
        (
            {"value": [{"id": f"{WORKSPACE}/computes/c", "name": 5}]},
            None,
            "a resource in the answer has a name that is a JSON int",
        ),
        (b"not json", 200, "JSON is invalid: Expecting value: line 1 column 1 (char 0)"),
        (
            b'{"value": ["\xc3("]}',  # declared UTF-8, and not
            200,
            "JSON is invalid: 'utf-8' codec can't decode byte 0xc3 in position 12: invalid continuation byte",
        ),
    ],
)
def test_an_arm_list_in_a_shape_the_api_does_not_promise_is_a_gap(  # type: ignore[no-untyped-def]
    serve, body: Any, status: int | None, reason: str
) -> None:
    emulator = serve(estate(), Faults(answers={"/computes": Answer(body=body)}))
    inventory = collect(emulator)
    found = gap(inventory.coverage, f"{WORKSPACE}/computes")
    assert (found.status, found.reason) == (status, reason)


@pytest.mark.parametrize("sample", [math.nan, math.inf, -math.inf])
def test_a_metric_that_is_not_a_finite_number_leaves_idle_gpu_undetermined(serve, sample: float) -> None:  # type: ignore[no-untyped-def]
    hostile = estate()
    for series in hostile.metrics[WORKSPACE.lower()].values():
        series["train"] = [*series["train"][:-1], sample]
    emulator = serve(hostile)
    result = scan(emulator, "AZAI-202")
    assert [f for f in result.findings if f.check.id == "AZAI-202"] == []
    assert {u.resource.name for u in result.undetermined if u.check.id == "AZAI-202"} == {
        "ws-demo/train",
        "ws-demo/notebook",
    }
    assert "not a finite number" in gap(result.coverage, f"{WORKSPACE}/providers/Microsoft.Insights/metrics").reason


def test_diagnostic_logging_is_undetermined_where_its_read_failed(serve) -> None:  # type: ignore[no-untyped-def]
    emulator = serve(estate())
    readable = scan(emulator, "AZAI-501")
    assert {f.resource.name for f in readable.findings} == {"ws-demo", "oai-demo", "oai-demo-eu"}
    emulator = serve(estate(), Faults(answers={DIAGNOSTICS: Answer(403, ERROR)}))
    unreadable = scan(emulator, "AZAI-501")
    assert unreadable.findings == []
    assert {(u.check.id, u.resource.name) for u in unreadable.undetermined} == {
        ("AZAI-501", "ws-demo"),
        ("AZAI-501", "oai-demo"),
        ("AZAI-501", "oai-demo-eu"),
    }
    assert [g.status for g in unreadable.coverage] == [403, 403, 403]


def quoted_message(reason: str, code: str) -> str:
    """The server's message that a coverage reason or error line quotes, after the error's code
    ("Code: message"; azure-core's own text of an ARM error repeats it: "Code: (Code) message")."""
    return reason.removeprefix(f"{code}: ").removeprefix(f"({code}) ")


def test_an_echoed_token_never_reaches_a_report_or_a_gap(serve, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    echoing = {
        "value": [
            {
                "id": f"{WORKSPACE}/computes/{{token}}",
                "name": "{token}",
                "type": "Microsoft.MachineLearningServices/workspaces/computes",
                "location": "eastus",
                "properties": {"computeType": "AmlCompute", "description": "{token}"},
            }
        ]
    }
    message = (
        "token {token} refused; Authorization: Bearer {token}; "
        "id_token eyJhbGciOiJSUzI1NiJ9.eyJzdWIiOiJ4In0.c2lnbmF0dXJl; "
        "see https://st.blob.core.windows.net/c?sv=2022&sig=SIGNATURE1&key=KEYVALUE1"
    )
    emulator = serve(
        estate(),
        Faults(
            answers={
                "/computes": Answer(body=echoing),
                "/onlineendpoints": Answer(400, {"error": {"code": "Echo", "message": message}}),
            }
        ),
    )
    outputs = {fmt: tmp_path / f"report.{fmt}" for fmt in ("json", "sarif", "markdown", "junit", "html")}
    args = [a for fmt, path in outputs.items() for a in ("--format", fmt, "--output", str(path))]
    done = run_cli(
        "scan", "--arm-endpoint", emulator.endpoint, "--all-subscriptions", "--fail-on", "none", *args, cwd=tmp_path
    )
    assert done.returncode == 3, done.stderr
    texts = [done.stdout, done.stderr, *(path.read_text() for path in outputs.values())]
    for secret in ("emulator-token-", "eyJhbGciOiJSUzI1NiJ9", "SIGNATURE1", "KEYVALUE1"):
        assert not [t for t in texts if secret in t], secret
    coverage = json.loads(outputs["json"].read_text())["coverage"]
    assert [quoted_message(g["reason"], "Echo") for g in coverage if g["scope"] == f"{WORKSPACE}/onlineEndpoints"] == [
        "token [REDACTED] refused; Authorization: Bearer [REDACTED]; id_token [REDACTED]; "
        "see https://st.blob.core.windows.net/c?sv=2022&sig=[REDACTED]&key=[REDACTED]"
    ]
    assert f"{WORKSPACE}/computes/[REDACTED]" in outputs["json"].read_text()


# Secrets a hostile endpoint echoes into its errors, each in a form Redactor.text knows: the
# caller's own token ({token}), API keys as headers, a SAS URL, a Basic Authorization header, a
# client secret in JSON, a connection string. Letters and digits only, so that no report's
# escaping could hide one from the search.
BASIC_PASSWORD = "EchoedBasicPw1"
BASIC_CREDENTIALS = base64.b64encode(f"ops:{BASIC_PASSWORD}".encode()).decode()
ECHOED = {
    "token": "emulator-token-",
    "api key": "EchoedApiKey7f3a",
    "apim key": "EchoedApimKey42",
    "sas signature": "EchoedSasSig0x9",
    "basic credentials": BASIC_CREDENTIALS.rstrip("="),
    "basic password": BASIC_PASSWORD,
    "client secret": "EchoedClientSecret5",
    "account key": "EchoedAccountKey8",
}
ECHO_MESSAGE = (
    "request refused: Authorization: Bearer {token}; "
    f"api-key: {ECHOED['api key']}; Ocp-Apim-Subscription-Key: {ECHOED['apim key']}; "
    f"https://st.blob.core.windows.net/c?sv=2022-11-02&se=2030-01-01&sr=b&sp=r&sig={ECHOED['sas signature']}; "
    f"proxy said Authorization: Basic {BASIC_CREDENTIALS}"
)


def echoing_error(code: str) -> dict[str, Any]:
    """An ARM error that echoes every secret in its message, and again, with the rest, in a
    nested detail."""
    detail = (
        f'{ECHO_MESSAGE}; sent {{"client_secret": "{ECHOED["client secret"]}"}}; '
        f"DefaultEndpointsProtocol=https;AccountName=st;AccountKey={ECHOED['account key']};EndpointSuffix=x"
    )
    return {"error": {"code": code, "message": ECHO_MESSAGE, "details": [{"code": "Inner", "message": detail}]}}


def test_secrets_echoed_into_4xx_and_5xx_errors_reach_no_output(serve, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    emulator = serve(
        estate(),
        Faults(
            answers={
                "/onlineendpoints": Answer(400, echoing_error("EchoBadRequest")),
                "/agentpools": Answer(403, echoing_error("EchoForbidden")),
                "/computes": Answer(501, echoing_error("EchoNotImplemented")),  # a 5xx azure-core does not retry
            }
        ),
    )
    formats = ("text", "json", "sarif", "markdown", "junit", "html")
    outputs = {fmt: tmp_path / f"report-{fmt}" for fmt in formats}
    args = [a for fmt, path in outputs.items() for a in ("--format", fmt, "--output", str(path))]
    done = run_cli(
        "scan",
        "--arm-endpoint",
        emulator.endpoint,
        "--all-subscriptions",
        "--fail-on",
        "none",
        *args,
        "--format",  # a format past the outputs goes to stdout
        "text",
        cwd=tmp_path,
    )
    assert done.returncode == 3, done.stderr
    texts = {"stdout": done.stdout, "stderr": done.stderr, **{fmt: path.read_text() for fmt, path in outputs.items()}}
    leaked = {(name, where) for name, secret in ECHOED.items() for where, text in texts.items() if secret in text}
    assert leaked == set()
    quoted = (
        "request refused: Authorization: Bearer [REDACTED]; api-key: [REDACTED]; "
        "Ocp-Apim-Subscription-Key: [REDACTED]; "
        "https://st.blob.core.windows.net/c?sv=2022-11-02&se=2030-01-01&sr=b&sp=r&sig=[REDACTED]; "
        "proxy said Authorization: Basic [REDACTED]"
    )
    coverage = json.loads(texts["json"])["coverage"]
    codes = {f"{CLUSTER}/agentPools": "EchoForbidden", f"{WORKSPACE}/computes": "EchoNotImplemented"}
    codes[f"{WORKSPACE}/onlineEndpoints"] = "EchoBadRequest"
    assert sorted((g["scope"], g["status"], quoted_message(g["reason"], codes[g["scope"]])) for g in coverage) == [
        (f"{CLUSTER}/agentPools", 403, quoted),
        (f"{WORKSPACE}/computes", 501, quoted),
        (f"{WORKSPACE}/onlineEndpoints", 400, quoted),
    ]
    # every report quotes the three reasons, each with its five markers (escaped as the format
    # escapes brackets: markdown writes &#91;REDACTED&#93;); stderr says nothing
    assert {where: text.count("REDACTED") for where, text in texts.items()} == {
        "stdout": 15,
        "stderr": 0,
        **dict.fromkeys(formats, 15),
    }


def test_an_authentication_failure_that_echoes_the_token_is_one_redacted_line(serve, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    message = f"Bearer {{token}} is not valid: {{token}}; {ECHO_MESSAGE}"
    failure = {"error": {"code": "InvalidAuthenticationToken", "message": message}}
    emulator = serve(estate(), Faults(answers={GRAPH: Answer(401, failure)}))
    done = run_cli("scan", "--arm-endpoint", emulator.endpoint, "--all-subscriptions", cwd=tmp_path)
    assert done.returncode == 2 and done.stdout == ""
    [line] = done.stderr.strip().splitlines()
    assert line.startswith("azai: error: authentication failed: ")
    assert quoted_message(line.removeprefix("azai: error: authentication failed: "), "InvalidAuthenticationToken") == (
        "Bearer [REDACTED] is not valid: [REDACTED]; request refused: Authorization: Bearer [REDACTED]; "
        "api-key: [REDACTED]; Ocp-Apim-Subscription-Key: [REDACTED]; "
        "https://st.blob.core.windows.net/c?sv=2022-11-02&se=2030-01-01&sr=b&sp=r&sig=[REDACTED]; "
        "proxy said Authorization: Basic [REDACTED]"
    )


@pytest.mark.parametrize("status", [204, 302])
def test_a_resource_graph_answer_other_than_200_is_a_gap_with_its_status(serve, tmp_path: Path, status: int) -> None:  # type: ignore[no-untyped-def]
    """The query is sent raw now; as the typed call did, only a 200 is an answer: a 204 or a
    redirect (which azure-core does not follow for a POST) is a gap that names its status."""
    emulator = serve(estate(), Faults(answers={GRAPH: Answer(status, b"", {"Location": "/elsewhere"})}))
    done = run_cli("scan", "--arm-endpoint", emulator.endpoint, "--all-subscriptions", "--format", "json", cwd=tmp_path)
    assert done.returncode == 3, done.stderr
    report = json.loads(done.stdout)
    assert [(g["scope"], g["status"]) for g in report["coverage"]] == [
        ("/subscriptions/00000000-0000-0000-0000-0000000000a1", status)
    ]


def test_a_throttled_resource_graph_query_is_retried_as_its_quota_header_says(serve) -> None:  # type: ignore[no-untyped-def]
    """Resource Graph throttles with x-ms-user-quota-resets-after, not Retry-After, and azure-core
    retries no POST on a 429: the query reads, so it is retried like a GET, within the budget."""
    resets = {"x-ms-user-quota-remaining": "0", "x-ms-user-quota-resets-after": "00:00:00"}
    emulator = serve(estate(), Faults(answers={GRAPH: Answer(429, ERROR, resets)}))
    before = len(emulator.log)
    inventory = collect(emulator)
    sent = [r for r in emulator.log[before:] if r.path.lower() == GRAPH]
    assert len(sent) == 5  # the first try and azai's four retries
    assert [(g.scope, g.status) for g in inventory.coverage] == [
        ("/subscriptions/00000000-0000-0000-0000-0000000000a1", 429)
    ]
    # a reset further off than azai waits is a gap at once
    emulator.serve(estate(), Faults(answers={GRAPH: Answer(429, ERROR, {"x-ms-user-quota-resets-after": "01:00:00"})}))
    before = len(emulator.log)
    inventory = collect(emulator)
    assert len([r for r in emulator.log[before:] if r.path.lower() == GRAPH]) == 1
    assert [g.reason for g in inventory.coverage] == [
        "the server asked to retry after 3,600 s; azai waits at most 60 s"
    ]
