"""Candidate extraction throughput against the signal matcher's, and what it adds to a feed check.

Measured in the same run, on the same items:

1. items per second through ``candidates.extract.extract`` (title and summary, every fact kind) and
   through the signal matcher ``CompiledRules.match_item`` (the ten seed signals and 40 generated ones),
   on two item sets:
   - ``synthetic``: the items of benchmarks/signals.py (same generator, same seed): every title states
     a funding round, a deployment, a ratio or a launch, so every item is read in full (the worst case);
   - ``news``: the labelled items of tests/candidates (real feed items and items written like them),
     repeated to the same count: a quarter state no fact;
   the ratio extraction time / matcher time is what extraction would add to the matcher's own work;
2. a check pass: one source serving ``--check-items`` items of each set (and of the real AI-chip feeds
   of ../shared/corpus, when present: full summaries, one item in six states a fact) from a server on
   127.0.0.1 is
   checked by ``sources.check.check_source`` (fetch, parse, decide, store, mentions, listeners) on a
   fresh migrated, seeded SQLite database, with the items-stored listeners of the service: signal
   evaluation alone, then signal evaluation and candidate extraction (which also writes the candidates
   and their events). Goal: extraction slows the check pass by at most 25%.

The slowdown is measured inside each check (the extraction listener's time over the rest of the same
check), in wall-clock seconds and in CPU seconds of this process: on a machine shared with other work
the wall-clock figures also count time spent waiting for a core, the CPU figures do not. Garbage left
by the previous round is collected before each check, so a full collection of it is not charged to
whichever listener happens to allocate when it falls due.

    python benchmarks/extract.py [--items 20000] [--check-items 1000] [--rounds 3]
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import random
import statistics
import sys
import threading
import time
from email.utils import format_datetime
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from xml.sax.saxutils import escape

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "service"))
sys.path.insert(0, str(ROOT / "benchmarks"))

import yaml  # noqa: E402
from _common import seeded_database  # noqa: E402

from chipwatch.candidates.extract import extract  # noqa: E402
from chipwatch.candidates.lexicon import LexEntry, Lexicon  # noqa: E402
from chipwatch.signals.definition import validate_definition  # noqa: E402
from chipwatch.signals.rules import ItemView, compile_signals  # noqa: E402
from signals import SEED, seed_definitions, synthetic_definitions, synthetic_entities, synthetic_items  # noqa: E402

GOAL_SLOWDOWN = 0.25


def lexicon_for(entities) -> Lexicon:
    """A lexicon over the seed entities (their kinds and chip vendors from seed_data) and the synthetic
    ones (``chip-*`` chips, ``vendor-*`` vendors)."""
    kinds: dict[str, tuple[str, str | None]] = {}
    for kind, file in (("vendor", "vendors"), ("vendor", "dataset_vendors"), ("chip", "chips"),
                       ("model", "models"), ("benchmark", "benchmarks")):
        doc = yaml.safe_load((ROOT / "seed_data" / f"{file}.yaml").read_text(encoding="utf-8"))
        for row in doc[next(k for k in doc if not k.startswith("$"))]:
            kinds.setdefault(row["id"], (kind, row.get("vendor_id")))
    entries = []
    for e in entities:
        kind, vendor = kinds.get(e.id, ("chip" if e.id.startswith("chip-") else "vendor", None))
        entries.append(LexEntry(e.id, kind, tuple(e.names), vendor))
    return Lexicon.build(entries)


def news_items(n: int) -> list[ItemView]:
    """The labelled items (tests/candidates/labelled_items.yaml) as item views, repeated to ``n``."""
    doc = yaml.safe_load((ROOT / "tests" / "candidates" / "labelled_items.yaml").read_text(encoding="utf-8"))
    base = [
        ItemView(id=i, source_id="news", source_trust="press", title=it["title"],
                 text=it.get("summary") or "", published_at=None, published_is_estimated=False)
        for i, it in enumerate(doc["items"])
    ]
    return [base[i % len(base)] for i in range(n)]


def timed(fn, items) -> float:
    t0 = time.perf_counter()
    for item in items:
        fn(item)
    return time.perf_counter() - t0


def compare(name: str, items: list[ItemView], rules, lexicon: Lexicon, rounds: int) -> float:
    """Best-of-``rounds`` seconds of matcher and extraction, interleaved; prints both rates."""
    best = {"matcher": float("inf"), "extraction": float("inf")}
    proposals = sum(len(extract(i.title, i.text, lexicon)) for i in items[: min(len(items), 2000)])
    for _ in range(rounds):
        best["matcher"] = min(best["matcher"], timed(rules.match_item, items))
        seconds = timed(lambda i: extract(i.title, i.text, lexicon), items)
        best["extraction"] = min(best["extraction"], seconds)
    n = len(items)
    ratio = best["extraction"] / best["matcher"]
    print(f"{name}: {n:,} items; {proposals:,} proposals in the first {min(n, 2000):,}")
    print(f"  {'signal matcher':<28}{n / best['matcher']:>10,.0f} items/s")
    print(f"  {'candidate extraction':<28}{n / best['extraction']:>10,.0f} items/s")
    print(f"  extraction time / matcher time: {ratio:.2f}")
    return ratio


# ---------------------------------------------------------------------------------------------------
# The check pass


def rss(items: list[ItemView]) -> bytes:
    entries = "".join(
        f"<item><title>{escape(i.title)}</title><guid isPermaLink='false'>bench-{i.id}</guid>"
        f"<link>https://bench.example/{i.id}</link><description>{escape(i.text)}</description>"
        f"<pubDate>{format_datetime(i.published_at, usegmt=True)}</pubDate></item>"
        for i in items
    )
    return ("<?xml version='1.0' encoding='utf-8'?><rss version='2.0'><channel><title>bench</title>"
            f"<link>https://bench.example/</link>{entries}</channel></rss>").encode()


def serve(body: bytes) -> tuple[ThreadingHTTPServer, str]:
    class Handler(BaseHTTPRequestHandler):
        def do_GET(self):  # noqa: N802 - the stdlib's name
            self.send_response(200)
            self.send_header("Content-Type", "application/rss+xml")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args):
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server, f"http://127.0.0.1:{server.server_address[1]}/feed.xml"


def check_pass(url: str, with_extraction: bool) -> tuple[float, float, int, int, float, float]:
    """Seconds of one ``check_source`` storing every item on a fresh seeded database, with signal
    evaluation (and extraction) as the items-stored listeners; also the seconds spent inside the
    extraction listener, the items and candidates stored, and the CPU seconds of the check (this
    process) and of the extraction listener (its thread)."""
    from sqlalchemy import func, select

    with seeded_database(CHIPWATCH_ALLOW_PRIVATE_NETWORKS="1") as settings:
        from chipwatch.candidates.models import Candidate
        from chipwatch.candidates.service import propose_from_items
        from chipwatch.db import session_scope
        from chipwatch.signals.evaluation import evaluate_items, register_fact_listener
        from chipwatch.sources.check import check_source
        from chipwatch.sources.fetch import make_client
        from chipwatch.sources.hooks import on_items_stored
        from chipwatch.sources.models import Item, Source

        with session_scope(settings) as session:
            session.add(Source(id="bench", name="Bench", url=url, trust="press"))
        register_fact_listener()
        listener_s = [0.0, 0.0]

        def timed_propose(**kwargs):
            t0, c0 = time.perf_counter(), time.thread_time()
            try:
                return propose_from_items(**kwargs)
            finally:
                listener_s[0] += time.perf_counter() - t0
                listener_s[1] += time.thread_time() - c0

        removers = [on_items_stored(evaluate_items)]
        if with_extraction:
            removers.append(on_items_stored(timed_propose))

        async def run() -> tuple[float, float]:
            async with make_client(settings) as client:
                gc.collect()
                t0, c0 = time.perf_counter(), time.process_time()
                outcome = await check_source("bench", settings=settings, client=client)
                elapsed, cpu = time.perf_counter() - t0, time.process_time() - c0
                assert outcome.status == "ok", outcome
                return elapsed, cpu

        try:
            elapsed, cpu = asyncio.run(run())
        finally:
            for remove in removers:
                remove()
        with session_scope(settings) as session:
            stored = session.scalar(select(func.count()).select_from(Item))
            candidates = session.scalar(select(func.count()).select_from(Candidate))
        return elapsed, listener_s[0], stored or 0, candidates or 0, cpu, listener_s[1]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--items", type=int, default=20_000, help="items per set for the rate comparison")
    ap.add_argument("--check-items", type=int, default=1_000, help="items of the checked feed (0: skip)")
    ap.add_argument("--rounds", type=int, default=3, help="timed rounds; best (rates), median (checks)")
    args = ap.parse_args()

    rng = random.Random(SEED)
    vendors, chips = synthetic_entities(rng)
    seed_signals, seed_entities = seed_definitions()
    entities = seed_entities + vendors + chips
    known = {e.id for e in entities}
    raw = seed_signals + synthetic_definitions(vendors, chips, rng)
    rules = compile_signals([validate_definition(d, known_entities=known) for d in raw], entities)
    lexicon = lexicon_for(entities)
    synthetic = synthetic_items(args.items, entities, rng)

    compare("synthetic (every item states a fact)", synthetic, rules, lexicon, args.rounds)
    compare("news (labelled items, a quarter without a fact)", news_items(args.items), rules, lexicon,
            args.rounds)

    if args.check_items:
        news = [
            ItemView(id=i, source_id="news", source_trust="press", title=v.title, text=v.text,
                     published_at=synthetic[i].published_at, published_is_estimated=False)
            for i, v in enumerate(news_items(args.check_items))
        ]
        sets = [("synthetic", synthetic[: args.check_items]), ("labelled news", news)]
        feeds = corpus_items(args.check_items, synthetic)
        if feeds:
            sets.append(("real AI-chip feeds", feeds))
        else:
            print("check pass, real AI-chip feeds: skipped, no corpus at ../shared/corpus/feeds-ai-chips")
        for name, items in sets:
            timed_check_pass(name, items, args.rounds)


def corpus_items(n: int, dated: list[ItemView]) -> list[ItemView]:
    """The entries of the real AI-chip feeds in ../shared/corpus/feeds-ai-chips (title and summary, as
    a check stores them), repeated to ``n`` with their own ids; empty without the corpus."""
    import html
    import re

    import feedparser

    folder = ROOT.parent / "shared" / "corpus" / "feeds-ai-chips"
    entries = []
    for path in sorted(folder.glob("*.xml")) if folder.is_dir() else []:
        for e in feedparser.parse(str(path)).entries:
            text = re.sub(r"\s+", " ", html.unescape(re.sub("<[^>]+>", " ", e.get("summary", "")))).strip()
            entries.append((e.get("title", ""), text))
    return [
        ItemView(id=i, source_id="feeds", source_trust="press", title=entries[i % len(entries)][0],
                 text=entries[i % len(entries)][1], published_at=dated[i % len(dated)].published_at,
                 published_is_estimated=False)
        for i in range(n)
    ] if entries else []


def timed_check_pass(name: str, items: list[ItemView], rounds: int) -> float:
    """A check pass over a feed of ``items`` without and with extraction (alternated, median of
    ``rounds``); prints the slowdown both ways against the goal and returns the one measured inside
    the checks: the extraction listener's time over the rest of the same check, which other work on a
    shared machine shifts far less than the difference of two checks run at different moments."""
    body = rss(items)
    server, url = serve(body)
    without, with_, shares, cpu_shares = [], [], [], []
    try:
        for _ in range(rounds):
            seconds, _listener, stored, _none, _cpu, _ = check_pass(url, with_extraction=False)
            without.append(seconds)
            seconds, listener, stored, candidates, cpu, listener_cpu = check_pass(url, with_extraction=True)
            with_.append(seconds)
            shares.append(listener / (seconds - listener))
            cpu_shares.append(listener_cpu / (cpu - listener_cpu))
    finally:
        server.shutdown()
    base, extra, inside = statistics.median(without), statistics.median(with_), statistics.median(shares)
    inside_cpu = statistics.median(cpu_shares)
    print(f"check pass, {name}: one feed of {len(items):,} items ({len(body):,} bytes), {stored:,} stored, "
          f"{candidates:,} candidates; median of {rounds}")
    print(f"  {'listeners: signals':<40}{base:>8.2f} s  {stored / base:>8,.0f} items/s")
    print(f"  {'listeners: signals + candidates':<40}{extra:>8.2f} s  {stored / extra:>8,.0f} items/s")
    verdict = "met" if inside <= GOAL_SLOWDOWN else "NOT met"
    between = extra / base - 1
    print(f"  extraction slows the check pass by {inside:.0%} measured inside each check, {between:.0%} "
          f"between checks (goal <= {GOAL_SLOWDOWN:.0%}: {verdict}); {inside_cpu:.0%} in CPU seconds "
          "inside each check")
    return inside

if __name__ == "__main__":
    main()
