"""The pure parts of candidates: extraction over a small lexicon (spans in the original text, numbers
through the quantity reader, English and Chinese), fact identity, sources' independence, verification."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from chipwatch.candidates import keys
from chipwatch.candidates.extract import extract
from chipwatch.candidates.lexicon import LexEntry, Lexicon
from chipwatch.candidates.read_money import round_type

LEXICON = Lexicon.build(
    [
        LexEntry("openai", "vendor", ("OpenAI",)),
        LexEntry("nvidia", "vendor", ("NVIDIA", "英伟达")),
        LexEntry("groq", "vendor", ("Groq",)),
        LexEntry("xiwang", "vendor", ("Xiwang", "曦望")),
        LexEntry("apple", "vendor", ("Apple", "苹果")),
        LexEntry("jalapeno", "chip", ("Jalapeño", "Jalapeno", "墨西哥辣椒"), "openai"),
        LexEntry("gb300", "chip", ("GB300", "Blackwell Ultra"), "nvidia"),
        LexEntry("xiwang-s3", "chip", ("Xiwang S3", "曦望S3"), "xiwang"),
        LexEntry("apple-m6", "chip", ("Apple M6",), "apple"),
        LexEntry("gpt-oss-120b", "model", ("GPT-OSS 120B",)),
    ]
)


def facts(title: str, summary: str = "") -> list[tuple[str, dict]]:
    return [(p.kind, p.fact) for p in extract(title, summary, LEXICON)]


def test_spans_index_the_original_text_even_after_normalisation():
    title = "Ｊａｌａｐｅｎ\u0303o delivers 3.2x GB300 throughput per MW, OpenAI says"
    (claim,) = extract(title, "", LEXICON)
    assert claim.span.part == "title"
    assert (
        title[claim.span.start : claim.span.end] == claim.span.text == "Ｊａｌａｐｅｎ\u0303o delivers 3.2x"
    )
    assert claim.fact["chip_id"] == "jalapeno" and claim.fact["baseline_id"] == "gb300"
    assert claim.fact["reported_by_id"] == "openai" and claim.fact["metric"] == "throughput_per_power"
    summary = "据报道，希望科技完成20亿元融资，投后估值200亿。"
    (round_,) = extract("芯片快讯", summary, LEXICON)
    assert round_.span.part == "summary" and summary[round_.span.start : round_.span.end] == round_.span.text
    assert round_.span.text.startswith("希望科技完成")


def test_funding_in_english_and_chinese():
    assert facts("Etched raises $500M at a $5B valuation") == [
        (
            "funding",
            {
                "vendor_id": None,
                "vendor_name": "Etched",
                "amount": 5e8,
                "currency": "USD",
                "round_type": None,
                "post_money_valuation": 5e9,
            },
        )
    ]
    ((kind, fact),) = facts("希望科技完成20亿元融资，投后估值200亿")
    assert (kind, fact["vendor_name"], fact["amount"], fact["currency"]) == (
        "funding",
        "希望科技",
        2e9,
        "CNY",
    )
    assert fact["post_money_valuation"] == 2e10  # "200亿" takes the round's currency
    ((_, fact),) = facts(
        "Positron AI raises $51.6 million to take on Nvidia in inference",
        "The Series A round brings the start-up's total funding to more than $75 million.",
    )
    assert (fact["round_type"], fact["post_money_valuation"]) == ("series_a", None)  # a total is no valuation


@pytest.mark.parametrize(
    "title",
    [
        "OpenAI in talks to raise funding at $500 billion valuation",
        "TSMC raises 2026 capex to $56 billion on AI chip demand",
        "AMD Reports Third Quarter 2025 Financial Results: revenue of $9.2 billion",
        "据报道，OpenAI正洽谈以5000亿美元估值融资",
        "AI芯片初创公司墨芯人工智能完成数亿元B轮融资",
        "寒武纪完成对一家存储芯片企业的收购",
        "Huawei details Ascend 950, 960 and 970 roadmap through 2028",
    ],
)
def test_talks_plans_and_other_sums_are_no_facts(title):
    assert facts(title) == []


def test_round_words():
    assert [
        round_type(t)
        for t in (
            "Series C1 funding",
            "B+轮融资",
            "Pre-IPO轮",
            "战略投资",
            "seed round",
            "科创板IPO募资",
            "a new round",
        )
    ] == ["series_c", "series_b_plus", "pre_ipo", "strategic", "seed", "ipo", None]


def test_acquisitions_and_a_divestiture():
    assert facts("英伟达以200亿美元收购Groq") == [
        (
            "acquisition",
            {
                "acquirer_id": "nvidia",
                "acquirer_name": "英伟达",
                "vendor_id": "groq",
                "vendor_name": "Groq",
                "amount": 2e10,
                "currency": "USD",
            },
        )
    ]
    ((_, fact),) = facts(
        "AMD Completes Divestiture of ZT Systems Data Center Manufacturing Business to Sanmina"
    )
    assert (fact["acquirer_name"], fact["vendor_name"]) == ("Sanmina", "ZT Systems")
    assert facts("Nvidia will buy Intel common stock at $23.28 a share") == []


def test_deployments_planned_and_operational():
    ((_, planned),) = facts("OpenAI计划年底前部署100兆瓦墨西哥辣椒芯片")
    assert (planned["operator_id"], planned["chip_id"], planned["power_mw"], planned["status"]) == (
        "openai",
        "jalapeno",
        100,
        "planned",
    )
    ((_, running),) = facts(
        "OpenAI's Jalapeño chips go live in first Texas cluster", "The initial deployment is about 20 MW."
    )
    assert (running["operator_id"], running["status"], running["power_mw"], running["place"]) == (
        "openai",
        "operational",
        20,
        "Texas",
    )
    ((_, counted),) = facts("Humain to deploy 18,000 Nvidia GB300 chips in Saudi Arabia")
    assert (counted["units"], counted["chip_id"], counted["place"]) == (18000, "gb300", "Saudi Arabia")


def test_benchmark_ranges_baselines_and_restated_baselines():
    ((_, ranged),) = facts("Jalapeño shows 1.5x to 1.9x better peak throughput per watt than GB300")
    assert (ranged["value"], ranged["value_min"], ranged["value_max"]) == (None, 1.5, 1.9)
    ((_, speed),) = facts(
        "OpenAI's Jalapeño hits 1,459 tok/s per user on GPT-OSS-120B",
        "The figure compares with 535 tok/s for the fastest GPU system.",
    )
    assert (speed["value"], speed["unit"], speed["metric"]) == (1459, "tok/s/user", "speed")
    ((_, latency),) = facts("墨西哥辣椒的TPOT从21毫秒降至14毫秒")
    assert (latency["value"], latency["unit"], latency["metric"]) == (14, "ms", "latency")
    assert facts("Fractile says its chips will run large models 100 times faster than GPUs") == []


def test_launches_name_new_chips_and_known_ones():
    ((_, new),) = facts("Groq ships GroqRack 2 to first customers")
    assert (new["vendor_id"], new["chip_name"], new["chip_id"], new["new"]) == (
        "groq",
        "GroqRack 2",
        None,
        True,
    )
    ((_, known),) = facts("曦望发布S3推理芯片，不用HBM而采用LPDDR")
    assert (known["chip_id"], known["new"]) == ("xiwang-s3", False)  # "Xiwang" + "S3" names the chip
    assert facts("OpenAI unveils GPT-OSS 120B, an open-weight model") == []


def test_one_fact_one_key():
    a = extract("Etched raises $500M at a $5B valuation", "", LEXICON)[0]
    b = extract("Etched closes $500 million round, valued at $5 billion", "", LEXICON)[0]
    assert keys.fact_key("funding", a.fact) == keys.fact_key("funding", b.fact)
    other = extract("Etched raises $600M", "", LEXICON)[0]
    assert keys.fact_key("funding", other.fact) != keys.fact_key("funding", a.fact)


def test_independence_verification_and_confidence():
    subjects = keys.subjects(
        "benchmark", {"chip_id": "jalapeno", "reported_by_id": None}, {"jalapeno": "openai"}
    )
    assert subjects == {"openai"}
    assert not keys.is_independent("vendor", None, subjects)
    assert not keys.is_independent("press", "openai", subjects)
    assert keys.is_independent("press", "nvidia", subjects) and keys.is_independent("analyst", None, subjects)
    assert [keys.allowed_verification(n) for n in (0, 1, 2, 5)] == [
        "vendor_reported",
        "vendor_reported",
        "witnessed",
        "witnessed",
    ]
    assert keys.at_most("vendor_reported", "witnessed") and not keys.at_most("independent", "witnessed")
    assert [keys.confidence(0.8, n) for n in (0, 1, 2, 3, 9)] == [0.8, 0.8, 0.9, 0.99, 0.99]


def test_corroboration_rules():
    kb_round = SimpleNamespace(
        round_type="series", vendor_id="xiwang", currency="CNY", amount=2e9, post_money_valuation=2e10
    )
    assert keys.corroborates(
        "funding", {"vendor_id": "xiwang", "amount": 2.01e9, "currency": "CNY"}, kb_round
    )
    assert not keys.corroborates(
        "funding", {"vendor_id": "xiwang", "amount": 2e9, "currency": "USD"}, kb_round
    )
    assert keys.corroborates(
        "funding", {"vendor_id": "xiwang", "amount": None, "post_money_valuation": 2e10}, kb_round
    )
    result = SimpleNamespace(chip_ids=["jalapeno"], unit="x", value=104.3, value_max=None)
    assert keys.corroborates("benchmark", {"chip_id": "jalapeno", "value": 104.3, "unit": "x"}, result)
    assert not keys.corroborates("benchmark", {"chip_id": "jalapeno", "value": 53.7, "unit": "x"}, result)


@pytest.mark.parametrize(
    ("title", "summary", "kind", "expected"),
    [
        # a pre-money valuation is not the round's post-money valuation
        ("Groq raises $640 million at a $2.2 billion pre-money valuation", "",
         "funding", {"vendor_id": "groq", "amount": 6.4e8, "post_money_valuation": None}),
        ("Groq raises $640 million at a $2.2 billion pre-money valuation",
         "The round takes its post-money valuation to $2.8 billion.",
         "funding", {"vendor_id": "groq", "post_money_valuation": 2.8e9}),
        ("曦望完成10亿元融资，投前估值90亿元", "",
         "funding", {"vendor_id": "xiwang", "amount": 1e9, "post_money_valuation": None}),
        # a sum followed by the company bought and the deal's noun is an acquisition
        ("NVIDIA closes $7 billion Mellanox acquisition", "",
         "acquisition", {"acquirer_id": "nvidia", "vendor_name": "Mellanox", "amount": 7e9}),
        # names: & inside, nationality descriptors and a person's possessive before them
        ("Apple to acquire Swedish AI lab Smith & Wesson Labs for $90 million", "",
         "acquisition", {"acquirer_id": "apple", "vendor_name": "Smith & Wesson Labs"}),
        ("Jane Doe's Lumen Compute raises $40M seed round", "",
         "funding", {"vendor_name": "Lumen Compute", "round_type": "seed"}),
        # a clause that says or promises without a name of its own is its subject's claim
        ("Groq unveils LPU 4, promising 3x the throughput of GB300", "",
         "benchmark", {"value": 3.0, "baseline_id": "gb300", "reported_by_id": "groq"}),
        ("苹果发布M7芯片，称性能为M6的2倍", "",
         "benchmark", {"value": 2.0, "baseline_id": "apple-m6", "reported_by_id": "apple"}),
    ],
)
def test_general_rules_read_the_right_fields(title, summary, kind, expected):
    found = [fact for k, fact in facts(title, summary) if k == kind]
    assert found, facts(title, summary)
    assert {key: found[0].get(key) for key in expected} == expected


@pytest.mark.parametrize(
    ("title", "summary"),
    [
        # a round is no operator, nor is a lead-in before a colon
        ("Cerebras raises $1.1bn Series G to build AI data centres",
         "The data centres will run 2,000 CS-3 systems."),
        ("SemiAnalysis: MI355X reaches 3,100 tokens per second per kW on DeepSeek R1",
         "The run used FP4 weights."),
    ],
)
def test_no_deployment_without_an_operator(title, summary):
    assert [f for k, f in facts(title, summary) if k == "deployment"] == []


def test_a_back_reference_is_no_operator_and_keeps_the_status_it_states():
    read = facts("OpenAI在得州部署1万张墨西哥辣椒", "该集群已投入运行。")
    (deployment,) = [f for k, f in read if k == "deployment"]
    assert deployment["operator_id"] == "openai" and deployment["status"] == "operational"
    assert deployment["chip_id"] == "jalapeno" and deployment["units"] == 10000


@pytest.mark.parametrize(
    ("title", "summary", "kind", "expected"),
    [
        # currencies beyond USD and CNY, written before or after the figure
        ("Seoul's Nuri Silicon secures 85 billion won in Series C funding", "",
         "funding",
         {"vendor_name": "Nuri Silicon", "amount": 85e9, "currency": "KRW", "round_type": "series_c"}),
        ("Kumo Devices raises 4 billion yen", "The round values the Osaka company at 30 billion yen.",
         "funding", {"amount": 4e9, "currency": "JPY", "post_money_valuation": 30e9}),
        ("芯川科技完成50亿日元B轮融资", "",
         "funding", {"vendor_name": "芯川科技", "amount": 5e9, "currency": "JPY"}),
        # "¥" is the yen when the item speaks of Japan, the yuan when it speaks of China
        ("Kumo Devices raises ¥6 billion", "The Tokyo start-up designs edge NPUs.",
         "funding", {"amount": 6e9, "currency": "JPY"}),
        ("Lanting Micro raises ¥6 billion", "The Shanghai start-up designs edge NPUs.",
         "funding", {"amount": 6e9, "currency": "CNY"}),
        # announcing a sum named a round is raising it
        ("Orbit Silicon Announces $75 Million Series B Financing", "",
         "funding", {"vendor_name": "Orbit Silicon", "amount": 75e6, "round_type": "series_b"}),
        # a post-money valuation "of the company at"; a market listing is an IPO
        ("Vela Chips raises $90 million",
         "The deal puts the post-money valuation of the edge AI company at $1 billion.",
         "funding", {"amount": 90e6, "post_money_valuation": 1e9}),
        ("Hoshi Semi raises 2 billion yuan in Shenzhen stock listing", "",
         "funding", {"vendor_name": "Hoshi Semi", "round_type": "ipo"}),
        # a news outlet before the verb is no company; a quoted Chinese name is the name inside the marks
        ("界面新闻获悉｜芯片设计公司曦望完成10亿元B轮融资", "",
         "funding", {"vendor_id": "xiwang", "amount": 1e9}),
        ("前OpenAI工程师创办的公司「星瀚智芯」完成1亿元天使轮融资", "",
         "funding", {"vendor_id": None, "vendor_name": "星瀚智芯", "round_type": "angel"}),
        # a described target: lower-case words or an acronym, then a noun of trade, then the name
        ("Groq buys Finnish DSP designer Aalto Logic for $80 million", "",
         "acquisition", {"acquirer_id": "groq", "vendor_name": "Aalto Logic", "amount": 80e6}),
        ("OpenAI acquires compiler tooling specialist Tensorwise", "",
         "acquisition", {"acquirer_id": "openai", "vendor_name": "Tensorwise"}),
        # Chinese: the buyer stops at 拟, the target at its shares, a descriptor before 对X的 is dropped
        ("星海电子拟以5亿元收购存储芯片企业云岭微电子60%股权", "",
         "acquisition", {"acquirer_name": "星海电子", "vendor_name": "云岭微电子", "amount": 5e8}),
        ("星海电子拟换股吸收合并云岭微电子", "",
         "acquisition", {"acquirer_name": "星海电子", "vendor_name": "云岭微电子"}),
        ("苹果完成对AI芯片公司星瀚智芯的收购", "",
         "acquisition", {"acquirer_id": "apple", "vendor_name": "星瀚智芯"}),
        ("英伟达完成收购Groq旗下Nova编译器业务", "",
         "acquisition", {"acquirer_id": "nvidia", "vendor_name": "Nova"}),
        # the price from a later sentence of payment; "the company" of a later sentence is the title's
        ("Groq completes purchase of photonics start-up Lumora", "Groq paid $120 million in stock.",
         "acquisition", {"vendor_name": "Lumora", "amount": 120e6}),
        ("Apple raises $2 billion in bonds for AI servers",
         "The Cupertino company also agreed to acquire Tensorwise, a compiler start-up.",
         "acquisition", {"acquirer_id": "apple", "vendor_name": "Tensorwise"}),
        # passive deals: the buyer after "by", before 收购 after 被
        ("Lumora acquired by Groq for $300 million", "",
         "acquisition", {"acquirer_id": "groq", "vendor_name": "Lumora", "amount": 3e8}),
        ("星瀚智芯被苹果全资收购", "", "acquisition", {"acquirer_id": "apple", "vendor_name": "星瀚智芯"}),
        # other dollars and the won sign; "X-based" describes, it does not name
        ("Singapore-based Kestrel Silicon raises S$45 million", "",
         "funding", {"vendor_name": "Kestrel Silicon", "amount": 45e6, "currency": "SGD"}),
        ("Hsinchu's Nuvi Chips raises NT$900 million", "",
         "funding", {"vendor_name": "Nuvi Chips", "amount": 9e8, "currency": "TWD"}),
        ("Nuri Silicon raises ₩30 billion", "", "funding", {"amount": 3e10, "currency": "KRW"}),
        # a valuation after a round names the round's sum after it
        ("Kestrel Silicon valued at $5 billion after $600 million funding round", "",
         "funding", {"vendor_name": "Kestrel Silicon", "amount": 6e8, "post_money_valuation": 5e9}),
        # a multiplier in title case; an offering sold, named by its sum
        ("Kestrel Silicon Announces €120 Million Series B Financing", "",
         "funding", {"vendor_name": "Kestrel Silicon", "amount": 1.2e8, "currency": "EUR"}),
        ("Lumen Compute stock soars in Nasdaq debut after $900m IPO", "",
         "funding", {"vendor_name": "Lumen Compute", "amount": 9e8, "round_type": "ipo"}),
        # a group's brand in lower case after its capitals; a Latin name of two words after Chinese text
        ("SK nanotech agrees to acquire Aalto Logic for KRW 90bn", "",
         "acquisition", {"acquirer_name": "SK nanotech", "vendor_name": "Aalto Logic", "amount": 9e10}),
        ("苹果完成收购北欧AI实验室Aalto Logic，交易金额2亿美元", "",
         "acquisition", {"acquirer_id": "apple", "vendor_name": "Aalto Logic", "amount": 2e8}),
        # a version after a known family is a new chip
        ("Groq unveils Jalapeno v2, its fastest inference card yet", "",
         "launch", {"vendor_id": "groq", "chip_name": "Jalapeno v2", "new": True}),
    ],
)
def test_rules_that_generalise_read_the_right_fields(title, summary, kind, expected):
    found = [fact for k, fact in facts(title, summary) if k == kind]
    assert found, facts(title, summary)
    assert {key: found[0].get(key) for key in expected} == expected


@pytest.mark.parametrize(
    ("title", "summary"),
    [
        # "¥" in an item that names neither Japan nor China: no amount is guessed
        ("Kumo Devices raises ¥6 billion", ""),
        # announcing an investment in someone else is no round of one's own
        ("Apple announces $500 million investment in US chip plants", ""),
        # investing in a place funds no company
        ("Apple to invest $30 billion in Texas, adding two AI data centers", ""),
        # an offering filed or planned is not sold
        ("Lumen Compute files for $900m IPO", ""),
        ("星瀚智芯科创板IPO获受理，拟募资30亿元", ""),
        ("星瀚智芯拟定增募资不超过20亿元", ""),
    ],
)
def test_no_funding_when_the_currency_or_the_round_is_not_stated(title, summary):
    assert [f for k, f in facts(title, summary) if k == "funding"] == []


def test_a_launch_named_in_title_and_summary_is_one_launch():
    read = facts(
        "Groq Unveils LPX9 Inference Accelerator for Data Centers",
        "MOUNTAIN VIEW -- Groq, Inc. today announced the LPX9, its third-generation inference accelerator.",
    )
    launches = [(f["vendor_id"], f["chip_name"]) for k, f in read if k == "launch"]
    assert launches == [("groq", "LPX9")]


@pytest.mark.parametrize(
    ("title", "summary", "expected"),
    [
        # buying a count of chips is a planned deployment; its subject stands before "agrees to"
        ("Lumen Compute agrees to buy 50,000 GB300 GPUs", "",
         {"operator_name": "Lumen Compute", "chip_id": "gb300", "units": 50000, "status": "planned"}),
        # committing to power is a plan; a possessive owner runs what comes online
        ("OpenAI commits to 2 GW of capacity running GB300 systems", "",
         {"operator_id": "openai", "power_mw": 2000.0, "status": "planned"}),
        ("Vantor's Blue Ridge campus comes online at 300 MW", "",
         {"operator_name": "Vantor", "power_mw": 300.0, "status": "operational"}),
        # a speaker of its own machine; a cluster completed; a count written "N-GPU"
        ("Groq says its Helsinki facility now runs 40,000 LPUs", "",
         {"operator_id": "groq", "units": 40000, "status": "operational"}),
        ("Kestrel Cloud completes 8,000-GPU GB300 cluster", "",
         {"operator_name": "Kestrel Cloud", "units": 8000, "chip_id": "gb300", "status": "operational"}),
        # "the company" of the summary is the title's; a site's name before "data center"
        ("Lumen Compute raises $300 million Series B",
         "The Oslo-based company said it will deploy 12,000 GB300 GPUs at its Fjordvik data center.",
         {"operator_name": "Lumen Compute", "units": 12000, "place": "Fjordvik", "status": "planned"}),
        # "operated by" names the operator; a chip named between a count and its unit
        ("Project Aurora's first 100 MW goes live in Dubai",
         "The cluster is operated by Zenith Compute and runs GB300 systems.",
         {"operator_name": "Zenith Compute", "chip_id": "gb300", "power_mw": 100.0, "place": "Dubai"}),
        ("Kestrel Cloud to install 3,000 Helix-Pro cards", "",
         {"operator_name": "Kestrel Cloud", "chip_name": "Helix-Pro", "units": 3000}),
        # Chinese: 投产 is operational (a cluster is no operator), a place read whole, the subject before its
        # predicate and before the place of its site, a phase keeps the plan's operator
        ("星河云在内蒙古和林格尔部署1万张曦望S3，算力集群已全面投产", "",
         {"operator_name": "星河云", "chip_id": "xiwang-s3", "place": "内蒙古和林格尔",
          "status": "operational"}),
        ("星河云呼和浩特智算中心新增200兆瓦容量投入运营", "",
         {"operator_name": "星河云", "power_mw": 200.0, "place": "呼和浩特", "status": "operational"}),
        # a plural designation counts its units; "-backed" describes, it does not name
        ("Kestrel Cloud goes live with 6,000 Z900s in Reno", "",
         {"operator_name": "Kestrel Cloud", "chip_name": "Z900", "units": 6000, "place": "Reno"}),
        ("Groq-backed Kestrel Cloud to deploy 4,000 GB300 GPUs", "",
         {"operator_name": "Kestrel Cloud", "units": 4000}),
        # a second predicate of the sentence's subject, after a comma or "says"
        ("Kestrel Cloud raises $400 million Series C, will deploy 30,000 GB300 GPUs", "",
         {"operator_name": "Kestrel Cloud", "chip_id": "gb300", "units": 30000, "status": "planned"}),
        ("Groq unveils LPX9, says the card already serves chat traffic in its data centers", "",
         {"operator_id": "groq", "chip_name": "LPX9", "status": "operational"}),
        # a count whose noun is the chip named before it
        ("Apple introduces Apple M6 server chip, says 80,000 are already running in its data centers", "",
         {"operator_id": "apple", "chip_id": "apple-m6", "units": 80000, "status": "operational"}),
        # two subjects: the first leads, unless its name marks the chips (then it supplies them)
        ("OpenAI and Lumen Compute to deploy 3 gigawatts of custom accelerators", "",
         {"operator_id": "openai", "power_mw": 3000.0, "status": "planned"}),
        ("Groq and Lumen Compute to deploy 500 MW of Groq LPUs", "",
         {"operator_name": "Lumen Compute", "power_mw": 500.0, "status": "planned"}),
        # more verbs of running and of getting compute
        ("Nordic Supercomputing Centre brings Aurora system into full operation with 9,000 GB300 superchips",
         "", {"operator_name": "Nordic Supercomputing Centre", "units": 9000, "status": "operational"}),
        ("Kestrel Cloud's Reno cluster enters commercial service with 4,000 GB300 GPUs", "",
         {"operator_name": "Kestrel Cloud", "units": 4000, "status": "operational"}),
        ("Lumen Compute commissions 120 MW AI data center in Oslo", "",
         {"operator_name": "Lumen Compute", "power_mw": 120.0, "place": "Oslo", "status": "operational"}),
        ("Kestrel Cloud leases 16,000 GB300 GPUs for its Reno site", "",
         {"operator_name": "Kestrel Cloud", "units": 16000, "status": "planned"}),
        ("星河云订购2万张曦望S3", "", {"operator_name": "星河云", "units": 20000, "status": "planned"}),
        # a summary sentence that only places the system ("will start operating")
        ("Kestrel Cloud to install 5,000 GB300 GPUs", "The system in Reno will start operating next year.",
         {"operator_name": "Kestrel Cloud", "units": 5000, "place": "Reno"}),
        # "May" is a month, not a hedge
        ("In May Lumen Compute switched on 8,000 GB300 GPUs", "",
         {"operator_name": "Lumen Compute", "units": 8000, "status": "operational"}),
        # Chinese: deployed "in" a cloud is the cloud's; a centre's name is cut only before a site word
        ("曦望发布S5，已在星河云部署超过2万张", "",
         {"operator_name": "星河云", "units": 20000, "place": None, "status": "operational"}),
        ("国家超算贵阳中心部署3万张曦望S3，已投入运行", "",
         {"operator_name": "国家超算贵阳中心", "units": 30000, "status": "operational"}),
        # an operator's capacity report: active power runs, contracted power is planned
        ("Lumen Compute ends quarter with 420 MW of active power, contracted power climbs to 1.6 GW", "",
         {"operator_name": "Lumen Compute", "power_mw": 420.0, "status": "operational"}),
        ("Kestrel Cloud begins operations at 90 MW Reno campus with 20,000 GB300 GPUs", "",
         {"operator_name": "Kestrel Cloud", "units": 20000, "power_mw": 90.0, "status": "operational"}),
        ("Kestrel Cloud will begin operations at its 200 MW Reno site next year", "",
         {"operator_name": "Kestrel Cloud", "power_mw": 200.0, "status": "planned"}),
        ("Kestrel Cloud has taken delivery of 8,000 GB300 GPUs", "",
         {"operator_name": "Kestrel Cloud", "units": 8000, "status": "operational"}),
        ("Lumen Compute powers up 32,000-GPU supercomputer", "",
         {"operator_name": "Lumen Compute", "units": 32000, "status": "operational"}),
        ("Kestrel Cloud expands Reno cluster to 20,000 GB300 GPUs", "",
         {"operator_name": "Kestrel Cloud", "units": 20000, "status": "planned"}),
        ("Lumen Compute adds 5,000 GB300 GPUs to its Oslo data center", "",
         {"operator_name": "Lumen Compute", "units": 5000, "place": "Oslo", "status": "planned"}),
        # a government without a proper name; procuring; building a size of compute; APUs counted
        ("The Nordland government said it will procure 6,000 GB300 GPUs", "",
         {"operator_name": "Nordland government", "units": 6000, "status": "planned"}),
        ("Government of Nordland procures 6,000 GB300 GPUs", "",
         {"operator_name": "Government of Nordland", "units": 6000, "status": "planned"}),
        ("Lumen Compute is building a 40,000-GPU GB300 supercluster", "",
         {"operator_name": "Lumen Compute", "units": 40000, "status": "planned"}),
        ("Kestrel Lab switches on Vega, powered by 12,000 Z900 APUs", "",
         {"operator_name": "Kestrel Lab", "units": 12000, "status": "operational"}),
        # "the neocloud" refers to the title's company; ", operated by X," names who runs the site
        ("Kestrel Cloud picks GB300 for Reno expansion",
         "The neocloud will deploy 20,000 of the GPUs at its Reno campus starting in March.",
         {"operator_name": "Kestrel Cloud", "chip_id": "gb300", "units": 20000, "status": "planned"}),
        ("Nordic AI Factory goes live", "The facility, operated by Lumen Compute, houses 8,000 GB300 GPUs.",
         {"operator_name": "Lumen Compute", "units": 8000, "status": "operational"}),
        # a machine of the summary is the title's company's when nothing else is deployed; two subjects
        # written with a comma
        ("Lumen Compute raises $2 billion to expand Aurora",
         "The Oslo supercomputer already runs more than 60,000 GPUs.",
         {"operator_name": "Lumen Compute", "units": 60000, "status": "operational"}),
        ("OpenAI, Lumen Compute add 1.5 GW to Project Aurora", "",
         {"operator_id": "openai", "power_mw": 1500.0, "status": "planned"}),
        # a site that will house chips; power to have online; a speaker's "we"
        ("Kestrel Cloud's new Reno data center will house up to 30,000 GB300 GPUs", "",
         {"operator_name": "Kestrel Cloud", "units": 30000, "place": "Reno", "status": "planned"}),
        ("Lumen Compute expects to have 1 GW online by 2027", "",
         {"operator_name": "Lumen Compute", "power_mw": 1000.0, "status": "planned"}),
        ("Lumen Compute: we have deployed more than 100,000 GPUs across our fleet", "",
         {"operator_name": "Lumen Compute", "units": 100000, "status": "operational"}),
        # Chinese: 其 refers to the sentence's subject; a plan to complete is a plan, a year no designation
        ("星河云宣布，其贵安数据中心已部署超过3万张曦望S3", "",
         {"operator_name": "星河云", "units": 30000, "place": "贵安", "status": "operational"}),
        ("星河云计划2026年底前建成5万卡智算集群", "",
         {"operator_name": "星河云", "chip_name": None, "units": 50000, "status": "planned"}),
        # Chinese: 完成部署 is done; the subject before 宣布, 斥资 or "与 ... 签约，将"
        ("星河云完成部署5000张曦望S3", "",
         {"operator_name": "星河云", "units": 5000, "status": "operational"}),
        ("星河云宣布其乌兰察布智算中心已上线2万卡集群", "",
         {"operator_name": "星河云", "units": 20000, "place": "乌兰察布", "status": "operational"}),
        ("星河云与曦望签约，将采购3万张曦望S3", "",
         {"operator_name": "星河云", "chip_id": "xiwang-s3", "units": 30000, "status": "planned"}),
        ("星河云斥资50亿元采购2万张GPU", "",
         {"operator_name": "星河云", "units": 20000, "status": "planned"}),
    ],
)
def test_deployment_rules_read_the_right_fields(title, summary, expected):
    found = [fact for k, fact in facts(title, summary) if k == "deployment"]
    assert found, facts(title, summary)
    assert {key: found[0].get(key) for key in expected} == expected


def test_a_phase_is_its_plans_deployment_with_its_own_figures():
    title = "星河云贵安智算中心规划总功率2吉瓦，首期将部署5万张曦望S3"
    read = [f for k, f in facts(title) if k == "deployment"]
    assert [(f["operator_name"], f["power_mw"], f["units"], f["place"]) for f in read] == [
        ("星河云", 2000.0, None, "贵安"),
        ("星河云", None, 50000, "贵安"),
    ]


@pytest.mark.parametrize(
    ("title", "summary"),
    [
        # a ratio after "runs" and shares bought are no chips deployed
        ("OpenAI's model runs 3x faster on GB300", ""),
        ("Apple buys 5 percent of Groq", ""),
        # 规划 without power or cards is a plan of products, not of compute
        ("苹果规划明年推出M7芯片", ""),
        # possibilities, talks, rumours and estimates are no deployments
        ("Lumen Compute could deploy 20,000 GB300 GPUs next year", ""),
        ("Kestrel Cloud is considering plans to deploy 10,000 GB300 GPUs", ""),
        ("Groq in talks to buy 50,000 GB300 GPUs", ""),
        ("Analysts estimate OpenAI will deploy 2 GW of GB300 systems by 2027", ""),
        ("Kestrel Cloud switches on Reno site", "The operator might install 6,000 GB300 GPUs there."),
        ("据传星河云或将采购5万张曦望S3", ""),
        ("星河云可能在贵安部署3万张曦望S3", ""),
        ("分析师预计星河云明年将部署20万张GPU", ""),
        # verbs that take other objects: people added, a study commissioned
        ("Groq adds 5,000 engineers to its chip teams", ""),
        ("Lumen Compute commissions study on 2 GW of AI demand", ""),
        ("Lumen Compute builds new headquarters in Oslo", ""),
        # a product's own figures are no deployment of its maker
        ("Groq unveils LPX9 rack", "The system runs 72 LPUs."),
        # a chip deployed "at many operators" names neither an operator nor a place
        ("曦望S3已在多家运营商部署", ""),
        # making chips is not running them: a fab's power, a chip entering production
        ("Kestrel Semi starts operations at Oslo memory fab with 300 MW of power", ""),
        ("Groq's LPX9 enters full production", ""),
    ],
)
def test_no_deployment_from_words_that_only_look_like_one(title, summary):
    assert [f for k, f in facts(title, summary) if k == "deployment"] == []


@pytest.mark.parametrize(
    ("title", "summary", "kind", "expected"),
    [
        # who reported: tests named after their maker, an analyst's note, 数据来自
        ("Xiwang S3 serves GPT-OSS 120B at 900 tokens/s per user in Artificial Insight tests", "",
         "benchmark", {"chip_id": "xiwang-s3", "value": 900.0, "reported_by_name": "Artificial Insight"}),
        ("ChipLens note: Jalapeño delivers 30% lower cost per token than GB300", "",
         "benchmark", {"chip_id": "jalapeno", "baseline_id": "gb300", "reported_by_name": "ChipLens"}),
        ("苹果推出M7，推理吞吐是M6的3倍", "数据来自苹果内部测试。",
         "benchmark", {"value": 3.0, "baseline_id": "apple-m6", "reported_by_id": "apple"}),
        ("芯源科技发布星河900，称能效为GB300的2倍", "",
         "benchmark", {"chip_name": "星河900", "baseline_id": "gb300", "reported_by_name": "芯源科技"}),
        # a product name of two words or an acronym, new to the knowledge base
        ("Lumen says Vega Duo delivers 2.5x the tokens per watt of GB300", "",
         "benchmark", {"chip_name": "Vega Duo", "baseline_id": "gb300", "reported_by_name": "Lumen"}),
        ("Groq says ORCA runs GPT-OSS 120B 1.8x faster than GB300", "",
         "benchmark", {"chip_name": "ORCA", "value": 1.8, "reported_by_id": "groq"}),
        # a launch and its claim in one sentence: both facts, the baseline after a generation word
        ("Groq Unveils Falcon, Claims 3x Faster Inference Than GB300", "",
         "benchmark", {"chip_name": "Falcon", "baseline_id": "gb300", "reported_by_id": "groq"}),
        ("Groq Unveils Falcon, Claims 3x Faster Inference Than GB300", "",
         "launch", {"vendor_id": "groq", "chip_name": "Falcon"}),
        ("Xiwang launches Atlas Max with 2x the performance per watt of second-generation Atlas", "",
         "benchmark", {"chip_name": "Atlas Max", "baseline_name": "Atlas", "metric": "throughput_per_power"}),
        ("Groq begins shipping Falcon racks to customers", "",
         "launch", {"vendor_id": "groq", "chip_name": "Falcon"}),
        # a rate per second in Chinese order
        ("曦望发布S5芯片，单用户输出速度达每秒650个token", "",
         "benchmark", {"chip_name": "S5", "value": 650.0, "unit": "tok/s", "metric": "speed"}),
        # ", per X" names who measured; "takes the wraps off" launches
        ("Xiwang S3 hits 700 tokens per second per user, per Token Bench", "",
         "benchmark", {"chip_id": "xiwang-s3", "reported_by_name": "Token Bench"}),
        ("Groq takes the wraps off LPX9 inference card", "",
         "launch", {"vendor_id": "groq", "chip_name": "LPX9"}),
        # sampling and showing off launch; a Chinese chip that debuts (亮相) is its maker's launch
        ("Groq begins sampling LPX9 to customers", "", "launch", {"vendor_id": "groq", "chip_name": "LPX9"}),
        ("Groq shows off LPX9 at Computex", "", "launch", {"vendor_id": "groq", "chip_name": "LPX9"}),
        ("星瀚智芯首款芯片星瀚T1亮相世界人工智能大会", "",
         "launch", {"vendor_name": "星瀚智芯", "chip_name": "星瀚T1"}),
        ("曦望S5亮相世界人工智能大会", "", "launch", {"vendor_id": "xiwang", "chip_name": "曦望S5"}),
        # a tester that clocks a chip; a lead-in of several words; a number after the name is the claim's
        ("Token Bench clocks Xiwang S3 at 800 tokens/s per user", "",
         "benchmark", {"chip_id": "xiwang-s3", "value": 800.0, "reported_by_name": "Token Bench"}),
        ("Kestrel AI Research: Xiwang S3 serves GPT-OSS 120B with 90 ms time to first token", "",
         "benchmark", {"chip_id": "xiwang-s3", "value": 90.0, "reported_by_name": "Kestrel AI Research"}),
        # the company that claims keeps its corporate word and leaves its product out
        ("Kestrel Silicon claims KX9 cuts time to first token to 80 ms", "",
         "benchmark", {"chip_name": "KX9", "value": 80.0, "reported_by_name": "Kestrel Silicon"}),
        ("Kestrel Silicon KX9 delivers 2.3x the throughput of GB300, the company said", "",
         "benchmark", {"value": 2.3, "baseline_id": "gb300", "reported_by_name": "Kestrel Silicon"}),
        # "more efficient" claims per power; a comparison word before a designation is no family
        ("Groq claims LPX9 is 4x more efficient than GB300", "",
         "benchmark", {"chip_name": "LPX9", "metric": "throughput_per_power", "baseline_id": "gb300"}),
        ("曦望S3推理吞吐较H20提升2.8倍，曦望称", "",
         "benchmark",
         {"chip_id": "xiwang-s3", "value": 2.8, "baseline_name": "H20", "reported_by_id": "xiwang"}),
        # the summary's claim of the same note takes the title's claimant; "below" names a baseline
        ("ChipLens: Jalapeño cuts cost per token 30% versus GB300",
         "The same note puts the cost per token of Apple's Orchard 200 15% below GB300's.",
         "benchmark", {"chip_name": "Orchard 200", "value": 15.0, "baseline_id": "gb300",
                       "reported_by_name": "ChipLens"}),
    ],
)
def test_benchmark_and_launch_rules_read_the_right_fields(title, summary, kind, expected):
    found = [fact for k, fact in facts(title, summary) if k == kind]
    assert found, facts(title, summary)
    # the fact of the expected chip when an item states several
    fact = next((f for f in found if f.get("chip_name") == expected.get("chip_name")), found[0])
    assert {key: fact.get(key) for key in expected} == expected


@pytest.mark.parametrize(
    "title",
    [
        # a generic unit is no product name on its own
        "Groq says the NPU delivers 3x the throughput of GB300",
        # a launch without a claim after it names no product unless it looks like one
        "Groq unveils Falcon to customers",
    ],
)
def test_no_product_from_a_generic_word(title):
    read = facts(title)
    assert [f for k, f in read if k == "benchmark" and f["chip_name"] in ("NPU", "the NPU")] == []
    assert [f for k, f in read if k == "launch" and f["chip_name"] == "Falcon"] == []
