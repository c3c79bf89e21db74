"""Benchmark claims and chip launches read from news text, English and Chinese (pure: no I/O).

Benchmark claims: a figure of performance (a ratio "3.2x", "30倍"; a throughput or speed in tok/s; a
latency in ms; a percentage) with the chip it is claimed for, the chip it is compared against ("than
H100", "of MI300X", "较GB200", "是GB300的"), the metric the words around it name, and who made the claim
("Etched says", "CoreWeave measures", "英伟达称"). A sentence that only restates a baseline ("compares
with 535 tok/s", "down from 21 ms") is no claim; "from 21 ms to 14 ms" claims 14 ms.

Launches: a vendor before a verb of launching ("unveils", "launches", "announces", "ships", "is now
generally available", 发布, 推出) and the chip or system named after it. A name with no digit and no
quotes must be followed by a hardware word ("Crescent Island inference GPU", "Ironwood, its ... TPU").
"""

from __future__ import annotations

import re

from chipwatch.candidates.chips import chip_names
from chipwatch.candidates.lexicon import Lexicon
from chipwatch.candidates.names import back_reference, name_before, reporter
from chipwatch.candidates.textparts import Draft, Name, Part
from chipwatch.text.numerals import read_digits

_CLAIM_UNITS = ("x", "tok/s", "tok/s/user", "tok/s/kW", "tok/s/MW", "ms")
_RANGE_GAP = re.compile(r"\s*(?:to|-|~|至|到)\s*")
_PERCENT = re.compile(r"(?<![A-Za-z0-9_.])(?P<num>\d+(?:\.\d+)?)\s?(?:%|percent\b)")
# "每秒420个token": a rate written in Chinese order
_CN_TOKENS_PER_S = re.compile(
    r"每秒(?:输出|生成|处理)?(?:约|超过|达)?(?P<num>\d+(?:\.\d+)?)(?P<wan>万)?个?(?:tokens?|词元|Token)"
)
_COMPARATOR = re.compile(
    r"\b(?:than|of|over|versus|vs\.?|against|compared (?:with|to)|beats?|trails?|outperforms?|matches"
    r"|below|above|under)\s"
    r"|较|比|相比|是|为|达到|相当于",
    re.IGNORECASE,
)
_CN_OF = re.compile(r"的\s*$")
_BASELINE_ONLY = re.compile(
    r"\b(?:compares? with|compared with|versus|against|baseline|down from|up from|for the (?:fastest|best))\b"
    r"|相比之下|基线|此前为",
    re.IGNORECASE,
)
_FROM_TO = re.compile(
    r"(?:\bfrom\b|从)[^.。]{1,30}?(?:\bto\b|降至|降到|提升至|提高到|增至|升至)\s*$", re.IGNORECASE
)
_FROM = re.compile(r"(?:\bfrom\s*|从\s*)$", re.IGNORECASE)
_CLAIM_VERB = (
    r"(?:is|are|was|delivers|delivered|achieves|achieved|offers|runs|ran|hits|beats|trails|posts|posted|shows"
    r"|gives|matches|outperforms|cuts|serves|reaches|provides|doubles)"
)
# A product named before its claim: "Rebel Quad delivers", "RNGD runs" (a name the knowledge base may not
# know yet: capitalised words, or an acronym of three letters or more that is no generic unit).
_NAME_WORD = r"(?:[A-Z][\w-]*[a-z][\w-]*|[A-Z]{3,}\b)"
_NAMED_SUBJECT = re.compile(
    rf"(?P<name>{_NAME_WORD}(?:\s{_NAME_WORD})?)(?:\s(?:TPU|GPU|chip|accelerator|system|NPU))?\s{_CLAIM_VERB}\b"
)
_NAMED_BASELINE = re.compile(
    r"(?:(?:first|second|third|previous|prior|last|older|current)[- ]generation\s|previous\s|its\s)?"
    r"(?P<name>[A-Z][\w-]*[a-z][\w-]*|[A-Z]\d[\w-]*|[A-Z]{3,}\b)"
)
_GENERIC_NAMES = frozenset({"GPU", "CPU", "NPU", "TPU", "XPU", "ASIC", "LLM", "API", "AI", "FPGA", "HBM"})
_NOT_SUBJECTS = frozenset({"The", "It", "This", "That", "Its", "Company", "Each", "Down", "Up", "InferenceX"})


