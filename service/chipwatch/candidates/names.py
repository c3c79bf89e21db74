"""Names news writes around a verb (pure): the company before "raises", the target after "acquires",
the place of a deployment, who made a claim. English names are runs of capitalised words without the
descriptors around them ("AI chip start-up Etched", "Korean NPU designer Mobilint"); Chinese names are
the run of characters before the verb without the descriptor ending in 公司, 企业... Known entities (the
lexicon) win over read names; news outlets (36氪, Reuters) are never names, and "the company" of a
summary is the company its title is about.
"""

from __future__ import annotations

import re

from chipwatch.candidates.lexicon import Lexicon
from chipwatch.candidates.textparts import CJK, Name, Part, has_cjk

# Words that describe a company rather than name it ("AI chip start-up Etched", "Inference chip maker").
DESCRIPTORS = frozenset(
    """a an the its their ai chip chips chipmaker maker makers inference start-up startup start up
    infrastructure workload management open-source
    company firm lab labs designer developer provider rival unicorn photonic photonics gpu gpus semiconductor
    software hardware cloud data center centre chinese china us u.s. american korean south israeli french
    dutch european british japanese indian german taiwanese saudi canadian new report exclusive
    finnish swedish norwegian danish swiss italian spanish irish singaporean emirati australian russian
    polish turkish brazilian mexican belgian austrian vietnamese thai malaysian indonesian
    accelerator analog edge optical networking interconnect-maker silicon valley-based""".split()
)
_NAME_TOKEN = re.compile(r"[A-Za-z0-9][\w.&'+:-]*[\w.&'+-]|[A-Za-z0-9]|[" + CJK + r"]+")
_TOKEN_SPLIT = re.compile(r"\s+")


def _is_name_token(token: str) -> bool:
    """A token that can be part of a proper name in English news: capitalised or with a capital or a
    digit inside ("d-Matrix", "xAI", "Maia", "200")."""
    core = token.strip("\"'()\u201c\u201d,:")
    if not core or not _NAME_TOKEN.fullmatch(core):
        return False
    return core[0].isupper() or core[0].isdigit() or any(c.isupper() for c in core[1:]) or has_cjk(core)


def _strip_descriptors(tokens: list[str]) -> list[str]:
    while tokens and (
        tokens[0].strip("\"'\u201c\u201d").lower() in DESCRIPTORS
        # "Seoul-based DeepX", "Nvidia-backed Nscale", "SoftBank-owned Graphcore"
        or tokens[0].lower().endswith(("-based", "-headquartered", "-backed", "-owned", "-funded"))
    ):
        tokens = tokens[1:]
    return tokens


def _entity_name(part: Part, a: int, b: int, kinds: tuple[str, ...]) -> Name | None:
    """The last entity of ``kinds`` named inside ``norm[a:b]``."""
    hits = [f for f in part.found if a <= f.start and f.end <= b and f.kind in kinds]
    if not hits:
        return None
    f = hits[-1]
    return Name(f.id, part.norm[f.start : f.end], f.start, f.end)


# News outlets stand where a subject would ("36氪获悉｜...", "Reuters: ...") but are never the company.
_MEDIA = frozenset(
    """reuters|bloomberg|cnbc|techcrunch|nikkei|nikkei asia|digitimes|semafor|axios|the information
    |financial times|ft|wsj|wall street journal|the register|tom's hardware|eetimes|ee times|the verge
    |36氪|财联社|界面新闻|第一财经|证券时报|新浪科技|晚点latepost|晚点|机器之心|量子位|雷锋网|钛媒体|科创板日报
    |上海证券报|中国证券报|经济观察报|21世纪经济报道|澎湃新闻|新华社|路透社|彭博社|彭博|集微网|芯东西|智东西""".replace(
        "\n", ""
    ).split("|")
)


def is_media(text: str) -> bool:
    """Is ``text`` the name of a news outlet (never a company that raises, buys or deploys)?"""
    return " ".join(text.split()).casefold() in _MEDIA


_CN_DESCRIPTOR_END = re.compile(
    r".*(?:公司|企业|厂商|初创|创企|独角兽|芯片商|设计商|领域|旗下|实验室|研究院)"
)
_CN_STOP = re.compile(r"[\s,，:：、（(「“\"|｜【\[]")


