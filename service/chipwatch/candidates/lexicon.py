"""The names extraction resolves: every knowledge-base entity with its names, aliases and alias-table
entries, in one phrase scan (pure once built; :func:`chipwatch.candidates.service.load_lexicon` reads the
tables).

A name found in text resolves to an entity id when it is one of the entity's names, one of its aliases
(``Entity.aliases``) or an entry of the alias table (``aliases``); matching is the phrase matcher's
(``chipwatch.text.phrases``: case-insensitive, Latin names on word edges, CJK names as substrings), run
by an Aho-Corasick index (``chipwatch.text.phrase_index``), which finds the same names as the phrase
set's regex and scans the many short sentences of a check in about 60% of its time.
A chip name written after its vendor ("曦望发布S3", "Apple ... M6") also resolves when vendor name plus
that name is one of the chip's names (``Xiwang S3``).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field

from chipwatch.text.phrase_index import PhraseIndex
from chipwatch.text.phrases import canonical


@dataclass(frozen=True, slots=True)
class LexEntry:
    """One entity as extraction sees it: id, kind (vendor, chip, model, benchmark), names, and for a
    chip its vendor id."""

    id: str
    kind: str
    names: tuple[str, ...]
    vendor_id: str | None = None


@dataclass(frozen=True, slots=True)
class Found:
    """An entity named in normalised text: id, kind and span in that text."""

    id: str
    kind: str
    start: int
    end: int


@dataclass(slots=True)
class Lexicon:
    """Entities and their names; ``scan`` finds them in normalised text (``normalize_text``)."""

    entries: dict[str, LexEntry]
    _phrases: PhraseIndex = field(init=False, repr=False)
    _by_canon: dict[str, set[str]] = field(init=False, repr=False)

    def __post_init__(self) -> None:
        phrases = []
        self._by_canon = {}
        for entry in self.entries.values():
            for name in (entry.id, *entry.names):
                if not name or not name.strip():
                    continue
                phrases.append((name, False, entry.id))
                self._by_canon.setdefault(canonical(name), set()).add(entry.id)
                if entry.kind == "chip" and name[-1].isascii() and name[-1].isalnum():
                    phrases.append((f"{name}s", False, entry.id))  # "TPUs", "GB200s"
        self._phrases = PhraseIndex(phrases)

    @classmethod
    def build(cls, entries: Iterable[LexEntry]) -> Lexicon:
        """A lexicon over ``entries``; an id given twice keeps the first kind and every name."""
        merged: dict[str, LexEntry] = {}
        for e in entries:
            old = merged.get(e.id)
            if old is None:
                merged[e.id] = e
            else:
                merged[e.id] = LexEntry(old.id, old.kind, old.names + e.names, old.vendor_id or e.vendor_id)
        return cls(merged)

    def scan(self, norm: str) -> list[Found]:
        """The entities named in ``norm`` (each at its first place), in reading order; where names overlap,
        the longest wins."""
        # The first place each entity is named: a sentence names an entity once in all but rare cases,
        # and this scan costs half of listing every place.
        hits = [
            Found(str(label), self.entries[str(label)].kind, a, b)
            for label, (a, b) in self._phrases.scan(norm).items()
        ]
        hits.sort(key=lambda f: (f.start, -(f.end - f.start)))
        out: list[Found] = []
        for hit in hits:
            if out and hit.start < out[-1].end:
                continue  # inside a longer name found first ("Vera" within "Vera Rubin")
            out.append(hit)
        return out

    def kind_of(self, entity_id: str | None) -> str | None:
        """The kind of ``entity_id`` (None when unknown)."""
        entry = self.entries.get(entity_id or "")
        return entry.kind if entry else None

    def vendor_of(self, chip_id: str | None) -> str | None:
        """The vendor id of a chip (None when unknown or not a chip)."""
        entry = self.entries.get(chip_id or "")
        return entry.vendor_id if entry else None

    def lookup(self, name: str, kind: str | None = None) -> str | None:
        """The one entity (of ``kind`` when given) whose name or alias is exactly ``name``, else None."""
        ids = {
            i for i in self._by_canon.get(canonical(name), set()) if kind is None or self.kind_of(i) == kind
        }
        return next(iter(ids)) if len(ids) == 1 else None

    def chip_of_vendor(self, vendor_id: str | None, name: str) -> str | None:
        """The chip of ``vendor_id`` named ``<vendor name> <name>`` ("Xiwang" + "S3"), else None."""
        vendor = self.entries.get(vendor_id or "")
        if vendor is None:
            return None
        for vendor_name in (vendor.id, *vendor.names):
            found = self.lookup(f"{vendor_name} {name}", "chip")
            found = found or self.lookup(f"{vendor_name}{name}", "chip")
            if found is not None and self.vendor_of(found) == vendor.id:
                return found
        return None


__all__ = ["Found", "LexEntry", "Lexicon"]
