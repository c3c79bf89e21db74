"""General reading rules, each on invented companies and chips: how a round, a deal or a deployment is
written in ways the labelled sets met rarely (a market debut, a debt package beside equity, a company
named by "the company" or "it", a target behind a country's possessive, a facility or a place written
with its operator, a count in 万卡)."""

from __future__ import annotations

import pytest

from chipwatch.candidates.extract import extract
from chipwatch.candidates.lexicon import LexEntry, Lexicon

LEXICON = Lexicon.build(
    [
        LexEntry("nvidia", "vendor", ("NVIDIA", "英伟达")),
        LexEntry("quillon", "vendor", ("Quillon", "奎隆")),
        LexEntry("huawei", "vendor", ("Huawei", "华为")),
        LexEntry("gb300", "chip", ("GB300", "Blackwell Ultra"), "nvidia"),
        LexEntry("quillon-q7", "chip", ("Quillon Q7", "奎隆Q7", "Q7"), "quillon"),
        LexEntry("ascend-910b", "chip", ("Ascend 910B", "昇腾910B"), "huawei"),
    ]
)


def facts(title: str, summary: str = "", kind: str | None = None) -> list[dict]:
    return [p.fact for p in extract(title, summary, LEXICON) if kind is None or p.kind == kind]


# --------------------------------------------------------------------------------------------- funding


def test_a_market_debut_is_an_ipo_with_its_valuation():
    (fact,) = facts("Tarnwell raises $900 million in NYSE debut, valuing the chipmaker at $8 billion")
    assert (fact["vendor_name"], fact["amount"], fact["round_type"], fact["post_money_valuation"]) == (
        "Tarnwell", 9e8, "ipo", 8e9
    )


@pytest.mark.parametrize(
    "title",
    [
        "Brackenfield secures $400 million GPU-backed credit facility led by Citi",
        "Brackenfield lands $2bn debt financing for Ohio campus",
        "Brackenfield raises $750 million revolving loan",
    ],
)
def test_a_loan_is_no_round(title):
    assert facts(title, kind="funding") == []


def test_equity_beside_debt_is_the_round():
    (fact,) = facts(
        "Brackenfield lines up $6bn in debt and $450m of equity for Danish AI campus",
        "The Oslo-based neocloud said the equity round values the company at $2.1bn.",
        kind="funding",
    )
    assert (fact["vendor_name"], fact["amount"], fact["post_money_valuation"]) == (
        "Brackenfield", 4.5e8, 2.1e9
    )


def test_the_company_of_the_title_closes_a_round_in_the_summary():
    (fact,) = facts(
        "Tarnwell courts Nordic carriers as edge AI demand grows",
        "Tarnwell's chief executive spoke at a conference. The Tampere-based company closed a 90 billion won "
        "(US$65 million) Series C led by a state bank this month.",
        kind="funding",
    )
    assert (fact["vendor_name"], fact["amount"], fact["currency"], fact["round_type"]) == (
        "Tarnwell", 9e10, "KRW", "series_c"
    )


# ---------------------------------------------------------------------------------------- acquisitions


def test_the_target_after_a_countrys_possessive():
    (fact,) = facts("Quillon to buy Norway's Fjordcool for €800m in cooling push", kind="acquisition")
    assert (fact["acquirer_id"], fact["vendor_name"], fact["amount"], fact["currency"]) == (
        "quillon", "Fjordcool", 8e8, "EUR"
    )


def test_it_in_the_summary_is_the_titles_company():
    (fact,) = facts(
        "Quillon sharpens server ambitions with interconnect deal",
        "On Monday it said it had agreed to acquire Latchpoint Labs, a Austin-based switch designer.",
        kind="acquisition",
    )
    assert (fact["acquirer_id"], fact["vendor_name"]) == ("quillon", "Latchpoint Labs")


def test_a_second_verb_shares_the_subject_and_a_rounds_sum_is_no_price():
    found = facts("Tarnwell raises $300 million Series B and agrees to buy chip designer Ostrava Micro")
    deal = next(f for f in found if "acquirer_name" in f)
    assert (deal["acquirer_name"], deal["vendor_name"], deal["amount"]) == ("Tarnwell", "Ostrava Micro", None)