# Title-case headlines capitalise every word: these never belong to a company's name.
_NOT_NAME_WORDS = frozenset(
    """announce announces announced expand expands expanding partnership partnerships strategic deal deals
    agreement to with plans plan will and power powers powered unveil unveils launch launches deploy deploys
    deployment says said claims new first exclusive report update how why what is are as after amid for
    from in on at by advances advance helps help brings bring reports completes teams team up signs
    january february march april may june july august september october november december""".split()
)
_PLACE_NAMES = frozenset(
    """texas pennsylvania wyoming ohio iowa arizona georgia virginia oregon nevada utah louisiana tennessee
    oklahoma memphis abilene dallas chicago phoenix atlanta munich berlin frankfurt paris london helsinki
    finland sweden norway france germany japan india korea malaysia singapore taiwan europe saudi arabia
    abu dhabi dubai qatar uae canada australia brazil mexico spain italy iceland denmark netherlands
    ireland israel indonesia california washington york""".split()
)


_LEGAL_ENDS = (
    "Inc", "Inc.", "Corp", "Corp.", "Ltd", "Ltd.", "Co.", "LLC", "plc", "AG", "GmbH", "N.V.", "S.A."
)
_LEGAL_SUFFIX = re.compile(r",?\s*\b(?:Inc|Corp|Ltd|Co|LLC|plc|S\.A|AG|GmbH|N\.V)\.?$")
_ADVERBS = re.compile(
    r"(?:\s(?:recently|today|now|also|has|have|had|just|officially|finally|quietly|reportedly))+$"
)


_ACRONYM_BRAND = re.compile(r"(?:SK|LG|NTT|KT|GS|CJ)\s[a-z]{3,}")


def is_place(text: str) -> bool:
    """Is ``text`` a place of the gazetteer ("Texas", "New York") rather than an organisation?"""
    return _is_place(text)


def _is_place(text: str) -> bool:
    return all(w.lower() in _PLACE_NAMES or w.lower() in ("new", "city", "oklahoma") for w in text.split())


def name_before(part: Part, lo: int, pos: int, kinds: tuple[str, ...] = ("vendor",)) -> Name | None:
    """The subject written just before ``pos`` (the verb) within ``norm[lo:pos]``: a known entity of
    ``kinds`` ending there, else the proper name (English) or the word run (Chinese) before the verb,
    with descriptors ("AI chip start-up", "芯片设计公司") and an aside (", founded by ..., ", "— ... —")
    left out. Places are no subjects."""
    norm = part.norm
    before = _ADVERBS.sub("", norm[lo:pos].rstrip())
    # a quoted name ("「光羽芯辰」完成"): the name is inside the marks
    before = before.rstrip("」』”\"'）)】]").rstrip()
    if before.endswith(_LEGAL_ENDS):
        # "Qualcomm Technologies, Inc. today announced": the legal suffix belongs to the name before it
        before = _LEGAL_SUFFIX.sub("", before)
    for mark in (",", "-"):
        if before.endswith(mark):  # "MatX, founded by former Google TPU engineers, lands": skip the aside
            cut = before[:-1].rfind(mark)
            if cut >= 0:
                before = before[:cut].rstrip()
    end = lo + len(before)
    if before and (has_cjk(before[-1]) or re.search(r"[" + CJK + r"][A-Za-z0-9]+$", before)):
        return _cjk_name_before(part, lo, end, kinds)
    known = _entity_name(part, max(lo, end - 40), end, kinds)
    tokens = _TOKEN_SPLIT.split(before)
    run: list[str] = []
    i = len(tokens) - 1
    while i >= 0:
        token = tokens[i]
        bare = token.rstrip(",")
        if bare.lower() == "of" and run and i > 0 and _is_name_token(tokens[i - 1]):
            run.append(bare)
            i -= 1
            continue
        brand = not run and i > 0 and _ACRONYM_BRAND.fullmatch(f"{tokens[i - 1]} {bare}")
        if brand and not _is_name_token(bare):
            pass  # "SK hynix": a brand written lower case after its capitals
        elif not _is_name_token(bare) or bare.lower() in _NOT_NAME_WORDS or (token.endswith(",") and run):
            break
        if bare.endswith(":") and run:
            break  # "SemiAnalysis: MI355X reaches ...": a colon ends a lead-in, not a name
        run.append(bare)
        i -= 1
    run = _strip_descriptors(list(reversed(run)))
    while run and run[0].lower() == "of":
        run = run[1:]
    owner = max((k for k, t in enumerate(run[:-1]) if t.endswith(("'s", "\u2019s"))), default=-1)
    run = run[owner + 1 :]  # "Korea's DeepX", "Naveen Rao's Unconventional AI": the possessive is not who
    while run and re.fullmatch(r"[\d.,]+|MW|GW|kW|MWh|GWh", run[-1]):
        run = run[:-1]  # "first 200 MW goes live": a figure is no name
    text = " ".join(t.strip("\"'\u201c\u201d()") for t in run).strip()
    if text.endswith(("'s", "\u2019s")):
        text = text[:-2]
    if known is not None and (not text or known.end >= end - 3):
        return None if is_media(known.text) else known
    if not text or len(text) > 60 or _is_place(text) or is_media(text):
        return None
    return Name(None, text, end - len(text), end)


