"""Tests of the signal language and the pure matcher."""
