"""What a server says is redacted before azai quotes it (`Redactor.text`): each form a secret
takes in an error message, a header echoed back, a query string, a connection string or a JSON
body, and the texts that look like one of them and are not. The forms come from where Azure
puts its secrets: the Authorization header's schemes (RFC 9110 section 11), API keys as
headers or query parameters, SAS tokens (``sig=``), connection strings (``AccountKey=``,
``SharedAccessKey=``, ``Password=``), OAuth client credentials (RFC 6749 section 2.3.1,
``client_secret``), and a URL's ``user:password@`` (RFC 3986 section 3.2.1)."""

from __future__ import annotations

import base64

import pytest

from scanner.sources.live.redaction import QUOTE_LIMIT, REDACTED, Redactor

ISSUED = "issued-token-7Qx"
BASIC = base64.b64encode(b"ops:hunter2").decode()  # b3BzOmh1bnRlcjI=


def redacted(text: str) -> str:
    redactor = Redactor()
    redactor.remember(ISSUED)
    return redactor.text(text)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        pytest.param(f"token {ISSUED} refused", "token [REDACTED] refused", id="issued-token-anywhere"),
        pytest.param(
            "Authorization: Bearer abc.def-ghi", "Authorization: Bearer [REDACTED]", id="authorization-bearer"
        ),
        pytest.param(f"Authorization: Basic {BASIC}", "Authorization: Basic [REDACTED]", id="authorization-basic"),
        pytest.param(
            f"proxy-authorization=Basic {BASIC}; next",
            "proxy-authorization=Basic [REDACTED]; next",
            id="proxy-authorization",
        ),
        pytest.param(
            "Authorization: SharedAccessSignature sr=https%3A%2F%2Fns.servicebus.windows.net&sig=SIGX1&se=1&skn=Root",
            "Authorization: SharedAccessSignature [REDACTED]",
            id="authorization-sas",
        ),
        pytest.param(
            "Authorization: SharedKey acct:c2lnbmF0dXJl, refused",
            "Authorization: SharedKey [REDACTED] refused",  # a comma may be part of a secret: it goes with it
            id="authorization-sharedkey",
        ),
        pytest.param("Authorization: opaque-credential", "Authorization: [REDACTED]", id="authorization-no-scheme"),
        pytest.param(
            "Authorization: HMAC-SHA256 Credential=id1&SignedHeaders=x-ms-date;host&Signature=SIG4",
            "Authorization: HMAC-SHA256 [REDACTED]&SignedHeaders=x-ms-date;host&Signature=[REDACTED]",
            id="authorization-hmac",
        ),
        pytest.param('"Authorization": "Bearer abc def"', '"Authorization": "[REDACTED]"', id="authorization-json"),
        pytest.param("Bearer abc.def-ghi was refused", "Bearer [REDACTED] was refused", id="bearer-alone"),
        pytest.param(
            "SharedAccessSignature sr=x&sig=SIGX2&se=2 expired",
            "SharedAccessSignature [REDACTED] expired",
            id="sas-alone",
        ),
        pytest.param(f"credentials Basic {BASIC} refused", "credentials Basic [REDACTED] refused", id="basic-alone"),
        pytest.param("api-key: FAKEKEY123 was refused", "api-key: [REDACTED] was refused", id="api-key-header"),
        pytest.param("Ocp-Apim-Subscription-Key: 0123abcd", "Ocp-Apim-Subscription-Key: [REDACTED]", id="apim-header"),
        pytest.param("x-functions-key:fkey99", "x-functions-key:[REDACTED]", id="functions-key-header"),
        pytest.param(
            "https://oai.example/x?api-key=K1&a=1", "https://oai.example/x?api-key=[REDACTED]&a=1", id="api-key-query"
        ),
        pytest.param(
            "https://apim.example/x?subscription-key=SK1",
            "https://apim.example/x?subscription-key=[REDACTED]",
            id="apim-query",
        ),
        pytest.param(
            "https://f.example/api/x?code=FKEY&x=1",
            "https://f.example/api/x?code=[REDACTED]&x=1",
            id="functions-code-query",
        ),
        pytest.param(
            "key=abc123 and password=hunter2", "key=[REDACTED] and password=[REDACTED]", id="key-and-password"
        ),
        pytest.param(
            "https://st.blob.core.windows.net/c?sv=2022-11-02&se=2030-01-01&sr=b&sp=r&sig=abc%2Bdef%3D",
            "https://st.blob.core.windows.net/c?sv=2022-11-02&se=2030-01-01&sr=b&sp=r&sig=[REDACTED]",
            id="sas-url",
        ),
        pytest.param(
            "DefaultEndpointsProtocol=https;AccountName=st;AccountKey=abc+/def==;EndpointSuffix=core.windows.net",
            "DefaultEndpointsProtocol=https;AccountName=st;AccountKey=[REDACTED];EndpointSuffix=core.windows.net",
            id="storage-connection-string",
        ),
        pytest.param(
            "Endpoint=sb://ns.servicebus.windows.net/;SharedAccessKeyName=Root;SharedAccessKey=SAKEY1=",
            "Endpoint=sb://ns.servicebus.windows.net/;SharedAccessKeyName=Root;SharedAccessKey=[REDACTED]",
            id="service-bus-connection-string",
        ),
        pytest.param(
            "BlobEndpoint=https://st.example/;SharedAccessSignature=sv=2022&ss=b&sig=SIGX3",
            "BlobEndpoint=https://st.example/;SharedAccessSignature=[REDACTED]&ss=b&sig=[REDACTED]",
            id="sas-connection-string",
        ),
        pytest.param(
            "Server=tcp:x.database.windows.net;User ID=u;Password=P@ss1;Encrypt=true",
            "Server=tcp:x.database.windows.net;User ID=u;Password=[REDACTED];Encrypt=true",
            id="sql-connection-string",
        ),
        pytest.param(
            "postgres://admin:Pa55word@db.example:5432/x",
            "postgres://admin:[REDACTED]@db.example:5432/x",
            id="url-userinfo",
        ),
        pytest.param(
            'sent {"client_secret": "s3cr3t value", "password":"hunter2", "name": "ok"}',
            'sent {"client_secret": "[REDACTED]", "password":"[REDACTED]", "name": "ok"}',
            id="json",
        ),
        pytest.param(
            '{\\"clientSecret\\": \\"esc aped\\"}', '{\\"clientSecret\\": \\"[REDACTED]\\"}', id="escaped-json"
        ),
        pytest.param(
            "{'adminPassword': 'pyrepr', 'user': 'u'}", "{'adminPassword': '[REDACTED]', 'user': 'u'}", id="python-repr"
        ),
        pytest.param(
            "client_secret=abc&grant_type=client_credentials",
            "client_secret=[REDACTED]&grant_type=client_credentials",
            id="form-body",
        ),
        pytest.param("client_secret: colonvalue", "client_secret: [REDACTED]", id="client-secret-colon"),
        pytest.param("password = spaced", "password = [REDACTED]", id="spaced-equals"),
        pytest.param(
            "access_token=at1&refresh_token=rt1", "access_token=[REDACTED]&refresh_token=[REDACTED]", id="oauth-tokens"
        ),
        pytest.param("jwt eyJhbGciOi.eyJzdWIi.c2ln end", "jwt [REDACTED] end", id="jwt"),
        pytest.param(
            f"InvalidAuthenticationToken: (InvalidAuthenticationToken) Bearer {ISSUED} is not valid",
            "InvalidAuthenticationToken: (InvalidAuthenticationToken) Bearer [REDACTED] is not valid",
            id="error-code-ending-in-token-is-kept",
        ),
    ],
)
def test_each_form_of_a_secret_is_redacted_and_its_name_kept(text: str, expected: str) -> None:
    assert redacted(text) == expected