def _cjk_name_before(part: Part, lo: int, end: int, kinds: tuple[str, ...]) -> Name | None:
    norm = part.norm
    known = [f for f in part.found if lo <= f.start and f.end <= end and f.kind in kinds and end - f.end <= 1]
    if known:
        f = known[-1]
        return Name(f.id, norm[f.start : f.end], f.start, f.end)
    start = end
    while start > lo and not _CN_STOP.match(norm[start - 1]):
        start -= 1
    run = norm[start:end]
    m = _CN_DESCRIPTOR_END.match(run)
    if m:
        start += m.end()
        run = norm[start:end]
    for prefix in ("据报道", "消息称", "报道称", "宣布", "官宣"):
        if run.startswith(prefix):
            start += len(prefix)
            run = run[len(prefix) :]
    if not 2 <= len(run) <= 16 or is_media(run):
        return None
    inner = [f for f in part.found if start <= f.start and f.end <= end and f.kind in kinds]
    if inner and inner[0].start == start:
        return Name(inner[0].id, norm[inner[0].start : inner[0].end], inner[0].start, inner[0].end)
    return Name(None, run, start, end)


# "The London-based company said it will deploy": a reference back to the company the title is about.
_BACK_REFERENCE = re.compile(
    r"(?:^|[,;]\s)(?:The|the|Its|its)\s(?:[\w-]+\s){0,4}?(?:company|firm|start-?up|startup|developer|maker"
    r"|chipmaker|designer|operator|carrier|group|provider|unicorn|neocloud|hyperscaler|telco|lab|laboratory)"
    r"(?:\s(?:said|says|added|noted)(?:\s(?:that\s)?(?:it|they))?)?(?:\s(?:also|now|today|has|have|had))*$"
)


def back_reference(part: Part, lo: int, pos: int) -> Name | None:
    """The company of the item's title (:func:`title_subject` of ``part.title``) when the words just
    before ``pos`` refer back to it ("The company", "The London-based company said it", "The AI data
    center developer also"), else None."""
    if part.title is None:
        return None
    before = part.norm[lo:pos].rstrip()
    # the reference opens with "the" or "its": a substring test spares the pattern most sentences
    at = max(before.rfind("he "), before.rfind("ts "))
    if at < 0 or _BACK_REFERENCE.search(before, max(0, at - 3)) is None:
        return None
    if "subject" not in part.title.cache:
        part.title.cache["subject"] = title_subject(part.title)
    return part.title.cache["subject"]


# "On Wednesday it said it had agreed to acquire": "it" refers to the company the title is about.
_PRONOUN = re.compile(
    # not after a conjunction: "Samsung's largest since it bought Harman" tells of another, older deal
    r"(?:^|[,;]|(?<!\bsince)(?<!\bafter)(?<!\bwhen)(?<!\bbefore)(?<!\bonce)(?<!\buntil)(?<!\bas)(?<!\bbecause)"
    r"(?<!\bwhere)\s)(?:it|It)(?:\s(?:said|says|announced|confirmed)(?:\s(?:that\s)?it)?)?"
    r"(?:\s(?:has|had|also|now|today|then))*$"
)


def pronoun_reference(part: Part, lo: int, pos: int) -> Name | None:
    """The company of the item's title when the words just before ``pos`` in a summary's sentence are
    "it" ("it said it had agreed to"), else None. Only a summary refers back; a title's "it" has nothing
    before it to name."""
    if part.title is None:
        return None
    before = part.norm[lo:pos].rstrip()
    if not before.endswith(("it", "has", "had", "also", "now", "today", "then")) or _PRONOUN.search(
        before
    ) is None:
        return None
    if "subject" not in part.title.cache:
        part.title.cache["subject"] = title_subject(part.title)
    return part.title.cache["subject"]


