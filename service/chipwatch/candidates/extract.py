"""Candidate facts read from a news item's title and summary (pure and deterministic: no I/O, no model).

:func:`extract` reads funding rounds, acquisitions, deployments, benchmark claims and chip launches, in
English and Chinese, each with the words it came from. Names resolve through the
:class:`~chipwatch.candidates.lexicon.Lexicon` (knowledge-base names, aliases and the alias table);
figures through the quantity reader signals use (``chipwatch.text.numbers``). The readers live in
``read_money`` (funding, acquisitions), ``read_deployments`` and ``read_claims`` (benchmarks, launches);
this module decides which of them a text needs (one cheap scan of trigger words, so an item that names
no fact costs one regex search), and merges what they find into one proposal per fact and item.
"""

from __future__ import annotations

import re
from bisect import bisect_right
from dataclasses import dataclass
from typing import Any, Literal, get_args

import ahocorasick

from chipwatch.candidates.figures import yen_sign_currency
from chipwatch.candidates.lexicon import Lexicon
from chipwatch.candidates.names import reporter
from chipwatch.candidates.read_claims import launch_verb_in, read_benchmarks, read_launches
from chipwatch.candidates.read_deployments import (
    complete,
    deploy_verb_in,
    deploy_verbs,
    has_verb,
    read_deployments,
)
from chipwatch.candidates.read_money import deal_sums, extra_funding_details, read_acquisitions, read_funding
from chipwatch.candidates.textparts import Draft, Part, fold_name, read_part
from chipwatch.text.normalize import normalize_with_offsets

FactKind = Literal["funding", "acquisition", "deployment", "benchmark", "launch"]
FACT_KINDS: tuple[FactKind, ...] = get_args(FactKind)

# Words without which a reader cannot find its fact, looked for as substrings of the lower-cased text (a
# few C-speed tests): a summary's sentence with none of them is not read, and a kind none of the kept
# text names skips its reader. Substrings may say yes too often (that costs time), never no too often.
_TRIGGERS: dict[str, tuple[str, ...]] = {
    "funding": ("rais", "secur", " clos", " land", " lines up", " lined up", "funding", "round", "series",
                "valu", "ipo", "invest",
                "seed", " nabs", " bags", " snags", "融资", "估值", "募资", "投资", "定增"),
    "acquisition": ("acqui", " buy", "bought", "divest", "takes over", "takeover", "snaps up", "scoops up",
                    "purchas", " paid", " pays", "taken over",
                    "收购", "并购", "合并", "交易金额", "交易对价", "交易作价"),
    "deployment": ("deploy", "online", " live", "switch", " opens", " opened", "received", "trained", "runs",
                   "running", " use", " rent", "install", " order", "fires up", "lights up", "turns on",
                   " sign", "powered", "gigawatt", "megawatt", "-gpu",
                   "operation", "operating", " serves", " serving", "into service", "commercial service",
                   "commission", "lease", "stands up", "stood up", "build out", "builds out",
                   # a summary's sentence that places the item's deployment ("a data center in Tokyo")
                   "center in ", "centre in ", "campus in ", " campus",
                   "部署", "上线", "投运", "运行", "投入运营", "正式运营", "投产", "点亮", "建成",
                   "建设", "采购", "使用", "扩至", "扩容", "订购", "租用", "启用",
                   "兆瓦", "吉瓦"),
    "benchmark": ("times", "percent", "faster", "throughput", "latency", "tok", "吞吐", "倍", "毫秒", "%"),
    "launch": ("launch", "unveil", "announc", "introduc", "debut", "releas", " ship", "showcas", "roll",
               "reveal", "present", "available", " show", "wraps off", "sampling", "breaks cover",
               "broke cover",
               "发布", "推出", "亮相", "首发"),
}
# Figures that name a kind on their own: a ratio or a latency (benchmark), a power or a count of chips
# (deployment). Every branch starts with a digit, so most positions fail at once.
_FIGURES = re.compile(
    r"\d(?:\s?(?P<benchmark>x\b|×|倍|毫秒|ms\b)|\s?(?P<power>mw\b|gw\b)|万?(?P<counter>张|颗|卡)"
    r"|[\d,.]*\s+(?:[\w-]+\s){0,3}?(?P<units>gpus?|chips?|accelerators?|tpus?|lpus?|systems?|racks?|servers?)\b)"
)
# Claimant words keep a sentence when the item states a benchmark claim ("OpenAI presented the range").
_CLAIMANT = (" says", " said", "claim", "presented", "measured", "according to", " tests", " note:",
             "称", "表示", "测得", "数据来自", "内部测试", "实测")
