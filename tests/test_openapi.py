"""`GET /openapi.json`: a valid OpenAPI 3.1 document that lists exactly the app's HTTP endpoints."""

from __future__ import annotations

import re

import httpx
import pytest
from openapi_spec_validator import validate
from starlette.routing import Route

from engine.models import FlowMode
from gateway.api.openapi import OPERATIONS, openapi_document
from gateway.app import create_app
from gateway.service import MAX_TEXT_CHARS, BadInput, RadioService
from gateway.settings import Settings


@pytest.fixture(scope="module")
def service() -> RadioService:
    return RadioService(Settings(speech_preload=False))


@pytest.fixture(scope="module")
def document(service: RadioService) -> dict:
    return openapi_document(service)


def test_document_is_valid_openapi_3_1(document: dict) -> None:
    validate(document)  # raises on any violation of the OpenAPI 3.1 schema
    assert document["openapi"] == "3.1.0"


def test_served_document_is_the_generated_one(live_server: str) -> None:
    response = httpx.get(f"{live_server}/openapi.json", timeout=10)
    assert response.status_code == 200
    served = response.json()
    validate(served)
    assert {(path, method) for path, item in served["paths"].items() for method in item} == {
        (op.path, op.method) for op in OPERATIONS
    }


def test_every_http_route_of_the_app_is_documented_and_nothing_else(service: RadioService) -> None:
    app = create_app(Settings(speech_preload=False), service=service)
    routed = {
        (route.path, method.lower())
        for route in app.routes
        if isinstance(route, Route) and route.path != "/"  # the browser client's page is not API
        for method in (route.methods or ())
        if method != "HEAD"
    }
    assert routed == {(op.path, op.method) for op in OPERATIONS}


def test_bodies_are_the_models_with_what_the_service_checks(document: dict, service: RadioService) -> None:
    schemas = document["components"]["schemas"]
    create = schemas["CreateSessionRequest"]
    enum = create["properties"]["flow"]["anyOf"][0]["enum"]
    assert "clearance" in enum and "" in enum  # "": the main flow, like null
    flows = [slug for slug in enum if slug]
    assert all(service.registry.get(slug).entry_mode not in (FlowMode.INTERRUPT, FlowMode.PARALLEL) for slug in flows)
    scenario = create["properties"]["scenario"]["anyOf"][0]
    assert set(scenario["propertyNames"]["enum"]) == set(service.allowed_variables)
    assert create["additionalProperties"] is False  # extra="forbid" in the model
    text = re.compile(schemas["TransmissionRequest"]["properties"]["text"]["pattern"])
    samples = ["a", " wilco ", "\x1e", "\ufeff", " \t", "a" + " " * 600, "a" * MAX_TEXT_CHARS, "b" * (MAX_TEXT_CHARS + 1)]
    for sample in samples:  # the pattern accepts exactly what the service does
        assert bool(text.search(sample)) == _service_accepts(sample), repr(sample[:20])
    body = document["paths"]["/api/radio/sessions/{session_id}/transmissions"]["post"]["requestBody"]
    assert body["content"]["application/json"]["schema"] == {"$ref": "#/components/schemas/TransmissionRequest"}


def test_errors_are_documented_in_the_one_error_shape(document: dict) -> None:
    error = {"$ref": "#/components/schemas/ErrorBody"}
    for path, item in document["paths"].items():
        for method, operation in item.items():
            statuses = {int(code) for code in operation["responses"]}
            assert any(200 <= code < 300 for code in statuses), (method, path)
            for code in statuses - set(range(200, 300)):
                assert operation["responses"][str(code)]["content"]["application/json"]["schema"] == error
            if "requestBody" in operation:
                assert {400, 413, 422} <= statuses, (method, path)


def _service_accepts(text: str) -> bool:
    try:
        RadioService._check_text(text)
    except BadInput:
        return False
    return True
