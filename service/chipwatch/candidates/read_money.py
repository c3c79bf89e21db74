"""Funding rounds and acquisitions read from news text, English and Chinese (pure: no I/O).

Funding: a company before a verb of raising ("raises", "secures", "closes", "lands", 完成/获得 ... 融资,
募资) and a sum after it; the valuation from "valued at", "valuation", 估值 anywhere in the item; the round
from explicit words (Series C, seed, pre-IPO, IPO, strategic, B轮, 战略). "X invests $N in Y" is a
round of Y. Acquisitions: buyer before "acquires", "buys", "to acquire", 收购; target after it; a
divestiture "of X to Y" is Y buying X. Talks, plans and rumours are not facts.
"""

from __future__ import annotations

import re

from chipwatch.candidates.figures import Money, bare_amount, money
from chipwatch.candidates.lexicon import Lexicon
from chipwatch.candidates.names import (
    back_reference,
    clause_subject,
    is_place,
    name_after,
    name_before,
    pronoun_reference,
)
from chipwatch.candidates.textparts import CJK, Draft, Name, Part

_NOT_YET = re.compile(
    r"(?=[itscwpmlear洽寻拟考传或计获不预])(?:"
    r"\b(?:in talks|talks to|seeking|seeks|said to be|is said to|considering|weighs|weighing|plans to raise"
    r"|in discussions|could raise|may raise|looking to|exploring|explores|would raise|aims to raise"
    r"|rumou?red|in early talks)\b|洽谈|寻求|拟融资|考虑|传闻|或将|计划融资"
    # an offering filed or planned, not yet sold: "拟定增募资不超过50亿元", "IPO获受理，拟募资60亿元"
    r"|拟[^，。]{0,6}?(?:募资|定增|发行)|获受理|不超过|预计募资|计划募资"
    r")",
    re.IGNORECASE,
)
_RAISE = re.compile(
    r"\b(?:raises|raised|raising|secures|secured|closes|closed|lands|landed|nabs|bags|snags|completes|completed"
    r"|pulls in|picks up|gets|receives|wins|lines up|lined up)\b",
    re.IGNORECASE,
)
# "Tenstorrent Announces US$300 Million Strategic Investment": announcing a sum that is named a round
_ANNOUNCES = re.compile(r"\b(?:announces|announced|unveils|confirms|confirmed)\b", re.IGNORECASE)
_ROUND_NOUN_AFTER = re.compile(
    r"\s*(?:(?:strategic|growth|equity|venture|new|funding)\s)?(?:Series [A-H]\+?\d?\s)?"
    r"(?:funding|financing|investment|round|raise)\b(?!\s+(?:in|into|from)\b)",
    re.IGNORECASE,
)
_NOT_FUNDING = re.compile(
    r"\b(?:capex|capital expenditure|spending|guidance|forecast|outlook|prices?|pricing|revenue|dividend"
    r"|stake|target|rates?|bets?|concerns?|questions?|acquisition|deal to buy)\b",
    re.IGNORECASE,
)
# "closes $35 billion Ansys takeover": a sum followed by the company bought and the deal's noun.
_NAMED_DEAL_AFTER = re.compile(
    r"(?:[A-Z][\w&.'-]*\s){1,3}(?:takeover|acquisition|purchase|merger|buyout)\b(?!\s+of\b)"
)
# "secures $500 million GPU-backed credit facility", "$10bn in debt": a loan, not a round of equity
_DEBT_AFTER = re.compile(
    r"\s*(?:in\s|of\s)?(?:[\w-]+\s){0,3}?(?:credit|debt|loans?|revolving)\b", re.IGNORECASE
)
_FUNDING_WORDS = re.compile(
    r"\b(?:round|funding|series|seed|financing|investment|ipo|raise)\b", re.IGNORECASE
)
_INVESTS = re.compile(r"\b(?:invests|invested|investing|to invest|will invest)\b", re.IGNORECASE)
_VALUED = re.compile(
    r"\b(?:valued at|valuing (?:\S+\s){0,10}?at|values? (?:\S+\s){0,10}?at|valuation (?:of|to|at)"
    r"|valuation of (?:the |its |a )(?:\S+\s){0,6}?at"
    r"|(?:post-money\s)?valuation(?: of)?|at an? )"
    r"\s*(?:about |around |roughly |nearly |over |more than |some )?$",
    re.IGNORECASE,
)
_VALUATION_AFTER = re.compile(r"^\s*(?:post-money\s*)?(?:valuation|post-money)", re.IGNORECASE)
_TOTAL = re.compile(r"\b(?:total|totals|in total|to date|so far|cumulative)\b[^.]{0,30}$", re.IGNORECASE)
_CN_RAISE = re.compile(
    r"(?:宣布)?(?:完成|获得|获(?!悉)|斩获|拿下|迎来)(?=[^。；]{0,30}(?:融资|投资|定增|定向增发))|募资|募集资金"
)
_CN_VALUATION = re.compile(r"估值")
_ROUND = re.compile(
    r"(?=[spimea-hnt种天上募战])(?:"
    r"\bSeries\s(?P<series>[A-H])(?P<tail>\+|\d)?(?![\w])|(?P<preipo>\bpre-IPO\b|Pre-IPO轮)|(?P<prea>Pre-A\+?轮)"
    r"|(?P<seed>\bseed\b|种子轮)|(?P<angel>\bangel\b|天使轮)"
    r"|(?P<ipo>\bIPO\b|上市募资|募资|\b(?:market|stock|share|exchange) listing\b"
    # "raises $1.8 billion in Nasdaq debut": shares sold on the day they list
    r"|\b(?:Nasdaq|NYSE|stock[- ]market|market|trading|exchange|public|HKEX|LSE) debut\b)"
    r"|(?P<strategic>\bstrategic (?:round|investment|funding)\b|战略融资|战略投资)"
    r"|(?<![A-Za-z])(?P<cn>[A-H])(?P<cntail>\+)?轮"
    r")",
    re.IGNORECASE,
)