_CLAIMANT_WORDS = re.compile("|".join(re.escape(word) for word in _CLAIMANT))


_DIGIT = re.compile(r"\d")
_WORD_KINDS: dict[str, frozenset[str]] = {}
for _kind, _words in _TRIGGERS.items():
    for _word in _words:
        _WORD_KINDS[_word] = _WORD_KINDS.get(_word, frozenset()) | {_kind}
# The trigger words in one Aho-Corasick automaton (the mention matcher's library): one pass in C over the
# text, where a regex alternation of the words tried its first characters at nearly every position.
_TRIGGER_INDEX = ahocorasick.Automaton()
for _word, _kinds in _WORD_KINDS.items():
    _TRIGGER_INDEX.add_word(_word, (len(_word), _kinds))
_TRIGGER_INDEX.make_automaton()


def _trigger_words(text: str) -> list[tuple[int, int, frozenset[str]]]:
    """``(start, end, kinds)`` of the trigger words in ``text`` (lower-cased), as a regex alternation of
    the words finds them: leftmost first, the longest at one place, none overlapping the one before."""
    found = sorted((last + 1 - n, -n, kinds) for last, (n, kinds) in _TRIGGER_INDEX.iter(text))
    out = []
    end = 0
    for start, minus_n, kinds in found:
        if start >= end:
            end = start - minus_n
            out.append((start, end, kinds))
    return out


def _kinds_in(text: str) -> set[str]:
    """The kinds whose trigger words or figures ``text`` (lower-cased) contains."""
    kinds: set[str] = set()
    for _start, _end, named in _trigger_words(text):
        kinds |= named
    if len(kinds) < len(_TRIGGERS) and _DIGIT.search(text):
        for m in _FIGURES.finditer(text):
            kinds.add("benchmark" if m.group("benchmark") else "deployment")
    return kinds


def _kinds_of_sentences(lowered: str, spans: list[tuple[int, int]]) -> list[set[str]]:
    """:func:`_kinds_in` of each sentence ``lowered[a:b]``, from one scan of the whole text (a summary has
    many short sentences, and a scan per sentence cost more than the scanning itself). A match that
    runs over a sentence's end counts for no sentence, as a scan of each sentence would not see it."""
    starts = [a for a, _b in spans]
    out: list[set[str]] = [set() for _ in spans]

    def sentence(start: int, end: int) -> set[str] | None:
        i = bisect_right(starts, start) - 1
        return out[i] if i >= 0 and end <= spans[i][1] else None

    for start, end, named in _trigger_words(lowered):
        found = sentence(start, end)
        if found is not None:
            found |= named
    if _DIGIT.search(lowered):
        for m in _FIGURES.finditer(lowered):
            found = sentence(m.start(), m.end())
            if found is not None:
                found.add("benchmark" if m.group("benchmark") else "deployment")
    return out


@dataclass(frozen=True, slots=True)
class Span:
    """The words a fact was read from: ``part`` (``title`` or ``summary``), offsets and text."""

    part: str
    start: int
    end: int
    text: str


@dataclass(frozen=True, slots=True)
class Proposal:
    """One fact proposed from one item: its kind, its fields (see :func:`extract`), the span of text it
    came from and a confidence between 0 and 1."""

    kind: FactKind
    fact: dict[str, Any]
    span: Span
    confidence: float


