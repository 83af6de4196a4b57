"""Findings point at the lines people wrote: ``.tf`` blocks behind a plan, ``.bicep`` declarations
behind a compiled template (issue 14).

The fixtures under ``fixtures/sources/`` and their ``expected.json`` were written from the
public formats and the rule pages by someone who had not read the implementation: every
finding's rule, resource, file and line is asserted, in the JSON report and in SARIF.
"""

from __future__ import annotations

import json
import os
import posixpath
import shutil
import stat
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from scanner.model.places import Declaration, Place, Written
from scanner.sources.authored.bicep import Emitted, read_bicep
from tests.conftest import FIXTURES, ROOT, run_cli

SOURCES = FIXTURES / "sources"
ESTATES = sorted(d.name for d in SOURCES.iterdir() if (d / "expected.json").is_file())


def _key(estate: str, finding: dict[str, Any]) -> str:
    """How an estate's ``expected.json`` names a resource: Terraform by address, Bicep by type/name."""
    if estate.startswith("terraform"):
        return str(finding["address"])
    return f"{finding['resource_type']}/{finding['resource_name']}"


def _expected(name: str) -> dict[str, Any]:
    data: dict[str, Any] = json.loads((SOURCES / name / "expected.json").read_text(encoding="utf-8"))
    return data


def _json_scan(*args: str, cwd: Path = ROOT) -> dict[str, Any]:
    done = run_cli("scan", "--format", "json", "--fail-on", "none", *args, cwd=cwd)
    assert done.returncode == 0, done.stderr
    data: dict[str, Any] = json.loads(done.stdout)
    return data


def _relative(uri: str, folder: Path, base: Path = ROOT) -> str:
    return posixpath.relpath((base / uri).resolve().as_posix(), folder.resolve().as_posix())


@pytest.mark.parametrize("name", ESTATES)
def test_every_finding_points_at_its_declaring_line_in_json(name: str) -> None:
    expected = _expected(name)
    folder = SOURCES / name
    report = _json_scan(str(folder / expected["input"]))
    got = {
        (f["rule_id"], _key(name, f), _relative(f["location"]["uri"], folder), f["location"]["start_line"])
        for f in report["findings"]
    }
    assert got == {(e["rule"], e["resource"], e["file"], e["line"]) for e in expected["findings"]}
    assert not {_key(name, f) for f in report["findings"]} & set(expected["clean"])
    assert report["warnings"] == []
    for finding in report["findings"]:  # the scanned file's own place is kept beside it
        scanned = finding["scanned_location"]
        assert _relative(scanned["uri"], folder) == expected["input"] and scanned["pointer"].startswith("/")