def round_type(text: str) -> str | None:
    """The round named in ``text`` ("Series C1" -> series_c, "B+轮" -> series_b_plus), else None."""
    m = _ROUND.search(text)
    if m is None:
        return None
    if m.group("series") or m.group("cn"):
        letter = (m.group("series") or m.group("cn")).lower()
        plus = (m.group("tail") or m.group("cntail")) == "+"
        return f"series_{letter}" + ("_plus" if plus else "")
    for group, value in (("preipo", "pre_ipo"), ("prea", "pre_a"), ("seed", "seed"), ("angel", "angel"),
                         ("ipo", "ipo"), ("strategic", "strategic")):
        if m.group(group):
            return value
    return None


def _is_valuation(part: Part, m: Money, lo: int) -> bool:
    before = part.norm[max(lo, m.start - 100) : m.start]
    after = part.norm[m.end : m.end + 30]
    if _CN_VALUATION.search(part.norm[max(lo, m.start - 6) : m.start]):
        return True
    return bool(_VALUED.search(before) or _VALUATION_AFTER.match(after))


# A valuation before the money came in is not the post-money valuation a round records.
_PRE_MONEY_BEFORE = re.compile(
    r"pre-money(?:\s+valuation)?(?:\s+of)?\s*(?:about |around |roughly )?$|投前(?:估值)?[为达约]?$",
    re.IGNORECASE,
)
_PRE_MONEY_AFTER = re.compile(r"\s*pre-money", re.IGNORECASE)


def _valuation(part: Part, a: int, b: int, currency: str | None) -> float | None:
    """The post-money valuation stated in ``norm[a:b]`` (a sum after "valued at", 估值...; not one called
    pre-money or 投前), else None."""
    norm = part.norm
    for m in money(part, a, b):
        if _is_valuation(part, m, a) and not _TOTAL.search(norm[max(a, m.start - 40) : m.start]):
            if _PRE_MONEY_BEFORE.search(norm[max(a, m.start - 40) : m.start]) or _PRE_MONEY_AFTER.match(
                norm, m.end
            ):
                continue
            return m.value
    for vm in _CN_VALUATION.finditer(norm, a, b):
        if norm[max(a, vm.start() - 2) : vm.start()] == "投前":
            continue
        found = bare_amount(part, vm.end(), b)
        if found is not None:
            return found[0]
    return None


def _company(name: Name | None) -> dict:
    if name is None:
        return {}
    return {"vendor_id": name.id, "vendor_name": name.text}


