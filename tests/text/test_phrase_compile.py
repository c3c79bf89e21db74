"""Compiling a phrase set looks at each phrase's own prefixes, not at every other phrase: the work grows
with the number of phrases times their length, so thousands of aliases compile without quadratic cost."""

from __future__ import annotations

from chipwatch.text import phrases
from chipwatch.text.phrases import PhraseSet


def test_implied_phrases_are_looked_up_along_the_trie_path(monkeypatch):
    calls = 0
    original = phrases._implies

    def counting(winner, other):
        nonlocal calls
        calls += 1
        return original(winner, other)

    monkeypatch.setattr(phrases, "_implies", counting)
    n = 2000
    PhraseSet((f"alias number {i} foo", False, i) for i in range(n))
    # Each phrase meets only the phrases ending on its own path (itself here); comparing every pair
    # would be n * n = 4,000,000 calls.
    assert calls == n


def test_prefix_phrases_are_still_found_inside_longer_ones():
    phrase_set = PhraseSet([("vera", False, "vera"), ("vera rubin", False, "vr"),
                            ("vera rubin nvl144", False, "n"), ("reproduc", True, "rep")])
    found = phrase_set.scan("the vera rubin nvl144 results were reproduced")
    assert set(found) == {"vera", "vr", "n", "rep"}
    assert found["vera"] == (4, 8) and found["vr"] == (4, 14) and found["n"] == (4, 21)


def test_the_case_insensitive_twin_is_compiled_only_when_a_text_needs_it():
    phrase_set = PhraseSet([("rubin", False, "r")])
    assert phrase_set.scan("vera rubin") == {"r": (5, 10)}
    assert phrase_set._twins is None  # normalised text never changes length when lower-cased
    # U+0130 lower-cases to two characters: offsets must stay the text's own, so the twin reads it.
    assert phrase_set.scan("\u0130 Rubin") == {"r": (2, 7)}
    assert phrase_set._twins is not None