# The words that name a claim's metric (the labels' vocabulary), in the order they are tried.
_PER_USER = re.compile(r"per user|single-user|single user|单用户|每用户|interactivity")
_PER_POWER = re.compile(
    r"per (?:watt|kw|mw|megawatt|kilowatt)|per-(?:kw|mw|watt)|perf(?:ormance)?/w|efficien(?:cy|t)"
    r"|能效|每瓦|每兆瓦|每千瓦"
)
_LATENCY = re.compile(r"latency|ttft|tpot|time to first token|延迟|时延")
_COST = re.compile(r"\bcost|per dollar|cheaper|price-performance|成本")
_THROUGHPUT = re.compile(r"throughput|吞吐")
_CJK_CHAR = re.compile(r"[\u3400-\u9fff]")
_COMPARED_TO = re.compile(r"(?:较|比|是|为|达到)\s*$")


def _metric(text: str, unit: str) -> str:
    """The metric of a claim from its unit and the words of its sentence (the labels' vocabulary)."""
    t = text.lower()
    if unit == "tok/s/user" or _PER_USER.search(t):
        return "speed"
    if unit in ("tok/s/kW", "tok/s/MW") or _PER_POWER.search(t):
        return "throughput_per_power"
    if unit == "ms" or _LATENCY.search(t):
        return "latency"
    if _COST.search(t):
        return "cost"
    if unit == "tok/s" or _THROUGHPUT.search(t):
        return "throughput"
    return "performance"


def _figures(part: Part, a: int, b: int) -> list[tuple[float | None, float | None, str, int, int]]:
    """Claim figures in ``norm[a:b]``: ``(value_min, value_max, unit, start, end)``; a range gives one
    figure with both ends."""
    by_span: dict[tuple[int, int], list] = {}
    for q in part.quantities_in(a, b):
        if q.unit in _CLAIM_UNITS:
            by_span.setdefault(q.span, []).append(q)
    out = []
    for (s, e), qs in by_span.items():
        values = [q.value for q in qs]
        out.append((min(values), max(values), qs[0].unit, s, e))
    for m in _PERCENT.finditer(part.norm, a, b):
        value = read_digits(m.group("num"))
        if value is not None:
            out.append((value, value, "%", m.start(), m.end()))
    for m in _CN_TOKENS_PER_S.finditer(part.norm, a, b):
        value = read_digits(m.group("num"))
        if value is not None:
            value *= 1e4 if m.group("wan") else 1.0
            out.append((value, value, "tok/s", m.start(), m.end()))
    out.sort(key=lambda f: f[3])
    merged: list = []
    for fig in out:  # "1.5x to 1.9x": one figure, a range
        if merged and merged[-1][2] == fig[2] and _RANGE_GAP.fullmatch(part.norm[merged[-1][4] : fig[3]]):
            last = merged[-1]
            merged[-1] = (min(last[0], fig[0]), max(last[1], fig[1]), fig[2], last[3], fig[4])
        else:
            merged.append(fig)
    return merged


def _subject(part: Part, chips: list[Name], a: int, at: int) -> Name | None:
    norm = part.norm
    for chip in chips:
        if chip.start >= at:
            break
        lead = norm[max(a, chip.start - 16) : chip.start]
        if _COMPARATOR.search(lead[-10:]) and not _CJK_CHAR.search(lead[-1:] or "x"):
            continue
        if _COMPARED_TO.search(lead):
            continue
        return chip
    m = None
    for m in _NAMED_SUBJECT.finditer(norm, a, at):  # noqa: B007 - the last one before the figure
        pass
    if m is not None:
        words = m.group("name").split()
        while words and (words[0] in _NOT_SUBJECTS or words[0] in _GENERIC_NAMES):
            words = words[1:]
        if words and not any(
            f.kind in ("vendor", "model") and f.start < m.end("name") and m.start("name") < f.end
            for f in part.found
        ):  # "DeepSeek-R1 runs at 400 tokens per second": a model runs on the chip, it is none
            text = " ".join(words)
            start = m.end("name") - len(text)
            return Name(None, text, start, m.end("name"))
    return _launch_object(part, a, at)


def _launch_object(part: Part, a: int, at: int) -> Name | None:
    """The product a verb of launching names before a claim of the same sentence ("d-Matrix Unveils
    Raptor, Claims 2.1x ...", "FuriosaAI launches RNGD Max with 2x ..."), else None."""
    verbs = part.per_sentence("launch verbs", a, at, lambda s, e: [
        (v.start(), v.end()) for v in _LAUNCH.finditer(part.norm, s, e)
    ])
    if not verbs:
        return None
    m = _LAUNCHED_NAME.match(part.norm, verbs[-1][1], at)
    if m is None:
        return None
    words = m.group("name").split()
    while words and words[-1].lower() in _TITLE_HARDWARE_WORDS:
        words.pop()
    if not words or words[0] in _GENERIC_NAMES:
        return None
    text = " ".join(words)
    return Name(None, text, m.start("name"), m.start("name") + len(text))


