"""Deployments read from news text, English and Chinese (pure: no I/O).

A deployment is an organisation running, bringing online, buying or planning to run AI chips or AI
compute. Each verb of deploying ("to deploy", "brings ... online", "switches on", "has deployed",
"received", "trained on", "now runs N GPUs", "buys N GPUs", "commits to 1 GW", 部署, 上线, 投产, 点亮, 采购,
使用) opens a window up to the next one; inside it the operator is the name before the verb (or the owner
before a possessive, the title's company a summary refers back to, "operated by X"), and the chip, the
count of units, the power (MW, GW) and the place are read. The verb decides the status: ``operational``
for what runs now, ``planned`` for what will.
A sentence without a verb of its own (or without an operator) adds what it names (chip, count, power,
place) to the item's deployment; a fact needs (an operator or a place) and (a chip, a count or a power).
"""

from __future__ import annotations

import re
from typing import Any

from chipwatch.candidates.chips import chip_names
from chipwatch.candidates.figures import counts
from chipwatch.candidates.lexicon import Lexicon
from chipwatch.candidates.names import (
    CN_SITE,
    back_reference,
    clause_subject,
    cn_place,
    is_media,
    name_after,
    name_before,
    place_in,
    title_subject,
)
from chipwatch.candidates.textparts import Draft, Name, Part

