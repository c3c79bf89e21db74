"""Chip names in news text (pure): known chips by name or alias, and model designations the
knowledge base does not know yet ("Maia 200", "MI450", "DGX B200", "昇腾950PR", "LPU"); never model names,
memory, process nodes or figures.
"""

from __future__ import annotations

import re

from chipwatch.candidates.lexicon import Lexicon
from chipwatch.candidates.textparts import CJK, Name, Part, has_cjk

GENERIC_HARDWARE = frozenset(
    "gpu gpus cpu cpus npu npus xpu xpus asic asics chip chips accelerator accelerators processor processors "
    "card cards server servers rack racks system systems superchip superchips soc socs".split()
)
# A model designation: letters and digits together ("MI450", "B200", "CS-3", "p150", "910B", "Trainium3").
_MODEL_TOKEN = r"(?:[A-Za-z]{1,12}-?\d[A-Za-z0-9_.]*|\d{2,4}[A-Za-z]+[A-Za-z0-9_]*)"
_FAMILY_WORD = r"(?:[A-Z][A-Za-z]+|[A-Z]{2,5})"
# a number after a name is its generation ("Maia 200"), not a figure of a claim ("Maia 200 25% below")
_SUFFIX = (
    r"(?:\s(?:NVL\d+|Ultra|Max|Pro|PRO|\d{2,4}[A-Z]?(?!\s?(?:%|x\b|×|percent|times))|[A-Z]\d*)"
    r"(?![A-Za-z0-9_-]))*"
)
_CORE = rf"(?:{_FAMILY_WORD}\s){{1,2}}\d{{2,4}}[A-Za-z]?|(?:{_FAMILY_WORD}\s){{0,2}}{_MODEL_TOKEN}"
_CHIP_NAME = re.compile(rf"(?<![A-Za-z0-9_-])(?P<name>(?:{_CORE}){_SUFFIX})(?![A-Za-z0-9_-])")
# A known chip followed by a generation number is another chip ("Trainium 3").
# "Trainium 3", "TPU v8e", "Ironwood LX": a generation or variant after a known family's name
_NEXT_GENERATION = re.compile(
    r"\s?\d{1,3}(?![\w.-])|\s(?!NVL)[A-Z]{2,5}(?![\w.-])|\s[vV]\d{1,2}[a-z]{0,2}(?![\w.-])"
)
_PRODUCT_BEFORE = re.compile(r"(?<![\w.-])([A-Z][a-z]{2,}[A-Za-z]*)\s$")
# Model families: their designations are no chips.
_MODEL_NAMES = re.compile(
    r"^(?:gpt|llama|qwen|gemma|glm|kimi|grok|claude|gemini|mistral|deepseek|phi|flux|swe|mimo|zaya|olmo"
    r"|nemotron|sonnet|opus|haiku|o\d|hy\d|seedance|sora|veo|imagen|stable)", re.IGNORECASE
)
# Processing units named by their maker's acronym ("LPU"); the generic ones are no names.
_PU_NAME = re.compile(r"(?<![A-Za-z0-9_-])(?P<name>[A-Z]{1,2}PU)s?(?![A-Za-z0-9_-])")
_GENERIC_PU = frozenset({"GPU", "CPU", "NPU", "XPU", "DPU", "APU", "IPU"})
# In Chinese text a designation follows the product family ("昇腾950PR", "曦云C600") or stands alone.
_CJK_MODEL = re.compile(rf"(?<![A-Za-z0-9])(?P<name>[A-Za-z]{{0,4}}\d+[A-Za-z0-9]*)(?=[{CJK}\s,，。、+]|$)")
_CJK_NOT_FAMILY = re.compile(
    r"(?:芯片|发布|推出|采购|部署|使用|亮相|组成|点亮|正式|以及|新一代"
    # a comparison before a designation is no family ("吞吐较H20", "性能比H100", "相当于B200")
    r"|代|张|颗|块|台|卡|的|和|与|及|在|为|是|达|款|较|比|于|对|超|如)$"
)
# Words that are never part of a chip's name in front of it.
_NOT_FAMILY = frozenset(
    "The A An In On At By For With And Of Its Each Up Down Llama Series Initial Nvidia NVIDIA Nvidia's "
    "AMD Intel Google Apple Microsoft Huawei Qualcomm Next Q Instinct TM Than Vs Versus Over Against From To "
    "Beats Tops Matches Outperforms".split()
)
_NOT_CHIP = re.compile(
    r"^(?:\d+(?:nm|gb|tb|mb|gw|mw|kw|w|x|k|m|b|bn|h|s|ms|h1|h2)|[12]H\d*|Q[1-4]|FP\d+|INT\d+|HBM\d\w*|LPDDR\w*"
    r"|GDDR\w*|DDR\d\w*|PCIe\w*|v\d+(?:\.\d+)?|Gen\d+|GPT\w*|R\d|V\d|K\d\w*|\d{4}s?|\d{1,3}B|\d+)$",
    re.IGNORECASE,
)


