"""The README's account of the signal language is generated from its JSON Schema and kept in step."""

from __future__ import annotations

import re

import pytest

from chipwatch.paths import PROJECT_ROOT
from chipwatch.signals.definition import load_schema
from chipwatch.signals.language_doc import END, START, main, render, replace_section


def test_the_readme_section_is_the_schema_rendered():
    text = (PROJECT_ROOT / "README.md").read_text(encoding="utf-8")
    section = text.split(START, 1)[1].split(END, 1)[0].strip("\n")
    assert section == render(), "README.md's signal language is out of date: run `make docs`"


def test_every_field_of_the_schema_has_a_row_with_its_type_and_requirement():
    schema = load_schema()
    doc = render(schema)
    rows = {m.group(1): m.group(0) for m in re.finditer(r"^\| `([a-z_]+)` \|.*$", doc, re.M)}
    for field in schema["properties"]:
        assert field in rows
    for required in schema["required"]:
        assert "| required |" in rows[required]
    assert "| `review` | `auto` \\| `manual` | default `auto` |" in doc
    assert "| `on_deadline` | `no` \\| `annulled` | default `no` |" in doc
    for kind in ("item", "result", "deployment", "change"):
        assert f"\n`{kind}`: " in doc
        for field in schema["$defs"][kind]["properties"]:
            assert re.search(rf"^\| `{field}` \|", doc, re.M), (kind, field)
    assert "| `mentions_all` | list of ids |" in doc and "| `published_after` | date (YYYY-MM-DD) |" in doc


def test_the_generator_rewrites_only_its_section(tmp_path):
    readme = tmp_path / "README.md"
    readme.write_text(f"# title\n\nbefore\n{START}\nstale\n{END}\nafter\n", encoding="utf-8")
    assert main([str(readme)]) == 0
    assert readme.read_text(encoding="utf-8") == f"# title\n\nbefore\n{START}\n{render()}\n{END}\nafter\n"
    with pytest.raises(ValueError):
        replace_section("no markers here", "x")
