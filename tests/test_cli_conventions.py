"""The command line's conventions, as a new user expects them from other tools: formats from file
extensions, files with the umask's permissions, ``-`` for stdin, UTF-16 plans, no silent green
on nothing scanned, colour on a terminal only, quiet/compact/severity views, JSON values."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
from click.testing import CliRunner

from reports import text
from scanner import __version__
from scanner.cli.commands import main
from scanner.cli.targets import pair_outputs
from scanner.drift.compare import Change, DriftReport
from scanner.engine.results import ScanResult
from scanner.errors import InputError
from scanner.model.resources import Origin, Resource
from tests.conftest import CHILD_PROCESS, FIXTURES, ROOT, run_cli

DEMO = FIXTURES / "demo"
DEMO_PLAN = str(DEMO / "plan.json")


def one_error_line(done: subprocess.CompletedProcess[str], *fragments: str) -> None:
    """Exit 2 with one line on stderr that says each of ``fragments``."""
    assert done.returncode == 2, done.stderr
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("azai: error: "), done.stderr
    for fragment in fragments:
        assert fragment in lines[0]


# --- formats from --output extensions -----------------------------------------------------


@pytest.mark.parametrize(
    ("formats", "outputs", "targets"),
    [
        ((), (), [("text", None)]),
        ((), ("r.sarif",), [("sarif", "r.sarif")]),
        ((), ("r.SARIF.json",), [("sarif", "r.SARIF.json")]),
        (
            (),
            ("r.json", "r.md", "r.xml", "r.html"),
            [("json", "r.json"), ("markdown", "r.md"), ("junit", "r.xml"), ("html", "r.html")],
        ),
        ((), ("report.txt",), [("text", "report.txt")]),
        (("markdown",), ("r.sarif",), None),
        (("sarif",), ("results.json",), [("sarif", "results.json")]),
        (("sarif",), ("a.sarif", "b.md"), [("sarif", "a.sarif"), ("markdown", "b.md")]),
        (("junit", "text"), ("r.xml",), [("junit", "r.xml"), ("text", None)]),
        (("json", "text", "markdown"), ("r.json",), None),
        ((), ("a.log", "b.sarif"), None),
        (("sarif",), ("a.sarif", "b.log"), None),
    ],
)
def test_outputs_take_their_format_from_the_extension_or_are_refused(
    formats: tuple[str, ...], outputs: tuple[str, ...], targets: list[tuple[str, str | None]] | None
) -> None:
    if targets is None:
        with pytest.raises(InputError):
            pair_outputs(formats, outputs)
    else:
        assert pair_outputs(formats, outputs) == targets


def test_dash_o_report_sarif_writes_sarif_and_a_contradiction_is_one_line(tmp_path: Path) -> None:
    sarif, markdown = tmp_path / "azai.sarif", tmp_path / "azai.md"
    done = run_cli("scan", "--fail-on", "none", "-o", str(sarif), "-o", str(markdown), DEMO_PLAN)
    assert done.returncode == 0 and done.stdout == ""
    assert json.loads(sarif.read_text())["version"] == "2.1.0"
    assert markdown.read_text().startswith("#")
    one_error_line(
        run_cli("scan", "--format", "json", "-o", str(tmp_path / "x.xml"), DEMO_PLAN),
        "--format json with --output",
        "extension says junit",
    )
    one_error_line(
        run_cli("scan", "--format", "json", "--format", "sarif", DEMO_PLAN), "only one report can go to stdout"
    )
    assert not (tmp_path / "x.xml").exists()


# --- report files get the umask's permissions -----------------------------------------------


@pytest.mark.parametrize("umask", [0o022, 0o077, 0o002])
@CHILD_PROCESS
def test_report_files_get_the_users_umask(tmp_path: Path, umask: int) -> None:
    target = tmp_path / "azai.json"
    subprocess.run(
        [sys.executable, "-m", "scanner", "scan", "--fail-on", "none", "-o", str(target), DEMO_PLAN],
        cwd=ROOT,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        preexec_fn=lambda: os.umask(umask),  # the child's umask is what is tested
        check=True,
    )
    assert target.stat().st_mode & 0o777 == 0o666 & ~umask


# --- inputs: stdin, UTF-16, nothing to scan, YAML ------------------------------------------


def scan_stdin(data: bytes, *args: str) -> subprocess.CompletedProcess[str]:
    result = CliRunner().invoke(main, ["scan", "--format", "json", "--fail-on", "none", *args], input=data)
    return subprocess.CompletedProcess(args, result.exit_code, result.stdout, result.stderr)


def test_dash_reads_the_plan_from_stdin_once() -> None:
    plan = Path(DEMO_PLAN).read_bytes()
    done = scan_stdin(plan, "-")
    assert done.returncode == 0, done.stderr
    data = json.loads(done.stdout)
    assert data["inputs"][0]["path"] == "<stdin>" and data["inputs"][0]["kind"] == "terraform"
    assert (
        data["summary"]["findings"]
        == json.loads(run_cli("scan", "--format", "json", "--fail-on", "none", DEMO_PLAN).stdout)["summary"]["findings"]
    )
    one_error_line(scan_stdin(plan, "-", "-"), "- (stdin) is given twice")
    one_error_line(scan_stdin(b"", "-"), "<stdin>: empty file")


@pytest.mark.parametrize("encoding", ["utf-16", "utf-16-le", "utf-16-be", "utf-8-sig"])
def test_a_plan_with_a_byte_order_mark_is_read(tmp_path: Path, encoding: str) -> None:
    text = Path(DEMO_PLAN).read_text(encoding="utf-8")
    bom = {"utf-16-le": b"\xff\xfe", "utf-16-be": b"\xfe\xff"}.get(encoding, b"")
    target = tmp_path / "plan.json"
    target.write_bytes(bom + text.encode(encoding))
    data = json.loads(run_cli("scan", "--format", "json", "--fail-on", "none", str(target)).stdout)
    assert data["summary"]["findings"] == 32
    # without a byte-order mark, UTF-16 is still refused as not UTF-8, in one line
    target.write_bytes(text.encode("utf-16-le"))
    one_error_line(run_cli("scan", str(target)), "binary file, not JSON")
    target.write_bytes(b"\xff\xfe" + b"{\x00\x00\xd8")  # a lone surrogate after the mark
    one_error_line(run_cli("scan", str(target)), "not UTF-16 text after its byte-order mark")


def test_a_folder_with_nothing_to_scan_fails_unless_skip_unknown(tmp_path: Path) -> None:
    (tmp_path / "empty").mkdir()
    one_error_line(run_cli("scan", str(tmp_path / "empty")), "nothing to scan in", "--skip-unknown")
    (tmp_path / "app").mkdir()
    (tmp_path / "app" / "package.json").write_text('{"name": "app"}')
    one_error_line(run_cli("scan", str(tmp_path / "app")), "(1 file(s) skipped as not IaC)")
    # --skip-unknown asked for exactly this (a pre-commit hook handed a package.json): nothing is
    # said, and a report file asked for is still written, for a pipeline step that uploads it
    skipped = run_cli("scan", "--skip-unknown", "-o", str(tmp_path / "azai.sarif"), str(tmp_path / "app"))
    assert (skipped.returncode, skipped.stdout, skipped.stderr) == (0, "", "")
    assert [run["results"] for run in json.loads((tmp_path / "azai.sarif").read_text())["runs"]] == [[]]
    assert run_cli("scan", "--skip-unknown", str(tmp_path / "app")).stdout == ""


@pytest.mark.parametrize("name", ["azure.yaml", "pipeline.yml"])
def test_yaml_gets_a_hint_of_what_to_scan_instead(tmp_path: Path, name: str) -> None:
    (tmp_path / name).write_text("name: app\n")
    one_error_line(run_cli("scan", str(tmp_path / name)), f"{name}: YAML", "scan infra/main.bicep")


# --- rule lists as Checkov and Trivy take them ---------------------------------------------


def rules_run(*args: str) -> tuple[int, set[str]]:
    """How many rules a scan of the demo plan ran, and the rules its findings came from."""
    data = json.loads(run_cli("scan", "--format", "json", "--fail-on", "none", *args, DEMO_PLAN).stdout)
    return data["summary"]["rules"], {f["rule_id"] for f in data["findings"]}


def test_select_takes_a_comma_separated_list_as_well_as_repetition() -> None:
    assert rules_run("--select", "AZAI-207,AZAI-208") == (2, {"AZAI-207", "AZAI-208"})
    assert rules_run("--select", " AZAI-207 , always-on-serverless-gpu") == (2, {"AZAI-207", "AZAI-208"})
    assert rules_run("--select", "AZAI-207,AZAI-208", "--select", "AZAI-101") == (
        3,
        {"AZAI-101", "AZAI-207", "AZAI-208"},
    )


def test_ignore_takes_a_comma_separated_list_as_well_as_repetition() -> None:
    every, found = rules_run()
    assert {"AZAI-101", "AZAI-207", "AZAI-208"} <= found
    assert rules_run("--ignore", "AZAI-207,AZAI-208") == (every - 2, found - {"AZAI-207", "AZAI-208"})
    assert rules_run("--ignore", "AZAI-207,AZAI-208", "--ignore", "AZAI-101") == (
        every - 3,
        found - {"AZAI-101", "AZAI-207", "AZAI-208"},
    )
    assert rules_run("--select", "AZAI-207,AZAI-208,AZAI-101", "--ignore", "AZAI-101") == (
        2,
        {"AZAI-207", "AZAI-208"},
    )


@pytest.mark.parametrize("option", ["--select", "--ignore"])
def test_an_unknown_or_empty_entry_in_a_rule_list_is_one_line_naming_it(option: str) -> None:
    one_error_line(
        run_cli("scan", option, "AZAI-207,AZAI-999", DEMO_PLAN),
        "'AZAI-999' matches no rule id, slug or pillar",
    )
    one_error_line(
        run_cli("scan", option, "AZAI-207", option, "AZAI-208,,AZAI-101", DEMO_PLAN),
        f"{option} 'AZAI-208,,AZAI-101': an empty entry",
    )
    one_error_line(run_cli("scan", option, "", DEMO_PLAN), f"{option} '': an empty entry")


# --- JSON values, never Python reprs -------------------------------------------------------


def test_junit_names_each_input_and_quotes_values_as_json() -> None:
    done = run_cli(
        "scan", "--format", "junit", "--fail-on", "none", "fixtures/demo/plan.json", "fixtures/demo/template.json"
    )
    suites = ET.fromstring(done.stdout)
    cases = {(c.get("classname"), c.get("name")): c for c in suites.iter("testcase")}
    assert len(cases) == len(list(suites.iter("testcase")))  # no two cases share a name
    assert all(c.get("file") for c in cases.values())  # passed cases too
    pools = "AZAI-102.Microsoft.ContainerService/managedClusters/agentPools"
    for source in ("fixtures/demo/plan.json", "fixtures/demo/template.json"):
        failure = cases[(pools, f"aks-demo/gpu ({source})")].find("failure")
        assert failure is not None and failure.text is not None
        assert failure.text.endswith("[properties.nodeTaints: [] -> a taint such as sku=gpu:NoSchedule]")
    network = "AZAI-104.Microsoft.MachineLearningServices/workspaces/computes"
    failure = cases[(network, "ws-demo/train (fixtures/demo/plan.json)")].find("failure")
    assert failure is not None and failure.text is not None and ": null -> " in failure.text


def test_drift_text_quotes_values_as_json(tmp_path: Path) -> None:
    plan = json.loads(Path(DEMO_PLAN).read_text())
    account = {
        "id": "/subscriptions/s1/resourceGroups/rg-ai/providers/Microsoft.CognitiveServices/accounts/oai-demo",
        "name": "oai-demo",
        "location": "eastus",
        "resource_group_name": "rg-ai",
        "kind": "OpenAI",
        "local_auth_enabled": False,
    }
    change = {"actions": ["update"], "before": account, "after": {**account, "local_auth_enabled": True}}
    plan["resource_drift"] = [
        {
            "address": "azurerm_cognitive_account.openai",
            "mode": "managed",
            "type": "azurerm_cognitive_account",
            "name": "openai",
            "provider_name": "registry.terraform.io/hashicorp/azurerm",
            "change": {**change, "after_unknown": {}, "before_sensitive": {}, "after_sensitive": {}},
        }
    ]
    (tmp_path / "plan.json").write_text(json.dumps(plan))
    out = run_cli("drift", "--iac", str(tmp_path / "plan.json")).stdout
    assert "    accounts 'oai-demo': properties.disableLocalAuth is false in Azure, true in Terraform's state\n" in out
    account_resource = Resource(
        account["id"], "Microsoft.CognitiveServices/accounts", "oai-demo", {}, Origin("live", None)
    )
    changes = [
        Change("properties.disableLocalAuth", True, None),
        Change("properties.networkAcls.ipRules", [], ["1.2.3.4"]),
    ]
    report = DriftReport("snapshot", "base.json", "now.json", changed=[(account_resource, changes)])
    lines = text.render(ScanResult(drift=report)).decode().splitlines()
    assert "  changed oai-demo: properties.disableLocalAuth: true -> null" in lines
    assert '  changed oai-demo: properties.networkAcls.ipRules: [] -> ["1.2.3.4"]' in lines


# --- what reports show: quiet, compact, severity, colour -----------------------------------


def test_quiet_writes_no_report_to_stdout_but_keeps_files_and_the_verdict(tmp_path: Path) -> None:
    target = tmp_path / "azai.sarif"
    done = run_cli("scan", "--quiet", "--format", "sarif", "-o", str(target), "--format", "text", DEMO_PLAN)
    assert (done.returncode, done.stdout, done.stderr) == (1, "", "")
    assert json.loads(target.read_text())["runs"]
    assert (
        run_cli("scan", "-q", "--fail-on", "none", DEMO_PLAN).returncode,
        run_cli("scan", "-q", DEMO_PLAN).stdout,
    ) == (0, "")


def test_compact_gives_one_line_per_finding() -> None:
    out = run_cli("scan", "--compact", "fixtures/demo/plan.json").stdout.splitlines()
    findings = [line for line in out if line.split(" ", 1)[0] in ("CRITICAL", "HIGH", "MEDIUM", "LOW")]
    assert len(findings) == 32
    assert findings[0] == (
        "CRITICAL AZAI-101 anonymous-endpoint  Microsoft.MachineLearningServices/workspaces/onlineEndpoints "
        "ws-demo/score: AML online endpoint 'ws-demo/score' uses key authentication (authMode Key), reachable from "
        "public networks (at fixtures/demo/plan.json:1:12585 (azapi_resource.score))"
    )
    assert len(out) == 32 + 1  # no headings, blank lines or cost breakdown: one closing line
    assert out[-1] == (
        f"azai {__version__}: 1 input(s), 18 resource(s), 39 rule(s); 32 finding(s): 1 critical, 5 high, "
        "25 medium, 1 low; 0 undetermined; 0 suppressed; FAILED: 6 finding(s) at or above high"
    )


def test_severity_filters_what_every_report_shows_but_not_the_gate() -> None:
    data = json.loads(run_cli("scan", "--format", "json", "--severity", "HIGH", DEMO_PLAN).stdout)
    assert data["summary"]["by_severity"] == {"critical": 1, "high": 5, "medium": 0, "low": 0}
    done = run_cli("scan", "--severity", "medium", "--fail-on", "medium", DEMO_PLAN)
    assert done.returncode == 1 and "FAILED: 31 finding(s) at or above medium" in done.stdout
    assert "LOW (1)" not in done.stdout and "MEDIUM (25)" in done.stdout
    one_error_line(run_cli("scan", "--severity", "critical", DEMO_PLAN), "--severity critical would hide findings")
    assert run_cli("scan", "--severity", "critical", "--fail-on", "none", DEMO_PLAN).returncode == 0


def on_a_terminal(*args: str, env: dict[str, str] | None = None) -> str:
    """What ``azai`` writes to stdout when stdout is a terminal (a pseudo-terminal here)."""
    import pty

    leader, follower = pty.openpty()
    child = {k: v for k, v in os.environ.items() if k != "NO_COLOR"}
    process = subprocess.Popen(
        [sys.executable, "-m", "scanner", *args],
        stdout=follower,
        stderr=subprocess.DEVNULL,
        cwd=ROOT,
        env={**child, "PYTHONPATH": str(ROOT), **(env or {})},
    )
    os.close(follower)
    received = b""
    while True:
        try:
            chunk = os.read(leader, 65536)
        except OSError:  # EIO: the child closed the terminal
            break
        if not chunk:
            break
        received += chunk
    process.wait(timeout=120)
    os.close(leader)
    return received.decode()


@CHILD_PROCESS
def test_colour_only_on_a_terminal_and_never_with_no_color() -> None:
    coloured = on_a_terminal("scan", DEMO_PLAN)
    assert "\x1b[1;31mCRITICAL (1)\x1b[0m" in coloured and "\x1b[33mMEDIUM (25)\x1b[0m" in coloured
    assert "\x1b[1;31mFAILED: 6 finding(s) at or above high\x1b[0m" in coloured
    for plain in (
        on_a_terminal("scan", "--no-color", DEMO_PLAN),
        on_a_terminal("scan", DEMO_PLAN, env={"NO_COLOR": "1"}),
        run_cli("scan", DEMO_PLAN, process=True).stdout,  # a pipe
    ):
        assert "\x1b[" not in plain and "CRITICAL (1)" in plain


@CHILD_PROCESS
def test_version_as_json_for_scripts_without_loading_the_sdk() -> None:
    code = (
        "import sys\nfrom scanner.cli.commands import main\n"
        "try:\n    main(['version', '--format', 'json'])\nexcept SystemExit:\n    pass\n"
        "print([m for m in sys.modules if m.startswith(('azure', 'checks', 'scanner.sources'))])\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, check=True)
    first, loaded = done.stdout.splitlines()
    assert json.loads(first) == {"version": __version__} and loaded == "[]"
    assert run_cli("version").stdout == run_cli("--version").stdout == f"azai, version {__version__}\n"


def test_readme_synopsis_names_every_scan_option() -> None:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    synopsis = readme.split("`azai scan PATH...", 1)[1].split("`", 1)[0]
    options = {o for p in main.commands["scan"].params for o in p.opts if o.startswith("--")}
    assert sorted(o for o in options if f"[{o}" not in synopsis) == []
