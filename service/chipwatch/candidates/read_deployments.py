"""Deployments read from news text, English and Chinese (pure: no I/O).

A deployment is an organisation running, bringing online, buying or planning to run AI chips or AI
compute. Each verb of deploying ("to deploy", "brings ... online", "switches on", "has deployed",
"received", "trained on", 部署, 上线, 点亮, 采购, 使用) opens a window up to the next one; inside it the
operator is the name before the verb, and the chip, the count of units, the power (MW, GW) and the place
are read. The verb decides the status: ``operational`` for what runs now, ``planned`` for what will.
A sentence without a verb of its own (or without an operator) adds what it names (chip, count, power,
place) to the item's deployment; a fact needs (an operator or a place) and (a chip, a count or a power).
"""

from __future__ import annotations

import re

from chipwatch.candidates.chips import chip_names
from chipwatch.candidates.figures import counts
from chipwatch.candidates.lexicon import Lexicon
from chipwatch.candidates.names import name_before, place_in
from chipwatch.candidates.textparts import Draft, Name, Part

_VERBS = re.compile(
    r"(?P<op>\bbrings?\s(?:\S+\s){0,6}?online\b|\bbrought\s(?:\S+\s){0,6}?online\b|\bswitch(?:es|ed)? on\b"
    r"|\b(?:goes|go|went|is|are|now) live\b|\bcomes? online\b|\bcame online\b|\bopens\b|\bopened\b"
    r"|\bha(?:s|ve) deployed\b|\breceived\b|\btrained (?:entirely |exclusively )?on\b|\bruns on\b"
    r"|\bis running\b|\breaches\b|\bfires up\b|\blights up\b|\bpowered up\b|\bturns on\b)"
    r"|(?P<plan>\b(?:to|will|plans? to|set to|begins? to|starts? to)"
    r" (?:deploy|use|rent|build|host|install|buy)\b"
    r"|\bdeploys\b|\bdeployment of\b|\bdeployment\b|\bwill be (?:powered|built) (?:by|on|with)\b"
    r"|\bsigns?\b(?=[^.]{0,40}?\bdeal\b)|\borders?\b|\bordered\b|\bplans?\b(?=\s[\d.]+\s?(?:GW|MW|gigawatt|megawatt)))"
    r"|(?P<cnop>已(?:在[^，。]{1,8})?部署|上线|投运|投入运行|点亮|建成|开始运行)"
    r"|(?P<cnplan>(?:将|计划|拟|预计)[^，。]{0,12}?(?:部署|使用|建设|扩至|扩容|采用)|采购|使用)"
    r"|(?P<cnany>部署)",
    re.IGNORECASE,
)
_ON_CHIPS = re.compile(r"trained|runs on", re.IGNORECASE)
_POWERED_BY = re.compile(r"powered (?:by|on|with)", re.IGNORECASE)
_ONE_UNIT = re.compile(r"\b(?:a|an|one|first|1st)\s(?P<unit>gigawatt|megawatt)s?\b", re.IGNORECASE)
_CN_LEAD = re.compile(r"(?:将|计划|拟|已|正在|预计|年底前|明年|今年|在[^，。]{1,8}?)+$")


def _power_mw(part: Part, a: int, b: int, pos: int) -> float | None:
    """The power figure in ``norm[a:b]`` nearest after ``pos`` (else before it), in MW."""
    found = [(q.span[0], q.value * (1000.0 if q.unit == "GW" else 1.0))
             for q in part.quantities_in(a, b) if q.unit in ("MW", "GW")]
    found += [(m.start(), 1000.0 if m.group("unit").lower() == "gigawatt" else 1.0)
              for m in _ONE_UNIT.finditer(part.norm, a, b)]
    if not found:
        return None
    after = sorted(f for f in found if f[0] >= pos)
    before = sorted((f for f in found if f[0] < pos), reverse=True)
    return (after or before)[0][1]


def _nearest(names: list[Name], pos: int) -> Name | None:
    after = [n for n in names if n.start >= pos]
    return after[0] if after else (names[-1] if names else None)


# Words that stand where an operator would but name none: a funding round ("raises $1bn Series B to build"),
# a reference back to a subject named before ("该集群已投入运行": the cluster).
_NOT_OPERATOR = re.compile(
    r"^(?:Series [A-H]\d?\+?|Pre-IPO|IPO)$|^[该这此其本][\u3400-\u9fff]{0,4}$", re.IGNORECASE
)


def _operator(part: Part, lo: int, verb: re.Match[str]) -> Name | None:
    name = _named_operator(part, lo, verb)
    return None if name is not None and _NOT_OPERATOR.match(name.text) else name


def _named_operator(part: Part, lo: int, verb: re.Match[str]) -> Name | None:
    norm = part.norm
    if verb.group("cnop") or verb.group("cnplan") or verb.group("cnany"):
        lead = _CN_LEAD.search(norm, lo, verb.start())
        end = lead.start() if lead else verb.start()
        vendors = [f for f in part.found_in(lo, end) if f.kind == "vendor"]
        if vendors:
            f = vendors[0]
            return Name(f.id, norm[f.start : f.end], f.start, f.end)
        return name_before(part, lo, end)
    if _POWERED_BY.search(verb.group()):
        return None  # "Alice Recoque will be powered by ...": the machine, not who runs it
    name = name_before(part, lo, verb.start())
    if name is None:  # "OpenAI's Jalapeño chips go live": the owner named with a possessive
        for f in part.found_in(lo, verb.start()):
            if f.kind == "vendor" and norm[f.end : f.end + 2] in ("'s", "\u2019s"):
                return Name(f.id, norm[f.start : f.end], f.start, f.end)
    if name is None and _ON_CHIPS.search(verb.group()):
        # "Zyphra ZAYA1 becomes the first ... model trained entirely on ...": the sentence's subject,
        # without the model designation after the company's name
        lead = re.match(r"\s*((?:[A-Z][\w-]*\s){1,3})", norm[lo : verb.start()])
        if lead:
            words = lead.group(1).split()
            while len(words) > 1 and re.search(r"\d", words[-1]):
                words.pop()
            if words[0] not in ("The", "It", "This", "Its", "A", "An"):
                text = " ".join(words)
                return Name(None, text, lo + lead.start(1), lo + lead.start(1) + len(text))
    return name