def _baseline(part: Part, chips: list[Name], subject: Name, a: int, b: int, fig_end: int) -> Name | None:
    norm = part.norm
    for chip in chips:
        if chip.start <= subject.start or chip is subject:
            continue
        lead = norm[max(subject.end, chip.start - 14) : chip.start]
        if _COMPARATOR.search(lead) or chip.start - fig_end in (0, 1):
            return chip
    for m in _COMPARATOR.finditer(norm, subject.end, b):
        n = _NAMED_BASELINE.match(norm, m.end())
        name = n.group("name") if n else ""
        if n and name not in _NOT_SUBJECTS and name.lower() not in ("gpus", "the", "its"):
            return Name(None, n.group("name"), n.start(), n.end())
    return None


# Specs, not claims (the labels' rule): a ratio of bandwidth, memory or FLOPS ("10x effective memory
# bandwidth", "2x the HBM capacity"), unless a word of performance comes first.
_SPEC_AFTER = re.compile(
    r"\s*(?:more\s|higher\s|greater\s|the\s|of\s)*(?:(?!throughput|perf|speed|faster|latenc|cost|efficien"
    r"|token)[\w-]+\s){0,2}?(?:bandwidth|memory|capacity|[TPE]?FLOPS)\b",
    re.IGNORECASE,
)
# "The next-fastest provider ... served the model at 1,000 tokens per second": a sentence about another
# party; the item's claim is not carried to it.
_OTHER_SUBJECT = re.compile(
    r"\s*(?:The|A|An|Its)\s(?:[\w-]+\s){0,2}?(?:next[- ]fastest|second[- ]fastest|closest|nearest|rival"
    r"|competing|competitor|runner-up|other)\b",
    re.IGNORECASE,
)


# "Llama-Z9 runs at 2,100 tokens per second on Quillon Q7", "... on the new systems": the hardware a
# model runs on, after the figure
_ON = re.compile(r"\s*(?:per\s[\w-]+\s)*on\s(?:a\s|an\s|the\s|its\s)?")
_ON_THE_ITEMS = re.compile(
    r"on\s(?:the|these|those|its)\s(?:new\s|same\s)?(?:systems|racks|cluster|servers|chips|GPUs|hardware)\b"
)


_SAID_OPENING = re.compile(r"\s*The\s(?:[\w-]+\s){0,4}?(?:said|says|added|noted)\b")


def _runs_on(part: Part, chips: list[Name], e: int, b: int, lexicon: Lexicon) -> Name | None:
    """The chip a figure is claimed on when a model runs on it: the chip after "on" right after the
    figure, or for a summary's "on the new systems" the chip its title names; else None."""
    on = _ON.match(part.norm, e, b)
    if on is None:
        return None
    after = next((c for c in chips if c.start == on.end()), None)
    if after is not None:
        return after
    if part.title is not None and _ON_THE_ITEMS.search(part.norm, on.start(), min(b, on.end() + 30)):
        named = chip_names(part.title, 0, len(part.title.norm), lexicon)
        return named[0] if len(named) == 1 else None
    return None


def read_benchmarks(part: Part, lexicon: Lexicon, context: dict | None = None) -> list[Draft]:
    """Benchmark claims in ``part``; ``context`` carries the subject, baseline and reporter of the item's
    first claim to sentences that refer back to it ("The company also claimed a 35x lower cost")."""
    out: list[Draft] = []
    context = context if context is not None else {}
    for a, b in part.sentences_of("benchmark"):
        figures = _figures(part, a, b)
        if not figures:
            continue
        text = part.norm[a:b]
        chips = chip_names(part, a, b, lexicon)
        said: Name | None | bool = False  # who made the sentence's claims, read for its first claim
        for lo, hi, unit, s, e in figures:
            before = part.norm[max(a, s - 40) : s]
            if unit in ("x", "%") and _SPEC_AFTER.match(part.norm, e, b):
                continue  # "10x effective memory bandwidth": a datasheet figure, no performance claimed
            if _FROM.search(before) or (_BASELINE_ONLY.search(part.norm[max(a, s - 30) : s]) and chips == []):
                continue
            subject = _subject(part, chips, a, s)
            if subject is None:
                subject = _runs_on(part, chips, e, b, lexicon)
            inherited = False
            if subject is None:
                if not context or _BASELINE_ONLY.search(text) or _OTHER_SUBJECT.match(text):
                    continue
                subject, inherited = context["subject"], True
            base = context.get("baseline") if inherited else _baseline(part, chips, subject, a, b, e)
            if said is False:
                said = reporter(part, a, b, lexicon)
                opening = _SAID_OPENING.match(part.norm, a, b) if said is None else None
                if opening is not None:  # "The company said ...": the company of the title
                    said = back_reference(part, a, opening.end())
            who = said or (context.get("reporter") if inherited else None)
            fact = {
                "chip_id": subject.id,
                "chip_name": subject.text,
                "metric": _metric(text, unit),
                "value": lo if lo == hi else None,
                "value_min": lo if lo != hi else None,
                "value_max": hi if lo != hi else None,
                "unit": unit,
                "baseline_id": base.id if base else None,
                "baseline_name": base.text if base else None,
                "reported_by_id": who.id if who else None,
                "reported_by_name": who.text if who else None,
            }
            start = s if inherited else min(subject.start, s)
            out.append(Draft("benchmark", fact, part.name, start, e, 0.5 if inherited else 0.7))
            if not context:
                context.update(subject=subject, baseline=base, reporter=who)
    return out