_TITLE_VERB = re.compile(r"\s(?=[a-z])|\s(?=(?:" + "|".join(
    "Announces Announced Raises Secures Closes Lands Acquires Buys Unveils Launches Deploys Completes "
    "Signs Says Claims Introduces Debuts Ships Expands Agrees Opens Brings Commits Wins Gets Receives "
    "To Will Plans".split()
) + r")\b)")


def title_subject(title: Part) -> Name | None:
    """The company a title is about: the name before its first verb ("Nscale raises ...", "KT to install
    ..."), a known vendor opening a Chinese title, else None."""
    norm = title.norm
    lead = norm[: len(norm) - len(norm.lstrip())]
    opening = [f for f in title.found if f.kind == "vendor" and f.start <= len(lead)]
    if opening:
        f = opening[0]
        return Name(f.id, norm[f.start : f.end], f.start, f.end)
    if has_cjk(norm[len(lead) : len(lead) + 1]):
        return None
    m = _TITLE_VERB.search(norm, len(lead))
    if m is None:
        return None
    return name_before(title, 0, m.start())


def clause_subject(part: Part, a: int, pos: int) -> Name | None:
    """The subject opening the sentence at ``norm[a:]``, before ``pos``: the name before the sentence's
    first verb ("Nscale" in "Nscale raises $1.1bn Series B, will deploy ..."), else None."""
    m = _TITLE_VERB.search(part.norm, a, pos)
    return name_before(part, a, m.start()) if m is not None and m.start() > a else None


# A description before a name that ends in a noun of trade: "Korean NPU designer", "data centre cooling
# firm", "chiplet interconnect specialist" (lower-case words or acronyms, then the noun, then the name).
_DESCRIBED = re.compile(
    r"(?:(?:[a-z][\w-]*|[A-Z]{2,5}s?|[A-Z][a-z]+(?:an|ese|ish|i))\s){0,5}?"
    r"(?:designer|maker|specialist|start-?up|startup|developer|provider|firm|company|supplier|vendor|rival"
    r"|operator|chipmaker|unicorn)\s+(?=[A-Z0-9\"\u201c])"
)
_OBJECT_STOP = frozenset(
    "for in to at with from and as after amid on by of over under its the a an 's that which who".split()
)
# Words that name a business of a company rather than the company ("ZT Systems Data Center ... Business").
_BUSINESS_WORDS = frozenset(
    "data center centre infrastructure manufacturing business unit division operations assets arm team"
    .split()
)
_TITLE_DESCRIPTORS = frozenset(
    "provider maker developer designer startup start-up company firm specialist supplier vendor".split()
)


def name_after(part: Part, pos: int, hi: int, kinds: tuple[str, ...] = ("vendor",)) -> Name | None:
    """The object written just after ``pos`` within ``norm[pos:hi]``: a known entity of ``kinds`` at its
    start, else the proper name after a few lower-case descriptors ("chip start-up Rivos"), stopped by a
    preposition, a comma or a possessive ("Groq's assets" -> Groq)."""
    norm = part.norm
    text = norm[pos:hi]
    lead = len(text) - len(text.lstrip())
    if has_cjk(text[lead : lead + 1]) or re.match(r"\s*[A-Za-z0-9]+[" + CJK + "]", text):
        return _cjk_name_after(part, pos + lead, hi, kinds)
    offset = pos + lead
    described = _DESCRIBED.match(text, lead)
    if described:  # "Korean NPU designer Mobilint", "chiplet interconnect specialist Blue Cheetah"
        offset = pos + described.end()
        text = norm[offset:hi]
    skipped = 0
    base = offset
    for m in re.finditer(r"\S+", text):
        word = m.group().strip("\"'\u201c\u201d(),")
        if (_is_name_token(word) and word.lower() not in DESCRIPTORS) or skipped >= 5:
            break
        if word.lower() not in DESCRIPTORS and word.lower() not in ("its", "the", "a", "an", "rival", "chip"):
            return None
        skipped += 1
        offset = base + m.end()
    known = [f for f in part.found if offset <= f.start <= offset + 2 and f.end <= hi and f.kind in kinds]
    if known:
        f = known[0]
        return Name(f.id, norm[f.start : f.end], f.start, f.end)
    tokens: list[str] = []
    start = offset + (len(norm[offset:hi]) - len(norm[offset:hi].lstrip()))
    for m in re.finditer(r"\S+", norm[start:hi]):
        word = m.group()
        bare = word.rstrip(",.;:!?")
        possessive = bare.endswith(("'s", "\u2019s"))
        if possessive:
            bare = bare[:-2]
        bare = bare.strip("\"'\u201c\u201d()")
        if bare == "&" and tokens:  # "Weights & Biases": joined when a name follows
            rest = norm[start + m.end() : hi].split(maxsplit=1)
            if rest and _is_name_token(rest[0].rstrip(",.;:!?").strip("\"'\u201c\u201d()")):
                tokens.append(bare)
                continue
        if not bare or bare.lower() in _OBJECT_STOP or not _is_name_token(bare):
            break
        if tokens and bare.lower() in _BUSINESS_WORDS:
            break
        tokens.append(bare)
        if possessive or word != word.rstrip(",.;:!?") or len(tokens) >= 5:
            break
    if not tokens:
        return None
    # Title case: "Open-Source Workload Management Provider SchedMD" names SchedMD.
    cut = max((i + 1 for i, t in enumerate(tokens[:-1]) if t.lower() in _TITLE_DESCRIPTORS), default=0)
    start += len(" ".join(tokens[:cut])) + (1 if cut else 0)
    tokens = tokens[cut:]
    name = " ".join(tokens)
    hit = [f for f in part.found if f.start == start and f.kind in kinds]
    if hit:
        return Name(hit[0].id, norm[hit[0].start : hit[0].end], hit[0].start, hit[0].end)
    return Name(None, name, start, start + len(name))