@pytest.mark.parametrize(
    "text",
    [
        "AuthorizationFailed: (AuthorizationFailed) The client 'x' does not have authorization",
        "The 'Authorization' header is missing.",
        "Code: Forbidden",  # an error's code, not a Functions key
        "the Basic tier is not available; Basic Authentication is off",  # Basic, but no user:password
        "refused a link to evil.example:8443: the token goes only to https://management.azure.com",
        "partitionKey is /id; SharedAccessKeyName=RootManageSharedAccessKey",
        "https://st.blob.core.windows.net/c?sv=2022-11-02&se=2030-01-01&sr=b&sp=r",
        "the answer was still arriving after 120 s",
    ],
)
def test_text_without_a_secret_is_quoted_as_it_is(text: str) -> None:
    assert redacted(text) == text


def test_a_redacted_text_stays_as_it_is_when_redacted_again() -> None:
    once = redacted(f"Authorization: Bearer {ISSUED}; key=k; sig=s; Basic {BASIC}")
    assert once == f"Authorization: Bearer {REDACTED}; key={REDACTED}; sig={REDACTED}; Basic {REDACTED}"
    assert redacted(once) == once


def test_every_issued_token_is_scrubbed_from_a_body_and_nothing_else() -> None:
    redactor = Redactor()
    for token in ("first-token", "second-token"):
        redactor.remember(token)
    body = b'{"name": "first-token", "id": "/x/second-token", "key": "kept: not a token the scan issued"}'
    assert redactor.scrub(body) == (
        b'{"name": "[REDACTED]", "id": "/x/[REDACTED]", "key": "kept: not a token the scan issued"}'
    )


def test_a_quote_is_redacted_and_cut_to_one_report_line() -> None:
    """A hostile 10 MB message: the token that starts inside the kept part is gone whole, the
    key after it too, and the line stops at QUOTE_LIMIT characters."""
    redactor = Redactor()
    token = "t" * 2900  # an issued token, up to 3 KB
    redactor.remember(token)
    quoted = redactor.quote(f"{'x' * 900}{token} api-key: k3y {'y' * 10_000_000}")
    kept = "x" * 900 + REDACTED + " api-key: " + REDACTED + " "
    assert quoted == kept + "y" * (QUOTE_LIMIT - len(kept)) + "..."
    assert redactor.quote("short: fine") == "short: fine"
