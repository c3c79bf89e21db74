"""Building the entity mention matcher over a large knowledge base, and changing it by one alias.

8,000 entity names (the seed entities' names and aliases, the rest made up as real hardware names are:
words, hyphens, model numbers, some Chinese), measured in the same run:

- baseline: a plain dict of the names' normalised forms and a character trie of them in Python (what
  any matcher must at least read);
- regex: ``EntityMatcher`` (the trie-shaped regular expression signal rules use), built from scratch;
- index: ``EntityIndex`` (Aho-Corasick) built from scratch, then updated with one alias more and one
  alias less (``EntityIndex.updated``), which the mention linker does when names change;
- scanning: entities found in 2,000 synthetic news paragraphs by both, as items per second.

Prints seconds for each, the ratio of each build to the baseline and of the index to the regex.

    python benchmarks/matcher_build.py [--names 8000] [--rounds 3]
"""

from __future__ import annotations

import argparse
import random
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "service"))
sys.path.insert(0, str(ROOT))

from tests.fixtures.names import WORDS, made_up_entities, seed_entities  # noqa: E402

from chipwatch.text.entities import Entity, EntityIndex, EntityMatcher  # noqa: E402
from chipwatch.text.normalize import normalize_text  # noqa: E402
from chipwatch.text.phrases import canonical  # noqa: E402

SEED = 20261130


def entity_set(n_names: int, rng: random.Random) -> list[Entity]:
    """Seed entities plus made-up ones until there are ``n_names`` names in all."""
    entities = seed_entities()
    have = sum(len(e.names) for e in entities)
    made = made_up_entities(rng, max(0, (n_names - have) * 10 // 14), WORDS)  # about 1.4 names each
    return entities + made


def baseline(entities: list[Entity]) -> None:
    """A dict of normalised names and a character trie of them: the floor of any matcher build."""
    names: dict[str, set[str]] = {}
    root: dict = {}
    for ent in entities:
        for name in ent.names:
            canon = canonical(name)
            names.setdefault(canon, set()).add(ent.id)
            node = root
            for char in canon:
                node = node.setdefault(char, {})
            node[""] = canon


def best_of(rounds: int, fn) -> tuple[float, object]:
    best, out = float("inf"), None
    for _ in range(rounds):
        start = time.perf_counter()
        out = fn()
        best = min(best, time.perf_counter() - start)
    return best, out


def paragraphs(entities: list[Entity], rng: random.Random, n: int) -> list[str]:
    filler = "the company said its new accelerator ships next quarter with more memory and".split()
    out = []
    for _ in range(n):
        words = [rng.choice(filler) for _ in range(80)]
        for _ in range(4):
            words.insert(rng.randrange(len(words)), rng.choice(rng.choice(entities).names))
        out.append(normalize_text(" ".join(words)))
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--names", type=int, default=8000)
    ap.add_argument("--rounds", type=int, default=3)
    args = ap.parse_args()
    rng = random.Random(SEED)
    entities = entity_set(args.names, rng)
    n_names = sum(len(e.names) for e in entities)
    print(f"{len(entities)} entities, {n_names} names")

    t_base, _ = best_of(args.rounds, lambda: baseline(entities))
    t_regex, regex = best_of(1, lambda: EntityMatcher(entities))  # seconds each: one round
    t_index, index = best_of(args.rounds, lambda: EntityIndex(entities))
    victim = entities[len(entities) // 2]
    more = [e if e is not victim else Entity(e.id, [*e.names, "Brand New Alias 9"]) for e in entities]
    t_add, index_more = best_of(args.rounds, lambda: index.updated(more))
    t_remove, _ = best_of(args.rounds, lambda: index_more.updated(entities))

    texts = paragraphs(entities, rng, 2000)
    t_scan_regex, found_regex = best_of(1, lambda: [regex.scan_normalized(t) for t in texts])
    t_scan_index, found_index = best_of(args.rounds, lambda: [index.scan_normalized(t) for t in texts])
    assert found_regex == found_index, "the two matchers disagree"

    print(f"baseline: dict + trie of the names  {t_base * 1000:9.1f} ms")
    print(f"regex matcher, full build           {t_regex * 1000:9.1f} ms  {t_regex / t_base:6.1f}x baseline")
    print(f"index, full build                   {t_index * 1000:9.1f} ms  {t_index / t_base:6.1f}x baseline")
    print(f"index, one alias added              {t_add * 1000:9.1f} ms  {t_add / t_base:6.2f}x baseline")
    print(f"index, one alias removed            {t_remove * 1000:9.1f} ms  "
          f"{t_remove / t_base:6.2f}x baseline")
    print(f"full build: index / regex           {t_index / t_regex:9.3f}")
    print(f"scan 2,000 paragraphs: regex {len(texts) / t_scan_regex:,.0f} items/s, "
          f"index {len(texts) / t_scan_index:,.0f} items/s (same answers)")


if __name__ == "__main__":
    main()