# ---------------------------------------------------------------------------------------------------
# Launches

_LAUNCH = re.compile(
    r"(?=[ludirsbtpa正发推亮首])(?:"
    r"\b(?:launch(?:es|ed)?|unveil(?:s|ed)?|announc(?:es|ed)|introduc(?:es|ed)|debut(?:s|ed)|releas(?:es|ed)"
    r"|ships|shipped|(?:begins|began|starts|started) shipping|showcas(?:es|ed)|rolls out|rolled out"
    r"|takes (?:the )?wraps off|pulls (?:the )?wraps off|(?:begins|began|starts|started) sampling"
    r"|reveal(?:s|ed)|presents|presented|shows off|showed off|shows|showed)\b"
    # the chip named before the verb: "... is now generally available", "Maia 300 breaks cover"
    r"|(?P<ga>\bis now (?:generally )?available\b|\b(?:breaks|broke) cover\b)"
    r"|(?:正式)?(?:发布|推出|亮相|首发)"
    r")",
    re.IGNORECASE,
)
_OBJECT_DESCRIPTORS = re.compile(
    r"\s*(?:(?:(?:its|the|a|an|new|next-generation|next-gen|first|custom|own|latest|flagship|\S+-generation"
    r"|Instinct|AI|inference|data center)\b"
    r"|新一代|第\S代|自研|旗舰|高性能|云端|推理|训练|人工智能|大模型|GPU|芯片)\s*)*",
    re.IGNORECASE,
)
_HARDWARE_AFTER = re.compile(
    r"^[\s,]*(?:(?:its|a|an|the)\s)?(?:[\w-]+\s){0,4}?(?:chips?|GPUs?|TPUs?|NPUs?|accelerators?|processors?"
    r"|systems?|racks?|platform|cards?|superchips?|SoCs?|servers?|supercomputer)\b",
    re.IGNORECASE,
)
_QUOTED = re.compile(r"[\"\u201c](?P<name>[A-Z][\w -]{1,30})[\"\u201d]")
_TITLE_HARDWARE_WORDS = frozenset(
    "inference accelerator accelerators chip chips gpu gpus tpu npu card cards processor processors "
    "rack racks "
    "server servers system systems platform superchip soc ai".split()
)
_LAUNCHED_NAME = re.compile(
    r"\s*(?:(?:its|the|a|an|new|next-generation|latest)\s)*"
    r"(?P<name>(?:[A-Z][\w-]*|\d{1,4})(?:\s(?:[A-Z][\w-]*|\d{1,4})){0,2})(?=\s*(?:,|\swith\b|\s[a-z]))"
)
# A claim right after a product's name makes it a product ("Unveils Raptor, Claims 2.1x", "with 2x the").
_CLAIM_AFTER = re.compile(
    r"\s*(?:,\s*(?:claims?|claiming|promis(?:es|ing)|says|touting)|\swith|\s(?:claims?|delivers?|offers?))"
    r"\s(?:up to\s|the\s)?[\d.]+\s?(?:x|×|%|倍|times)",
    re.IGNORECASE,
)
_TITLE_NAME = re.compile(r"(?P<name>[A-Z][\w-]*(?:\s(?:[A-Z][\w-]*|\d{1,4}))?)")