_LATIN_WORD = re.compile(r" [A-Z][\w-]*")
_CN_OBJECT_TAIL = re.compile(
    r"(?:\d+(?:\.\d+)?%|全部|部分|控股)?(?:的)?(?:股权|股份|资产|业务)$|\d+(?:\.\d+)?%$"
)


def _cjk_name_after(part: Part, pos: int, hi: int, kinds: tuple[str, ...]) -> Name | None:
    norm = part.norm
    end = pos
    while end < hi and not _CN_STOP.match(norm[end]) and norm[end] not in "。；的":
        end += 1
    # "Silo AI": a Latin name of several words after Chinese text runs on over its spaces
    while end < hi and norm[end] == " " and norm[end - 1].isascii():
        word = _LATIN_WORD.match(norm, end, hi)
        if word is None:
            break
        end = word.end()
    tail = _CN_OBJECT_TAIL.search(norm, pos, end)  # "芯耀科技100%股权": the company, not its shares
    if tail is not None:
        end = tail.start()
        latin = re.match(rf"[A-Za-z][A-Za-z0-9-]*(?=[{CJK}])", norm[pos:end].split("旗下")[-1])
        if latin and tail.group().endswith(("业务", "资产")):  # "Arm旗下Artisan基础IP业务": the unit's name
            pos = pos + norm[pos:end].rfind(latin.group())
            end = pos + len(latin.group())
    run = norm[pos:end]
    m = _CN_DESCRIPTOR_END.match(run)
    # "欧洲AI实验室Silo AI" describes a lab before its name; "之江实验室" is a name
    if m and not (m.end() == len(run) and run.endswith(("实验室", "研究院"))):
        pos += m.end()
        run = norm[pos:end]
    known = [f for f in part.found if pos <= f.start < end and f.kind in kinds]
    if known and known[0].start == pos:
        f = known[0]
        return Name(f.id, norm[f.start : f.end], f.start, f.end)
    if not 2 <= len(run) <= 16 or run.startswith(("一家", "某", "多家", "数家")):
        return None
    return Name(None, run, pos, end)