def read_funding(part: Part, lexicon: Lexicon) -> list[Draft]:
    """Funding rounds stated in ``part``'s sentences (one per sentence at most)."""
    out: list[Draft] = []
    for a, b in part.sentences_of("funding"):
        text = part.norm[a:b]
        if _NOT_YET.search(text):
            continue
        draft = (
            _english_round(part, a, b) or _chinese_round(part, a, b) or _investment(part, a, b)
            or _listing(part, a, b)
        )
        if draft is not None:
            out.append(draft)
    return out


def _verbs_of_raising(norm: str, a: int, b: int):
    """The verbs of raising in ``norm[a:b]``, with "announces" when a sum named a round follows it."""
    if _ANNOUNCES.search(norm, a, b) is None:
        return _RAISE.finditer(norm, a, b)
    verbs = list(_RAISE.finditer(norm, a, b))
    for m in _ANNOUNCES.finditer(norm, a, b):
        sums = re.match(r"\s*(?:a |an |its |the )?(?:new )?", norm[m.end() : b])
        rest = norm[m.end() + (sums.end() if sums else 0) : b]
        figure = re.match(r"(?:US\$|\$|€|£|¥)?[\d.,]+\s*(?:billion|million|bn|m|亿|万)?\s*(?:dollars|yuan)?",
                          rest, re.IGNORECASE)
        if figure and figure.group().strip() and _ROUND_NOUN_AFTER.match(rest, figure.end()):
            verbs.append(m)
    verbs.sort(key=lambda v: v.start())
    return verbs


_CJK_CHAR = re.compile(f"[{CJK}]")


def _english_round(part: Part, a: int, b: int) -> Draft | None:
    norm = part.norm
    for verb in _verbs_of_raising(norm, a, b):
        chinese = _CJK_CHAR.search(norm, a, b) is not None
        sums = [
            m for m in money(part, verb.end(), b)
            if (m.currency != "CNY" or "yuan" in norm[m.start : m.end] or not chinese)
            and not _DEBT_AFTER.match(norm, m.end)
        ]
        if not sums:
            continue
        first = sums[0]
        between = norm[verb.end() : first.start]
        after = norm[first.end :].lstrip()
        if len(between) > 40 or _NOT_FUNDING.search(between) or _NOT_FUNDING.match(after):
            continue
        if _NAMED_DEAL_AFTER.match(after):
            continue
        weak = verb.group().lower() in ("completes", "completed", "gets", "receives", "wins")
        if weak and not _FUNDING_WORDS.search(norm[verb.end() : b]):
            continue
        # "The Seongnam-based company closed a ... Series D": the title's company
        company = name_before(part, a, verb.start()) or back_reference(part, a, verb.start())
        if company is None:
            continue
        amount = None if _is_valuation(part, first, a) else first
        valuation = _valuation(part, verb.end(), b, first.currency)
        if amount is None and valuation is None:
            continue
        fact = {
            **_company(company),
            "amount": amount.value if amount else None,
            "currency": (amount or first).currency,
            "round_type": round_type(norm[a:b]),
            "post_money_valuation": valuation,
        }
        return Draft("funding", fact, part.name, company.start, max(first.end, verb.end()), 0.8)
    # "X valued at $N after new funding round": a valuation with no sum raised
    m = re.search(r"\b(?:valued at|valuation (?:tops|hits|reaches|of))\b", norm[a:b], re.IGNORECASE)
    if m and _FUNDING_WORDS.search(norm[a:b]):
        verb_at = a + m.start()
        sums = money(part, verb_at, b)
        company = name_before(part, a, verb_at)
        if sums and company is not None:
            # "valued at $5 billion after $600 million funding round": the sum after is the round's
            raised = next((m for m in sums[1:2] if _AFTER_SUM.fullmatch(norm, sums[0].end, m.start)), None)
            fact = {**_company(company), "amount": raised.value if raised else None,
                    "currency": sums[0].currency, "round_type": round_type(norm[a:b]),
                    "post_money_valuation": sums[0].value}
            return Draft("funding", fact, part.name, company.start, sums[0].end, 0.6)
    return None


# "shares jump in Nasdaq debut after $1.3bn IPO", "prices $800 million IPO": an offering sold
_SOLD_OFFERING = re.compile(
    r"\b(?:after|following|prices|priced|completes|completed|closes|closed)\s(?:its\s|an?\s|the\s)?$",
    re.IGNORECASE,
)
_OFFERING = re.compile(r"\s*(?:IPO|initial public offering)\b", re.IGNORECASE)
_OFFERING_WORDS = re.compile(r"IPO|[Oo]ffering")


