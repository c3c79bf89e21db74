"""The words and scripts the date reader knows (pure data and one rewrite; see ``chipwatch.text.dates``).

Month and weekday names in English, French, German, Spanish, Italian, Portuguese, Dutch, Hungarian, Greek
and Russian (matched case-folded, without accents, by any prefix long enough to name one month), zone
abbreviations with their offsets, and ``rewrite_cjk``, which turns Chinese, Japanese and Korean date and
time forms into ones the token reader reads.
"""

from __future__ import annotations

import re
import unicodedata

__all__ = [
    "AMBIGUOUS_ZONES",
    "FILLERS",
    "FIXED_ZONE_OFFSETS",
    "GENERIC_ZONES",
    "MILITARY_ZONE_OFFSETS",
    "MONTH_WORDS",
    "RFC5322_ZONES",
    "TRAILING_FILLERS",
    "WEEKDAY_WORDS",
    "fold",
    "rewrite_cjk",
]

# ---------------------------------------------------------------------------------------------------
# Words: months, weekdays, fillers (accent-free and case-folded, see fold)

_MONTHS = (
    "january february march april may june july august september october november december|"
    "janvier fevrier mars avril mai juin juillet aout septembre octobre novembre decembre|"
    "januar februar marz april mai juni juli august september oktober november dezember|"
    "enero febrero marzo abril mayo junio julio agosto septiembre octubre noviembre diciembre|"
    "gennaio febbraio marzo aprile maggio giugno luglio agosto settembre ottobre novembre dicembre|"
    "janeiro fevereiro marco abril maio junho julho agosto setembro outubro novembro dezembro|"
    "januari februari maart april mei juni juli augustus september oktober november december|"
    "januar februar marcius aprilis majus junius julius augusztus szeptember oktober november december|"
    "ιανουαριος φεβρουαριος μαρτιος απριλιος μαιος ιουνιος ιουλιος αυγουστος σεπτεμβριος οκτωβριος "
    "νοεμβριος δεκεμβριος|ιανουαριου φεβρουαριου μαρτιου απριλιου μαιου ιουνιου ιουλιου αυγουστου "
    "σεπτεμβριου οκτωβριου νοεμβριου δεκεμβριου|январь февраль март апрель май июнь июль август "
    "сентябрь октябрь ноябрь декабрь|января февраля марта апреля мая июня июля августа сентября "
    "октября ноября декабря"
)
_MONTH_EXTRA = {"mrt": 3, "janner": 1, "setiembre": 9}
_WEEKDAYS = (
    "monday tuesday wednesday thursday friday saturday sunday|lundi mardi mercredi jeudi vendredi samedi "
    "dimanche|montag dienstag mittwoch donnerstag freitag samstag sonntag|lunes martes miercoles jueves "
    "viernes sabado domingo|lunedi martedi mercoledi giovedi venerdi sabato domenica|segunda terca "
    "quarta quinta sexta sabado domingo|maandag dinsdag woensdag donderdag vrijdag zaterdag zondag|"
    "hetfo kedd szerda csutortok pentek szombat vasarnap|δευτερα τριτη τεταρτη πεμπτη παρασκευη σαββατο "
    "κυριακη|понедельник вторник среда четверг пятница суббота воскресенье|пн вт ср чт пт сб вс"
)
_WEEKDAY_EXTRA = {"sonnabend": 6}
# Words that join date parts and carry no value ("June 22, 2023 at 01:11 PM", "16 de noviembre de 2020").
FILLERS = frozenset("at on of the t a um am den le de del la las el à às om o feira г".split())
TRAILING_FILLERS = frozenset({"uhr", "hrs", "h"})


def fold(word: str) -> str:
    """Case-folded, accent-free, without a trailing dot: "Déc." -> "dec", "Ιούλ" -> "ιουλ"."""
    decomposed = unicodedata.normalize("NFD", word.rstrip(".")).casefold()
    return "".join(ch for ch in decomposed if not unicodedata.combining(ch))


def _prefix_table(names: str, min_len: int, extra: dict[str, int]) -> dict[str, frozenset[int]]:
    """Every prefix of ``min_len`` or more letters of each name, mapped to the values it may mean."""
    table: dict[str, set[int]] = {}
    for language in names.split("|"):
        for value, name in enumerate(language.split()):
            for end in range(min(min_len, len(name)), len(name) + 1):
                table.setdefault(name[:end], set()).add(value + 1)
    for name, value in extra.items():
        table.setdefault(name, set()).add(value)
    return {key: frozenset(values) for key, values in table.items()}