_PLACE_WORDS = (
    "Texas|Pennsylvania|Wyoming|Ohio|Iowa|Arizona|Georgia|Virginia|Oregon|Nevada|Utah|Louisiana|Tennessee"
    "|Oklahoma|Wisconsin|Michigan|Indiana|Memphis|Abilene|Dallas|Chicago|Phoenix|Atlanta|Munich|Berlin"
    "|Frankfurt|Paris|London|Helsinki|Stockholm|Oslo|Norway|Finland|Sweden|France|Germany|Japan|India|Korea"
    "|Malaysia|Singapore|Taiwan|Europe|Saudi Arabia|Abu Dhabi|Dubai|Qatar|UAE|Canada|Australia|Brazil|Mexico"
    "|Spain|Italy|Portugal|Iceland|Denmark|Netherlands|Ireland|Scotland|Wales|Israel|Indonesia|Thailand"
    "|Vietnam|Kenya|South Africa|Chile|Oklahoma City|New York|New Jersey|California|Washington"
)
_PLACE = re.compile(
    rf"\b(?:in|at|near)\s+(?P<a>(?:[A-Z][a-z]+)(?:\s[A-Z][a-z]+){{0,2}})"
    rf"|\b(?P<b>{_PLACE_WORDS})"
    rf"(?=\s(?:[A-Za-z]+\s){{0,2}}(?:data cent|AI factory|cluster|campus|site|region))"
    rf"|(?:在|于|位于)(?P<c>[{CJK}]{{2,8}}?)(?=部署|建设|上线|落地|投运|建成)"
)
_CN_AT_PLACE = re.compile(rf"(?:在|于|位于)(?P<c>[{CJK}]{{2,8}}?)(?=部署|建设|上线|落地|投运|建成)")
_CN_SITE = re.compile(r"数据中心|超算中心|智算中心|算力中心")
CN_SITE = _CN_SITE
"""Chinese words for a compute site (数据中心, 智算中心 ...): what is named before one is its owner or
its place."""
# Chinese names of the provinces, of the cities and counties where compute is built, and of the countries
# Chinese operators build in: a place is read whole ("呼和浩特", "宁夏中卫", "马来西亚柔佛"), never cut at a
# character that is also a conjunction (和).
_CN_PLACE_NAMES = (
    "北京 上海 天津 重庆 河北 山西 内蒙古 辽宁 吉林 黑龙江 江苏 浙江 安徽 福建 江西 山东 河南 "
    "湖北 湖南 广东 广西 海南 四川 贵州 云南 西藏 陕西 甘肃 青海 宁夏 新疆 香港 澳门 台湾 "
    "呼和浩特 乌兰察布 和林格尔 鄂尔多斯 包头 中卫 银川 庆阳 兰州 张家口 张北 怀来 廊坊 贵安 "
    "贵阳 芜湖 合肥 韶关 广州 深圳 东莞 佛山 杭州 宁波 南京 苏州 无锡 上海临港 临港 成都 "
    "重庆两江 雅安 武汉 长沙 郑州 西安 济南 青岛 厦门 福州 昆明 南宁 哈尔滨 长春 沈阳 大连 "
    "石家庄 太原 西宁 乌鲁木齐 克拉玛依 哈密 拉萨 海口 三亚 南昌 大同 天府 雄安 马来西亚 柔佛 "
    "新加坡 日本 韩国 美国 沙特 阿联酋 中东 印尼 泰国 越南 欧洲 德国 法国 英国 "
).split()
_CN_PLACE = re.compile("(?:" + "|".join(sorted(_CN_PLACE_NAMES, key=len, reverse=True)) + ")+")


def cn_place(norm: str, a: int, b: int) -> re.Match[str] | None:
    """The first run of Chinese place names in ``norm[a:b]`` ("宁夏中卫"), else None."""
    return _CN_PLACE.search(norm, a, b)
_SITE_NAME = re.compile(
    r"(?<![\w-])(?P<name>[A-Z][a-z]{2,}(?:\s[A-Z][a-z]{2,})?)\s(?:AI\s)?"
    r"(?:data cent(?:er|re)|campus|AI factory)"
)
_NOT_PLACES = frozenset(
    "January February March April May June July August September October November December Q1 Q2 Q3 Q4 "
    "The A An Azure Its This That Llama DeepSeek Hot Chips Largest Sovereign Hyperscale Gigawatt First "
    "Our Their".split()
)


_VAGUE = ("多", "各", "全国", "一些", "部分", "数家")
_IN_KNOWN_PLACE = re.compile(rf",?\s+in\s+(?P<p>(?:(?:North|South|East|West|Central|Northern|Southern|Eastern"
                             rf"|Western)\s)?(?:{_PLACE_WORDS}))\b")