# A count of chips after a verb: "runs 200,000 GB200 GPUs", "buys 4,200 Nvidia B300 GPUs" (not "runs 2x").
_COUNTED = (
    r"[\d,.]*(?:\s(?:thousand|million))?\s(?:[\w-]+\s){0,3}?(?:GPUs?|chips?|accelerators?|TPUs?|LPUs?|NPUs?"
    r"|XPUs?|APUs?|IPUs?|RDUs?|servers?|racks?|systems?|cards?|processors?|superchips?)\b"
)
# The same with only names between the count and its unit ("adds 5,000 GB300 GPUs", not "adds 5,000
# engineers to its chip teams"), for verbs that take many other objects.
_NAMED_COUNT = (
    r"[\d,.]*(?:\s(?:thousand|million))?\s(?:(?-i:[A-Z0-9])[\w-]*\s){0,3}?(?:GPUs?|chips?|accelerators?|TPUs?|LPUs?"
    r"|NPUs?|XPUs?|APUs?|IPUs?|RDUs?|servers?|racks?|systems?|cards?|processors?|superchips?)\b"
)
# Each pattern below opens with the characters its branches can start with (the first two letters of its
# English words, at a word's start): the engine then skips most positions in one test instead of trying
# every branch there.
_VERBS = re.compile(
    r"(?=\b(?:br|sw|go|we|is|ar|no|co|ca|op|ha|re|tr|ru|fi|li|po|tu|pu|en|al|st|be|ta|to|of|in|wi|pl|se|bu|ad"
    r"|ex|do|le|pr|ho|de|si|or)|[已上投正点建开将计拟预采使规部订租启完])(?:"
    r"(?P<op>\bbrings?\s(?:\S+\s){0,6}?online\b|\bbrought\s(?:\S+\s){0,6}?online\b|\bswitch(?:es|ed)? on\b"
    r"|\b(?:goes|go|went|is|are|now) live\b|\bcomes? online\b|\bcame online\b|\bopens\b|\bopened\b"
    r"|\bha(?:s|ve) deployed\b|\breceived\b|\btrained (?:entirely |exclusively )?on\b|\bruns on\b"
    r"|\bis running\b|\breaches\b|\bfires up\b|\blights up\b|\bpowered up\b|\bturns on\b"
    # "now runs 200,000 GB200 GPUs", "350,000 are already running"
    r"|\bnow runs\b|\bruns(?=\s(?:nearly |about |over |more than |some |roughly )?\d" + _COUNTED + ")"
    r"|\b(?:is|are) (?:already |now )running\b"
    # "brings Jupiter into full operation", "enters commercial service", "already serves ranking models"
    r"|\b(?:brings?|brought|puts?)\s(?:\S+\s){0,6}?into\s(?:full\s|commercial\s|regular\s)?"
    r"(?:operation|service)\b"
    r"|\b(?:enters?|entered)\s(?:full\s|commercial\s)?(?:operation|service)\b"
    r"|\balready (?:serves|serving|runs|running|powers|powering|handles|handling"
    r"|in (?:production|service|use))\b"
    r"|\b(?:stands up|stood up|has installed|have installed|powers up)\b"
    # "commissions 120 MW data center", "commissioned a 4,096-GPU cluster" (not "commissions a study")
    r"|\bcommission(?:s|ed)\b(?=\s(?:a\s|an\s|its\s|the\s)?(?:[\d,.]+[-\s]?(?:MW|GW|megawatt|gigawatt|GPU)"
    r"|(?:[\w-]+\s){0,3}?(?:cluster|supercomputer|data cent|campus|AI factory)))"
    r"|\b(?:begins?|began|starts?|started|commences?|commenced) (?:commercial )?(?:operations|operating)\b"
    r"|\b(?:takes|took|has taken|have taken) delivery of\b"
    # an operator's capacity report: "ends the quarter with 590 MW of active power"
    r"|\bof (?:active|operational|operating|live|energi[sz]ed) (?:power|capacity)\b"
    r"|\binstalled\b(?=\s(?:nearly |about |over |more than |some |roughly )?\d" + _COUNTED + ")"
    # "completes 10,000-GPU B300 cluster": a cluster finished is one running
    r"|\bcomplet(?:es|ed)\b(?=\s(?:its\s|a\s|the\s)?(?:[\w,.-]+\s){0,4}?(?:cluster|supercomputer|supercluster)\b))"
    r"|(?P<plan>\b(?:to|will|plans? to|set to|begins? to|starts? to)"
    r" (?:deploy|use|rent|build|host|install|buy|lease|order|purchase|procure|commission|stand up"
    r"|bring online)\b"
    r"|\b(?:is|are) (?:building|constructing|deploying|installing)\b"
    # "will house up to 30,000 GPUs", "expects to have 1 GW online by 2027"
    r"|\bwill (?:house|hold|host)\b|\b(?:to|will) have\s(?:\S+\s){0,4}?online\b"
    # "builds 50,000-GPU cluster", "builds 300 MW campus": building a size of compute
    r"|\bbuilds\b(?=\s(?:a\s|an\s|its\s|the\s)?(?:[\w,.-]+\s){0,2}?[\d,.]+[-\s]?(?:GPU|MW|GW|megawatt|gigawatt))"
    r"|\bbuild(?:s|ing)? out\b"
    r"|\b(?:will|to) (?:begin|start|commence) (?:commercial )?(?:operations|operating)\b"
    # "contracted power reaches 2.9 GW": the verb after belongs to the figure and opens no deployment
    # "ends the quarter with 590 MW of active power and 2.9 GW contracted": capacity signed, not yet running
    r"|(?<=W )contracted\b(?=\s*(?:$|[,.;]|and\b|by\b|for\b|with\b))"
    r"|\bcontracted (?:power|capacity)"
    r"(?:\s(?:reaches|reached|rises|rose|climbs|climbed|grows|grew|stands|totals|now|to|at|of))*\b"
    # "adds 5,000 GPUs", "expands its Reno cluster to 20,000 GPUs", "doubles capacity to 400 MW"
    r"|\b(?:adds?|expands?|doubles|triples)\b"
    r"(?=(?:\s[\w-]+){0,4}?\s(?:to\s)?(?:nearly |about |over |more than )?"
    r"(?:\d" + _NAMED_COUNT + r"|[\d.]+\s?(?:GW|MW|gigawatts?|megawatts?)\b))"
    # "installs 4,000 cards", "leases 20,000 GPUs": units put in or rented are units to be run
    r"|\b(?:installs|leases|leased|rents|procures|procured|houses)\b"
    r"(?=\s(?:nearly |about |over |more than |up to )?\d" + _NAMED_COUNT + ")"
    r"|\bdeploys\b|\bdeployment of\b|\bdeployment\b|\bwill be (?:powered|built) (?:by|on|with)\b"
    # "buys 4,200 B300 GPUs", "orders 10,000 chips": units bought are units to be deployed
    r"|\b(?:buys|bought|purchases|purchased|to purchase)\b"
    r"(?=\s(?:nearly |about |over |more than |up to )?\d" + _COUNTED + ")"
    r"|\bcommits? to\b(?=\s(?:about |over |more than |up to )?[\d.]+\s?(?:GW|MW|gigawatts?|megawatts?)\b)"
    r"|\bsigns?\b(?=[^.]{0,40}?\bdeal\b)|\borders?\b|\bordered\b|\bplans?\b(?=\s[\d.]+\s?(?:GW|MW|gigawatt|megawatt)))"
    r"|(?P<cnop>已(?:在[^，。]{1,8})?部署|完成部署|部署完成|上线|投运|投入运行|投入运营|投入使用|投产|正式运营|点亮|建成|开始运行|启用)"
    r"|(?P<cnplan>(?:将|计划|拟|预计)[^，。]{0,12}?(?:部署|使用|建设|扩至|扩容|采用|采购|订购|租用|建成|上线|投运|投产)|采购|订购|租用|使用"
    # 规划 plans compute only when power, capacity or cards follow ("规划总功率1.5吉瓦")
    r"|规划(?=[^，。]{0,8}?(?:功率|算力|容量|吉瓦|兆瓦|GW|MW|万?张|万?卡)))"
    r"|(?P<cnany>部署)"
    r")",
    re.IGNORECASE,
)
_ON_CHIPS = re.compile(r"trained|runs on", re.IGNORECASE)
_POWERED_BY = re.compile(r"powered (?:by|on|with)", re.IGNORECASE)
_ONE_UNIT = re.compile(r"\b(?:a|an|one|first|1st)\s(?P<unit>gigawatt|megawatt)s?\b", re.IGNORECASE)
_CN_PREDICATE = re.compile(r"新增|规划|扩建|新建|总功率|总规模|宣布|表示|斥资|耗资|投资|完成|计划|预计|\d")
_CN_LEAD = re.compile(r"(?:将|计划|拟|已|已经|均已|正在|正式|全面|预计|年底前|明年|今年|在[^，。]{1,8}?)+$")


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
    r"^(?:Series [A-H]\d?\+?|Pre-IPO|IPO)$|^[该这此其本][\u3400-\u9fff]{0,4}$"
    # a thing or a phase is no operator ("智算集群已正式投产", "首期将部署"): it adds to the item's deployment
    r"|^(?:该|这|此|其|本)?(?:智算|算力|数据|超算|计算|AI)?(?:集群|中心|项目|工程|基地|园区|机房)$"
    r"|^(?:一期|二期|三期|首期)$",
    re.IGNORECASE,
)


