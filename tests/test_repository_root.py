"""What SARIF URIs are relative to without --repo-root: the git top level of the scanned files,
wherever azai runs, so that code scanning finds the files however a pipeline step is laid out."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest

from reports.repository import repository_root
from tests.conftest import FIXTURES, run_cli

BICEP = FIXTURES / "sources" / "bicep"
DEMO_PLAN = FIXTURES / "demo" / "plan.json"
GIT = shutil.which("git")
needs_git = pytest.mark.skipif(GIT is None, reason="git is not installed")


def git(*args: str, cwd: Path) -> str:
    env = {**os.environ, "GIT_CONFIG_NOSYSTEM": "1", "HOME": str(cwd), "GIT_AUTHOR_NAME": "t"}
    env |= {"GIT_AUTHOR_EMAIL": "t@example.invalid", "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@x.invalid"}
    done = subprocess.run(["git", *args], cwd=cwd, env=env, capture_output=True, text=True, timeout=60, check=True)
    return done.stdout.strip()


def repository(folder: Path) -> Path:
    """A git repository with the Bicep sample (main.json compiled beside main.bicep) in infra/ai."""
    folder.mkdir(parents=True)
    git("init", "-q", cwd=folder)
    shutil.copytree(BICEP, folder / "infra" / "ai")
    return folder


def sarif_uris(*paths: str, cwd: Path) -> tuple[set[str], str]:
    """The URIs of every result's location in a SARIF scan of ``paths`` run in ``cwd``, and stderr."""
    target = cwd / "out.sarif"
    done = run_cli("scan", "--format", "sarif", "-o", str(target), "--fail-on", "none", *paths, cwd=cwd)
    assert done.returncode == 0, done.stderr
    runs = json.loads(target.read_text(encoding="utf-8"))["runs"]
    uris = {r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] for run in runs for r in run["results"]}
    return uris, done.stderr


@needs_git
def test_uris_are_relative_to_the_scanned_files_repository_when_run_outside_it(tmp_path: Path) -> None:
    repository(tmp_path / "repo")
    (tmp_path / "elsewhere").mkdir()
    uris, stderr = sarif_uris("../repo/infra/ai/main.json", cwd=tmp_path / "elsewhere")
    assert (uris, stderr) == ({"infra/ai/main.bicep", "infra/ai/modules/openai.bicep"}, "")


@needs_git
def test_uris_follow_the_scanned_files_repository_not_the_current_folders(tmp_path: Path) -> None:
    repository(tmp_path / "repo")
    repository(tmp_path / "tools")  # azai runs in another checkout
    uris, stderr = sarif_uris(str(tmp_path / "repo" / "infra" / "ai" / "main.json"), cwd=tmp_path / "tools")
    assert (uris, stderr) == ({"infra/ai/main.bicep", "infra/ai/modules/openai.bicep"}, "")


@needs_git
def test_a_worktree_is_a_top_level_as_git_says(tmp_path: Path) -> None:
    main = repository(tmp_path / "main")
    git("add", "-A", cwd=main)
    git("commit", "-q", "-m", "infra", cwd=main)
    git("worktree", "add", "-q", str(tmp_path / "feature"), cwd=main)
    assert (tmp_path / "feature" / ".git").is_file()
    folder = tmp_path / "feature" / "infra" / "ai"
    assert Path(git("rev-parse", "--show-toplevel", cwd=folder)) == tmp_path / "feature"
    assert repository_root(None, [folder / "main.json"]) == (tmp_path / "feature", [])
    uris, _ = sarif_uris(str(folder / "main.json"), cwd=tmp_path)
    assert uris == {"infra/ai/main.bicep", "infra/ai/modules/openai.bicep"}


def test_a_repository_holding_the_others_is_the_root(tmp_path: Path) -> None:
    """A nested checkout or submodule: URIs relative to the outer repository reach every file."""
    (tmp_path / "outer" / ".git").mkdir(parents=True)
    (tmp_path / "outer" / "vendor" / "mod").mkdir(parents=True)
    (tmp_path / "outer" / "vendor" / "mod" / ".git").write_text("gitdir: ../../.git/modules/mod\n")
    files = [tmp_path / "outer" / "vendor" / "mod" / "a.json", tmp_path / "outer" / "infra" / "b.json"]
    assert repository_root(None, files) == (tmp_path / "outer", [])
    assert repository_root(None, files[:1]) == (tmp_path / "outer" / "vendor" / "mod", [])


@needs_git
def test_files_in_two_separate_repositories_are_relative_to_the_first_with_a_warning(tmp_path: Path) -> None:
    first = repository(tmp_path / "first")
    second = repository(tmp_path / "second")
    shutil.copy(DEMO_PLAN, second / "plan.json")
    uris, stderr = sarif_uris(str(first / "infra" / "ai" / "main.json"), str(second / "plan.json"), cwd=tmp_path)
    assert {"infra/ai/main.bicep", "infra/ai/modules/openai.bicep", f"{second.as_posix()}/plan.json"} == uris
    assert stderr == (
        f"azai: warning: the scanned files are in 2 repositories: SARIF URIs are relative to {first}, the first "
        f"file's; files in {second} keep absolute URIs, which code scanning cannot show (scan each repository on "
        "its own, or give --repo-root)\n"
    )


@needs_git
def test_files_in_no_repository_are_relative_to_the_current_folders_repository(tmp_path: Path) -> None:
    """A plan written to a temporary folder, sources in the checkout: as before, the checkout."""
    checkout = repository(tmp_path / "checkout")
    (tmp_path / "tmp").mkdir()
    shutil.copy(BICEP / "main.json", tmp_path / "tmp" / "main.json")
    source_root = str(checkout / "infra" / "ai")
    uris, _ = sarif_uris("--source-root", source_root, str(tmp_path / "tmp" / "main.json"), cwd=checkout / "infra")
    assert uris == {"infra/ai/main.bicep", "infra/ai/modules/openai.bicep"}


def test_outside_any_repository_the_current_folder_is_the_root(tmp_path: Path) -> None:
    shutil.copytree(BICEP, tmp_path / "infra")
    uris, _ = sarif_uris("infra/main.json", cwd=tmp_path)
    assert uris == {"infra/main.bicep", "infra/modules/openai.bicep"}
    assert repository_root(str(tmp_path / "infra"), [tmp_path / "infra" / "main.json"]) == (tmp_path / "infra", [])
