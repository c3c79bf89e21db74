"""The Aho-Corasick phrase index finds exactly what the compiled phrase set finds, and an index updated
entity by entity is the index built from scratch, at the cost of the changed names only."""

from __future__ import annotations

import random
import re

import pytest

from chipwatch.text import phrase_index
from chipwatch.text.entities import Entity, EntityIndex, EntityMatcher
from chipwatch.text.normalize import normalize_text
from chipwatch.text.phrase_index import PhraseIndex
from chipwatch.text.phrases import PhraseSet
from tests.fixtures.corpus import corpus_dir, requires_corpus
from tests.fixtures.names import WORDS, made_up_entities, seed_entities

TRICKY = [
    "Vera Rubin的InferenceX成绩 and the Vera-Rubin  NVL144 (vera  -  rubin nvl144).",
    "Rubinstein is no Rubin; M60 is no M6, but M6 is.",
    "\u0130stanbul: Groq LPU, GROQ lpu, groq-lpu\tand groq\n lpu; reproduced, reproduction, irreproducible",
    "英伟达发布 Blackwell Ultra; 昆仑芯3 ships; C++ and tok/s figures: 120 tok/s",
    "Jalapen\u0303o, JALAPEÑO, jalapeno-2, jalapenos",
]


def _both(phrases):
    return PhraseSet(phrases), PhraseIndex(phrases)


def test_tricky_texts_are_read_alike():
    phrases = [("Vera", False, "vera"), ("Vera Rubin", False, "vr"), ("vera rubin nvl144", False, "nvl"),
               ("Rubin", False, "rubin"), ("M6", False, "m6"), ("Groq LPU", False, "lpu"),
               ("reproduc", True, "rep"), ("英伟达", False, "nv"), ("C++", False, "cpp"),
               ("tok/s", False, "toks"), ("Jalapeño", False, "jal"), ("istanbul", False, "ist"),
               ("Blackwell Ultra", False, "bu"), ("昆仑芯", False, "kl")]
    regex, index = _both(phrases)
    for text in TRICKY:
        norm = normalize_text(text)
        assert index.scan(norm) == regex.scan(norm), text
        assert sorted(index.scan_all(norm), key=repr) == sorted(regex.scan_all(norm), key=repr), text
    # Spot values, so the two agreeing is not the only thing held.
    norm = normalize_text(TRICKY[0])
    found = index.scan(norm)
    assert found["vr"] == (0, 10) and found["vera"] == (0, 4) and "nvl" in found
    assert norm[slice(*found["nvl"])] == "Vera-Rubin  NVL144"
    assert set(index.scan(normalize_text(TRICKY[1]))) == {"rubin", "m6"}
    assert index.scan(normalize_text(TRICKY[2]))["ist"] == (0, 8)
    assert index.scan(normalize_text(TRICKY[2]))["rep"] == (54, 64)  # "reproduced", not "irreproducible"


@requires_corpus
def test_the_index_reads_the_real_corpus_as_the_phrase_set_does():
    rng = random.Random(7)
    texts = []
    for path in sorted(corpus_dir().rglob("*")):
        if path.suffix in (".xml", ".json", ".txt", ".csv", ".opml") and path.is_file():
            texts.append(normalize_text(path.read_text(encoding="utf-8", errors="replace")[:20000]))
    assert len(texts) > 1000
    words = sorted(set(re.findall(r"[A-Za-z][A-Za-z0-9]{2,12}", " ".join(texts[:200]))))
    entities = seed_entities() + made_up_entities(rng, 1500, words)
    phrases = [(n, False, e.id) for e in entities for n in e.names]
    regex, index = _both(phrases)
    found = 0
    for norm in texts:
        expected = regex.scan(norm)
        assert index.scan(norm) == expected
        found += len(expected)
    assert found > 1000  # the names are met in the texts, so the comparison is not of empty answers


@pytest.mark.parametrize("compact_min", [64, 3], ids=["layered", "compacting"])
def test_an_updated_index_is_the_index_built_from_scratch(monkeypatch, compact_min):
    # 64: the changes stay in the small automaton and the removal set; 3: the index is built again
    # every few changes. Both must be the index built from scratch.
    monkeypatch.setattr(phrase_index, "COMPACT_MIN", compact_min)
    monkeypatch.setattr(phrase_index, "COMPACT_FRACTION", 0.05 if compact_min > 3 else 0.0)
    rng = random.Random(20261130)
    entities = {e.id: e for e in seed_entities() + made_up_entities(rng, 3000, WORDS)}
    assert len(entities) > 3000 and any("jalapeno" == i for i in entities)
    index = EntityIndex(entities.values())
    texts = [normalize_text(t) for t in TRICKY] + [
        normalize_text(" ".join(rng.choice(WORDS) for _ in range(200))) for _ in range(20)
    ]
    ids = sorted(entities)
    for step in range(60):
        victim = entities[rng.choice(ids)]
        action = step % 4
        if action == 0:  # an alias more
            entities[victim.id] = Entity(victim.id, [*victim.names, f"{rng.choice(WORDS)} {step}"])
        elif action == 1:  # an alias less
            entities[victim.id] = Entity(victim.id, list(victim.names[:-1]) or [victim.id])
        elif action == 2:  # an entity gone
            del entities[victim.id]
            ids.remove(victim.id)
        else:  # a new entity, sharing a name with another one
            new_id = f"new-{step}"
            entities[new_id] = Entity(new_id, [victim.names[0], f"Brand New {step}"])
            ids.append(new_id)
        index = index.updated(entities.values())
        if compact_min == 64:
            assert index._phrases._added or index._phrases._removed  # still layered, not built again
        if step % 10 == 9:
            fresh = EntityIndex(entities.values())
            assert index._phrases.phrases() == fresh._phrases.phrases()
            for text in texts:
                assert index.scan_normalized(text) == fresh.scan_normalized(text)
    # And what it finds is what the rule matcher over the same entities finds.
    matcher = EntityMatcher(entities.values())
    for text in texts:
        assert index.scan_normalized(text) == matcher.scan_normalized(text)
    assert index.entities_in("Vera Rubin and Jalapeño") >= {"vera-rubin", "jalapeno"}


def test_an_update_normalises_only_the_changed_names(monkeypatch):
    rng = random.Random(3)
    entities = made_up_entities(rng, 2000, WORDS)
    index = EntityIndex(entities)
    calls = 0
    original = phrase_index.canonical

    def counting(text):
        nonlocal calls
        calls += 1
        return original(text)

    monkeypatch.setattr(phrase_index, "canonical", counting)
    changed = [*entities[:-1], Entity(entities[-1].id, [*entities[-1].names, "One More Alias"])]
    updated = index.updated(changed)
    assert calls == 1  # the new alias; the 2,000 others were prepared already
    assert updated.entities_in("we saw one-more alias today") == {entities[-1].id}
    assert index.entities_in("we saw one-more alias today") == set()  # the old index is unchanged
    assert index.updated(changed[:-1]).size == len(entities) - 1


def test_an_empty_index_finds_nothing_and_a_one_name_index_maps_spans_back():
    assert EntityIndex([]).entities_in("Groq ships") == set()
    index = EntityIndex([Entity("groq", ["Groq"])])
    (mention,) = index.find("so  GROQ ships")
    assert (mention.entity_id, mention.span, mention.text) == ("groq", (4, 8), "GROQ")