# Words between a subject and its verb of deploying: "Humain agrees to buy", "X has agreed to deploy".
_AUXILIARY = tuple(
    " " + w for w in (
        "has agreed", "have agreed", "agrees", "agreed", "plans", "planned", "aims", "hopes", "expects",
        "intends", "is set", "is poised", "is preparing", "is expected", "moves", "signed a deal",
        "says it will", "said it will", "says it", "said it",
    )
)


def _without_auxiliaries(text: str) -> str:
    while text.endswith(_AUXILIARY):
        text = text[: -len(next(w for w in _AUXILIARY if text.endswith(w)))]
    return text
_SPEAKER = re.compile(r"\s*(?P<who>(?:[A-Za-z][\w.-]*\s){1,3}?)(?:says|said|confirms|confirmed)\s")
_OWNER = re.compile(r"\s*(?P<who>[A-Z][\w.&-]*(?:\s[A-Z][\w.&-]*){0,2})(?:'s|\u2019s)\s")
_NOT_OWNERS = re.compile(r"(?:The|This|That|It|Its|World|America|China|Europe|Japan|India|Korea)\b")


_PHASE = re.compile(
    r"^(?:首期|一期|二期|三期|后续|Phase \w+|The first phase|The second phase)$", re.IGNORECASE
)


# Words that make what follows a possibility, a rumour or someone else's estimate rather than a deployment
# ("could deploy", "is weighing buying", "analysts estimate", 或将采购, 传闻): trade press states plans
# with "to", "will" and "plans to", which stay facts. "may" only in lower case: "May" is a month.
_HEDGE = re.compile(
    r"(?=[CcmMwWeEiItTsSrRaAfF或可传据考洽商有分估预])(?:"
    r"\b(?:[Cc]ould|may|[Mm]ight|[Ww]ould|[Cc]onsider(?:s|ing)?|[Ww]eigh(?:s|ing)|[Mm]ulls?|[Mm]ulling"
    r"|[Ee]y(?:es|eing)|[Ee]xplor(?:es|ing)|[Ii]n (?:early )?talks|[Tt]alks to|[Ii]n discussions"
    r"|[Ss]aid to be"
    r"|[Ii]s said to|[Rr]umou?r(?:s|ed)?|[Ee]stimat(?:e|es|ed)|[Aa]nalysts?|[Ff]orecasts?)\b"
    r"|或将|或会|或(?=[\u3400-\u9fff]{0,2}(?:部署|采购|订购|使用|租用))|可能|传闻|据传|考虑|洽谈|商谈|有意|分析师|估计|估算|预估)"
)