def extract(title: str, summary: str | None, lexicon: Lexicon) -> list[Proposal]:
    """The facts an item states, at most one proposal per fact, in kind order.

    Fields by kind (``*_id`` is the knowledge-base id when the name resolves, else None; ``*_name`` the
    name as written):

    - ``funding``: vendor_id, vendor_name (the company funded), amount, currency (ISO 4217),
      round_type (seed, angel, pre_a, series_a ... series_h, ``_plus`` rounds, pre_ipo, ipo, strategic or
      None), post_money_valuation (in the same currency);
    - ``acquisition``: acquirer_id, acquirer_name, vendor_id, vendor_name (the company bought), amount,
      currency;
    - ``deployment``: operator_id, operator_name, chip_id, chip_name, units, power_mw, status
      (``planned`` | ``operational``), place;
    - ``benchmark``: chip_id, chip_name, metric (throughput_per_power, speed, latency, cost, throughput,
      performance), value or value_min and value_max, unit (x, %, tok/s, tok/s/user, tok/s/kW, tok/s/MW,
      ms), baseline_id, baseline_name, reported_by_id, reported_by_name;
    - ``launch``: vendor_id, vendor_name, chip_id, chip_name, new (True when the chip is not in the
      knowledge base: its name is an alias candidate).
    """
    kinds = _kinds_in(title.lower())
    summary_kinds: list[set[str]] = []
    # The verbs of deploying found while choosing the summary's sentences, handed to its readers.
    verbs: dict[Any, Any] = {}

    def keep(norm: str, spans: list[tuple[int, int]]) -> list[bool]:
        whole = norm.lower()
        if len(whole) == len(norm):
            lowered = [whole[a:b] for a, b in spans]
            summary_kinds.extend(_kinds_of_sentences(whole, spans))
        else:  # a letter whose lower case is longer ("İ"): offsets would shift, read each sentence alone
            lowered = [norm[a:b].lower() for a, b in spans]
            summary_kinds.extend(_kinds_in(s) for s in lowered)
        kinds.update(*summary_kinds)
        # claimant sentences serve benchmark claims only ("OpenAI presented the range at Hot Chips")
        claims = "benchmark" in kinds
        for found, s in zip(summary_kinds, lowered, strict=True):
            if claims and _CLAIMANT_WORDS.search(s):
                found.add("claimant")
        # A sentence kept only for a reader that cannot use it would cost its scans for nothing: launch
        # words without a verb of launching ("the announcement came..."), deployment words in an item
        # with no verb of deploying anywhere. The item's kinds stay as its words name them.
        deploying: bool | None = None
        for found, (a, b) in zip(summary_kinds, spans, strict=True):
            if "launch" in found and not launch_verb_in(norm, a, b):
                found.discard("launch")
            if "deployment" in found:
                if deploying is None:
                    deploying = deploy_verb_in(normalize_with_offsets(title)[0]) or any(
                        deploy_verbs(norm, s, e, verbs)
                        for f, (s, e) in zip(summary_kinds, spans, strict=True) if "deployment" in f
                    )
                if not deploying:
                    found.discard("deployment")
        return [bool(found) for found in summary_kinds]

    summary_part = None
    if summary and summary.strip():
        summary_part = read_part("summary", _lede(_strip_boilerplate(summary)), lexicon, keep=keep)
    if not kinds:
        return []
    parts = [read_part("title", title, lexicon)]
    if summary_part is not None and summary_part.sentences:
        flagged = [k for k in summary_kinds if k]
        summary_part.kinds = dict(zip(summary_part.sentences, flagged, strict=True))
        summary_part.cache.update(verbs)
        parts.append(summary_part)
    if any("¥" in p.norm for p in parts):
        yen = yen_sign_currency(f"{title} {summary or ''}")
        for p in parts:
            p.yen = yen
    if len(parts) > 1:
        parts[1].title = parts[0]
    by_name = {p.name: p for p in parts}
    drafts: list[Draft] = []
    if "funding" in kinds:
        drafts += _funding(parts, lexicon)
    if "acquisition" in kinds:
        drafts += _deal_sums(_unique(d for p in parts for d in read_acquisitions(p, lexicon)), parts)
    if "deployment" in kinds and has_verb(parts):
        drafts += _unique(complete([d for p in parts for d in read_deployments(p, lexicon)]))
    if "benchmark" in kinds:
        context: dict = {}
        claims = _unique(d for p in parts for d in read_benchmarks(p, lexicon, context))
        drafts += _claimants(claims, parts, lexicon)
    if "launch" in kinds:
        drafts += _unique(d for p in parts for d in read_launches(p, lexicon))
    _resolve_chips(drafts, lexicon)
    return [_proposal(d, by_name[d.part]) for d in drafts]


