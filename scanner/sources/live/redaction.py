"""Secrets never leave a live scan through what a server says.

A hostile or broken endpoint can echo what it was sent: the bearer token in an error message,
in a resource's name. Everything quoted from a server is redacted here before it reaches a
coverage reason, an error line or a report: the tokens the credential issued during this scan
(exactly, in every response body), and anything shaped like a secret in the texts azai quotes
(``Bearer`` values, JWTs, ``sig=``/``key=``-style query values).
"""

from __future__ import annotations

import re
import threading
import time
from typing import Any

REDACTED = "[REDACTED]"
TOKEN_REFRESH_MARGIN = 300  # seconds before expiry at which a shared token is fetched again
_BEARER = re.compile(r"(?i)\bBearer\s+[A-Za-z0-9._~+/=-]+")
# Three base64url segments whose header is a JSON object ("eyJ" is base64 for '{"'): RFC 7519 §3.
_JWT = re.compile(r"\beyJ[A-Za-z0-9_-]*\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]*")
# SAS signatures, keys and tokens in query strings or "name=value" texts.
_SECRET_VALUE = re.compile(
    r"(?i)\b(sig|key|token|secret|password|client_secret|access_token|refresh_token|code)=[^&\s'\"<>]+"
)


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
        text = _BEARER.sub(f"Bearer {REDACTED}", text)
        text = _JWT.sub(REDACTED, text)
        return _SECRET_VALUE.sub(lambda m: f"{m.group(1)}={REDACTED}", text)


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