def _hedged(part: Part, lo: int, verb: re.Match[str]) -> bool:
    """Is the verb's clause a possibility, a rumour or an estimate (see ``_HEDGE``)?"""
    a = _sentence_start(part, lo)
    return _HEDGE.search(part.norm, a, verb.end()) is not None


def _sentence_start(part: Part, pos: int) -> int:
    return next((a for a, b in part.sentences if a <= pos < b), pos)


# "Nscale raises $1.1bn Series B, will deploy ...", "Meta unveils MTIA v3, says the chip already serves
# ...": a second predicate of the sentence's subject, joined by a comma, "and" or "says".
_JOINED = re.compile(r"(?:,|\band)$|,\s(?:and\s)?(?:says|said|adds|added)\b(?:(?!,\s).)*$")
# "OpenAI and Broadcom to deploy", "OpenAI, Oracle add 4.5 GW": two subjects; the first named leads (the
# buyer in trade press) unless its name marks the chips deployed
_IN_PLACE = re.compile(r"\b(?:in|at|near|from)\s$", re.IGNORECASE)
_PAIR = re.compile(r"(?:\band|&|,)\s$")


def _operator(part: Part, lo: int, verb: re.Match[str]) -> Name | None:
    name = _named_operator(part, lo, verb)
    rejected = name is not None and _NOT_OPERATOR.match(name.text) is not None
    if rejected:
        name = None
    if verb.group("cnop") or verb.group("cnplan") or verb.group("cnany"):
        if name is not None and name.text.startswith("其"):
            name = None  # "星河云宣布，其贵安数据中心已部署": its site, so the sentence's subject runs it
        if name is None and not rejected:
            name = _cn_sentence_subject(part, lo, verb)
        return _cloud_in(part, verb) or name
    after_preposition = name is not None and _IN_PLACE.search(part.norm, max(lo, name.start - 6), name.start)
    if name is not None and name.id is None and after_preposition:
        name = None  # "The system in Reno will start operating": a place after a preposition is no subject
    pair = _PAIR.search(part.norm, max(lo, name.start - 6), name.start) if name is not None else None
    if name is not None and pair is not None:
        first = name_before(part, lo, pair.start()) if pair.start() > lo else None
        if first is not None and not _NOT_OPERATOR.match(first.text):
            # "AMD and OpenAI ... to deploy 6 GW of AMD GPUs": the one whose name marks the chips supplies
            end = next((b for a, b in part.sentences if a <= lo < b), len(part.norm))
            after = part.norm[verb.end() : end]
            return name if first.text in after and name.text not in after else first
    if name is not None and name.id is None and _MACHINE_APPOSITIVE.match(part.norm, name.end):
        # "Jupiter, Europe's first exascale supercomputer, enters full operation at Forschungszentrum
        # Jülich": the machine is named; the institution it runs at runs it
        end = next((b for a, b in part.sentences if a <= lo < b), len(part.norm))
        at = _AT.search(part.norm, verb.end(), end)
        return name_after(part, at.end(), end) if at is not None else None
    if name is None:
        government = None
        if _STATE_WORDS.search(part.norm, lo, verb.start()):  # the pattern costs a scan: look for its nouns
            end = lo + len(_without_auxiliaries(part.norm[lo : verb.start()].rstrip()))
            government = _GOVERNMENT.search(part.norm, lo, end)
        if government is not None:  # "UK government to buy", "Government of India procures": no proper name
            return Name(None, government.group().strip(), government.start(), government.end())
    if name is None:
        a = _sentence_start(part, lo)
        lead = _WE.match(part.norm, a, verb.start())
        if lead is not None:  # "Lumen Compute: we have deployed ...": who speaks runs it
            return name_before(part, a, lead.end("who"))
        before = _without_auxiliaries(part.norm[a : verb.start()].rstrip())
        if _JOINED.search(before) or _OF_CAPACITY.match(verb.group()):
            name = clause_subject(part, a, verb.start())
    return name