def _listing(part: Part, a: int, b: int) -> Draft | None:
    """An initial public offering sold, named by its sum ("after $1.3bn IPO"): the sentence's subject's."""
    norm = part.norm
    if _OFFERING_WORDS.search(norm, a, b) is None:
        return None  # most sentences name no offering: spare them the sums
    for m in money(part, a, b):
        if not _OFFERING.match(norm, m.end) or not _SOLD_OFFERING.search(norm, max(a, m.start - 20), m.start):
            continue
        company = clause_subject(part, a, m.start)
        if company is None:
            return None
        fact = {**_company(company), "amount": m.value, "currency": m.currency, "round_type": "ipo",
                "post_money_valuation": None}
        return Draft("funding", fact, part.name, company.start, m.end, 0.7)
    return None


_AFTER_SUM = re.compile(r"\s*(?:after|following|in)\s(?:a\s|an\s|its\s|the\s)?", re.IGNORECASE)


def _investment(part: Part, a: int, b: int) -> Draft | None:
    """"Nvidia invests $5 billion in Intel": a round of the company invested in."""
    norm = part.norm
    for verb in _INVESTS.finditer(norm, a, b):
        sums = money(part, verb.end(), min(b, verb.end() + 30))
        if not sums:
            continue
        tail = re.match(r"\s*(?:in|into)\s", norm[sums[0].end : b])
        if tail is None:
            continue
        company = name_after(part, sums[0].end + tail.end(), b)
        if company is None or re.match(r"(?:US|U\.S\.|American|data|new|its)\b", company.text) or (
            company.id is None and is_place(company.text)
        ):  # "invests $40 billion in Texas": a place is no company funded
            continue
        fact = {**_company(company), "amount": sums[0].value, "currency": sums[0].currency,
                "round_type": round_type(norm[a:b]), "post_money_valuation": None}
        return Draft("funding", fact, part.name, verb.start(), company.end, 0.7)
    return None


_CN_LISTING = re.compile(r"科创板|港股|A股|北交所|创业板|IPO|上市|募资")


def _chinese_round(part: Part, a: int, b: int) -> Draft | None:
    for verb in _CN_RAISE.finditer(part.norm, a, b):
        draft = _chinese_round_at(part, a, b, verb)
        if draft is not None:
            return draft
    return None


def _chinese_round_at(part: Part, a: int, b: int, verb: re.Match[str]) -> Draft | None:
    norm = part.norm
    subject_end = verb.start()
    if verb.group().startswith("募"):
        listing = _CN_LISTING.search(norm, a, verb.end())
        subject_end = listing.start() if listing else verb.start()
    company = name_before(part, a, subject_end)
    if company is None:
        return None
    sums = [m for m in money(part, verb.start(), b) if not _is_valuation(part, m, a)]
    valuation = _valuation(part, verb.start(), b, None)
    if not sums and valuation is None:
        return None
    currency = sums[0].currency if sums else next(
        (m.currency for m in money(part, verb.start(), b)), "CNY"
    )
    fact = {
        **_company(company),
        "amount": sums[0].value if sums else None,
        "currency": currency,
        "round_type": round_type(norm[a:b]),
        "post_money_valuation": valuation,
    }
    end = max([verb.end()] + [s.end for s in sums[:1]])
    return Draft("funding", fact, part.name, company.start, end, 0.8)


def extra_funding_details(part: Part, a: int, b: int) -> dict:
    """What a sentence without its own round adds to the item's round: the valuation ("The round values
    the company at $6.9 billion") and the round type ("The Series A round brings ...")."""
    out: dict = {}
    valuation = _valuation(part, a, b, None)
    if valuation is not None:
        out["post_money_valuation"] = valuation
    kind = round_type(part.norm[a:b])
    if kind is not None and kind != "ipo":
        out["round_type"] = kind
    return out


# ---------------------------------------------------------------------------------------------------
# Acquisitions