MONTH_WORDS = _prefix_table(_MONTHS, 3, _MONTH_EXTRA)
WEEKDAY_WORDS = _prefix_table(_WEEKDAYS, 2, _WEEKDAY_EXTRA)

# ---------------------------------------------------------------------------------------------------
# Zones

# Abbreviations with one meaning in the feeds and news this service reads (offset, names).
_FIXED_ZONES = """
+0000 ut utc gmt z uct wet wez | +0100 cet met mez wat west wesz | +0200 cest mest mesz eet oez
sast cat | +0300 eest oesz msk eat trt idt | +0330 irst | +0430 aft | +0500 pkt uzt | +0545 npt
+0700 ict wib | +0800 hkt sgt myt awst pht wita | +0900 jst kst wit | +0930 acst | +1000 aest chst
+1030 acdt | +1100 aedt | +1200 nzst | +1300 nzdt | -0300 adt brt art uyt clst | -0200 brst
-0230 ndt | -0330 nst | -0400 clt vet bot | -0500 cot pet | -0800 akdt | -0900 akst hdt | -1000 hst
"""
# Abbreviations with several meanings: every offset in use, in minutes.
AMBIGUOUS_ZONES: dict[str, tuple[int, ...]] = {
    "cst": (-360, 480, -300, 570),
    "cdt": (-300, -240),
    "est": (-300, 600),
    "edt": (-240, 660),
    "mst": (-420, 480),
    "mdt": (-360,),
    "pst": (-480, 480),
    "pdt": (-420,),
    "ist": (330, 60, 120),
    "bst": (60, 360, 660),
    "ast": (-240, 180),
    "amt": (-240, 240),
    "gst": (240, -120),
    "sst": (-660, 480),
    "ect": (-300, -240),
}
# RFC 5322 §3.3 defines these eight: their meaning when nothing else resolves them.
RFC5322_ZONES = {"est": -300, "edt": -240, "cst": -360, "cdt": -300, "mst": -420, "mdt": -360,
                 "pst": -480, "pdt": -420}
# Names of a region's zone, which follow its daylight-saving rules ("ET" is EST in January, EDT in July).
GENERIC_ZONES = {"at": "America/Halifax", "et": "America/New_York", "ct": "America/Chicago",
                 "mt": "America/Denver", "pt": "America/Los_Angeles"}
# Zones named in words ("北京时间 2026-11-30 08:30").
CJK_ZONE_NAMES = {"北京时间": "Asia/Shanghai", "北京時間": "Asia/Shanghai", "中国标准时间": "Asia/Shanghai",
                  "台北時間": "Asia/Taipei", "香港時間": "Asia/Hong_Kong", "香港时间": "Asia/Hong_Kong",
                  "日本時間": "Asia/Tokyo", "東京時間": "Asia/Tokyo", "한국시간": "Asia/Seoul"}


def _fixed_zones() -> dict[str, int]:
    """Abbreviation -> minutes east of UTC, from the table above."""
    table: dict[str, int] = {}
    for group in _FIXED_ZONES.split("|"):
        words = group.split()
        if words:
            sign = -1 if words[0][0] == "-" else 1
            minutes = sign * (int(words[0][1:3]) * 60 + int(words[0][3:5]))
            table.update(dict.fromkeys(words[1:], minutes))
    return table


FIXED_ZONE_OFFSETS = _fixed_zones()
# Military letters with their military meaning (A = +01:00; J, local time, has none).
MILITARY_ZONE_OFFSETS = {letter: hours * 60 for hours, letter in enumerate("abcdefghiklm", start=1)} | {
    letter: -hours * 60 for hours, letter in enumerate("nopqrstuvwxy", start=1)
}

# ---------------------------------------------------------------------------------------------------
# Chinese, Japanese and Korean forms, rewritten into the forms the token reader reads

_CJK_CHAR = re.compile(r"[\u3040-\u30ff\u3400-\u9fff\uac00-\ud7af\u3130-\u318f]")
_KANA_OR_JAPANESE = re.compile(r"[\u3040-\u30ff]|曜|午前|午後|令和|平成|\([月火水木金土日]\)")
_HANGUL = re.compile(r"[\uac00-\ud7af\u3130-\u318f]")
_CJK_WEEKDAY = re.compile(
    r"(?:星期|礼拜|禮拜|周|週)[一二三四五六日天]|[月火水木金土日]曜日?|[월화수목금토일]요일"
)
_CN_DIGITS = {"〇": 0, "零": 0, "一": 1, "二": 2, "两": 2, "兩": 2, "三": 3, "四": 4, "五": 5, "六": 6,
              "七": 7, "八": 8, "九": 9}
