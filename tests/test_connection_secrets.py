"""AZAI-116 reads connections that hold keys, tokens and passwords: it names the connection, its
category and its target, and no report in any format repeats a credential (or a SAS token riding
in a target URL) from any of the four source forms."""

from __future__ import annotations

import pytest

from tests.conftest import FIXTURES, run_cli

RULE_DIR = FIXTURES / "rules" / "AZAI-116"
# The fake credentials estate.json gives the connections: keys, custom keys, a SAS token in the
# credentials and in the target's query string, and an OAuth2 client secret.
SECRETS = ("fake-conn-secret-116", "sig=", "sv=2022-11-02")


@pytest.mark.parametrize("form", ["plan-azurerm", "plan-azapi", "template", "whatif"])
def test_connection_credentials_never_reach_any_report(form: str) -> None:
    source = RULE_DIR / f"{form}.json"
    assert "fake-conn-secret-116" in source.read_text(encoding="utf-8")
    for fmt in ("text", "json", "sarif", "markdown", "junit", "html"):
        done = run_cli("scan", "--format", fmt, "--fail-on", "none", str(source))
        assert done.returncode == 0, done.stderr
        assert "openai-key" in done.stdout  # the finding is there, named by its connection
        for secret in SECRETS:
            assert secret not in done.stdout and secret not in done.stderr, (fmt, secret)