_ACQUIRE = re.compile(
    r"\b(?:acquires|acquired|has acquired|buys|bought|to acquire|to buy|agrees to buy|agrees to acquire"
    r"|agreed to acquire|agreed to buy|will acquire|will buy|snaps up|scoops up|takes over)\b",
    re.IGNORECASE,
)
_ACQUISITION_OF = re.compile(
    r"\b(?:completes|completed|closes|closed|announces|finalizes|finalises)\s(?:its\s|the\s)?(?:\S+\s){0,3}?"
    r"(?:acquisition|purchase|takeover) of\b",
    re.IGNORECASE,
)
_NAMED_DEAL = re.compile(
    r"\b(?:completes|completed|closes|closed|finalizes|finalises)\s(?:its\s|the\s)?(?:\S+\s){0,3}?"
    r"(?P<name>(?:[A-Z][\w&.'-]*\s){1,3})(?:takeover|acquisition|purchase|buyout)\b(?!\s+of\b)"
)
_DIVEST = re.compile(r"\bdivest(?:iture|s|ed|ing)? (?:of )?", re.IGNORECASE)
_SECURITIES = re.compile(
    r"(?:'s)?\s+(?:common\s|preferred\s)?(?:stock|shares|stake|equity|bonds)\b", re.IGNORECASE
)
_CN_DESCRIBED = re.compile(r".*(?:公司|企业|厂商|初创|创企|独角兽|芯片商|设计商|旗下)")
_CN_ACQUIRE = re.compile(r"(?:全资)?(?:收购|并购|吸收合并)")
_CN_ACQUIRER_TAIL = re.compile(
    r"(?:拟|宣布|正式|已|将|计划|同意|决定)*(?:以[^，,。]{1,20}?)?(?:拟|完成|全资|宣布)*"
    # how it pays: "拟换股吸收合并", "拟发行股份及支付现金收购"
    r"(?:换股|现金|发行股份(?:及支付现金)?|支付现金)?$"
)
# "此次收购将加强其团队": the deal named again as a noun, no buyer or target after it
_CN_THE_DEAL = re.compile(r"(?:此次|本次|这次|该|上述|该笔|这笔|此项|该项)$")
_SINCE_CLAUSE = re.compile(
    r"\b(?:since|after|when|before|once)\s(?:it|they|the company|[A-Z][\w.&'-]*)\s(?:had\s|has\s|first\s)?$"
)
_AND_BEFORE = re.compile(r"\band\s*$")
_NOT_DEAL = re.compile(r"\b(?:in talks|talks to|considering|explores|exploring|weighs|bid for|said to|rumou?r"
                       r"|could|may|might)\b|洽谈|传闻|考虑|或将", re.IGNORECASE)


def read_acquisitions(part: Part, lexicon: Lexicon) -> list[Draft]:
    """Acquisitions stated in ``part``'s sentences (one per sentence at most)."""
    out: list[Draft] = []
    for a, b in part.sentences_of("acquisition"):
        if _NOT_DEAL.search(part.norm[a:b]):
            continue
        draft = _passive_deal(part, a, b) or _english_deal(part, a, b) or _chinese_deal(part, a, b)
        if draft is not None:
            out.append(draft)
    return out


# "raises $1.1 billion Series B and agrees to buy ...": the sum of a round is not the deal's price
_ROUND_AFTER = re.compile(r"\s*(?:Series [A-H]\b|(?:[\w-]+\s)?(?:funding|financing|round)\b)", re.IGNORECASE)


def deal_sums(part: Part, a: int, b: int) -> list[Money]:
    """The sums in ``norm[a:b]`` that may be a deal's price: all but those naming a round of funding."""
    return [m for m in money(part, a, b) if not _ROUND_AFTER.match(part.norm, m.end)]


def _deal(part: Part, buyer: Name, target: Name, a: int, b: int, start: int, end: int) -> Draft:
    sums = deal_sums(part, a, b)
    fact = {
        "acquirer_id": buyer.id,
        "acquirer_name": buyer.text,
        "vendor_id": target.id,
        "vendor_name": target.text,
        "amount": sums[0].value if sums else None,
        "currency": sums[0].currency if sums else None,
    }
    return Draft("acquisition", fact, part.name, start, end, 0.75)


# "Rivos acquired by Meta", "Graphcore to be bought by SoftBank", "Graphcore被软银集团收购"
_PASSIVE = re.compile(
    r"\b(?:is\s|was\s|has been\s|to be\s|will be\s|agrees to be\s)?(?:acquired|bought|purchased|taken over)"
    r"\sby\s"
)
_CN_PASSIVE = re.compile(r"被(?=[^，。]{2,16}?(?:全资)?(?:收购|并购))")