_MACHINE_APPOSITIVE = re.compile(
    r",\s(?:[\w'\u2019-]+\s){0,5}?(?:supercomputer|supercluster|cluster|system|machine)s?,"
)
_AT = re.compile(r"\bat\s(?:the\s)?")
_GOVERNMENT = re.compile(
    r"(?:\b(?!The\b)[A-Z][\w.-]*\s){1,2}(?:government|ministry of [A-Z]\w+|military)$"
    r"|\b(?:Government|Ministry) of (?:the\s)?[A-Z][\w.-]*(?:\s[A-Z][\w.-]*){0,2}$"
)
_WE = re.compile(r"\s*(?P<who>[A-Z][^:]{1,40}):\s(?:we|our\s[\w-]+)\s")
# Making chips, not running them: "memory fab", "volume production", 晶圆厂, 量产
_MANUFACTURING = re.compile(
    r"(?=[fvmw晶量产])(?:\bfabs?\b|\bfoundry\b|\b(?:volume|mass) production\b|\bwafers? (?:plant|factory)\b"
    r"|晶圆厂|量产|产线)",
    re.IGNORECASE,
)
_STATE_WORDS = re.compile(r"overnment|inistry|ilitary")
# "xAI raises $20 billion" + "The Memphis supercomputer already runs 200,000 GPUs": a site or machine of
# the summary, with no operator named, is the title's company's when the item states no other deployment
_SITE_SUBJECT = re.compile(
    r"\s*(?:The|Its)\s(?:[\w-]+\s){0,3}?(?:supercomputer|supercluster|cluster|facility|site|campus"
    r"|data cent(?:er|re)|AI factory)(?:\s(?:already|now|currently|also))*$"
)


def _site_owner(part: Part, lo: int, verb: re.Match[str]) -> Name | None:
    if part.title is None or verb.group("cnop") or verb.group("cnplan") or verb.group("cnany"):
        return None
    a = _sentence_start(part, lo)
    if _SITE_SUBJECT.match(part.norm[a : verb.start()].rstrip()) is None:
        return None
    if "subject" not in part.title.cache:
        part.title.cache["subject"] = title_subject(part.title)
    return part.title.cache["subject"]


_OF_CAPACITY = re.compile(r"of |contracted\b", re.IGNORECASE)
# "星河云与曦望签约，将采购...": the sentence's subject when the clause of the verb has none
_CN_SUBJECT = re.compile(r"[\u3400-\u9fff]{2,8}?(?=与|和|同|宣布|表示|称|正式|将|已|计划|拟|签约|签署)")


def _cn_sentence_subject(part: Part, lo: int, verb: re.Match[str]) -> Name | None:
    a = _sentence_start(part, lo)
    if max(part.norm.rfind(",", a, verb.start()), part.norm.rfind("，", a, verb.start())) < 0:
        return None  # no comma: the clause's subject is the sentence's, already looked for
    known = [f for f in part.found if f.start == a and f.kind == "vendor"]
    if known:
        return Name(known[0].id, part.norm[known[0].start : known[0].end], known[0].start, known[0].end)
    m = _CN_SUBJECT.match(part.norm, a, verb.start())
    if m is None or is_media(m.group()) or cn_place(part.norm, m.start(), m.end()) is not None:
        return None
    return Name(None, m.group(), m.start(), m.end())


# "已在阿里云部署": a deployment in a cloud is the cloud's, whoever made the chip
_IN_CLOUD = re.compile(r"在(?P<x>[^，。在]{2,8}?)(?=部署|上线|使用)")


def _cloud_in(part: Part, verb: re.Match[str]) -> Name | None:
    m = _IN_CLOUD.search(part.norm, *verb.span())
    if m is None:
        return None
    s, e = m.span("x")
    known = [f for f in part.found if f.start == s and f.end == e and f.kind == "vendor"]
    if known or m.group("x").endswith("云"):
        return Name(known[0].id if known else None, m.group("x"), s, e)
    return None


# "X与Y签约", "X和Y合作": two parties of one clause
_CN_WITH = re.compile(r"与|和|同")
# a site named after its place: "智算中心", "万卡集群", "算力集群"
_CN_SITE_AFTER_PLACE = re.compile(rf"(?:万卡|千卡)?(?:{CN_SITE.pattern}|(?:智算|算力|AI|人工智能)?集群)")
_CN_PHASE_END = re.compile(r"(?:首期|一期|二期|三期|四期)(?:项目|工程)?$")


