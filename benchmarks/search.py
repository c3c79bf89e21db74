"""Item search: ``GET /v1/items?q=`` on 1,000,000 items against a bare FTS query of the same rows.

Builds a fresh migrated SQLite database (or uses ``--database-url`` for PostgreSQL) and fills it with
synthetic news items: English titles and summaries from a Zipf-like vocabulary, a share with Chinese
phrases, accented and full-width spellings, and a few rare words. Rows go in through SQLAlchemy Core in
large batches with the folded search columns computed once per vocabulary word; on SQLite the FTS5 index
is then built in one ``rebuild`` pass instead of one trigger call per row (the trigger is put back after).

For each query, in the same run:

- ``q=``: the service call behind ``GET /v1/items?q=`` (``sources.service.list_items``: the trigram search
  joined to the items, ranked, one page of 50 with the next cursor, the mentions read, the API models built);
- bare: the database's own query over the same index returning the ids of the same page (checked):
  on SQLite ``SELECT rowid FROM items_fts WHERE items_fts MATCH ? ORDER BY bm25(...), rowid DESC
  LIMIT 51``; on PostgreSQL the trigram ``LIKE`` filter ordered by the same word similarity; for a query
  with no word of three characters, the same scan of the folded columns, newest first.

Prints, for each query, the best and the median time of ``--repeat`` runs (after one warm-up) and the
ratio q= / bare of each, then the ratios of the sums. On a busy machine the best run is the steadier
figure: a run longer than a scheduler slice waits for other processes, a sub-millisecond one rarely does.

    python benchmarks/search.py [--items 1000000] [--repeat 7] [--database-url URL] [--keep DIR]

A database that already holds ``--items`` items (``--keep`` of an earlier run, or the PostgreSQL
database) is measured again without loading.
"""

from __future__ import annotations

import argparse
import itertools
import os
import random
import statistics
import sys
import tempfile
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "service"))

SEED = 20261130
BATCH = 20_000
PAGE = 50

# Rare words to search for: each appears in about one item in ten thousand.
RARE = ["quonzephyr", "selvynite", "daxlumira"]
CHINESE = ["昇腾芯片", "推理芯片", "数据中心", "华为发布", "寒武纪", "算力集群", "兆瓦级", "量产交付"]
NAMES = ["Jalapeño", "JALAPEÑO", "Jalapen\u0303o", "Vera Rubin", "GB300", "LPU v2", "Ascend 950", "TPU v8",
         "Trainium3", "MI450", "１２０ＭＷ", "Straße"]

QUERIES = [
    ("common word (most items)", "inference"),
    ("less common word", "throughput"),
    ("accented name", "jalapeño"),
    ("two words", "vera rubin"),
    ("full-width figure", "120MW"),
    ("Chinese, 4 chars", "昇腾芯片"),
    ("Chinese, 2 chars (scan)", "芯片"),
    ("rare word", RARE[0]),
    ("no match", "zzqqxxnothing"),
]


def vocabulary(rng: random.Random) -> list[str]:
    """3,000 words, most frequent first: real words of the field, then made-up ones."""
    real = ["the", "inference", "chip", "accelerator", "tokens", "power", "rack", "cluster", "benchmark",
            "latency", "throughput", "memory", "wafer", "foundry", "model", "launch", "deployment"]
    letters = "abcdefghiklmnoprstuvwy"
    made_up: set[str] = set()
    while len(made_up) < 3000 - len(real):
        word = "".join(rng.choice(letters) for _ in range(rng.randint(3, 10)))
        if word not in real:
            made_up.add(word)
    return real + sorted(made_up)


