"""``chipwatch check``: the same check as the scheduler, with a summary table."""

from __future__ import annotations

import logging

import pytest
from typer.testing import CliRunner

from chipwatch.cli import app
from tests.fixtures.sources import Entry, add_source, item_count, rss, source_row


@pytest.fixture(autouse=True)
def restore_logging():
    """The command installs its own log handler; put the test run's back afterwards."""
    root = logging.getLogger()
    handlers, level = root.handlers[:], root.level
    sources_level = logging.getLogger("chipwatch.sources").level
    yield
    root.handlers[:] = handlers
    root.setLevel(level)
    logging.getLogger("chipwatch.sources").setLevel(sources_level)


def test_check_named_sources_prints_a_summary(db, httpserver, closed_port_url):
    httpserver.expect_request("/feed.xml").respond_with_data(
        rss([Entry("Jalapeño ships", guid="a"), Entry("GB300 rack", guid="b")]),
        content_type="application/rss+xml",
    )
    add_source("local-feed", httpserver.url_for("/feed.xml"))
    add_source("dead-feed", closed_port_url)
    result = CliRunner().invoke(app, ["check", "--source", "local-feed", "--source", "dead-feed"])
    assert result.exit_code == 0, result.output
    assert "local-feed" in result.output and "dead-feed" in result.output
    assert "connection failed" in result.output
    assert "2 checked, 2 new items, 1 failed" in result.output
    assert item_count() == 2
    assert source_row("dead-feed").consecutive_failures == 1


def test_check_exits_1_when_every_feed_checked_failed(db, closed_port_url):
    add_source("dead-feed", closed_port_url)
    add_source("dead-too", closed_port_url + "/other")
    result = CliRunner().invoke(app, ["check", "--source", "dead-feed", "--source", "dead-too"])
    assert result.exit_code == 1, result.output
    assert "2 checked, 0 new items, 2 failed" in result.output


@pytest.mark.parametrize(
    ("source_id", "message"), [("nope", "no source with id"), ("36kr", "not a polled feed")]
)
def test_check_refuses_unknown_and_non_feed_sources(db, source_id, message):
    result = CliRunner().invoke(app, ["check", "--source", source_id])
    assert result.exit_code == 2
    assert message in result.output
