"""The search fold: one spelling for every way a reader would write the same text; and story keys."""

from __future__ import annotations

import pytest

from chipwatch.text.search import MAX_TERMS, fold_for_search, search_terms
from chipwatch.text.stories import story_keys

# (text as stored or typed, its folded form)
FOLDS = [
    ("Jalapen\u0303o", "jalapeno"),  # decomposed ñ
    ("Jalape\u00f1o", "jalapeno"),  # composed ñ
    ("JALAPEÑO", "jalapeno"),
    ("１２０ＭＷ", "120mw"),  # full-width digits and letters
    ("120㎿", "120mw"),  # the megawatt sign
    ("Straße", "strasse"),  # case folding beyond lower()
    ("ΣΊΣΥΦΟΣ", "σισυφοσ"),  # Greek capitals, tonos and final sigma
    ("Ёлка", "елка"),  # Cyrillic diaeresis
    ("İstanbul", "istanbul"),  # dotted capital I
    ("ℌello", "hello"),  # NFKC makes a capital that a second fold lowers
    ("GPT\u2011OSS", "gpt-oss"),  # non-breaking hyphen
    ("couldn\u2019t", "couldn't"),
    ("华为  昇腾\u3000芯片", "华为 昇腾 芯片"),  # ideographic space, runs of spaces
    ("がぎぐ", "がぎぐ"),  # kana keep their voicing marks
    ("", ""),
    (None, ""),
]


@pytest.mark.parametrize(("text", "folded"), FOLDS)
def test_fold(text: str | None, folded: str) -> None:
    assert fold_for_search(text) == folded


def test_query_terms() -> None:
    assert search_terms("  Jalapeño 120MW jalapeno ") == ["jalapeno", "120mw"]
    assert search_terms("\u3000") == []
    assert len(search_terms(" ".join(f"w{i}" for i in range(40)))) == MAX_TERMS


LINK = "https://news.example/2026/11/jalapeno"
LONG = "OpenAI says Jalapeño has shipped to its first inference data centre"
DECOMPOSED = LONG.replace("Jalapeño", "Jalapen\u0303o")


@pytest.mark.parametrize(
    ("a", "b", "same_link", "same_title"),
    [
        ((LINK, "x"), (LINK, "y"), True, None),
        ((LINK, LONG), ("https://other.example/1", LONG.upper()), False, True),
        ((LINK, LONG), ("https://other.example/1", DECOMPOSED), False, True),
        (("https://a.example/", "x"), ("https://a.example/", "y"), None, None),  # a home page is no key
        ((LINK, "Jalapeño shipped"), ("https://b.example/1", "Jalapeño shipped"), False, None),  # too short
        ((LINK, "Weekly roundup"), ("https://b.example/1", "Weekly roundup"), False, None),
        ((None, "华为宣布昇腾950推理芯片已经出货"), (None, "华为宣布昇腾950推理芯片已经出货"), None, True),
        ((None, "华为芯片出货"), (None, "华为芯片出货"), None, None),  # six ideographs: too short
    ],
)
def test_story_keys(a, b, same_link, same_title) -> None:
    (la, ta), (lb, tb) = story_keys(*a), story_keys(*b)
    if same_link is None:
        assert la is None and lb is None
    else:
        assert (la == lb) is same_link and la is not None
    if same_title is None:
        assert ta is None and tb is None
    else:
        assert (ta == tb) is same_title and ta is not None and tb is not None