def generate(n: int, rng: random.Random):
    """Yield ``n`` item rows (dicts for the items table) with their folded search columns."""
    from chipwatch.text.search import fold_for_search

    vocab = vocabulary(rng)
    cumulative = list(itertools.accumulate(1 / (rank + 1) for rank in range(len(vocab))))  # Zipf-like
    folded = {w: fold_for_search(w) for w in [*vocab, *CHINESE, *NAMES, *RARE]}
    t0 = datetime(2026, 1, 1, tzinfo=UTC)

    def text(count: int) -> list[str]:
        words = rng.choices(vocab, cum_weights=cumulative, k=count)
        if rng.random() < 0.05:
            words.insert(rng.randrange(len(words) + 1), rng.choice(NAMES))
        if rng.random() < 0.03:
            words.insert(rng.randrange(len(words) + 1), rng.choice(CHINESE))
        if rng.random() < 0.0003:
            words.insert(rng.randrange(len(words) + 1), rng.choice(RARE))
        return words

    for i in range(n):
        title, summary = text(rng.randint(5, 10)), text(rng.randint(20, 40))
        published = t0 + timedelta(seconds=i * 29)
        yield {
            "source_id": "bench",
            "guid": f"g{i}",
            "link": f"https://bench.example/{i}",
            "link_norm": f"https://bench.example/{i}",
            "content_hash": f"{i:064x}",
            "title": " ".join(title),
            "summary": " ".join(summary),
            "published_at": published,
            "published_is_estimated": False,
            "first_seen_at": published,
            "sort_at": published,
            "search_title": " ".join(folded[w] for w in title),
            "search_summary": " ".join(folded[w] for w in summary),
        }


def load(engine, n: int) -> float:
    """Fill the items table with ``n`` rows; returns the seconds it took."""
    from sqlalchemy import insert, text

    from chipwatch.sources.models import Item, Source

    started = time.perf_counter()
    sqlite = engine.dialect.name == "sqlite"
    with engine.begin() as conn:
        conn.execute(insert(Source.__table__).values(id="bench", name="bench", kind="rss", trust="press"))
        trigger = None
        if sqlite:
            trigger = conn.execute(
                text("SELECT sql FROM sqlite_master WHERE type = 'trigger' AND name = 'items_fts_insert'")
            ).scalar_one()
            conn.execute(text("DROP TRIGGER items_fts_insert"))
        rows, done = [], 0
        for row in generate(n, random.Random(SEED)):
            rows.append(row)
            if len(rows) == BATCH:
                conn.execute(insert(Item.__table__), rows)
                done += len(rows)
                rows = []
                print(f"\r  {done:,} items", end="", flush=True)
        if rows:
            conn.execute(insert(Item.__table__), rows)
        if sqlite:
            conn.execute(text("INSERT INTO items_fts(items_fts) VALUES ('rebuild')"))
            conn.execute(text(trigger))
        conn.execute(text("ANALYZE"))
    print()
    return time.perf_counter() - started


def bare_sql(dialect: str, q: str, *, limit: bool = True) -> tuple[str, dict[str, str]]:
    """The database's own query for ``q`` over the same index: the ids of one page (of every match without
    ``limit``), in the order the service pages them. Returns the SQL and its parameters."""
    from chipwatch.sources.search import SCORE_SCALE, TITLE_WEIGHT
    from chipwatch.text.search import MIN_INDEXED_CHARS, search_terms

    terms = search_terms(q)
    page = f" LIMIT {PAGE + 1}" if limit else ""
    like = {f"t{i}": f"%{t}%" for i, t in enumerate(terms)}
    scan = " AND ".join(f"(search_title LIKE :t{i} OR search_summary LIKE :t{i})" for i in range(len(terms)))
    if not any(len(t) >= MIN_INDEXED_CHARS for t in terms):  # no index can serve it: a scan, newest first
        return f"SELECT id FROM items WHERE {scan} ORDER BY sort_at DESC, id DESC{page}", like
    if dialect == "sqlite":
        match = " ".join('"' + t.replace('"', '""') + '"' for t in terms if len(t) >= MIN_INDEXED_CHARS)
        sql = (f"SELECT rowid FROM items_fts WHERE items_fts MATCH :q ORDER BY "
               f"round(bm25(items_fts, {TITLE_WEIGHT}, 1.0) * {SCORE_SCALE}), rowid DESC{page}")
        return sql, {"q": match}
    sql = (f"SELECT id FROM items WHERE {scan} ORDER BY round(({TITLE_WEIGHT} * word_similarity(:q, "
           f"search_title) + word_similarity(:q, search_summary)) * {SCORE_SCALE}) DESC, id DESC{page}")
    return sql, {"q": " ".join(terms), **like}


def matches(engine, q: str) -> int:
    """How many items the query matches (not timed)."""
    from sqlalchemy import text

    sql, params = bare_sql(engine.dialect.name, q, limit=False)
    with engine.connect() as conn:
        return conn.execute(text(f"SELECT count(*) FROM ({sql}) AS m"), params).scalar_one()