def place_in(part: Part, a: int, b: int) -> str | None:
    """The first place named in ``norm[a:b]`` ("in Oklahoma City", "Pennsylvania data center",
    "在呼和浩特部署", "张北数据中心"), else None."""
    norm = part.norm
    if has_cjk(norm[a:b]):
        # "在辽宁盘锦部署": the words between 在 and the verb; else the first place name of the gazetteer
        m = _CN_AT_PLACE.search(norm, a, b)
        if m is not None and m.group("c").startswith(_VAGUE):
            m = None  # "在多家运营商部署": no one place
        m = m or cn_place(norm, a, b)
        if m is not None:
            return m.group("c") if m.re is _CN_AT_PLACE else m.group()
    found = []
    for m in _PLACE.finditer(norm, a, b):
        text = m.group("a") or m.group("b") or m.group("c")
        known = _IN_KNOWN_PLACE.match(norm, m.end(), b) if m.group("a") else None
        if known is not None:  # "at Project Horizon in West Texas": the site's name, then its place
            text = known.group("p")
        if text.split()[0] not in _NOT_PLACES and not text.startswith(_VAGUE):
            found.append((m.start(), text))
    if not found:
        # "at 150 MW Sakai AI data center": a name before a site that is no known entity
        for m in _SITE_NAME.finditer(norm, a, b):
            s, e = m.span("name")
            if m.group("name").split()[0] not in _NOT_PLACES and not any(
                f.start < e and s < f.end for f in part.found
            ):
                found.append((s, m.group("name")))
    for m in _CN_SITE.finditer(norm, a, b):
        start = m.start()
        while start > max(a, m.start() - 4) and re.match(f"[{CJK}]", norm[start - 1]) and not any(
            f.start <= start - 1 < f.end for f in part.found
        ) and norm[start - 1] not in "云的在于和与及":
            start -= 1
        if m.start() - start >= 2:
            found.append((start, norm[start : m.start()]))
    return min(found)[1] if found else None


_SAYS = (
    r"(?:says|said|claims|claimed|reports|reported|measures|measured|finds|found|estimates|announced"
    r"|presented|presents|clocks|clocked|benchmarks|benchmarked|rates|rated)"
)
_REPORTER_AFTER = re.compile(
    r"(?=[,amvtbcrio])(?:"  # the characters its branches start with: most positions fail in one test
    rf",\s*(?P<who>(?:[A-Z][\w-]*\s?){{1,3}})\s{_SAYS}\b|\baccording to\s(?P<who2>(?:[A-Z][\w-]*\s?){{1,3}})"
    rf"|\b(?:measured|verified|tested|benchmarked|confirmed|reproduced)\b(?:[^.]|\.(?=\d)){{0,40}}?\bby\s"
    rf"(?P<who4>(?:[A-Z][\w-]*\s?){{1,3}})"
    # ", per Artificial Analysis"
    rf"|,\s*per\s(?P<who6>[A-Z][a-z][\w-]*(?:\s[A-Z][\w-]*){{0,2}})"
    # "in Artificial Analysis tests", "on SemiAnalysis's InferenceX runs": whose measurements they are
    rf"|\b(?:in|on|by)\s(?P<who5>(?:[A-Z][\w-]*\s){{1,3}}?)(?:'s\s)?(?:tests?|testing|benchmarks?|measurements?"
    rf"|runs|data|results|leaderboard)\b)"
)
_REPORTER_BEFORE = re.compile(
    rf"(?P<who>(?:[A-Z][\w-]*\s?){{1,3}})\s{_SAYS}\b"
    # "SemiAnalysis: ...", "SemiAnalysis note: ...": a lead-in naming whose analysis follows
    r"|^\s*(?P<who3>(?:[A-Z][\w-]*\s){0,2}[A-Z][\w-]+)"
    r"(?:\s(?:note|notes|analysis|report|research|data|estimate|estimates))?:\s"
)
_CN_REPORTER_WORDS = re.compile(r"称|表示|测得|披露|来自|据")
_CN_REPORTER = re.compile(
    r"(?P<who>[" + CJK + r"A-Za-z]{2,12}?)(?:称|表示|测得|宣称|声称|披露)"
    # "数据来自华为内部测试", "据寒武纪测试": whose tests the figure comes from
    r"|(?:数据来自|来自|据|根据)(?P<who5>[" + CJK + r"A-Za-z]{2,8}?)(?:内部|官方|的)?(?:测试|实测|测算|数据)"
)