_FIGURE_FIRST = re.compile(
    r"of (?:active|operational|operating|live|energi[sz]ed)|contracted$", re.IGNORECASE
)
_WHEN_CLAUSE = re.compile(r"\b(?:when|once|until|before)\s(?:it|they|the\s[\w-]+)\s(?:first\s|fully\s)?$")
_SAID_ITS = re.compile(r"\b(?:said|says|added|noted)\s(?:that\s)?(?P<its>its)\s")


def _is_phase(part: Part, lo: int, verb: re.Match[str]) -> bool:
    """Is the subject of ``verb`` a phase of a plan ("首期将部署")? It is the plan's operator's."""
    name = _named_operator(part, lo, verb)
    return name is not None and _PHASE.match(name.text) is not None


def _named_operator(part: Part, lo: int, verb: re.Match[str]) -> Name | None:
    norm = part.norm
    if verb.group("cnop") or verb.group("cnplan") or verb.group("cnany"):
        # a Chinese clause's subject is after the clause's comma ("部署2万张昇腾910C，智算集群已投产")
        comma = max(norm.rfind(",", lo, verb.start()), norm.rfind("，", lo, verb.start()))
        lo = comma + 1 if comma >= 0 else lo
        lead = _CN_LEAD.search(norm, lo, verb.start())
        end = lead.start() if lead else verb.start()
        # the subject ends where its predicate starts ("中国移动呼和浩特智算中心新增400兆瓦容量投入运营")
        predicate = _CN_PREDICATE.search(norm, lo, end)
        if predicate is not None and predicate.start() - lo >= 2:
            end = predicate.start()
        vendors = [f for f in part.found_in(lo, end) if f.kind == "vendor"]
        if vendors:
            f = vendors[0]
            first = None
            if f.start - 1 - lo >= 2 and _CN_WITH.match(norm, f.start - 1):
                first = name_before(part, lo, f.start - 1)
            if first is not None and not _NOT_OPERATOR.match(first.text):
                # "上海仪电与沐曦签约 采购5000张曦云C600": the first named buys, the one it signs with
                # supplies
                return first
            return Name(f.id, norm[f.start : f.end], f.start, f.end)
        name = name_before(part, lo, end)
        if name is not None and name.id is None:
            # "中国移动呼和浩特智算中心", "中国移动哈尔滨万卡集群": the operator is named before the place
            # of its site
            place = cn_place(norm, name.start + 2, name.end)
            # only a site word after the place makes the words before it a company ("国家超算郑州中心" is
            # one name)
            if place is not None and _CN_SITE_AFTER_PLACE.match(norm, place.end(), name.end):
                name = Name(None, norm[name.start : place.start()], name.start, place.start())
            phase = _CN_PHASE_END.search(name.text)
            if phase is not None and phase.start() >= 2:
                # "中卫智算中心一期投运": the site runs it; its phase is a part of it, not another operator
                name = Name(None, name.text[: phase.start()], name.start, name.start + phase.start())
        return name
    if _POWERED_BY.search(verb.group()):
        return None  # "Alice Recoque will be powered by ...": the machine, not who runs it
    referred = back_reference(part, lo, verb.start())
    if referred is not None:
        return referred
    said_its = _SAID_ITS.search(norm, lo, verb.start())
    if said_its is not None:
        # "The carrier said its Haein GPU cluster in Seoul went live": the company of the title runs its site
        referred = back_reference(part, lo, said_its.start("its"))
        if referred is not None:
            return referred
    before = _without_auxiliaries(norm[lo : verb.start()].rstrip())
    name = name_before(part, lo, lo + len(before))
    speaker = _SPEAKER.match(norm, lo, verb.start())
    if speaker is not None and (name is None or (name.id is None and verb.group("op"))):
        # "xAI says Colossus 2 in Memphis now runs ...": the one who speaks of its own machine
        known = [f for f in part.found_in(*speaker.span("who")) if f.kind == "vendor"]
        if known:
            f = known[0]
            return Name(f.id, norm[f.start : f.end], f.start, f.end)
    if name is None:  # "Meta's Prometheus supercluster comes online": the owner before a possessive
        owner = _OWNER.match(norm, lo, verb.start())
        if owner is not None and not _NOT_OWNERS.match(owner.group("who")):
            s = owner.start("who")
            known = [f for f in part.found if f.start == s and f.kind == "vendor"]
            return Name(known[0].id if known else None, owner.group("who"), s, owner.end("who"))
    if name is None:  # "the first of OpenAI's Jalapeño chips go live": the owner named with a possessive
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
    return any(_verbs_in(p, a, b) for p in parts for a, b in p.sentences_of("deployment"))