@pytest.mark.parametrize("name", ESTATES)
def test_sarif_results_point_at_source_lines_relative_to_the_repository_root(name: str, tmp_path: Path) -> None:
    expected = _expected(name)
    folder = SOURCES / name
    target = tmp_path / "out.sarif"
    done = run_cli(
        "scan", "--format", "sarif", "-o", str(target), "--fail-on", "none", str(folder / expected["input"]),
        cwd=folder,  # a pipeline step running inside the infra folder: URIs stay relative to the root
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    results = [r for run in json.loads(target.read_text())["runs"] for r in run["results"]]
    prefix = folder.relative_to(ROOT).as_posix() + "/"
    got = set()
    for result in results:
        physical = result["locations"][0]["physicalLocation"]
        uri = physical["artifactLocation"]["uri"]
        assert physical["artifactLocation"]["uriBaseId"] == "%SRCROOT%" and uri.startswith(prefix)
        got.add((result["ruleId"], uri.removeprefix(prefix), physical["region"]["startLine"]))
        related = result["relatedLocations"][0]["physicalLocation"]["artifactLocation"]["uri"]
        assert related == prefix + expected["input"]
    assert got == {(e["rule"], e["file"], e["line"]) for e in expected["findings"]}
    assert len(results) == len(expected["findings"])


def test_text_markdown_and_junit_show_the_same_source_line(tmp_path: Path) -> None:
    plan = SOURCES / "bicep" / "main.json"
    first = next(e for e in _expected("bicep")["findings"] if e["file"].startswith("modules/"))
    place = f"fixtures/sources/bicep/{first['file']}:{first['line']}"
    text = run_cli("scan", "--fail-on", "none", str(plan.relative_to(ROOT))).stdout
    markdown = run_cli("scan", "--format", "markdown", "--fail-on", "none", str(plan.relative_to(ROOT))).stdout
    junit = run_cli("scan", "--format", "junit", "--fail-on", "none", str(plan.relative_to(ROOT))).stdout
    assert f"at {place}:" in text
    assert f"`{place}`" in markdown
    assert f'file="fixtures/sources/bicep/{first["file"]}" line="{first["line"]}"' in junit


def test_fingerprints_survive_unrelated_lines_moving(tmp_path: Path) -> None:
    copy = tmp_path / "bicep"
    shutil.copytree(SOURCES / "bicep", copy)
    before = _json_scan(str(copy / "main.json"), cwd=tmp_path)
    source = copy / "main.bicep"
    source.write_text("// a header comment\n// and another\n\n" + source.read_text(encoding="utf-8"), encoding="utf-8")
    after = _json_scan(str(copy / "main.json"), cwd=tmp_path)
    lines = {f["fingerprint"]: f["location"]["start_line"] for f in before["findings"]}
    moved = {f["fingerprint"]: f["location"]["start_line"] for f in after["findings"]}
    assert set(lines) == set(moved)
    for fingerprint, line in lines.items():
        in_main = next(f for f in after["findings"] if f["fingerprint"] == fingerprint)["location"]["uri"].endswith(
            "main.bicep"
        )
        assert moved[fingerprint] == line + (3 if in_main else 0)


def test_source_root_finds_bicep_that_is_not_beside_the_template(tmp_path: Path) -> None:
    (tmp_path / "out").mkdir()
    shutil.copy(SOURCES / "bicep" / "main.json", tmp_path / "out" / "main.json")
    shutil.copytree(SOURCES / "bicep", tmp_path / "infra", ignore=shutil.ignore_patterns("*.json"))
    alone = _json_scan("out/main.json", cwd=tmp_path)
    assert {f["location"]["uri"] for f in alone["findings"]} == {"out/main.json"}  # as before: no source
    rooted = _json_scan("out/main.json", "--source-root", "infra", cwd=tmp_path)
    assert {f["location"]["uri"] for f in rooted["findings"]} == {"infra/main.bicep", "infra/modules/openai.bicep"}


def test_a_missing_source_root_is_one_line_and_exit_2(tmp_path: Path) -> None:
    done = run_cli("scan", str(SOURCES / "bicep" / "main.json"), "--source-root", str(tmp_path / "nowhere"))
    assert done.returncode == 2
    assert done.stderr == f"azai: error: --source-root {tmp_path / 'nowhere'}: not a folder\n"


def test_a_declaration_that_does_not_parse_falls_back_and_the_rest_of_its_file_is_kept(tmp_path: Path) -> None:
    copy = tmp_path / "bicep"
    shutil.copytree(SOURCES / "bicep", copy)
    module = copy / "modules" / "openai.bicep"
    module.write_text(module.read_text(encoding="utf-8").replace("resource ", "resource = {", 1), encoding="utf-8")
    report = _json_scan("bicep/main.json", cwd=tmp_path)
    assert report["warnings"] == [
        "bicep/modules/openai.bicep:20: azai cannot parse this; resources declared there are shown at the module "
        "line that deploys them, else in the compiled template"
    ]
    module_line = next(
        i for i, line in enumerate((copy / "main.bicep").read_text().splitlines(), 1) if line.startswith("module ")
    )
    places = {(f["resource_name"], f["location"]["uri"], f["location"]["start_line"]) for f in report["findings"]}
    assert ("oai-aiplat", "bicep/main.bicep", module_line) in places  # the broken declaration: its module line
    assert ("di-aiplat", "bicep/modules/openai.bicep", 94) in places  # the rest of the file still maps


def _fake_bicep_cli(directory: Path, compiled: Path, status: int = 0) -> dict[str, str]:
    """A stand-in for the Bicep CLI (which cannot be downloaded here): it checks it was asked for
    ``build --stdout FILE`` and prints the compiled template, or fails as bicep does."""
    script = directory / "bicep"
    script.write_text(
        f"#!{sys.executable}\n"
        "import sys\n"
        "assert sys.argv[1:3] == ['build', '--stdout'] and sys.argv[3].endswith('.bicep'), sys.argv\n"
        f"if {status}:\n"
        "    sys.stderr.write(sys.argv[3] + '(3,1) : Error BCP007: This declaration type is not recognized.\\n')\n"
        f"    sys.exit({status})\n"
        f"sys.stdout.buffer.write(open({str(compiled)!r}, 'rb').read())\n",
        encoding="utf-8",
    )
    script.chmod(script.stat().st_mode | stat.S_IEXEC)
    return {"PATH": f"{directory}{os.pathsep}/usr/bin{os.pathsep}/bin"}


@pytest.mark.slow
def test_a_bicep_file_is_compiled_with_the_cli_on_path(tmp_path: Path) -> None:
    env = _fake_bicep_cli(tmp_path, SOURCES / "bicep" / "main.json")
    done = run_cli(
        "scan", "--format", "json", "--fail-on", "none", "fixtures/sources/bicep/main.bicep", env=env, process=True
    )
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    expected = _expected("bicep")
    got = {
        (f["rule_id"], _key("bicep", f), posixpath.relpath(f["location"]["uri"], "fixtures/sources/bicep"))
        for f in report["findings"]
    }
    assert got == {(e["rule"], e["resource"], e["file"]) for e in expected["findings"]}
    assert all(f["scanned_location"] is None for f in report["findings"])  # the compiled text is in no file


@pytest.mark.slow
def test_a_failed_bicep_build_is_one_line_and_exit_2(tmp_path: Path) -> None:
    env = _fake_bicep_cli(tmp_path, SOURCES / "bicep" / "main.json", status=1)
    done = run_cli("scan", "fixtures/sources/bicep/main.bicep", env=env, process=True)
    assert done.returncode == 2
    assert done.stderr == (
        "azai: error: fixtures/sources/bicep/main.bicep: the Bicep build failed: fixtures/sources/bicep/main.bicep"
        "(3,1) : Error BCP007: This declaration type is not recognized.\n"
    )


def test_a_bicep_file_without_a_bicep_cli_says_how_to_compile(tmp_path: Path) -> None:
    done = run_cli("scan", "fixtures/sources/bicep/main.bicep", env={"PATH": str(tmp_path)})
    assert done.returncode == 2
    assert done.stderr == (
        "azai: error: fixtures/sources/bicep/main.bicep: no Bicep CLI on PATH; compile it with "
        "'bicep build fixtures/sources/bicep/main.bicep' (or 'az bicep build --file "
        "fixtures/sources/bicep/main.bicep') and scan the .json it writes\n"
    )


TERRAFORM_HINT = (
    "a Terraform configuration, not a plan; make one with 'terraform plan -out tfplan' and "
    "'terraform show -json tfplan > plan.json', then scan plan.json\n"
)


def test_a_tf_file_or_a_folder_of_them_names_the_terraform_commands(tmp_path: Path) -> None:
    (tmp_path / "main.tf").write_text('resource "azurerm_resource_group" "rg" {}\n')
    file = run_cli("scan", "main.tf", cwd=tmp_path)
    folder = run_cli("scan", ".", cwd=tmp_path)
    assert (file.returncode, file.stderr) == (2, f"azai: error: main.tf: {TERRAFORM_HINT}")
    assert (folder.returncode, folder.stderr) == (2, f"azai: error: .: {TERRAFORM_HINT}")


def test_repo_root_option_sets_what_sarif_uris_are_relative_to(tmp_path: Path) -> None:
    target = tmp_path / "out.sarif"
    folder = SOURCES / "bicep"
    done = run_cli(
        "scan", "--format", "sarif", "-o", str(target), "--fail-on", "none", "--repo-root", str(folder),
        str(folder / "main.json"),
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    uris = {
        r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"]
        for run in json.loads(target.read_text())["runs"]
        for r in run["results"]
    }
    assert uris == {"main.bicep", "modules/openai.bicep"}
    bad = run_cli("scan", "--format", "sarif", "--repo-root", str(tmp_path / "no"), str(folder / "main.json"))
    assert (bad.returncode, bad.stderr) == (2, f"azai: error: --repo-root {tmp_path / 'no'}: not a folder\n")


@pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")
def test_repository_root_defaults_to_gits_top_level(tmp_path: Path) -> None:
    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True)
    shutil.copytree(SOURCES / "bicep", tmp_path / "infra" / "ai")
    target = tmp_path / "out.sarif"
    done = run_cli(
        "scan", "--format", "sarif", "-o", str(target), "--fail-on", "none", "main.json", cwd=tmp_path / "infra" / "ai"
    )
    assert done.returncode == 0, done.stderr
    uris = {
        r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"]
        for run in json.loads(target.read_text())["runs"]
        for r in run["results"]
    }
    assert uris == {"infra/ai/main.bicep", "infra/ai/modules/openai.bicep"}


def test_a_property_inside_a_literal_block_is_found_only_where_it_is_written() -> None:
    text = b"""resource "azurerm_kubernetes_cluster_node_pool" "gpu" {
  default_node_pool {
    node_taints = ["sku=gpu:NoSchedule"]
  }
  tags = var.tags
  dynamic "rule" {
    content { action = "Deny" }
  }
}
"""
    at = {line: text.index(line) for line in (b"  default_node_pool", b"node_taints", b"  tags", b"action")}
    declaration = Declaration(
        "main.tf",
        10,
        1,
        {
            ("default_node_pool",): Written(at[b"  default_node_pool"] + 2, False),
            ("default_node_pool", "0"): Written(at[b"  default_node_pool"] + 2, False),
            ("default_node_pool", "0", "node_taints"): Written(at[b"node_taints"], False),
            ("tags",): Written(at[b"  tags"] + 2, True),
            ("rule", "*", "action"): Written(at[b"action"], True),
        },
        text,
    )
    assert declaration.place(("default_node_pool", "0", "node_taints")) == Place("main.tf", 12, 5)
    assert declaration.place(("default_node_pool", "0", "min_count")).line == 10  # not written: the header
    assert declaration.place(("tags", "owner")) == Place("main.tf", 14, 3)  # an expression may set it
    assert declaration.place(("rule", "3", "action")) == Place("main.tf", 16, 15)  # dynamic: any index
    assert declaration.place(()) == Place("main.tf", 10, 1)


def test_unparsable_hcl_warns_and_keeps_the_plan_location(tmp_path: Path) -> None:
    shutil.copytree(SOURCES / "terraform-foundry", tmp_path / "tf")
    serving = tmp_path / "tf" / "serving.tf"
    lines = serving.read_text(encoding="utf-8").splitlines(keepends=True)
    broken = next(i for i, line in enumerate(lines, 1) if line.startswith('resource "azapi_resource" "endpoint"')) + 1
    lines.insert(broken - 1, "  oops = {{{\n")  # inside a block the plan declares
    serving.write_text("".join(lines), encoding="utf-8")
    report = _json_scan("tf/plan.json", cwd=tmp_path)
    # tree-sitter places the error at the broken line or at the block that holds it
    assert report["warnings"] in (
        [f"tf/serving.tf:{line}: azai cannot parse this; resources declared there point at the plan"]
        for line in (broken - 1, broken)
    )
    places = {(f["address"], f["location"]["uri"]) for f in report["findings"]}
    assert ("azapi_resource.endpoint", "tf/plan.json") in places  # declared in the broken file
    assert ("azurerm_kubernetes_cluster.ai", "tf/aks.tf") in places  # other files are still read


def test_without_terraform_init_local_modules_come_from_the_plans_configuration(tmp_path: Path) -> None:
    shutil.copytree(SOURCES / "terraform-foundry", tmp_path / "tf", ignore=shutil.ignore_patterns(".terraform"))
    report = _json_scan("tf/plan.json", cwd=tmp_path)
    by_address = {f["address"]: f["location"]["uri"] for f in report["findings"]}
    assert by_address['module.gpu["a100"].module.spot.azurerm_kubernetes_cluster_node_pool.spot'] == (
        "tf/modules/gpu-pool/modules/spot-pool/main.tf"
    )
    assert by_address["module.openai.azurerm_cognitive_account.this"] == "tf/plan.json"  # a registry module


def test_a_plan_with_no_sources_anywhere_is_located_as_before(tmp_path: Path) -> None:
    shutil.copy(SOURCES / "terraform-foundry" / "plan.json", tmp_path / "plan.json")
    report = _json_scan("plan.json", cwd=tmp_path)
    assert {f["location"]["uri"] for f in report["findings"]} == {"plan.json"}
    assert all(f["scanned_location"] is None and f["location"]["pointer"] for f in report["findings"])


def _cognitive_plan(folder: Path, names: list[str]) -> None:
    """A minimal plan of Cognitive Services accounts ``azurerm_cognitive_account.NAME`` that
    accept keys (AZAI-101 fails on each), with the configuration Terraform writes for it."""
    changes = [
        {
            "address": f"azurerm_cognitive_account.{name}",
            "mode": "managed",
            "type": "azurerm_cognitive_account",
            "name": name,
            "provider_name": "registry.terraform.io/hashicorp/azurerm",
            "change": {
                "actions": ["create"],
                "before": None,
                "after": {
                    "name": f"oai-{name}",
                    "location": "eastus",
                    "resource_group_name": "rg",
                    "kind": "OpenAI",
                    "sku_name": "S0",
                    "local_auth_enabled": True,
                },
                "after_unknown": {"id": True},
            },
        }
        for name in names
    ]
    configuration = {
        "root_module": {
            "resources": [
                {"address": f"azurerm_cognitive_account.{n}", "mode": "managed", "type": "azurerm_cognitive_account"}
                for n in names
            ]
        }
    }
    plan = {"format_version": "1.2", "terraform_version": "1.11.4", "resource_changes": changes}
    (folder / "plan.json").write_text(json.dumps({**plan, "configuration": configuration}), encoding="utf-8")


def _account_block(name: str) -> str:
    return f'resource "azurerm_cognitive_account" "{name}" {{\n  local_auth_enabled = true\n  kind = "OpenAI"\n}}\n'


def _ai101_places(report: dict[str, Any]) -> set[tuple[str, str, int]]:
    return {
        (f["address"], f["location"]["uri"], f["location"]["start_line"])
        for f in report["findings"]
        if f["rule_id"] == "AZAI-101"
    }


@pytest.mark.parametrize(
    "decoy",
    [
        '/* the old account, kept for reference:\nresource "azurerm_cognitive_account" "a" {\n'
        "  local_auth_enabled = true\n}\n*/\n",
        'locals {\n  readme = <<EOT\nresource "azurerm_cognitive_account" "a" {\n'
        "  local_auth_enabled = true\n}\nEOT\n}\n",
    ],
    ids=["block-comment", "heredoc"],
)
def test_a_block_inside_a_comment_or_heredoc_is_not_the_declaration(decoy: str, tmp_path: Path) -> None:
    _cognitive_plan(tmp_path, ["a"])
    (tmp_path / "a_legacy.tf").write_text(decoy, encoding="utf-8")  # sorts before main.tf
    (tmp_path / "main.tf").write_text("# the account\n" + _account_block("a"), encoding="utf-8")
    assert _ai101_places(_json_scan("plan.json", cwd=tmp_path)) == {("azurerm_cognitive_account.a", "main.tf", 3)}


def test_an_unrelated_configuration_in_the_folder_is_not_taken_for_the_plans(tmp_path: Path) -> None:
    (tmp_path / "out").mkdir()
    (tmp_path / "bootstrap").mkdir()
    _cognitive_plan(tmp_path / "out", ["a", "b"])
    (tmp_path / "bootstrap" / "main.tf").write_text(_account_block("a"), encoding="utf-8")  # declares a, not b
    report = _json_scan("../out/plan.json", cwd=tmp_path / "bootstrap")
    assert {uri for _, uri, _ in _ai101_places(report)} == {"../out/plan.json"}
    assert report["warnings"] == [
        ".: its .tf files are not this plan's root module (they do not declare all of its root resources and "
        "module calls); findings point at the plan (pass --source-root)"
    ]
    (tmp_path / "bootstrap" / "b.tf").write_text(_account_block("b"), encoding="utf-8")  # now it is the root
    assert {uri for _, uri, _ in _ai101_places(_json_scan("../out/plan.json", cwd=tmp_path / "bootstrap"))} == {
        "main.tf",
        "b.tf",
    }


def test_a_comment_inside_a_bicep_array_does_not_shift_its_elements(tmp_path: Path) -> None:
    shutil.copytree(SOURCES / "bicep", tmp_path / "bicep")
    main = tmp_path / "bicep" / "main.bicep"
    lines = main.read_text(encoding="utf-8").splitlines(keepends=True)
    at = next(i for i, line in enumerate(lines) if "agentPoolProfiles: [" in line)
    lines.insert(at + 1, "      // the system pool first, then the GPU pool\n")
    main.write_text("".join(lines), encoding="utf-8")
    report = _json_scan("bicep/main.json", cwd=tmp_path)
    pool = next(e for e in _expected("bicep")["findings"] if e["resource"].endswith("/gpuinfer"))
    found = next(f for f in report["findings"] if f["resource_name"].endswith("/gpuinfer"))
    assert found["location"]["start_line"] == pool["line"] + 1


def test_a_bicep_module_that_deploys_a_json_template_points_at_its_module_line(tmp_path: Path) -> None:
    shutil.copytree(SOURCES / "bicep", tmp_path / "bicep")
    main = tmp_path / "bicep" / "main.bicep"
    main.write_text(main.read_text(encoding="utf-8").replace("./modules/openai.bicep", "./modules/openai.json"))
    report = _json_scan("bicep/main.json", cwd=tmp_path)
    module_line = next(i for i, line in enumerate(main.read_text().splitlines(), 1) if line.startswith("module "))
    assert report["warnings"] == []
    assert {
        (f["location"]["uri"], f["location"]["start_line"])
        for f in report["findings"]
        if f["resource_name"] in ("oai-aiplat", "di-aiplat")
    } == {("bicep/main.bicep", module_line)}


def test_a_folder_of_bicep_files_only_says_what_to_scan(tmp_path: Path) -> None:
    (tmp_path / "infra").mkdir()
    shutil.copy(SOURCES / "bicep" / "main.bicep", tmp_path / "infra" / "main.bicep")
    done = run_cli("scan", ".", cwd=tmp_path)
    assert (done.returncode, done.stderr) == (
        2,
        "azai: error: .: Bicep files and no compiled template; scan the entry point (azai scan main.bicep, compiled "
        "with the Bicep CLI on PATH) or the .json that 'bicep build' writes\n",
    )


def test_a_bad_repo_root_is_refused_before_any_report_is_written(tmp_path: Path) -> None:
    report = tmp_path / "a.json"
    plan = str(FIXTURES / "demo" / "plan.json")
    done = run_cli("scan", "--format", "json", "-o", str(report), "--repo-root", str(tmp_path / "no"), plan)
    assert (done.returncode, done.stderr) == (2, f"azai: error: --repo-root {tmp_path / 'no'}: not a folder\n")
    assert not report.exists()


@pytest.mark.slow
def test_the_bicep_clis_output_is_read_as_utf8_whatever_the_locale(tmp_path: Path) -> None:
    compiled = json.loads((SOURCES / "bicep" / "main.json").read_text(encoding="utf-8"))
    compiled["metadata"]["description"] = "Plateforme d'IA – é😀"
    written = tmp_path / "compiled.json"
    written.write_text(json.dumps(compiled, ensure_ascii=False), encoding="utf-8")
    env = {**_fake_bicep_cli(tmp_path, written), "LC_ALL": "C", "PYTHONUTF8": "0", "PYTHONCOERCECLOCALE": "0"}
    done = run_cli("scan", "--fail-on", "none", "fixtures/sources/bicep/main.bicep", env=env, process=True)
    assert done.returncode == 0, done.stderr


def test_a_default_root_is_checked_in_one_pass_per_file_however_many_resources(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Proving the plan's folder is its root once searched the folder's text again for every
    root resource: a 10,000-block root module took 71 s instead of 5. Counted, not timed."""
    from scanner.sources.authored import terraform

    names = [f"a{i}" for i in range(300)]
    _cognitive_plan(tmp_path, names)
    for part in range(3):
        (tmp_path / f"part{part}.tf").write_text("".join(_account_block(n) for n in names[part::3]), encoding="utf-8")
    scans = 0
    header = terraform._HEADER

    class Counted:
        def findall(self, data: bytes) -> list[Any]:
            nonlocal scans
            scans += 1
            return header.findall(data)

    monkeypatch.setattr(terraform, "_HEADER", Counted())
    report = _json_scan("plan.json", cwd=tmp_path)
    assert scans == 3
    assert len(_ai101_places(report)) == 300 and {uri for _, uri, _ in _ai101_places(report)} == {
        "part0.tf",
        "part1.tf",
        "part2.tf",
    }


# -- Bicep modules at any depth (issue 37) ------------------------------------------------------

NESTED = SOURCES / "bicep-nested"


def _places(report: dict[str, Any]) -> set[tuple[str, str, str, int]]:
    return {
        (f["rule_id"], _key("bicep-nested", f), f["location"]["uri"], f["location"]["start_line"])
        for f in report["findings"]
    }


def test_bicep_build_order_of_a_languageversion_1_array_is_derived_from_the_source(tmp_path: Path) -> None:
    """A 1.0 array has no names: its entries are the resources that are not ``existing``, those
    nested in a body first (a nested one's own nested ones before it), then the top-level ones,
    then the modules, as Azure/bicep's NestedResources baseline compiles."""
    source = tmp_path / "main.bicep"
    source.write_text(
        "resource hub 'Microsoft.MachineLearningServices/workspaces@2024-10-01' = {\n"
        "  name: 'hub'\n"
        "  resource gpu 'computes' = {\n"
        "    name: 'gpu'\n"
        "    resource note 'Microsoft.MachineLearningServices/workspaces/computes/notes@2024-10-01' = {\n"
        "      name: 'n'\n"
        "    }\n"
        "  }\n"
        "  resource cpu 'computes@2024-10-01' = if (true) {\n"
        "    name: 'cpu'\n"
        "  }\n"
        "}\n"
        "module first './first.bicep' = {\n"
        "  name: 'first'\n"
        "}\n"
        "resource shared 'Microsoft.OperationalInsights/workspaces@2023-09-01' existing = {\n"
        "  name: 'log'\n"
        "  resource table 'tables' = {\n"
        "    name: 't'\n"
        "  }\n"
        "}\n"
        "@batchSize(1)\n"
        "resource pools 'Microsoft.Search/searchServices@2023-11-01' = [for i in range(0, 2): {\n"
        "  name: 'srch${i}'\n"
        "}]\n"
        "module second 'br/public:avm/res/storage/storage-account:0.9.0' = {\n"
        "  name: 'second'\n"
        "}\n",
        encoding="utf-8",
    )
    warnings: list[str] = []
    parsed = read_bicep(source, "main.bicep", warnings)
    assert parsed is not None and warnings == []
    assert parsed.emitted == [
        Emitted("hub::gpu::note", "microsoft.machinelearningservices/workspaces/computes/notes"),
        Emitted("hub::gpu", "microsoft.machinelearningservices/workspaces/computes"),
        Emitted("hub::cpu", "microsoft.machinelearningservices/workspaces/computes"),
        Emitted("shared::table", "microsoft.operationalinsights/workspaces/tables"),
        Emitted("hub", "microsoft.machinelearningservices/workspaces"),
        Emitted("pools", "microsoft.search/searchservices"),
        Emitted("first", "microsoft.resources/deployments"),
        Emitted("second", "microsoft.resources/deployments"),
    ]


def test_nested_modules_mix_language_versions_as_bicep_build_does() -> None:
    """The fixture tests depth in both forms only if its levels differ as ``bicep build``'s do:
    2.0 (an object of symbolic names) where a file has a user-defined type, else 1.0 (an array)."""
    template = json.loads((NESTED / "main.json").read_text(encoding="utf-8"))
    levels = [template]
    for key in ("platform", 2, "sharedAccounts"):
        levels.append(levels[-1]["resources"][key]["properties"]["template"])
    assert [(t.get("languageVersion"), type(t["resources"]).__name__) for t in levels] == [
        ("2.0", "dict"),
        (None, "list"),
        ("2.0", "dict"),
        (None, "list"),
    ]


def test_a_languageversion_1_template_at_the_root_points_at_its_bicep_lines(tmp_path: Path) -> None:
    """A file without user-defined types compiles to 1.0 when it is the entry point too."""
    shutil.copytree(NESTED / "modules", tmp_path / "infra")
    platform = json.loads((NESTED / "main.json").read_text(encoding="utf-8"))["resources"]["platform"]
    (tmp_path / "infra" / "platform.json").write_text(json.dumps(platform["properties"]["template"]), "utf-8")
    parameters = {"prefix": {"value": "claims"}, "location": {"value": "swedencentral"}}
    (tmp_path / "params.json").write_text(json.dumps({"parameters": parameters}), encoding="utf-8")
    report = _json_scan("infra/platform.json", "--parameters", "params.json", cwd=tmp_path)
    assert report["warnings"] == []
    assert _places(report) == {
        (e["rule"], e["resource"], "infra/" + e["file"].removeprefix("modules/"), e["line"])
        for e in _expected("bicep-nested")["findings"]
    }


def test_a_level_whose_source_no_longer_matches_its_compiled_template_warns_and_points_at_its_module(
    tmp_path: Path,
) -> None:
    """An edited ``platform.bicep`` (one more resource) beside an old build: its entries cannot be
    named, so it and every level below point at the ``module`` line that deploys it."""
    shutil.copytree(NESTED, tmp_path / "claims")
    platform = tmp_path / "claims" / "modules" / "platform.bicep"
    platform.write_text(
        platform.read_text(encoding="utf-8")
        + "\nresource extra 'Microsoft.Storage/storageAccounts@2023-05-01' = {\n  name: 'stclaims'\n}\n",
        encoding="utf-8",
    )
    report = _json_scan("claims/main.json", cwd=tmp_path)
    assert report["warnings"] == [
        "claims/modules/platform.bicep: its declarations do not match the resources of the template it compiled "
        "to (is the compiled template older than the file?); its resources are shown at the module line that "
        "deploys them, else in the compiled template"
    ]
    module_line = (
        (tmp_path / "claims" / "main.bicep")
        .read_text(encoding="utf-8")
        .splitlines()
        .index("module platform './modules/platform.bicep' = {")
    )
    assert _places(report) == {
        (e["rule"], e["resource"], "claims/main.bicep", module_line + 1) for e in _expected("bicep-nested")["findings"]
    }