def test_the_price_in_the_summarys_agreement_to_acquire():
    (fact,) = facts(
        "Quillon to Acquire Latchpoint Labs, Expanding Its Interconnect Portfolio",
        "AUSTIN, Texas -- Quillon Inc. today announced a definitive agreement to acquire Latchpoint Labs, a "
        "maker of CXL switches, for approximately $310 million in cash.",
        kind="acquisition",
    )
    assert (fact["vendor_name"], fact["amount"], fact["currency"]) == ("Latchpoint Labs", 3.1e8, "USD")


def test_chinese_deal_named_again_is_no_second_deal_and_its_price_is_read():
    (fact,) = facts("奎隆完成对星河微电子的收购", "此次交易以发行股份方式进行，交易作价约12.5亿元。")
    assert (fact["acquirer_id"], fact["vendor_name"], fact["amount"], fact["currency"]) == (
        "quillon", "星河微电子", 1.25e9, "CNY"
    )
    found = facts("奎隆宣布收购驱动软件公司星河视界", "奎隆表示此次收购将加强其编译器团队，交易金额未披露。")
    assert [(f["acquirer_id"], f["vendor_name"]) for f in found] == [("quillon", "星河视界")]


# ----------------------------------------------------------------------------------------- deployments


def test_a_site_and_its_phase_run_the_chips_and_a_clause_after_the_comma_gives_the_power():
    (fact,) = facts("星河智算中心二期投运，200兆瓦算力集群采用奎隆Q7", kind="deployment")
    assert (fact["operator_name"], fact["chip_id"], fact["power_mw"], fact["status"]) == (
        "星河智算中心", "quillon-q7", 200, "operational"
    )


def test_an_operator_before_the_place_of_its_ten_thousand_card_cluster():
    (fact,) = facts("星河电信大连万卡集群投运，部署昇腾910B", kind="deployment")
    assert (fact["operator_name"], fact["chip_id"], fact["units"], fact["place"]) == (
        "星河电信", "ascend-910b", 10000, "大连"
    )
    # an approximate size is no count, nor a class of cluster
    (fact,) = facts("星河电信大连上万卡集群投运，部署昇腾910B", kind="deployment")
    assert fact["units"] is None
    found = facts(
        "星河电信点亮3万卡奎隆Q7集群", "星河电信称这是国内首个正式点亮的自研万卡集群。", kind="deployment"
    )
    assert [(f["operator_name"], f["units"]) for f in found] == [("星河电信", 30000)]


def test_the_first_party_of_a_signing_buys_from_the_chip_maker():
    (fact,) = facts("星河仪电与奎隆签约 采购3000张奎隆Q7建设智算中心", kind="deployment")
    assert (fact["operator_name"], fact["chip_id"], fact["units"], fact["status"]) == (
        "星河仪电", "quillon-q7", 3000, "planned"
    )


def test_the_title_company_said_its_site_went_live():
    (fact,) = facts(
        "Tarnwell bets on AI data centres as mobile growth stalls",
        "Tarnwell's profit fell 9%. The carrier said its Birch GPU cluster in Espoo, Finland, went live in "
        "October with 2,000 Nvidia B200 GPUs.",
        kind="deployment",
    )
    assert (fact["operator_name"], fact["chip_name"], fact["units"], fact["status"], fact["place"]) == (
        "Tarnwell", "B200", 2000, "operational", "Espoo"
    )


def test_a_named_site_then_its_known_place_gives_the_place():
    (fact,) = facts("Tarnwell brings 20,000-GPU GB300 cluster online at Project Birch in North Texas")
    assert (fact["operator_name"], fact["units"], fact["place"]) == ("Tarnwell", 20000, "North Texas")


def test_a_campus_in_the_summary_places_the_titles_deployment():
    (fact,) = facts(
        "Tarnwell switches on Birch 2, a 6,000-GPU AI supercomputer built on Nvidia B300",
        "The system at the carrier's Espoo campus is open to universities.",
    )
    assert (fact["operator_name"], fact["units"], fact["place"]) == ("Tarnwell", 6000, "Espoo")


def test_an_older_deal_told_for_comparison_is_no_deal():
    found = facts(
        "Quillon to buy Norway's Fjordcool for €800m",
        "The deal, Quillon's largest since it bought Arctis in 2017, gives the group a foothold in cooling.",
    )
    assert [f["vendor_name"] for f in found] == ["Fjordcool"]


# ------------------------------------------------------------------------------------------ benchmarks