_CORPORATE_WORDS = frozenset(
    "ai silicon semi semiconductor semiconductors labs lab systems technologies technology compute computing "
    "networks devices micro microsystems chips cloud electronics robotics research".split()
)
_UNNAMED_SAYS = re.compile(
    rf",\s*(?:and\s|the\scompany\s|company\s)?(?:{_SAYS}|promising|promises|touting|claiming)\b",
    re.IGNORECASE,
)
# "华为发布Atlas 950超节点，称算力为...": a clause that says without a name of its own is the subject's.
_CN_UNNAMED_SAYS = re.compile(r"[，,]\s*(?:并|还|其)?(?:称|表示|宣称|声称)")
_CN_SUBJECT_VERB = re.compile(r"(?:正式)?(?:发布|推出|宣布|公布|展示|亮相)")
_QUOTED_FIGURE = re.compile(r"(?:'s|\u2019s)\b.{0,40}?\b(?:figure|claim|number)s?\b", re.IGNORECASE)


def reporter(part: Part, a: int, b: int, lexicon: Lexicon) -> Name | None:
    """Who a sentence says made its claim ("Etched says ...", "..., CoreWeave measures", "Nvidia: ...",
    "英伟达称", "according to X"; "Microsoft introduces ..., claims 3x": the sentence's subject), else
    None. A sentence about someone else's figure ("finds X's 104.3x figure rests on ...") names none."""
    norm = part.norm
    if _QUOTED_FIGURE.search(norm, a, b):
        return None
    if _UNNAMED_SAYS.search(norm, a, b):
        subject = re.match(r"\s*((?:[A-Z][\w-]*|[a-z][a-z]?-?[A-Z][\w-]*)(?:\s[A-Z][\w-]*){0,2})", norm[a:b])
        if subject:
            s, e = a + subject.start(1), a + subject.end(1)
            hits = [f for f in part.found if s <= f.start < e and f.kind == "vendor"]
            if hits:
                return Name(hits[0].id, norm[hits[0].start : hits[0].end], hits[0].start, hits[0].end)
            words = subject.group(1).split()
            # the company, not its product after it: a second word stays when it is a corporate word
            # ("Kestrel Silicon KX9" -> "Kestrel Silicon", "Tenstorrent Blackhole" -> "Tenstorrent")
            corporate = len(words) > 1 and words[1].lower() in _CORPORATE_WORDS
            text = " ".join(words[:2]) if corporate else words[0]
            return Name(lexicon.lookup(text, "vendor"), text, s, s + len(text))
    if _CN_UNNAMED_SAYS.search(norm, a, b):
        start = a + len(norm[a:b]) - len(norm[a:b].lstrip())
        hits = [f for f in part.found if f.start == start and f.kind == "vendor"]
        if hits:
            return Name(hits[0].id, norm[hits[0].start : hits[0].end], hits[0].start, hits[0].end)
        # "寒武纪发布思元790，称...": the subject before the sentence's first verb, known or not
        verb = _CN_SUBJECT_VERB.search(norm, start, b)
        if verb is not None:
            subject = _cjk_name_before(part, start, verb.start(), ("vendor",))
            if subject is not None and subject.start == start:
                return subject
    for pattern in (_REPORTER_AFTER, _REPORTER_BEFORE, _CN_REPORTER):
        if pattern is _CN_REPORTER and _CN_REPORTER_WORDS.search(norm, a, b) is None:
            continue  # its name runs are tried at every character: look for its verbs first
        m = pattern.search(norm, a, b)
        if m is None:
            continue
        group = next(
            g for g in ("who", "who2", "who3", "who4", "who5", "who6") if g in m.groupdict() and m.group(g)
        )
        s, e = m.span(group)
        text = norm[s:e].strip()
        hits = [f for f in part.found if s <= f.start and f.end <= e + 1]
        if hits and hits[-1].kind == "vendor":
            return Name(hits[-1].id, norm[hits[-1].start : hits[-1].end], hits[-1].start, hits[-1].end)
        if hits:
            continue  # "MLPerf: ...": a benchmark names where a figure comes from, not who claims it
        words = text.split()
        # descriptors lead a name ("AI chip start-up Etched"); once the name has begun, a capitalised one
        # is part of it ("LG AI Research", "Kestrel Silicon")
        kept: list[str] = []
        for w in words:
            if w.lower() not in DESCRIPTORS or (kept and w[0].isupper()):
                kept.append(w)
        words = kept
        if not words or words[0] in ("It", "The", "This", "That", "He", "She", "They", "We", "Company"):
            continue
        text = " ".join(words)
        return Name(lexicon.lookup(text, "vendor"), text, s, e)
    return None



__all__ = [
    "CN_SITE", "DESCRIPTORS", "clause_subject", "is_place", "name_after", "name_before", "place_in",
    "reporter",
]