LEDE_MAX_CHARS = 700
"""How much of a summary is read: news states its facts in the opening sentences, and feeds that put a
whole article in the summary (press releases, blogs) would otherwise cost a check many times more."""
_LAST_SENTENCE_END = re.compile(r"(?s).*[.!?。！？；;](?=\s|$)")


def _lede(summary: str) -> str:
    """The first ``LEDE_MAX_CHARS`` of ``summary``, cut after the last sentence that ends inside them."""
    if len(summary) <= LEDE_MAX_CHARS:
        return summary
    head = summary[:LEDE_MAX_CHARS]
    m = _LAST_SENTENCE_END.match(head)
    return head[: m.end()] if m else head


_BOILERPLATE = re.compile(r"^\s*(?:News Highlights:?|Highlights:?)\s*", re.IGNORECASE)


def _strip_boilerplate(summary: str) -> str:
    # Press releases open with a "News Highlights" label that reads like a company name.
    return _BOILERPLATE.sub(lambda m: " " * len(m.group()), summary, count=1)


def _funding(parts: list[Part], lexicon: Lexicon) -> list[Draft]:
    rounds = _unique(d for p in parts for d in read_funding(p, lexicon))
    if not rounds:
        return []
    head = rounds[0]
    for part in parts:
        for a, b in part.sentences_of("funding"):
            if part.name == head.part and a <= head.start < b:
                continue
            named = {f.id for f in part.found_in(a, b) if f.kind == "vendor"}
            if named and head.fact.get("vendor_id") not in named:
                continue  # a sentence about another company adds nothing to this round
            for key, value in extra_funding_details(part, a, b).items():
                if head.fact.get(key) is None:
                    head.fact[key] = value
    return rounds


_DEAL_WORDS = re.compile(
    r"\b(?:deal|acquisition|transaction|takeover|purchase|paid|pays|to acquire|to buy)\b|收购|交易",
    re.IGNORECASE,
)


_THE_DEAL = re.compile(
    r"\s*(?:The|This) (?:deal|acquisition|transaction|purchase)\b|\s*(?:该|此次|本次)?交易"
)


def _deal_sums(deals: list[Draft], parts: list[Part]) -> list[Draft]:
    """An acquisition read without its price takes the sum of a sentence that names the same parties and
    calls it a deal ("... in $20 billion deal")."""
    for d in deals:
        if d.fact.get("amount") is not None:
            continue
        parties = {d.fact.get("acquirer_id"), d.fact.get("vendor_id")} - {None}
        for part in parts:
            for a, b in part.sentences:
                text = part.norm[a:b]
                named = {f.id for f in part.found_in(a, b)}
                sums = deal_sums(part, a, b)
                names = [n for n in (d.fact.get("acquirer_name"), d.fact.get("vendor_name")) if n]
                refers = (
                    (parties and parties <= named) or any(n in text for n in names) or _THE_DEAL.match(text)
                )
                if sums and refers and _DEAL_WORDS.search(text):
                    d.fact["amount"], d.fact["currency"] = sums[0].value, sums[0].currency
                    break
    return deals


