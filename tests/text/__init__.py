"""Tests of the pure text readers: dates, links, quantities."""
