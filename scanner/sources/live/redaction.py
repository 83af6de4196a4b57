"""Secrets never leave a live scan through what a server says.

A hostile or broken endpoint can echo what it was sent: the bearer token in an error message,
in a resource's name. Everything quoted from a server is redacted here before it reaches a
coverage reason, an error line or a report: the tokens the credential issued during this scan
(exactly, in every response body: `Redactor.scrub`), and, in the texts azai quotes
(`Redactor.text`), anything shaped like a secret:

- a value named as a secret, in the forms headers, queries, connection strings, JSON and
  Python texts give it: ``name: value``, ``name=value``, ``"name": "value"`` (also escaped,
  ``\"name\": \"value\"``) and ``'name': 'value'``, where the name ends in key, secret,
  password, passwd, pwd, token, signature, credential(s) or authorization (``Authorization``,
  ``api-key``, ``Ocp-Apim-Subscription-Key``, ``x-functions-key``, ``AccountKey``,
  ``SharedAccessKey``, ``client_secret``, ``access_token``...), or is ``sig`` (a SAS
  signature) or ``code`` (an Azure Functions key in a query);
- an ``Authorization`` value's credentials after its scheme (``Bearer``, ``Basic``,
  ``SharedAccessSignature``, ``SharedKey``...), and such credentials standing alone:
  ``Bearer x``, ``SharedAccessSignature sr=...&sig=...``, ``SharedKey account:signature``, and
  ``Basic x`` when ``x`` is base64 of ``user:password`` (Basic is also a word: "Basic tier");
- a JWT (three base64url segments, the first a JSON object), and the password of a URL's
  ``user:password@``.

A name-value match keeps the name and the scheme, so a reason still says what was refused.
A ``name: value`` whose value opens with "(" is not a secret but ARM's error code repeated
(``InvalidAuthenticationToken: (InvalidAuthenticationToken) ...``).
"""

from __future__ import annotations

import base64
import binascii
import re
import threading
import time
from typing import Any

REDACTED = "[REDACTED]"
QUOTE_LIMIT = 1000  # characters of a server's text that a report quotes
QUOTE_WINDOW = 4096  # characters redacted to quote them: QUOTE_LIMIT and the longest token
TOKEN_REFRESH_MARGIN = 300  # seconds before expiry at which a shared token is fetched again
# Authorization schemes whose credentials follow a space (RFC 9110 section 11.4), as Azure's
# services take them, looked up 2026-11-29: Bearer (Entra ID); SharedAccessSignature sr=...&sig=...
# (Service Bus and Event Hubs SAS tokens); SharedKey and SharedKeyLite account:signature
# (https://learn.microsoft.com/rest/api/storageservices/authorize-with-shared-key); HMAC-SHA256
# Credential=...&SignedHeaders=...&Signature=... (App Configuration,
# https://learn.microsoft.com/azure/azure-app-configuration/rest-api-authentication-hmac); and
# HTTP's Basic, Digest, Negotiate and NTLM, and PoP.
_SCHEMES = r"(?:Bearer|Basic|SharedAccessSignature|SharedKey|SharedKeyLite|HMAC-SHA256|PoP|Digest|Negotiate|NTLM)"
# A secret's name: one that ends in a secret's word, or sig, or code; not part of a longer word.
# API keys go in headers and queries by such names, looked up 2026-11-29: Azure OpenAI's api-key
# (https://learn.microsoft.com/azure/api-management/api-management-authenticate-authorize-azure-openai),
# API Management's Ocp-Apim-Subscription-Key and subscription-key
# (https://learn.microsoft.com/training/modules/explore-api-management/6-secure-access-api-subscriptions),
# Azure Functions' x-functions-key and code (https://learn.microsoft.com/azure/azure-functions/function-keys-how-to);
# connection strings name AccountKey, SharedAccessKey, SharedAccessSignature and Password.
_NAME = (
    r"(?<![\w-])(?P<name>[\w-]*?(?:key|secret|password|passwd|pwd|token|signature|credentials?|authorization)|sig|code)"
)
_NAMED = re.compile(
    _NAME + r"(?P<sep>\\?[\"']?\s*[:=]\s*)"
    r"(?P<value>\\\"(?:[^\"\\]|\\[^\"])*\\\"|\"(?:[^\"\\\n]|\\.)*\"|'[^'\n]*'"
    # a bare value: not one already redacted, nor an error's code repeated "(Code)", nor JSON's { or [
    rf"|(?P<scheme>{_SCHEMES}\s+)?(?:{re.escape(REDACTED)}|[^\s&;'\"<>(\\{{\[][^\s&;'\"<>\\]*))",
    re.IGNORECASE,
)
# Credentials after a scheme that only ever carries secrets, wherever it stands.
_SCHEMED = re.compile(r"\b(?P<scheme>Bearer|SharedAccessSignature|SharedKey(?:Lite)?)\s+[^\s,;'\"<>]+", re.IGNORECASE)
_BASIC = re.compile(r"\bBasic\s+(?P<value>[A-Za-z0-9+/]{4,}={0,2})(?![\w+/=])", re.IGNORECASE)
# Three base64url segments whose header is a JSON object ("eyJ" is base64 for '{"'): RFC 7519 §3.
_JWT = re.compile(r"\beyJ[A-Za-z0-9_-]*\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]*")
# The password of a URL's user information (RFC 3986 section 3.2.1): scheme://user:password@host.
_USERINFO = re.compile(r"(?P<head>\b[A-Za-z][A-Za-z0-9+.-]*://[^\s/:@'\"<>]*:)[^\s/@'\"<>]+@")
_QUOTES = ('\\"', '"', "'")