def _verbs_in(part: Part, a: int, b: int) -> list[re.Match[str]]:
    """The verbs of deploying in ``norm[a:b]``, scanned once: :func:`has_verb` and the reader ask alike."""
    return deploy_verbs(part.norm, a, b, part.cache)


def deploy_verbs(norm: str, a: int, b: int, cache: dict[Any, Any]) -> list[re.Match[str]]:
    """The verbs of deploying in ``norm[a:b]`` (normalised text), kept in ``cache`` (a part's cache, or
    one that becomes it): choosing a summary's sentences and reading them ask about the same ones."""
    key = ("deploy verbs", a, b)
    found = cache.get(key)
    if found is None:
        found = cache[key] = list(_VERBS.finditer(norm, a, b))
    return found


def deploy_verb_in(norm: str, a: int = 0, b: int | None = None) -> bool:
    """Does ``norm[a:b]`` (normalised text) hold a verb of deploying?"""
    return _VERBS.search(norm, a, len(norm) if b is None else b) is not None


def read_deployments(part: Part, lexicon: Lexicon) -> list[Draft]:
    """Deployments in ``part``: one draft per verb of deploying whose window names enough; details from
    sentences without a verb are returned as drafts with ``fact["detail"] = True``."""
    out: list[Draft] = []
    for a, b in part.sentences_of("deployment"):
        if _MANUFACTURING.search(part.norm, a, b):
            continue  # a fab's power or a production line is no compute run
        verbs = _verbs_in(part, a, b)
        if not verbs:
            if _HEDGE.search(part.norm, a, b):
                continue  # "The operator might install 6,000 more": a possibility adds nothing
            detail = _fields(part, a, b, a, lexicon)
            if any(detail.get(k) is not None for k in ("chip_name", "units", "power_mw", "place")):
                out.append(Draft("deployment", {**detail, "detail": True}, part.name, a, b, 0.0))
            continue
        previous: Draft | None = None
        for i, verb in enumerate(verbs):
            lo = verbs[i - 1].end() if i else a
            hi = verbs[i + 1].start() if i + 1 < len(verbs) else b
            if _hedged(part, lo, verb):
                continue
            if _WHEN_CLAUSE.search(part.norm, max(lo, verb.start() - 30), verb.start()):
                continue  # "... will house 10,000 GPUs when it opens in 2027": a time, not another deployment
            fields = _fields(part, lo, hi, verb.end(), lexicon)
            if _FIGURE_FIRST.match(verb.group()):
                # "590 MW of active power", "2.9 GW contracted": the figure written before the words
                before = [q for q in part.quantities_in(lo, verb.start()) if q.unit in ("MW", "GW")]
                if before:
                    q = before[-1]
                    fields["power_mw"] = q.value * (1000.0 if q.unit == "GW" else 1.0)
            operator = _operator(part, lo, verb)
            if operator is None and previous is not None and _is_phase(part, lo, verb):
                # the phase's own clause holds its figures; the plan's operator and place are its own
                comma = max(part.norm.rfind(",", lo, verb.start()), part.norm.rfind("，", lo, verb.start()))
                lo = max(lo, comma + 1)
                fields = _fields(part, lo, hi, verb.end(), lexicon)
                operator = Name(previous.fact["operator_id"], previous.fact["operator_name"], lo, lo)
                fields["place"] = fields.get("place") or previous.fact.get("place")
            cjk_verb = verb.group("cnop") or verb.group("cnplan") or verb.group("cnany")
            if operator is not None and cjk_verb and any(
                c.start < operator.end and operator.start < c.end for c in chip_names(part, lo, hi, lexicon)
            ):
                operator = None  # "曦望S3已在多家运营商部署": the chip is the subject, no one runs it here
            if operator is not None:
                fields["operator_id"], fields["operator_name"] = operator.id, operator.text
                if fields.get("place") == operator.text:
                    fields["place"] = None  # "在阿里云部署": the cloud runs it, it is no place
                if fields.get("chip_name") == operator.text:
                    fields["chip_id"] = fields["chip_name"] = None
            fields["status"] = "operational" if verb.group("op") or verb.group("cnop") else "planned"
            if verb.group("cnany"):
                fields["status_weak"] = True  # a bare 部署 says neither when nor whether
            if operator is None:
                owner = _site_owner(part, lo, verb)
                if owner is not None:
                    fields["site_owner"] = owner
                out.append(Draft("deployment", {**fields, "detail": True}, part.name, lo, hi, 0.0))
                continue
            start = operator.start
            end = max(verb.end(), _last_end(part, lo, hi))
            previous = Draft("deployment", fields, part.name, start, end, 0.7)
            out.append(previous)
    return out