def test_a_known_model_is_no_claimed_chip():
    lexicon = Lexicon.build([*LEXICON.entries.values(), LexEntry("llama-z9", "model", ("Llama-Z9",))])
    found = extract(
        "Tarnwell brings 36 GB300 NVL72 racks online in Ohio",
        "The company said Llama-Z9 runs at 400 tokens per second per user on the new systems.",
        lexicon,
    )
    # the model runs on the hardware the title names, and "the company" that said so is the title's
    ((claim),) = [p.fact for p in found if p.kind == "benchmark"]
    assert (claim["chip_id"], claim["value"], claim["unit"], claim["reported_by_name"]) == (
        "gb300", 400.0, "tok/s/user", "Tarnwell"
    )


def test_the_chip_a_model_runs_on_is_the_claimed_chip():
    lexicon = Lexicon.build([*LEXICON.entries.values(), LexEntry("llama-z9", "model", ("Llama-Z9",))])
    title = "Llama-Z9 runs at 2,100 tokens per second on Quillon Q7, Quillon says"
    (claim,) = [p.fact for p in extract(title, "", lexicon)]
    assert (claim["chip_id"], claim["value"], claim["reported_by_id"]) == ("quillon-q7", 2100.0, "quillon")


@pytest.mark.parametrize(
    "title",
    [
        "Quillon exec: Q7's near-memory design gives more than 10x effective memory bandwidth",
        "Quillon Q7 offers 2x the HBM capacity of GB300",
        "Quillon Q7 delivers 3x more FLOPS than GB300",
    ],
)
def test_a_datasheet_ratio_is_no_claim(title):
    assert facts(title, kind="benchmark") == []


def test_a_ratio_of_throughput_is_still_a_claim():
    (fact,) = facts("Quillon Q7 delivers 2x the throughput of GB300 on memory-bound models", kind="benchmark")
    assert (fact["chip_id"], fact["value"], fact["baseline_id"]) == ("quillon-q7", 2.0, "gb300")


def test_the_next_fastest_provider_does_not_inherit_the_claim():
    found = facts(
        "Quillon Q7 clocks 3,000 tokens/s per user on a 120B model, ChipLens finds",
        "The next-fastest provider in the independent test served the model at under 1,000 tokens per "
        "second.",
        kind="benchmark",
    )
    assert [(f["chip_id"], f["value"]) for f in found] == [("quillon-q7", 3000.0)]


def test_a_time_clause_is_no_second_deployment():
    found = facts(
        "Tarnwell raises $1.5bn Series E, plans 100 MW Ohio AI factory",
        "The GPU cloud said the site will house more than 10,000 Nvidia Blackwell Ultra GPUs when it "
        "opens in "
        "2027. The round was led by a fund, with Nvidia participating.",
        kind="deployment",
    )
    assert [(f["operator_name"], f["units"], f["power_mw"], f["status"]) for f in found] == [
        ("Tarnwell", 10000, 100, "planned")
    ]


# -------------------------------------------------------------------------------------------- launches


@pytest.mark.parametrize(
    ("title", "chip"),
    [("奎隆正式发布星算四号DCU，面向大模型推理", "星算四号"), ("奎隆发布星算3号芯片", "星算3号")],
)
def test_a_chinese_product_named_by_its_ordinal(title, chip):
    (fact,) = facts(title, kind="launch")
    assert (fact["vendor_id"], fact["chip_name"], fact["new"]) == ("quillon", chip, True)


def test_a_chip_that_breaks_cover():
    (fact,) = facts("Quillon's Q9 breaks cover, ditches HBM for stacked SRAM", kind="launch")
    assert (fact["vendor_id"], fact["chip_name"]) == ("quillon", "Q9")


def test_capacity_running_and_capacity_contracted_are_two_deployments():
    found = facts(
        "Tarnwell ends quarter with 590 MW of active power and 2.9 GW contracted", kind="deployment"
    )
    assert [(f["operator_name"], f["power_mw"], f["status"]) for f in found] == [
        ("Tarnwell", 590, "operational"), ("Tarnwell", 2900, "planned")
    ]


def test_a_machine_named_with_its_description_runs_at_its_institution():
    (fact,) = facts(
        "Birchwood, Europe's largest AI supercomputer, enters full operation at Tampere Research Institute",
        "The machine's Booster module runs about 12,000 Nvidia GH200 Grace Hopper superchips.",
        kind="deployment",
    )
    assert (fact["operator_name"], fact["chip_name"], fact["units"], fact["status"]) == (
        "Tampere Research Institute", "GH200", 12000, "operational"
    )