def _claimants(claims: list[Draft], parts: list[Part], lexicon: Lexicon) -> list[Draft]:
    """A claim whose sentence names no claimant takes the one another sentence of the item names
    ("OpenAI presented the range at Hot Chips")."""
    if not claims or all(c.fact.get("reported_by_name") for c in claims):
        return claims
    known = next((c for c in claims if c.fact.get("reported_by_name")), None)
    if known is not None:  # "Bernstein: ..." + "The same note puts ...": one item, one claimant
        for c in claims:
            if not c.fact.get("reported_by_name"):
                c.fact["reported_by_id"], c.fact["reported_by_name"] = (
                    known.fact.get("reported_by_id"), known.fact["reported_by_name"])
        return claims
    for part in parts:
        for a, b in part.sentences_of("claimant") + part.sentences_of("benchmark"):
            if any(c.part == part.name and a <= c.start < b for c in claims):
                continue
            who = reporter(part, a, b, lexicon)
            if who is not None:
                for c in claims:
                    if not c.fact.get("reported_by_name"):
                        c.fact["reported_by_id"], c.fact["reported_by_name"] = who.id, who.text
                return claims
    return claims


def _key(d: Draft) -> tuple:
    f = d.fact

    def name(prefix: str) -> str | None:
        return f.get(f"{prefix}_id") or (fold_name(f[f"{prefix}_name"]) if f.get(f"{prefix}_name") else None)

    if d.kind == "funding":
        return ("funding", name("vendor"), f.get("amount"), f.get("post_money_valuation"))
    if d.kind == "acquisition":
        return ("acquisition", name("acquirer"), name("vendor"))
    if d.kind == "deployment":
        return ("deployment", name("operator"), name("chip"), f.get("power_mw"), f.get("units"))
    if d.kind == "benchmark":
        return ("benchmark", name("chip"), f.get("value"), f.get("value_min"), f.get("unit"), f.get("metric"))
    # one chip is launched by one maker: "Qualcomm" and "Qualcomm Technologies, Inc." launching the AI300
    # in title and summary are one launch
    return ("launch", name("chip"))


def _unique(drafts) -> list[Draft]:
    """One draft per fact: the first, with the fields a later copy knows and it does not."""
    out: dict[tuple, Draft] = {}
    for d in drafts:
        first = out.get(_key(d))
        if first is None:
            out[_key(d)] = d
            continue
        for field, value in d.fact.items():
            if first.fact.get(field) is None and value is not None:
                first.fact[field] = value
    return list(out.values())


def _resolve_chips(drafts: list[Draft], lexicon: Lexicon) -> None:
    """A chip written after its vendor's name ("苹果发布M6") resolves to that vendor's chip."""
    vendors = {d.fact.get("vendor_id") for d in drafts if d.kind == "launch"} - {None}
    for d in drafts:
        for prefix in ("chip", "baseline"):
            if d.fact.get(f"{prefix}_name") and not d.fact.get(f"{prefix}_id"):
                for vendor in sorted(vendors):
                    found = lexicon.chip_of_vendor(vendor, d.fact[f"{prefix}_name"])
                    if found:
                        d.fact[f"{prefix}_id"] = found
                        if d.kind == "launch":
                            d.fact["new"] = False
                        break


def _proposal(d: Draft, part: Part) -> Proposal:
    start, end = part.span(d.start, max(d.end, d.start))
    resolved = [v for k, v in d.fact.items() if k.endswith("_id")]
    bonus = 0.1 if resolved and all(resolved) else 0.0
    confidence = round(min(0.95, d.confidence + bonus), 2)
    return Proposal(d.kind, d.fact, Span(part.name, start, end, part.text[start:end]), confidence)  # type: ignore[arg-type]


__all__ = ["FACT_KINDS", "FactKind", "Proposal", "Span", "extract"]