_CN_NUMERAL = re.compile(r"([〇零一二两兩三四五六七八九十]+)(?=[年月日号號时時点點分秒])")
_ERA = re.compile(r"(民国|民國|令和|平成)\s*(\d{1,3}|元)\s*年")
_ERA_BASE = {"民国": 1911, "民國": 1911, "令和": 2018, "平成": 1988}
_CJK_DATE = re.compile(r"(?:(\d{2,4})\s*[年년]\s*)?(\d{1,2})\s*[月월](?:\s*(\d{1,2})\s*[日号號일])?")
_CJK_YEAR_ONLY = re.compile(r"(\d{4})\s*[年년]")
_CJK_TIME = re.compile(
    r"(\d{1,2})\s*[时時点點시]\s*(?:(\d{1,2})\s*[分분](?:\s*(\d{1,2})\s*[秒초])?|(半)|整)?"
)
_CJK_AMPM = re.compile(
    r"(上午|早上|早晨|凌晨|清晨|午前|오전|下午|晚上|傍晚|午後|오후|中午)\s*(\d{1,2}(?::\d{2}){0,2})"
)
_AM_WORDS = frozenset({"上午", "早上", "早晨", "凌晨", "清晨", "午前", "오전"})
_EN_MONTHS = "january february march april may june july august september october november december".split()


def _cn_numeral(run: str) -> str:
    """二〇二六 -> 2026 (a year, digit by digit); 三十一 -> 31; 十一 -> 11."""
    if "十" not in run:
        return "".join(str(_CN_DIGITS[ch]) for ch in run)
    tens, _, units = run.partition("十")
    if len(tens) > 1 or len(units) > 1 or "十" in units:
        raise ValueError(f"Chinese numeral {run}")
    return str((_CN_DIGITS.get(tens[-1:], 1) if tens else 1) * 10 + (_CN_DIGITS[units] if units else 0))


def _era_year(m: re.Match[str]) -> str:
    """民国115年 -> 2026年 (Republic of China era), 令和8年 -> 2026年; 元年 is the first year."""
    return f"{_ERA_BASE[m.group(1)] + (1 if m.group(2) == '元' else int(m.group(2)))}年"


def _cjk_date(m: re.Match[str]) -> str:
    year, month, day = m.group(1), int(m.group(2)), m.group(3)
    if not 1 <= month <= 12:
        raise ValueError(f"month {month}")
    name = _EN_MONTHS[month - 1]
    return f" {day or ''} {name} {year or ''} "


def _cjk_time(m: re.Match[str]) -> str:
    minute = "30" if m.group(4) else (m.group(2) or "0")
    second = f":{int(m.group(3)):02d}" if m.group(3) else ""
    return f" {int(m.group(1))}:{int(minute):02d}{second} "


def _cjk_clock(m: re.Match[str]) -> str:
    """下午3:30 -> 3:30 pm; 中午 (around noon) keeps 11 and 12 and moves 1 to 13."""
    marker = "noon" if m.group(1) == "中午" else ("am" if m.group(1) in _AM_WORDS else "pm")
    return f" {m.group(2)} {marker} "


def rewrite_cjk(text: str) -> tuple[str, str | None, str | None]:
    """Rewrite CJK date and time forms; returns ``(text, zone named in the text, zone the script implies)``.

    Characters left over (words the rewrite does not know) stay and make the reading fail.
    """
    if not _CJK_CHAR.search(text):
        return text, None, None
    hint = "Asia/Seoul" if _HANGUL.search(text) else None
    hint = hint or ("Asia/Tokyo" if _KANA_OR_JAPANESE.search(text) else "Asia/Shanghai")
    named = None
    for name, zone in CJK_ZONE_NAMES.items():
        if name in text:
            text, named = text.replace(name, " "), zone
    text = _CJK_WEEKDAY.sub(" ", text)
    text = _ERA.sub(_era_year, text)
    text = _CN_NUMERAL.sub(lambda m: _cn_numeral(m.group(1)), text)
    text = _CJK_DATE.sub(_cjk_date, text)
    text = _CJK_YEAR_ONLY.sub(r" \1 ", text)
    text = _CJK_TIME.sub(_cjk_time, text)
    text = _CJK_AMPM.sub(_cjk_clock, text)
    return " ".join(text.split()), named, hint


