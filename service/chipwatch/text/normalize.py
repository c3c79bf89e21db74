"""One text normalisation for every matcher, with a map back to the original text (pure: no I/O).

``normalize_text`` is shared by the phrase matcher (``chipwatch.text.phrases``) and the quantity reader
(``chipwatch.text.numbers``): NFKC (so full-width digits, letters and the ``㎿`` sign become plain ones),
typographic apostrophes and dashes folded to ASCII, and accents removed from Latin letters so that
"Jalapeño" and "Jalapeno" (composed or decomposed ñ) read alike. ``normalize_with_offsets`` keeps a map
back to the original text so that spans point at what the reader saw.
"""

from __future__ import annotations

import re
import unicodedata
from functools import cache, lru_cache

__all__ = ["map_span", "normalize_text", "normalize_with_offsets"]

# Folded so that "couldn’t" matches the term "couldn't" and "GPT‑OSS" matches "GPT-OSS". One character
# maps to one character, so the offset map stays simple.
_TYPOGRAPHY = str.maketrans(
    {
        "\u2018": "'",
        "\u2019": "'",
        "\u201b": "'",
        "\u2032": "'",
        "\u201c": '"',
        "\u201d": '"',
        "\u201e": '"',
        "\u2010": "-",
        "\u2011": "-",
        "\u2012": "-",
        "\u2013": "-",
        "\u2014": "-",
        "\u2015": "-",
        "\u2212": "-",
    }
)


@lru_cache(maxsize=8192)
def _fold_cluster(cluster: str) -> str:
    """NFKC one base character with its combining marks; drop the marks of Latin letters."""
    text = unicodedata.normalize("NFKC", cluster).translate(_TYPOGRAPHY)
    if text.isascii():
        return text
    decomposed = unicodedata.normalize("NFD", text)
    # Only Latin letters lose their accents: a kana's voicing mark changes the syllable, not its spelling.
    if any("LATIN" in unicodedata.name(ch, "") for ch in decomposed if not unicodedata.combining(ch)):
        stripped = "".join(ch for ch in decomposed if not unicodedata.combining(ch))
        return unicodedata.normalize("NFC", stripped)
    return text


_NON_ASCII_RUN = re.compile(r"[^\x00-\x7f]+")


def _char_class(code_points: list[int]) -> str:
    """A regex character class of ``code_points`` (ascending), written as ranges."""
    ranges: list[tuple[int, int]] = []
    for cp in code_points:
        if ranges and ranges[-1][1] == cp - 1:
            ranges[-1] = (ranges[-1][0], cp)
        else:
            ranges.append((cp, cp))
    body = "".join(
        f"{re.escape(chr(a))}-{re.escape(chr(b))}" if a != b else re.escape(chr(a)) for a, b in ranges
    )
    return f"[{body}]"


@cache
def _single_folds() -> tuple[re.Pattern[str], re.Pattern[str], dict[str, str]]:
    """What the common path of ``normalize_with_offsets`` needs, built once on first use (about 60 ms).

    ``(unsafe, changed, folds)``: ``unsafe`` finds a character that takes the general path: a combining
    character (canonical class > 0, which makes a cluster longer than one character), one that folds to
    several characters or none ("㎿" to "MW"), or one past the Basic Multilingual Plane. Without those,
    every character folds on its own to exactly one character: ``changed`` finds those that fold to
    another one, and ``folds`` maps each to its fold (``_fold_cluster``).
    """
    unsafe: list[int] = []
    folds: dict[str, str] = {}
    for cp in range(0x80, 0x10000):
        if 0xD800 <= cp < 0xE000:
            continue  # surrogates: never in a decoded str on their own
        char = chr(cp)
        if unicodedata.combining(char):
            unsafe.append(cp)
            continue
        # A character stable under NFKC and NFD and not typographic folds to itself (_fold_cluster).
        if cp not in _TYPOGRAPHY and unicodedata.is_normalized("NFKC", char) and unicodedata.is_normalized(
            "NFD", char
        ):
            continue
        folded = _fold_cluster(char)
        if len(folded) != 1:
            unsafe.append(cp)
        elif folded != char:
            folds[char] = folded
    unsafe_class = _char_class(unsafe)[:-1] + "\U00010000-\U0010ffff]"
    return re.compile(unsafe_class), re.compile(_char_class(sorted(map(ord, folds)))), folds


def normalize_with_offsets(text: str) -> tuple[str, list[int] | None, list[int] | None]:
    """Normalise ``text`` and map each output character back to the input.

    Returns ``(normalised, starts, ends)``: output character ``k`` came from ``text[starts[k]:ends[k]]``.
    ``None`` maps mean identity: ASCII text (the common case for English feeds), and text whose every
    character folds to exactly one character (most Chinese news, fullwidth punctuation included).
    """
    if text.isascii():
        return text, None, None
    # The common case: two C-speed scans and a lookup for each character that changes (fullwidth
    # punctuation, typographic quotes, accented letters), without offset lists.
    unsafe, changed, folds = _single_folds()
    if unsafe.search(text) is None:
        return changed.sub(lambda m: folds[m.group()], text), None, None
    return _normalize_clusters(text)


def _normalize_clusters(text: str) -> tuple[str, list[int], list[int]]:
    """The general path of ``normalize_with_offsets``: cluster by cluster, with explicit offset maps."""
    out: list[str] = []
    starts: list[int] = []
    ends: list[int] = []
    pos = 0
    # ASCII stretches are copied as they are; only non-ASCII runs go cluster by cluster.
    for run in _NON_ASCII_RUN.finditer(text):
        i, stop = run.start(), run.end()
        if i > pos and unicodedata.combining(text[i]):
            i -= 1  # a decomposed accent belongs to the ASCII letter before it
        out.append(text[pos:i])
        starts.extend(range(pos, i))
        ends.extend(range(pos + 1, i + 1))
        while i < stop:
            j = i + 1
            while j < stop and unicodedata.combining(text[j]):
                j += 1
            piece = _fold_cluster(text[i:j])
            out.append(piece)
            starts.extend([i] * len(piece))
            ends.extend([j] * len(piece))
            i = j
        pos = stop
    out.append(text[pos:])
    starts.extend(range(pos, len(text)))
    ends.extend(range(pos + 1, len(text) + 1))
    return "".join(out), starts, ends


def normalize_text(text: str) -> str:
    """NFKC, ASCII apostrophes and dashes, and accent-free Latin letters; case is kept.

    Matching is case-insensitive through regex flags, so case is not folded here.
    """
    return normalize_with_offsets(text)[0]


def map_span(span: tuple[int, int], starts: list[int] | None, ends: list[int] | None) -> tuple[int, int]:
    """Translate a span over normalised text into a span over the original text."""
    a, b = span
    if starts is None or ends is None:
        return span
    if b <= a:
        pos = starts[a] if a < len(starts) else (ends[-1] if ends else 0)
        return pos, pos
    return starts[a], ends[b - 1]