def timed(fn, repeat: int) -> tuple[float, float, object]:
    """``(best, median, result)`` of ``repeat`` runs after a warm-up (page cache, statement cache). The
    best run is what the code costs; the median also counts the waits of a busy machine."""
    result = fn()
    times = []
    for _ in range(repeat):
        started = time.perf_counter()
        result = fn()
        times.append(time.perf_counter() - started)
    return min(times), statistics.median(times), result


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--items", type=int, default=1_000_000, help="items to make (50000 for a quick run)")
    ap.add_argument("--repeat", type=int, default=7, help="timed runs per query (median)")
    ap.add_argument("--database-url", default=None, help="a PostgreSQL URL (an empty database); else SQLite")
    ap.add_argument(
        "--keep", default=None, help="directory of the SQLite file, kept (reused when it holds --items items)"
    )
    args = ap.parse_args()

    tmp = Path(args.keep) if args.keep else Path(tempfile.mkdtemp(prefix="chipwatch-search-"))
    tmp.mkdir(parents=True, exist_ok=True)
    os.environ["CHIPWATCH_DATA_DIR"] = str(tmp)
    os.environ.pop("CHIPWATCH_DATABASE_URL", None)
    if args.database_url:
        os.environ["CHIPWATCH_DATABASE_URL"] = args.database_url

    from sqlalchemy import text
    from sqlmodel import Session

    from chipwatch.db import get_engine
    from chipwatch.migrate import upgrade_to_head
    from chipwatch.sources.service import list_items

    upgrade_to_head()
    engine = get_engine()
    with engine.connect() as conn:
        stored = conn.execute(text("SELECT count(*) FROM items")).scalar_one()
    if stored == args.items:
        print(f"{engine.dialect.name}: {stored:,} items already loaded")
    elif stored:
        raise SystemExit(f"the database holds {stored:,} items, not {args.items:,}: use an empty one")
    else:
        print(f"{engine.dialect.name}: generating and loading {args.items:,} items")
        print(f"  loaded in {load(engine, args.items):.1f} s")

    def api(q: str):
        with Session(engine) as session:  # a fresh session per request, as the API has
            return list_items(session=session, q=q, limit=PAGE)

    def bare(stmt):
        with Session(engine) as session:
            return session.execute(stmt).scalars().all()

    print(f"\n{'':<50}{'best of runs (ms)':^28}{'median (ms)':^28}")
    print(f"{'query':<26}{'q':<15}{'matches':>9}{'q=':>10}{'bare':>10}{'ratio':>8}{'q=':>10}{'bare':>10}"
          f"{'ratio':>8}")
    totals = [0.0, 0.0, 0.0, 0.0]
    for label, q in QUERIES:
        api_best, api_median, page = timed(lambda q=q: api(q), args.repeat)
        sql, params = bare_sql(engine.dialect.name, q)
        stmt = text(sql).bindparams(**params)
        bare_best, bare_median, ids = timed(lambda stmt=stmt: bare(stmt), args.repeat)
        same_page = [item.id for item in page.items] == list(ids)[:PAGE]
        if not same_page or (len(ids) > PAGE) != bool(page.next_cursor):
            raise SystemExit(f"{label}: q= and the bare query disagree on the page")
        for i, value in enumerate((api_best, bare_best, api_median, bare_median)):
            totals[i] += value
        print(f"{label:<26}{q:<15}{matches(engine, q):>9}{api_best * 1e3:>10.2f}{bare_best * 1e3:>10.2f}"
              f"{api_best / bare_best:>8.2f}{api_median * 1e3:>10.2f}{bare_median * 1e3:>10.2f}"
              f"{api_median / bare_median:>8.2f}")
    print(f"\nsums: best q= {totals[0] * 1e3:.1f} ms, bare {totals[1] * 1e3:.1f} ms, ratio "
          f"{totals[0] / totals[1]:.2f}; median q= {totals[2] * 1e3:.1f} ms, bare {totals[3] * 1e3:.1f} ms, "
          f"ratio {totals[2] / totals[3]:.2f}")


if __name__ == "__main__":
    main()