def has_verb(parts: list[Part]) -> bool:
    """Does a sentence of ``parts`` that names deployments hold a verb of deploying? Without one an item
    yields no deployment (:func:`complete` keeps only drafts a verb made), so its sentences need not be
    read for details."""
    return any(deploy_verb_in(p.norm, a, b) for p in parts for a, b in p.sentences_of("deployment"))


def deploy_verb_in(norm: str, a: int = 0, b: int | None = None) -> bool:
    """Does ``norm[a:b]`` (normalised text) hold a verb of deploying?"""
    return _VERBS.search(norm, a, len(norm) if b is None else b) is not None


def read_deployments(part: Part, lexicon: Lexicon) -> list[Draft]:
    """Deployments in ``part``: one draft per verb of deploying whose window names enough; details from
    sentences without a verb are returned as drafts with ``fact["detail"] = True``."""
    out: list[Draft] = []
    for a, b in part.sentences_of("deployment"):
        verbs = list(_VERBS.finditer(part.norm, a, b))
        if not verbs:
            detail = _fields(part, a, b, a, lexicon)
            if any(detail.get(k) is not None for k in ("chip_name", "units", "power_mw", "place")):
                out.append(Draft("deployment", {**detail, "detail": True}, part.name, a, b, 0.0))
            continue
        for i, verb in enumerate(verbs):
            lo = verbs[i - 1].end() if i else a
            hi = verbs[i + 1].start() if i + 1 < len(verbs) else b
            fields = _fields(part, lo, hi, verb.end(), lexicon)
            operator = _operator(part, lo, verb)
            if operator is not None:
                fields["operator_id"], fields["operator_name"] = operator.id, operator.text
                if fields.get("chip_name") == operator.text:
                    fields["chip_id"] = fields["chip_name"] = None
            fields["status"] = "operational" if verb.group("op") or verb.group("cnop") else "planned"
            if verb.group("cnany"):
                fields["status_weak"] = True  # a bare 部署 says neither when nor whether
            if operator is None:
                out.append(Draft("deployment", {**fields, "detail": True}, part.name, lo, hi, 0.0))
                continue
            start = operator.start
            end = max(verb.end(), _last_end(part, lo, hi))
            out.append(Draft("deployment", fields, part.name, start, end, 0.7))
    return out


def _last_end(part: Part, lo: int, hi: int) -> int:
    ends = [q.span[1] for q in part.quantities_in(lo, hi)] + [e for _v, _s, e in counts(part, lo, hi)]
    return max(ends, default=lo)


def _fields(part: Part, lo: int, hi: int, pos: int, lexicon: Lexicon) -> dict:
    chips = chip_names(part, lo, hi, lexicon)
    chip = _nearest(chips, pos)
    units = counts(part, lo, hi)
    unit = next((u for u in units if u[1] >= pos), units[0] if units else None)
    return {
        "operator_id": None,
        "operator_name": None,
        "chip_id": chip.id if chip else None,
        "chip_name": chip.text if chip else None,
        "units": int(unit[0]) if unit else None,
        "power_mw": _power_mw(part, lo, hi, pos),
        "status": None,
        "place": place_in(part, lo, hi),
    }


def complete(drafts: list[Draft]) -> list[Draft]:
    """Fill each deployment's missing fields from the item's detail drafts (sentences that name a chip,
    a count, a power or a place without an operator), then keep those that name enough.

    The first deployment with an operator takes the details; a fact needs (an operator or a place) and
    (a chip, a count or a power).
    """
    facts = [d for d in drafts if not d.fact.get("detail")]
    details = [d for d in drafts if d.fact.get("detail")]
    if not facts:
        # "Alice Recoque will be powered by MI430X GPUs" + "the First Based in France": no operator
        facts = [d for d in details if d.fact.get("status") and d.fact.get("chip_name")][:1]
        details = [d for d in details if d not in facts]
    if facts:
        head = facts[0]
        if head.fact.pop("status_weak", False):
            stated = [d.fact["status"] for d in details if d.fact.get("status")]
            if stated:
                head.fact["status"] = stated[0]
        for d in details:
            for key in ("chip_id", "chip_name", "units", "power_mw", "place"):
                if head.fact.get(key) is None and d.fact.get(key) is not None:
                    if key == "chip_id" and head.fact.get("chip_name") not in (None, d.fact.get("chip_name")):
                        continue
                    head.fact[key] = d.fact[key]
    kept = []
    for d in facts:
        f = d.fact
        f.pop("detail", None)
        f.pop("status_weak", None)
        named = f.get("operator_name") or f.get("place")
        sized = f.get("chip_name") or f.get("units") or f.get("power_mw")
        if named and sized:
            d.confidence = 0.75 if f.get("operator_name") and f.get("chip_name") else 0.6
            kept.append(d)
    return kept


__all__ = ["complete", "deploy_verb_in", "has_verb", "read_deployments"]


