"""Quoting text that came from input, one helper per output format.

Resource names, tags, messages, ARM error messages and coverage reasons are written by whoever
wrote the scanned files, and azai runs on pull requests: a name may carry a terminal escape, a
``<script>``, a Markdown link to ``javascript:`` or an ``@org/team`` that would ping a team on
every run. Each helper keeps such text readable and inert in its format. Outside Markdown the
backslash itself is not escaped, so Windows paths stay readable.
"""

from __future__ import annotations

import html
import re

# Controls (C0, DEL, C1), line and paragraph separators, the bidirectional overrides and
# isolates that reorder what a reader sees ("Trojan Source", CVE-2021-42574), and lone
# surrogates, which UTF-8 cannot encode.
_UNSAFE = re.compile("[\x00-\x1f\x7f-\x9f\u2028\u2029\u202a-\u202e\u2066-\u2069\ud800-\udfff]")

# What XML 1.0 forbids: every C0 control but tab, newline and carriage return, the surrogates,
# and U+FFFE and U+FFFF (the Char production, https://www.w3.org/TR/xml/#charsets).
_XML_FORBIDDEN = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ud800-\udfff\ufffe\uffff]")

# What ``json.dumps(ensure_ascii=False)`` writes raw but must not: lone surrogates, which UTF-8
# cannot encode, and the line ends of ``str.splitlines`` (NEL, U+2028, U+2029) that JSON leaves
# unescaped, which ``textwrap.indent`` would otherwise indent inside a string value.
_JSON_RAW = re.compile("[\x85\u2028\u2029\ud800-\udfff]")

# Markdown and HTML metacharacters outside code spans. HTML's three and the brackets of links
# and images become entities, which CommonMark and GitHub render as literal text and never as
# markup (so not even ``](javascript:`` is left in the source); Markdown's others are
# backslash-escaped. An underscore is escaped only where it could open or close emphasis, so
# ``Standard_NC24ads_A100_v4`` stays as is. GitHub links ``@user``, ``@org/team`` and ``#123``
# in the rendered text, after entities are decoded, so ``&#64;`` would still ping: a word joiner
# (U+2060, invisible) after the sign keeps the text as it reads and stops the link (and keeps a
# leading ``#`` from opening a heading).
WORD_JOINER = "\u2060"
_MARKDOWN = re.compile(r"[\\`*~|<>&\[\]@#]|(?<![0-9A-Za-z])_|_(?![0-9A-Za-z])")
_MARKDOWN_ESCAPES = {
    "<": "&lt;",
    ">": "&gt;",
    "&": "&amp;",
    "[": "&#91;",
    "]": "&#93;",
    "@": "@" + WORD_JOINER,
    "#": "#" + WORD_JOINER,
}

# What a code span must not hold: what could end the span or the table cell (a backtick, a pipe,
# a backslash before one), and what would be live if a renderer ever ended it early (HTML, an
# entity, a mention or issue reference, a link's ``](``).
_NOT_IN_CODE = re.compile(r"[`|\\<>&@#]|\]\(")


def _escape(match: re.Match[str]) -> str:
    code = ord(match.group())
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def visible(text: str) -> str:
    """Text for a terminal, a log or one line on stderr: every control character (newlines
    included) as a ``\\x1b``-style escape, so the text can neither move the cursor, recolour or
    clear the screen, ring the bell, nor start a second line; printable Unicode is kept."""
    return _UNSAFE.sub(_escape, text)


def xml_text(text: str) -> str:
    """XML that XML 1.0 parsers accept: the characters it forbids as ``\\x1b``-style escapes
    (ElementTree escapes ``<``, ``&`` and quotes, but writes these as they are)."""
    return _XML_FORBIDDEN.sub(_escape, text)


def json_text(text: str) -> str:
    """JSON written with ``ensure_ascii=False``, with the characters above as ``\\u`` escapes: the
    same value once parsed, but encodable as UTF-8 (a JSON input may carry a lone surrogate as
    ``\\ud800``) and one physical line per line of the document."""
    if text.isascii():  # a flag CPython keeps on every string: most reports end here, unscanned
        return text
    return _JSON_RAW.sub(lambda match: f"\\u{ord(match.group()):04x}", text)


def html_text(text: str) -> str:
    """Text for an HTML element or attribute: escaped, with control characters made visible."""
    return html.escape(visible(text))


def markdown_text(text: str) -> str:
    """Inline Markdown that shows ``text`` literally: no HTML, link, image, emphasis, mention
    or issue reference, and no table cell or line it could end. Safe inside a table cell."""
    return _MARKDOWN.sub(lambda match: _MARKDOWN_ESCAPES.get(match.group(), "\\" + match.group()), visible(text))


def markdown_code(text: str) -> str:
    """``text`` as a code span, as names and paths are shown, where that is safe; otherwise as
    escaped inline text (see ``markdown_text``), which reads the same and is safe anywhere."""
    if _NOT_IN_CODE.search(text) or _UNSAFE.search(text):
        return markdown_text(text)
    return f"`{text}`"