def _passive_deal(part: Part, a: int, b: int) -> Draft | None:
    norm = part.norm
    m = _PASSIVE.search(norm, a, b)
    if m is not None:
        target = name_before(part, a, m.start())
        buyer = name_after(part, m.end(), b)
        if target is not None and buyer is not None and target.text != buyer.text:
            return _deal(part, buyer, target, a, b, target.start, buyer.end)
        return None
    m = _CN_PASSIVE.search(norm, a, b)
    if m is not None:
        verb = _CN_ACQUIRE.search(norm, m.end(), b)
        target = name_before(part, a, m.start())
        if verb is None or target is None:
            return None
        end = verb.start() - (2 if norm[verb.start() - 2 : verb.start()] == "全资" else 0)
        buyer = name_before(part, m.end(), end)
        if buyer is not None and buyer.text != target.text:
            return _deal(part, buyer, target, a, b, target.start, verb.end())
    return None


def _english_deal(part: Part, a: int, b: int) -> Draft | None:
    norm = part.norm
    m = _DIVEST.search(norm, a, b)
    if m:
        target = name_after(part, m.end(), b)
        to = re.search(r"\bto\s", norm[m.end() : b])
        buyer = name_after(part, m.end() + to.end(), b) if to else None
        if target and buyer:
            return _deal(part, buyer, target, a, b, m.start(), buyer.end)
    for pattern in (_ACQUISITION_OF, _ACQUIRE):
        m = pattern.search(norm, a, b)
        if m is None or _SINCE_CLAUSE.search(norm, max(a, m.start() - 40), m.start()):
            continue  # "its largest since it bought Harman in 2017": an older deal told for comparison
        buyer = (
            back_reference(part, a, m.start()) or pronoun_reference(part, a, m.start())
            or name_before(part, a, m.start())
        )
        if buyer is None and _AND_BEFORE.search(part.norm, max(a, m.start() - 6), m.start()):
            # "Nscale raises $1.1 billion Series B and agrees to buy ...": the clause's subject buys
            buyer = clause_subject(part, a, m.start())
        target = name_after(part, m.end(), b)
        if target is not None and target.id is None and is_place(target.text) and (
            norm.startswith(("'s ", "\u2019s "), target.end)
        ):  # "to buy Germany's FläktGroup": the company after the country's possessive
            target = name_after(part, target.end + 3, b)
        if buyer is None or target is None or buyer.text == target.text:
            continue
        if _SECURITIES.match(norm, target.end):
            continue  # "will buy Intel common stock": shares, not the company
        return _deal(part, buyer, target, a, b, buyer.start, target.end)
    m = _NAMED_DEAL.search(norm, a, b)
    if m:
        buyer = name_before(part, a, m.start())
        s, e = m.span("name")
        e = s + len(norm[s:e].rstrip())
        known = [f for f in part.found if f.start == s and f.end == e and f.kind == "vendor"]
        target = Name(known[0].id if known else None, norm[s:e], s, e)
        if buyer is not None and buyer.text != target.text:
            return _deal(part, buyer, target, a, b, buyer.start, m.end())
    return None


def _chinese_deal(part: Part, a: int, b: int) -> Draft | None:
    norm = part.norm
    m = _CN_ACQUIRE.search(norm, a, b)
    if m is None or _CN_THE_DEAL.search(norm, max(a, m.start() - 2), m.start()):
        return None
    head = norm[a : m.start()]
    of = re.search(r"对(.{2,16})的$", head)
    if of:  # "完成对X的收购"
        if of.group(1).startswith(("一家", "某", "多家")):
            return None
        s, e = a + of.start(1), a + of.end(1)
        described = _CN_DESCRIBED.match(norm, s, e)  # "对TPU芯片公司中昊芯英的收购"
        if described:
            s = described.end()
        known = [f for f in part.found if f.start == s and f.end == e and f.kind == "vendor"]
        target = Name(known[0].id if known else None, norm[s:e], s, e)
        head = head[: of.start()]
    else:
        target = name_after(part, m.end(), b)
    tail = _CN_ACQUIRER_TAIL.search(head)
    buyer_end = a + (tail.start() if tail else len(head))
    buyer = name_before(part, a, buyer_end)
    if buyer is None or target is None:
        return None
    return _deal(part, buyer, target, a, b, buyer.start, max(target.end, m.end()))


__all__ = ["deal_sums", "extra_funding_details", "read_acquisitions", "read_funding", "round_type"]
