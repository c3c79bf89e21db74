"""Property-based run over the OpenAPI schema: no 5xx and no answer that breaks the schema.

Each operation is its own test case on its own seeded database.  Hypothesis drives schemathesis's
case strategies directly, so the run does not depend on schemathesis's pytest plugin.
"""

import pytest
import schemathesis
from hypothesis import HealthCheck, given, settings
from schemathesis.checks import not_a_server_error
from schemathesis.specs.openapi.checks import (
    content_type_conformance,
    response_schema_conformance,
    status_code_conformance,
)

from chipwatch.app import create_app
from tests.fixtures.database import ADMIN_TOKEN

OPERATIONS = [
    (method.upper(), path)
    for path, ops in create_app(scheduler=False).openapi()["paths"].items()
    for method in ops
]
CHECKS = [not_a_server_error, status_code_conformance, content_type_conformance, response_schema_conformance]


# Reads answer the same with or without a token; writes are fuzzed both refused (401) and admitted.
CASES = [(m, p, "anonymous") for m, p in OPERATIONS] + [(m, p, "admin") for m, p in OPERATIONS if m != "GET"]


@pytest.mark.parametrize("method,path,auth", CASES, ids=[f"{a} {m} {p}" for m, p, a in CASES])
def test_operation_conforms_to_its_schema(db, method, path, auth):
    schema = schemathesis.openapi.from_asgi("/openapi.json", create_app(scheduler=False))
    operation = schema[path][method]
    headers = {"Authorization": f"Bearer {ADMIN_TOKEN}"} if auth == "admin" else {}

    @given(case=operation.as_strategy())
    @settings(max_examples=15, deadline=None, database=None, suppress_health_check=list(HealthCheck))
    def run(case):
        case.call_and_validate(headers=headers, checks=CHECKS)

    run()
