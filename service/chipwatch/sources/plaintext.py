"""Plain text out of feed markup: tags removed, entities decoded, whitespace tidied. Pure.

Text fields are plain text because they feed mention and keyword matching; nothing here is meant to be
rendered as HTML.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from html import unescape
from html.parser import HTMLParser
from typing import Any


class _TextExtractor(HTMLParser):
    """Collects the text of an HTML fragment: block elements become line breaks, scripts vanish."""

    BLOCK = frozenset(
        "address article aside blockquote br dd div dl dt figcaption figure footer h1 h2 h3 h4 h5 h6 "
        "header hr li main nav ol p pre section table tbody td tfoot th thead tr ul".split()
    )
    SKIP = frozenset({"script", "style", "template", "head", "title"})

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.parts: list[str] = []
        self._skip_depth = 0

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag in self.SKIP:
            self._skip_depth += 1
        elif tag in self.BLOCK:
            self.parts.append("\n")

    def handle_startendtag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag in self.BLOCK:
            self.parts.append("\n")

    def handle_endtag(self, tag: str) -> None:
        if tag in self.SKIP:
            self._skip_depth = max(0, self._skip_depth - 1)
        elif tag in self.BLOCK:
            self.parts.append("\n")

    def handle_data(self, data: str) -> None:
        if not self._skip_depth:
            self.parts.append(data)


_INLINE_SPACE = re.compile(r"[^\S\n]+")
# "<!" opening neither a comment, a CDATA section nor a declaration ("<!'"): html.parser would swallow
# it and what follows up to the next ">" as a bogus comment; feedparser's sanitizer kept it as text.
_NOT_A_DECLARATION = re.compile(r"<!(?![A-Za-z\[-])")


def tidy(text: str) -> str:
    """Collapse runs of whitespace (including no-break spaces) within lines, strip each line and
    drop empty ones: one line per paragraph or block."""
    lines = (_INLINE_SPACE.sub(" ", line).strip() for line in text.replace("\r", "\n").split("\n"))
    return "\n".join(line for line in lines if line)


def html_to_text(fragment: str) -> str:
    """Plain text of an HTML fragment: tags removed, entities decoded, scripts/styles dropped.

    Block elements become line breaks (empty lines are dropped); other whitespace, including
    no-break spaces, is collapsed to single spaces. Never raises on bad markup.
    """
    if "<" not in fragment and "&" not in fragment:
        return tidy(fragment)
    if "<!" in fragment:
        fragment = _NOT_A_DECLARATION.sub("&lt;!", fragment)
    parser = _TextExtractor()
    try:
        parser.feed(fragment)
        # html.parser holds back a construct it cannot finish (an unclosed quote in a tag, "<!--"
        # without its end) and close() would emit it, and everything after it, as text. Drop the
        # broken construct up to its first ">" and read on, as a browser recovers; feeds are parsed
        # without feedparser's sanitizer, which used to do this cleaning. A "<" never closed is text,
        # except an open comment, which hides the rest as in a browser.
        while parser.rawdata.startswith("<"):
            tail = parser.rawdata
            end = tail.find(">")
            if end < 0:
                if tail.startswith("<!--"):
                    parser.rawdata = ""
                break
            parser.rawdata = ""
            parser.feed(tail[end + 1 :])
        parser.close()
    except Exception:  # html.parser is lenient, but text must come out regardless
        return tidy(unescape(re.sub(r"<[^>]*>", " ", fragment)))
    return tidy("".join(parser.parts))


def one_line(text: str) -> str:
    """``text`` on one line: every run of whitespace, line breaks included, becomes one space."""
    return " ".join(text.split())


def detail_text(value: str | None, detail: Mapping[str, Any] | None) -> str:
    """Plain text of a feedparser text construct, honouring its declared type."""
    if not value:
        return ""
    kind = (detail or {}).get("type", "text/html") or "text/html"
    if "html" in kind or "xml" in kind:
        return html_to_text(value)
    return tidy(value)


def truncate(text: str, limit: int = 500) -> str:
    """A summary made from content: the first ``limit`` characters, cut at a word boundary."""
    if len(text) <= limit:
        return text
    cut = text[:limit].rsplit(" ", 1)[0]
    return cut + "…"


__all__ = ["detail_text", "html_to_text", "one_line", "tidy", "truncate"]
