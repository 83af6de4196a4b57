"""The command line as users run it: exit codes, formats, rules listing, start-up cost."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from scanner.engine.registry import load_checks
from tests.conftest import CHILD_PROCESS, FIXTURES, ROOT, cli_json, run_cli

DEMO_PLAN = str(FIXTURES / "demo" / "plan.json")


@CHILD_PROCESS
def test_version_imports_no_azure_sdk_and_no_rules() -> None:
    code = (
        "import sys\n"
        "from scanner.cli.commands import main\n"
        "try:\n    main(['--version'])\nexcept SystemExit:\n    pass\n"
        "loaded = [m for m in sys.modules if m.startswith(('azure', 'checks', 'scanner.sources'))]\n"
        "print(repr(loaded))\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, check=True)
    assert done.stdout.startswith("azai, version ")
    assert done.stdout.strip().splitlines()[-1] == "[]"


@CHILD_PROCESS
def test_a_scan_of_files_imports_no_live_reader(tmp_path: Path) -> None:
    """The SDK clients, the transport and TLS are a live scan's; a plan scan starts without them."""
    code = (
        "import sys\n"
        "from scanner.cli.commands import main\n"
        f"try:\n    main(['scan', '--fail-on', 'none', '--format', 'json', '-o', 'x.json', {DEMO_PLAN!r}])\n"
        "except SystemExit:\n    pass\n"
        "live = ('scanner.sources.live.collect', 'scanner.sources.live.clients', 'scanner.sources.live.transport')\n"
        "print(repr([m for m in sys.modules if m in live or m.startswith(('azure', 'ssl'))]))\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=tmp_path, check=True)
    assert json.loads((tmp_path / "x.json").read_text())["findings"]
    assert done.stdout.strip().splitlines()[-1] == "[]"


def test_exit_codes_follow_the_gate() -> None:
    assert run_cli("scan", DEMO_PLAN).returncode == 1  # a critical finding, default gate high
    assert run_cli("scan", "--fail-on", "critical", DEMO_PLAN).returncode == 1
    assert run_cli("scan", "--fail-on", "none", DEMO_PLAN).returncode == 0
    clean = FIXTURES / "rules" / "AZAI-102" / "template.json"
    assert run_cli("scan", "--fail-on", "critical", str(clean)).returncode == 0
    assert run_cli("scan", "--fail-on", "medium", str(clean)).returncode == 1


def test_text_report_groups_by_severity_with_counts() -> None:
    out = run_cli("scan", DEMO_PLAN).stdout
    assert "CRITICAL (1)" in out and "HIGH (5)" in out and "MEDIUM (25)" in out and "LOW (1)" in out
    assert out.index("CRITICAL (1)") < out.index("HIGH (5)") < out.index("MEDIUM (25)") < out.index("LOW (1)")
    assert "32 finding(s): 1 critical, 5 high, 25 medium, 1 low; 0 undetermined" in out
    assert "FAILED: 6 finding(s) at or above high" in out


def test_json_report_has_the_documented_fields() -> None:
    data = cli_json(DEMO_PLAN)
    assert data["schema_version"] == "1.8"
    finding = next(f for f in data["findings"] if f["rule_id"] == "AZAI-101")
    assert finding["slug"] == "anonymous-endpoint"
    assert finding["severity"] == "critical"
    assert finding["pillar"] == "Security"
    assert finding["resource_name"] == "ws-demo/score"
    assert finding["resource_type"] == "Microsoft.MachineLearningServices/workspaces/onlineEndpoints"
    assert finding["resource_id"].endswith("/workspaces/ws-demo/onlineEndpoints/score")
    assert finding["address"] == "azapi_resource.score"
    assert finding["evidence"] == {
        "path": "properties.authMode",
        "observed": "Key",
        "expected": "AADToken or AMLToken",
    }
    assert finding["location"]["uri"].endswith("fixtures/demo/plan.json")
    assert finding["location"]["start_line"] == 1 and finding["location"]["start_column"] > 1
    assert len(finding["fingerprint"]) == 32 and finding["cost"] is None
    assert data["summary"]["by_severity"] == {"critical": 1, "high": 5, "medium": 25, "low": 1}


def test_output_file_is_written_and_identical_to_stdout(tmp_path: Path) -> None:
    target = tmp_path / "out" / "report.json"
    done = run_cli("scan", "--format", "json", "--fail-on", "none", "--output", str(target), DEMO_PLAN)
    assert done.returncode == 0 and done.stdout == ""
    assert json.loads(target.read_text()) == cli_json(DEMO_PLAN)
    assert [p.name for p in target.parent.iterdir()] == ["report.json"]


def test_output_is_deterministic() -> None:
    first = run_cli(
        "scan", "--format", "json", "--fail-on", "none", DEMO_PLAN, str(FIXTURES / "demo" / "template.json")
    )
    second = run_cli(
        "scan", "--format", "json", "--fail-on", "none", DEMO_PLAN, str(FIXTURES / "demo" / "template.json")
    )
    assert first.stdout == second.stdout


def test_rules_lists_every_rule_and_prints_one() -> None:
    listing = run_cli("rules").stdout.splitlines()
    assert [line.split()[0] for line in listing] == [c.id for c in load_checks()]
    one = run_cli("rules", "AZAI-101")
    assert one.returncode == 0 and one.stdout.startswith("# AZAI-101 anonymous-endpoint")
    assert run_cli("rules", "shared-gpu-pool").stdout.startswith("# AZAI-102 shared-gpu-pool")
    missing = run_cli("rules", "AZAI-999")
    assert missing.returncode == 2 and "no rule 'AZAI-999'" in missing.stderr


def test_sensitive_plan_values_never_reach_any_output(tmp_path: Path) -> None:
    secret = "never-print-this-key"
    assert secret in (FIXTURES / "demo" / "plan.json").read_text()
    for fmt in ("text", "json"):
        done = run_cli("scan", "--format", fmt, "--fail-on", "none", DEMO_PLAN)
        assert secret not in done.stdout and secret not in done.stderr


def test_output_to_a_device_or_pipe_writes_in_place(tmp_path: Path) -> None:
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    reader = subprocess.Popen(["cat", str(fifo)], stdout=subprocess.PIPE, text=True)
    done = run_cli("scan", "--format", "json", "--fail-on", "none", "--output", str(fifo), DEMO_PLAN)
    received = reader.communicate(timeout=60)[0]
    assert done.returncode == 0
    assert fifo.exists() and not fifo.is_file()  # still a pipe, not replaced by a file
    assert json.loads(received)["summary"]["findings"] == 32


def test_rule_options_change_a_threshold_and_bad_ones_are_rejected() -> None:
    instances = str(FIXTURES / "rules" / "AZAI-201" / "template.json")

    def failing(*extra: str) -> set[str]:
        data = cli_json(*extra, instances)
        return {f["resource_name"] for f in data["findings"] if f["rule_id"] == "AZAI-201"}

    assert "mlws/ciidle30" not in failing()
    assert "mlws/ciidle30" in failing("--rule-option", "AZAI-201:max_idle_before_shutdown=PT15M")
    assert "mlws/ciidle2d" not in failing("--rule-option", "always-on-compute:max_idle_before_shutdown=P3D")
    for bad in ("AZAI-201:no_such=1", "AZAI-999:x=1", "AZAI-202:max_average_percent=lots", "AZAI-201"):
        done = run_cli("scan", "--rule-option", bad, instances)
        assert done.returncode == 2 and len(done.stderr.strip().splitlines()) == 1 and "--rule-option" in done.stderr


def test_rules_by_pillar_as_markdown_and_as_compliance_data() -> None:
    table = run_cli("rules", "--pillar", "cost optimization", "--format", "markdown").stdout.splitlines()
    assert table[0].startswith("| id | slug | pillar") and [row.split("|")[1].strip() for row in table[2:]] == [
        "AZAI-201",
        "AZAI-202",
        "AZAI-203",
        "AZAI-204",
        "AZAI-205",
        "AZAI-206",
        "AZAI-207",
        "AZAI-208",
        "AZAI-209",
        "AZAI-210",
    ]
    # a pillar is named in full or by its first word, for `rules` and for `scan --select`
    assert run_cli("rules", "--pillar", "COST", "--format", "markdown").stdout.splitlines() == table
    selected = cli_json("--select", "performance", DEMO_PLAN)["findings"]
    assert selected and {f["pillar"] for f in selected} == {"Performance Efficiency"}
    data = json.loads(run_cli("rules", "--format", "json").stdout)
    assert data["azai_compliance"] == 3
    assert data["rules"]["AZAI-201"]["peers"][0] == {
        "tool": "Checkov",
        "id": "CKV_AZURE_150",
        "title": "ML compute cluster min_node_count is 0",
        "note": (
            "Agrees on clusters: min_node_count must be 0 (bridgecrewio/checkov "
            "checkov/terraform/checks/resource/azure/MLComputeClusterMinNodes.py@03d5fdad). Checkov reads Terraform "
            "only; azai every source, plus GPU node pools and compute instances."
        ),
    }
    assert data["rules"]["AZAI-301"]["pillar"] == "Performance Efficiency"
    assert data["rules"]["AZAI-301"]["peers"] == []
    # The reverse index answers "which azai rule covers the policy I already run?"
    assert data["by_peer"]["Azure Policy"]["71ef260a-8f18-47b7-abcb-62d0673d94dc"] == ["AZAI-101"]
    assert data["by_peer"]["Checkov"]["CKV_AZURE_141"] == ["AZAI-113"]
    assert data["by_peer"]["PSRule"]["Azure.ML.ComputeVnet"] == ["AZAI-104"]
    # A regulatory-compliance initiative's control maps to the rules that cover one of its policies.
    eu_ai_act = data["initiatives"]["1308bccf-446a-4283-a4e0-0c983fe7a572"]
    assert eu_ai_act["controls"]["EU_AI_Act_2024_1689_12.1"]["azai_rules"] == ["AZAI-501"]
    assert json.loads((ROOT / "docs" / "rules" / "compliance.json").read_text()) == data
    bad = run_cli("rules", "--pillar", "Sustainability")
    assert bad.returncode == 2 and "no rules in pillar" in bad.stderr


@pytest.mark.parametrize(
    ("args", "code"),
    [(("scan", DEMO_PLAN), 1), (("rules", "--format", "markdown"), 0)],
)
@CHILD_PROCESS
def test_a_reader_that_stops_early_is_not_an_error(args: tuple[str, ...], code: int) -> None:
    """`azai scan plan.json | head` keeps the gate's exit code and prints no traceback."""
    process = subprocess.Popen([sys.executable, "-m", "scanner", *args], stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    assert process.stdout is not None and process.stderr is not None
    process.stdout.close()  # before azai writes anything
    assert process.wait(timeout=60) == code
    assert process.stderr.read() == b""


def test_a_scan_leaves_the_processes_garbage_collector_as_it_found_it() -> None:
    """A scan of files turns the collector off while it runs; a process that scans again (this
    test runner) must get its own settings back, and nothing frozen."""
    import gc

    before = (gc.isenabled(), gc.get_threshold(), gc.get_freeze_count())
    done = run_cli("scan", "--fail-on", "none", "--format", "json", str(FIXTURES / "demo" / "plan.json"))
    assert done.returncode == 0 and json.loads(done.stdout)["findings"]
    assert (gc.isenabled(), gc.get_threshold(), gc.get_freeze_count()) == before


# What a scan makes per resource, finding or document: none may be left to the collector.
_PER_RESOURCE = {"Resource", "Origin", "Instance", "Block", "Finding", "Violation", "Undetermined", "Document"}


def _leaked(item: object) -> bool:
    """A per-resource object, an interpreter frame (an exception kept with its traceback), or
    a function of azai's own (a closure that holds itself)."""
    name = type(item).__name__
    if name in _PER_RESOURCE or name == "frame":
        return True
    module = getattr(item, "__module__", None) if name == "function" else None
    return isinstance(module, str) and module.split(".")[0] in ("scanner", "checks", "reports")


_FORMATS = ("sarif", "json", "text", "markdown", "junit", "html")


def _cycles_left(source: str) -> dict[str, list[str]]:
    """Per format, what a second scan of ``source`` leaves to the collector that `_leaked`
    names. Run in a fresh interpreter by the test below."""
    import gc

    from scanner.cli.commands import render
    from scanner.pipeline.scan import ScanRequest, run_scan

    left: dict[str, list[str]] = {}
    for fmt in _FORMATS:

        def scan(fmt: str = fmt) -> None:
            data, _ = render(fmt, run_scan(ScanRequest(paths=[str(FIXTURES / source)])), str(ROOT))
            assert b"".join([data] if isinstance(data, bytes) else data)

        scan()  # imports, class builders and caches: not the scan's
        gc.collect()
        gc.set_debug(gc.DEBUG_SAVEALL)
        try:
            scan()
            gc.collect()
            left[fmt] = [repr(item)[:80] for item in gc.garbage if _leaked(item)]
        finally:
            gc.set_debug(0)
            gc.garbage.clear()
    return left


@pytest.mark.parametrize(
    "source", ["demo/plan.json", "demo/template.json", "demo/whatif.json", "rules/AZAI-104/plan-azurerm.json"]
)
@CHILD_PROCESS
def test_a_scan_leaves_no_cyclic_garbage_per_resource(source: str) -> None:
    """A scan of files runs with the collector off, which is safe only while what it makes per
    resource is freed by reference counting (a recursive closure once kept a plan's whole configuration
    alive; an undecided rule's exception held its own frame: the AZAI-104 plan has 17 such
    pairs). A second scan, after imports and caches are warm, may leave a few fixed cycles (a
    template deployment's frame and its scope, importlib's entry-point index, the indenting
    JSON encoder's closures), never a resource, a finding, a document, an interpreter frame or
    a function of azai's. Measured in a fresh interpreter: in a test worker, the emulator of a
    live test run before may drop its handler class at any moment, and that is no scan's."""
    code = f"import json; from tests.test_cli import _cycles_left; print(json.dumps(_cycles_left({source!r})))"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, check=True)
    assert json.loads(done.stdout.splitlines()[-1]) == {fmt: [] for fmt in _FORMATS}