def _last_end(part: Part, lo: int, hi: int) -> int:
    ends = [q.span[1] for q in part.quantities_in(lo, hi)] + [e for _v, _s, e in counts(part, lo, hi)]
    return max(ends, default=lo)


# "4,000 Rebellions ATOM-Max cards": the capitalised words between a count and its unit name the chip
_COUNTED_NAME = re.compile(
    r"(?P<name>(?:[A-Z][\w-]*\s){1,3})(?:cards?|chips?|GPUs?|accelerators?|NPUs?|TPUs?|LPUs?|processors?)\b"
)
_BARE_COUNT = re.compile(
    r"(?<![\w.,$€£])(?P<n>\d{1,3}(?:,\d{3})+|\d{2,})\s(?:of them\s)?(?:are|were)\s(?:already\s|now\s)?"
    r"(?:running|deployed|installed|in (?:service|production|use))\b"
)
_OPERATED_BY = re.compile(r"(?:\b(?:is|are|will be) |,\s)(?:operated|run|owned) by\s", re.IGNORECASE)


def _operated_by(part: Part, a: int, b: int) -> Name | None:
    """Who "is operated by" (run, owned) in ``norm[a:b]``, else None."""
    m = _OPERATED_BY.search(part.norm, a, b)
    if m is None:
        return None
    return name_after(part, m.end(), b, ("vendor",))


def _fields(part: Part, lo: int, hi: int, pos: int, lexicon: Lexicon) -> dict:
    chips = chip_names(part, lo, hi, lexicon)
    owner = _operated_by(part, lo, hi)
    if owner is not None:  # "operated by G42": a company, whatever its name looks like
        chips = [c for c in chips if not (owner.start <= c.start < owner.end)]
    chip = _nearest(chips, pos)
    units = counts(part, lo, hi)
    if not units:  # "says 350,000 are already running": the count's noun is the chip named before
        bare = _BARE_COUNT.search(part.norm, lo, hi)
        if bare is not None:
            units = [(float(bare.group("n").replace(",", "")), *bare.span("n"))]
    unit = next((u for u in units if u[1] >= pos), units[0] if units else None)
    if chip is None and unit is not None:
        named = _COUNTED_NAME.match(part.norm, unit[2], hi)
        if named:
            s, e = named.span("name")
            words = [
                w for w in part.norm[s:e].split()
                if not any(f.kind == "vendor" and part.norm[f.start : f.end] == w for f in part.found)
            ]
            if words and len(words[-1]) >= 3:
                text = " ".join(words)
                start = s + part.norm[s:e].find(words[0])
                chip = Name(lexicon.lookup(text, "chip"), text, start, start + len(text))
    return {
        "operator_id": None,
        "operator_name": None,
        "chip_id": chip.id if chip else None,
        "chip_name": chip.text if chip else None,
        "units": int(unit[0]) if unit else None,
        "power_mw": _power_mw(part, lo, hi, pos),
        "status": None,
        "place": place_in(part, lo, hi),
        **({"operated_by": owner} if owner is not None else {}),
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
        owned = [d for d in details if d.fact.get("status") and d.fact.get("site_owner") is not None][:1]
        for d in owned:
            owner = d.fact["site_owner"]
            d.fact["operator_id"], d.fact["operator_name"] = owner.id, owner.text
        # "Alice Recoque will be powered by MI430X GPUs" + "the First Based in France": no operator
        facts = owned or [d for d in details if d.fact.get("status") and d.fact.get("chip_name")][:1]
        details = [d for d in details if d not in facts]
    if facts:
        head = facts[0]
        owners = [d.fact["operated_by"] for d in drafts if d.fact.get("operated_by") is not None]
        if owners and head.fact.get("operator_id") is None:
            # "Stargate UAE's first 200 MW goes live" + "The cluster is operated by G42": G42 runs it
            head.fact["operator_id"], head.fact["operator_name"] = owners[0].id, owners[0].text
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
    for d in drafts:
        d.fact.pop("operated_by", None)
        d.fact.pop("site_owner", None)
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


__all__ = ["complete", "deploy_verb_in", "deploy_verbs", "has_verb", "read_deployments"]


