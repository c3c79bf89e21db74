"""The signal language as Markdown, generated from ``schema/signal.schema.json`` (the one definition).

The README's section between the ``signal-language`` markers is this module's output; after a change to
the schema, ``python -m chipwatch.signals.language_doc README.md`` rewrites it (``make docs``), and a test
fails while the two differ.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path
from typing import Any

from chipwatch.signals.definition import load_schema

START = "<!-- signal-language:start (generated from schema/signal.schema.json: make docs) -->"
END = "<!-- signal-language:end -->"
CONDITION_KINDS = ("item", "result", "deployment", "funding", "change")
NESTED = {"number": "item", "value": "result"}  # objects inside a condition, each with its own table
_NAMED_TYPES = {
    "date": "date (YYYY-MM-DD)",
    "entity_id": "id",
    "round_type": "round type",
    "entity_ids": "list of ids",
    "term": "term",
    "terms": "list of terms",
    "condition": "condition",
}


def _def_name(node: dict[str, Any]) -> str | None:
    ref = node.get("$ref", "")
    return ref.rsplit("/", 1)[-1] if ref.startswith("#/$defs/") else None


def type_text(node: dict[str, Any], defs: dict[str, Any]) -> str:
    """A short human name for the type of a schema node: ``list of ids``, ``auto | manual``..."""
    name = _def_name(node)
    if name is not None:
        target = defs[name]
        if name in _NAMED_TYPES:
            return _NAMED_TYPES[name]
        if name in NESTED or name in CONDITION_KINDS:
            return f"object ({name}, below)"
        return type_text(target, defs)
    if "enum" in node:
        return " \\| ".join(f"`{v}`" for v in node["enum"])
    if "anyOf" in node:
        return " or ".join(type_text(option, defs) for option in node["anyOf"])
    kind = node.get("type")
    if isinstance(kind, list):
        return " or ".join(type_text({**node, "type": k}, defs) for k in kind)
    if kind == "array":
        return "list of " + _plural(type_text(node.get("items", {}), defs))
    if kind == "string" and node.get("format") == "date":
        return "date (YYYY-MM-DD)"
    return {"number": "number", "integer": "integer", "boolean": "true \\| false", "null": "null"}.get(
        kind, kind or "any"
    )


def _plural(text: str) -> str:
    return {"id": "ids", "term": "terms", "condition": "conditions", "string": "strings",
            "round type": "round types"}.get(text, text)


def _description(node: dict[str, Any], defs: dict[str, Any]) -> str:
    text = node.get("description")
    name = _def_name(node)
    if not text and name is not None:
        text = defs[name].get("description", "")
    return " ".join((text or "").split()).replace("|", "\\|")


def _table(properties: dict[str, Any], required: list[str], defs: dict[str, Any]) -> list[str]:
    lines = ["| field | type | required / default | meaning |", "|---|---|---|---|"]
    for field, node in properties.items():
        if field in required:
            need = "required"
        elif "default" in node:
            need = f"default `{_json(node['default'])}`"
        else:
            need = ""
        lines.append(f"| `{field}` | {type_text(node, defs)} | {need} | {_description(node, defs)} |")
    return lines


def _json(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    return "[]" if value == [] else str(value)


def render(schema: dict[str, Any] | None = None) -> str:
    """The Markdown of the signal language: the top-level fields, then each condition kind and the
    objects nested in them, every row taken from the schema (type, required or default, description)."""
    schema = schema or load_schema()
    defs = schema["$defs"]
    out = [
        " ".join(schema["description"].split()),
        "",
        *_table(schema["properties"], schema.get("required", []), defs),
        "",
        _description({"$ref": "#/$defs/condition"}, defs),
    ]
    for kind in (*CONDITION_KINDS, *NESTED):
        node = defs[kind]
        where = f" (inside `{NESTED[kind]}`)" if kind in NESTED else ""
        out += ["", f"`{kind}`{where}: {_description(node, defs)}", ""]
        out += _table(node["properties"], node.get("required", []), defs)
    term = defs.get("term")
    if term is not None:
        terms = _description(defs.get("terms", {}), defs)
        out += ["", f"A term: {_description(term, defs)} {terms}".rstrip()]
    return "\n".join(out)


def replace_section(text: str, section: str) -> str:
    """``text`` with the part between :data:`START` and :data:`END` replaced by ``section``; raises
    ValueError when the markers are missing."""
    pattern = re.compile(re.escape(START) + r".*?" + re.escape(END), re.S)
    if not pattern.search(text):
        raise ValueError("the signal-language markers are missing")
    return pattern.sub(lambda _m: f"{START}\n{section}\n{END}", text, count=1)


def main(argv: list[str]) -> int:
    """``python -m chipwatch.signals.language_doc FILE``: rewrite FILE's generated section."""
    if len(argv) != 1:
        print("usage: python -m chipwatch.signals.language_doc README.md", file=sys.stderr)
        return 2
    path = Path(argv[0])
    path.write_text(replace_section(path.read_text(encoding="utf-8"), render()), encoding="utf-8")
    return 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main(sys.argv[1:]))