def _named(match: re.Match[str]) -> str:
    """A secret's name and separator kept, its value redacted (its quotes and scheme kept)."""
    name, sep, value = match.group("name", "sep", "value")
    if name.lower() in ("code", "sig") and ":" in sep:
        return match.group(0)  # "Code: Forbidden" is an error's code, not a Functions key
    quote = next((q for q in _QUOTES if value.startswith(q) and len(value) >= 2 * len(q)), "")
    return f"{name}{sep}{quote}{match.group('scheme') or ''}{REDACTED}{quote}"


def _basic(match: re.Match[str]) -> str:
    """``Basic`` credentials redacted when they are what Basic carries: base64 of user:password."""
    try:
        decoded = base64.b64decode(match.group("value"), validate=True)
    except (binascii.Error, ValueError):
        return match.group(0)
    return f"Basic {REDACTED}" if b":" in decoded else match.group(0)


class Redactor:
    """Remembers the tokens a scan's credential issued and removes them, and secret-shaped
    text, from what servers said."""

    def __init__(self) -> None:
        self._tokens: frozenset[str] = frozenset()
        self._lock = threading.Lock()

    def remember(self, token: str) -> None:
        if token and token not in self._tokens:
            with self._lock:
                self._tokens = self._tokens | {token}

    def scrub(self, data: bytes) -> bytes:
        """A response body without the issued tokens (a byte search: cheap on every response)."""
        for token in self._tokens:
            data = data.replace(token.encode(), REDACTED.encode())
        return data

    def text(self, text: str) -> str:
        """A server's text, safe to quote: issued tokens and secret-shaped values replaced."""
        for token in self._tokens:
            text = text.replace(token, REDACTED)
        text = _USERINFO.sub(rf"\g<head>{REDACTED}@", text)
        text = _NAMED.sub(_named, text)
        text = _SCHEMED.sub(rf"\g<scheme> {REDACTED}", text)
        text = _BASIC.sub(_basic, text)
        return _JWT.sub(REDACTED, text)

    def quote(self, text: str) -> str:
        """A server's text as one line of a report: redacted, and at most `QUOTE_LIMIT`
        characters. A hostile endpoint can answer a one-line message of 64 MB, which would cost
        seconds of redaction and land in every report; only `QUOTE_WINDOW` characters are
        redacted, a window that holds the whole of any issued token (under 3 KB) that starts
        within what is kept."""
        kept = self.text(text[:QUOTE_WINDOW])
        return kept if len(kept) <= QUOTE_LIMIT else kept[:QUOTE_LIMIT] + "..."


class RecordingCredential:
    """The scan's credential, telling the redactor every token it hands to the pipeline.

    It also shares one token among the scan's clients. Each azure-mgmt client's
    authentication policy keeps its own token, and a scan builds a client per service and
    subscription, so without this every client would ask the credential again; with the Azure
    CLI credential that is one ``az`` process per client, started by up to 32 threads at once.
    A token is reused until five minutes before it expires; a request that carries claims (a
    continuous-access challenge) always goes to the credential."""

    def __init__(self, inner: Any, redactor: Redactor) -> None:
        self.inner = inner
        self.redactor = redactor
        self._tokens: dict[tuple[Any, ...], Any] = {}
        self._lock = threading.Lock()

    def _shared(self, key: tuple[Any, ...], fetch: Any) -> Any:
        with self._lock:  # one thread fetches; the others wait for its token instead of asking too
            token = self._tokens.get(key)
            if token is None or token.expires_on - time.time() < TOKEN_REFRESH_MARGIN:
                token = self._tokens[key] = fetch()
                self.redactor.remember(token.token)
            return token

    def get_token(self, *scopes: str, **kwargs: Any) -> Any:
        if kwargs.get("claims"):
            issued = self.inner.get_token(*scopes, **kwargs)
            self.redactor.remember(issued.token)
            return issued
        key = ("token", scopes, tuple(sorted((k, repr(v)) for k, v in kwargs.items())))
        return self._shared(key, lambda: self.inner.get_token(*scopes, **kwargs))

    def get_token_info(self, *scopes: str, options: Any = None) -> Any:
        if options and options.get("claims"):
            issued = self.inner.get_token_info(*scopes, options=options)
            self.redactor.remember(issued.token)
            return issued
        key = ("info", scopes, tuple(sorted((k, repr(v)) for k, v in (options or {}).items())))
        return self._shared(key, lambda: self.inner.get_token_info(*scopes, options=options))

    def close(self) -> None:
        self.inner.close()
