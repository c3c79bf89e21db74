"""Epoch AI AI-companies funding rounds CSV -> funding round records.

The row key is Epoch's ``Id`` (``Sep 2025 10B``), unique within a company's rounds; dates are in Epoch's
``M/D/YYYY``. Amounts are in US dollars as Epoch states them. A round still being negotiated
(``Late discussions``) is ``in_discussion``, never ``closed``.
Source: Epoch AI, 'Data on AI Companies', https://epoch.ai/data (CC BY).
"""

from __future__ import annotations

from dataclasses import dataclass

from chipwatch.datasets.records import ParseResult, PartialDate, Record
from chipwatch.datasets.rows import Cells
from chipwatch.datasets.tables import Column, collect_csv

KIND = "epoch-funding-rounds"

STATUSES: dict[str, str] = {
    "closed": "closed",
    "late discussions": "in_discussion",
    "early discussions": "in_discussion",
    "in discussion": "in_discussion",
    "in discussions": "in_discussion",
}
"""Epoch status (casefolded) -> round status; a status not listed here is unknown."""

CONFIDENCES: dict[str, str] = {"confident": "confident", "likely": "likely", "uncertain": "uncertain"}
"""Epoch's confidence words, kept as Epoch's own verification of the row."""

COLUMNS: tuple[Column, ...] = (
    Column("id", ("Id", "ID"), required=True),
    Column("company", ("Company",), required=True),
    Column("close_date", ("Close date",), required=True),
    Column("status", ("Status",), required=True),
    Column("equity_usd", ("Funding (equity)",), required=True),
    Column("debt_usd", ("Funding (debt)",)),
    Column("valuation_usd", ("Valuation (post-money)",)),
    Column("report_date", ("Report date",)),
    Column("notes", ("Notes",)),
    Column("type", ("Type",)),
    Column("confidence", ("Confidence",)),
    Column("exclude_from_graph", ("Exclude from graph view",)),
)


@dataclass(slots=True, kw_only=True)
class FundingRoundRecord(Record):
    """One Epoch funding round.

    ``status`` is ``closed`` | ``in_discussion`` (None when Epoch's word is not known;
    ``status_raw`` keeps it); ``confidence`` is Epoch's ``confident`` | ``likely`` | ``uncertain``.
    ``round_types`` are Epoch's ``Type`` words lowercased (``primary``, ``debt``, ``secondary``).
    """

    company: str
    status: str | None = None
    status_raw: str | None = None
    equity_usd: float | None = None
    debt_usd: float | None = None
    post_money_valuation_usd: float | None = None
    close_date: PartialDate | None = None
    report_date: PartialDate | None = None
    round_types: tuple[str, ...] = ()
    confidence: str | None = None
    exclude_from_graph: bool | None = None
    notes: str | None = None


def _round(cells: Cells) -> FundingRoundRecord:
    key = cells.required("id")
    types = cells.text("type")
    return FundingRoundRecord(
        row=cells.row,
        line=cells.line,
        row_key=key,
        company=cells.required("company"),
        status=cells.choice("status", STATUSES),
        status_raw=cells.text("status"),
        equity_usd=cells.number("equity_usd"),
        debt_usd=cells.number("debt_usd"),
        post_money_valuation_usd=cells.number("valuation_usd"),
        close_date=cells.partial_date("close_date"),
        report_date=cells.partial_date("report_date"),
        round_types=tuple(part.strip().lower() for part in (types or "").split(",") if part.strip()),
        confidence=cells.choice("confidence", CONFIDENCES),
        exclude_from_graph=cells.flag("exclude_from_graph"),
        notes=cells.text("notes"),
    )


def parse_funding_rounds(data: bytes | str) -> ParseResult[FundingRoundRecord]:
    """Funding rounds from an Epoch AI funding rounds CSV.

    Returns a ParseResult of :class:`FundingRoundRecord` keyed by Epoch's Id; a row without an Id or a
    company is an error; a blank or unreadable amount or date is None (the latter also a warning).
    Raises DatasetFormatError naming the missing columns when the header is not this dataset's.
    """
    return collect_csv(data, COLUMNS, _round, kind=KIND)