def _launched(part: Part, pos: int, b: int, lexicon: Lexicon) -> list[Name]:
    """The chips named as the object of a launch verb ending at ``pos``."""
    norm = part.norm
    skip = _OBJECT_DESCRIPTORS.match(norm, pos, b)
    start = skip.end() if skip else pos
    while start < b and norm[start] == " ":
        start += 1
    chips = [c for c in chip_names(part, start, b, lexicon)]
    out: list[Name] = []
    if chips and chips[0].start <= start + 1:
        out.append(chips[0])
        for c in chips[1:]:
            gap = norm[out[-1].end : c.start]
            if re.fullmatch(r"\s*(?:and|,|&|和|与|及|、)\s*", gap):
                out.append(c)
            else:
                break
        return out
    q = _QUOTED.match(norm, start, b)
    if q:
        name = q.group("name")
        return [Name(lexicon.lookup(name, "chip"), name, q.start("name"), q.end("name"))]
    t = _TITLE_NAME.match(norm, start, b)
    if t and any(f.kind == "model" for f in part.found_in(t.start(), t.end() + 1)):
        return []
    if t:
        words = t.group("name").split()
        if len(words) == 2 and (words[1].lower() in _TITLE_HARDWARE_WORDS):
            # Title case: "AI300 Inference Accelerator" names AI300
            t_end = t.start() + len(words[0])
        else:
            t_end = t.end()
        name = norm[t.start() : t_end]
        claimed = _CLAIM_AFTER.match(norm, t_end, b) is not None and name not in _GENERIC_NAMES
        if re.search(r"\d", name) or _HARDWARE_AFTER.match(norm[t_end:b]) or claimed:
            return [Name(lexicon.lookup(name, "chip"), name, t.start(), t_end)]
    return []


# "星瀚智芯首款芯片星瀚T1亮相...": the chip debuts, its maker opens the sentence
_CN_MAKER = re.compile(r"[\u3400-\u9fff]{2,8}?(?=首款|旗下|新款|新一代|自研|最新|的)")


def _debuted(part: Part, a: int, at: int, lexicon: Lexicon) -> tuple[list[Name], Name | None]:
    """The chip named right before a Chinese verb of debuting (亮相, 首发) and the maker opening the
    sentence, else no chip."""
    chips = [c for c in chip_names(part, a, at, lexicon) if at - c.end <= 1]
    if not chips:
        return [], None
    known = [f for f in part.found_in(a, chips[0].end) if f.kind == "vendor"]  # or the chip's own prefix
    if known:
        f = known[0]
        return chips[:1], Name(f.id, part.norm[f.start : f.end], f.start, f.end)
    m = _CN_MAKER.match(part.norm, a, chips[0].start)
    return (chips[:1], Name(None, m.group(), m.start(), m.end())) if m else ([], None)


def launch_verb_in(norm: str, a: int, b: int) -> bool:
    """Does ``norm[a:b]`` hold a verb of launching? :func:`read_launches` reads nothing elsewhere."""
    return _LAUNCH.search(norm, a, b) is not None


def read_launches(part: Part, lexicon: Lexicon) -> list[Draft]:
    """Launches in ``part``: one draft per chip named after a launch verb."""
    out: list[Draft] = []
    for a, b in part.sentences_of("launch"):
        for verb in _LAUNCH.finditer(part.norm, a, b):
            if verb.group("ga"):  # "The NVIDIA RTX PRO 5000 ... GPU is now generally available"
                chips = [c for c in chip_names(part, a, verb.start(), lexicon)][:1]
                vendors = [f for f in part.found_in(a, verb.start()) if f.kind == "vendor"]
                maker = Name(vendors[0].id, part.norm[vendors[0].start : vendors[0].end], vendors[0].start,
                             vendors[0].end) if vendors else None
            else:
                chips = _launched(part, verb.end(), b, lexicon)
                # the maker is read only for a verb that launches a chip: without one nothing is proposed
                maker = name_before(part, a, verb.start()) if chips else None
                if not chips and verb.group().endswith(("亮相", "首发")):
                    chips, maker = _debuted(part, a, verb.start(), lexicon)
            if maker is None and chips and chips[0].id:
                vendor_id = lexicon.vendor_of(chips[0].id)
                if vendor_id:
                    maker = Name(vendor_id, vendor_id, chips[0].start, chips[0].start)
            if maker is None:
                continue
            for chip in chips:
                chip_id = chip.id or lexicon.chip_of_vendor(maker.id, chip.text)
                fact = {"vendor_id": maker.id, "vendor_name": maker.text, "chip_id": chip_id,
                        "chip_name": chip.text, "new": chip_id is None}
                out.append(Draft("launch", fact, part.name, min(maker.start, verb.start()), chip.end, 0.7))
            if chips:
                break
    return out


__all__ = ["launch_verb_in", "read_benchmarks", "read_launches"]