# "深算四号DCU", "天垓3号芯片": a family and its ordinal number, a product when a hardware word follows
_CJK_ORDINAL = re.compile(
    rf"(?P<name>[{CJK}]{{2}}(?:[一二三四五六七八九十]|\d{{1,2}})号)(?=DCU|GPU|NPU|TPU|芯片|加速卡|处理器)"
)
_PLURAL = re.compile(r"\ds$")
_TWO_CJK = re.compile(rf"[{CJK}]{{2}}$")
_LATIN_LETTER = re.compile(r"[A-Za-z]")
_LETTER_OR_3_DIGITS = re.compile(r"[A-Za-z]|\d{3}")
_COUNTER_AFTER = re.compile(r"(?:万|亿|千|张|颗|块|台|卡|片|倍|%|年)")


def chip_names(part: Part, a: int, b: int, lexicon: Lexicon) -> list[Name]:
    """Chip names in ``norm[a:b]`` in reading order (see :func:`_chip_names`), read once per sentence."""
    return part.per_sentence("chips", a, b, lambda s, e: _chip_names(part, s, e, lexicon))


def _chip_names(part: Part, a: int, b: int, lexicon: Lexicon) -> list[Name]:
    """Chip names in ``norm[a:b]`` in reading order: known chips (by name or alias) and model
    designations ("Maia 200", "MI450", "DGX B200", "昇腾950PR", "LPU"), never models, memory or process
    words."""
    norm = part.norm
    out = []
    for f in part.found_in(a, b):
        if f.kind != "chip":
            continue
        nxt = _NEXT_GENERATION.match(norm, f.end, b)
        product = _PRODUCT_BEFORE.search(norm, max(a, f.start - 30), f.start)
        if product and product.group(1) not in _NOT_FAMILY and not any(
            v.start <= product.start(1) < v.end for v in part.found if v.kind == "vendor"
        ):  # "Ironwood TPU": a product of the family the knowledge base names
            name = norm[product.start(1) : f.end]
            out.append(Name(lexicon.lookup(name, "chip"), name, product.start(1), f.end))
        elif nxt:  # "Trainium 3" is not the Trainium of the knowledge base
            name = norm[f.start : nxt.end()]
            out.append(Name(lexicon.lookup(name, "chip"), name, f.start, nxt.end()))
        else:
            out.append(Name(f.id, norm[f.start : f.end], f.start, f.end))
    taken = [(n.start, n.end) for n in out] + [
        (f.start, f.end) for f in part.found_in(a, b) if f.kind in ("model", "benchmark")
    ]

    def add(s: int, e: int, name: str) -> None:
        if any(s < te and ts < e for ts, te in taken):
            return
        if _PLURAL.search(name):  # "B200s": the plural of a designation
            name, e = name[:-1], e - 1
        out.append(Name(lexicon.lookup(name, "chip"), name, s, e))
        taken.append((s, e))

    vendors = [f for f in part.found_in(a, b) if f.kind == "vendor"]

    def latin(m: re.Match[str]) -> None:
        s, e = m.span("name")
        words = m.group("name").split()
        while len(words) > 1 and (words[0] in _NOT_FAMILY or words[0].lower() in GENERIC_HARDWARE
                                  or any(v.start <= s < v.end for v in vendors)):
            s += len(words[0]) + 1
            words = words[1:]
        if all(_NOT_CHIP.match(w) for w in words) or _MODEL_NAMES.match(words[0]):
            return
        if any(v.start <= s < v.end for v in vendors):
            return
        add(s, e, " ".join(words))

    def designations(prefixed: bool) -> None:
        for m in _CJK_MODEL.finditer(norm, a, b):
            s, e = m.span("name")
            head = s
            vendor = next((v for v in vendors if v.end == s), None)
            if vendor is not None:
                head = vendor.start
            else:
                run = _TWO_CJK.search(norm[max(a, s - 2) : s])
                if run and not _CJK_NOT_FAMILY.search(norm[max(a, s - 3) : s]):
                    head = s - 2
            if (head < s) != prefixed:
                continue
            bare = m.group("name")
            if head == s and (_NOT_CHIP.match(bare) or not _LATIN_LETTER.search(bare)):
                continue
            if (not _LETTER_OR_3_DIGITS.search(m.group("name")) or part.quantities_at(s)
                    or _COUNTER_AFTER.match(norm, e, e + 1)):
                continue  # a figure ("上线1吉瓦", "1万张") or a year, not a designation
            add(head, e, norm[head:e])

    cjk = has_cjk(norm[a:b])
    if cjk:  # a designation after its family ("昇腾950PR") before the Latin pattern takes "950PR" alone
        designations(prefixed=True)
    for m in _CHIP_NAME.finditer(norm, a, b):
        latin(m)
    for m in _PU_NAME.finditer(norm, a, b):
        if m.group("name") not in _GENERIC_PU:
            add(m.start("name"), m.end("name"), m.group("name"))
    if cjk:
        designations(prefixed=False)
        if "号" in norm[a:b]:
            for m in _CJK_ORDINAL.finditer(norm, a, b):
                if not _CJK_NOT_FAMILY.search(norm[m.start() : m.start() + 2]):
                    add(m.start("name"), m.end("name"), m.group("name"))
    out.sort(key=lambda n: n.start)
    return out



__all__ = ["GENERIC_HARDWARE", "chip_names"]
