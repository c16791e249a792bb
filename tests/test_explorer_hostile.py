"""Every route of the explorer with hostile parameters (issue 45): huge integers, negative numbers, NaN, unicode,
NUL, long strings (60,000 characters: the HTTP client refuses a longer query; the server's own bound is the
URL length uvicorn takes), in every query parameter and path segment a route reads. No answer is a 5xx, and the
explorer's log holds no traceback and no error line (a hostile value is a 400 or a 404, said on the page)."""

from __future__ import annotations

import logging
from pathlib import Path
from urllib.parse import quote

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from starlette.testclient import TestClient

from forensics.serve.app import create_app
from tests.conftest import query

HOSTILE = [
    "0",
    "-1",
    "-" + "9" * 40,
    "9" * 40,
    "9" * 5000,
    "1e400",
    "NaN",
    "nan",
    "inf",
    "-inf",
    "1.5",
    " 1",
    "１２",
    "٣",
    "\x00",
    "a\x00b",
    "x" * 60_000,
    "%",
    "%00",
    "'; DROP TABLE messages; --",
    "<script>",
    "\ud800".encode("utf-8", "surrogatepass").decode("latin-1"),
    "../../etc/passwd",
    "[",
    "(?",
    "*",
    "\\",
    "😀" * 1000,
    "desc",
    "asc",
    "label",
    "passed",
    "regex",
]
# route -> the query parameters it reads
ROUTES = {
    "/": [],
    "/conversations": ["source", "model", "since", "until", "kind", "agent", "outcome", "sort", "dir", "page"],
    "/c/{cid}": ["at", "from", "f"],
    "/c/{cid}/m/{hostile}": [],
    "/c/{hostile}": ["at"],
    "/findings": ["kind", "severity", "page"],
    "/secrets": [],
    "/search": ["q", "mode", "role", "agent", "after"],
    "/diff": ["a", "b"],
    "/queries": [],
    "/queries/{hostile}": [],
}


@pytest.fixture(scope="module")
def client(reported_wh: Path) -> TestClient:
    return TestClient(create_app(reported_wh), base_url="http://127.0.0.1", raise_server_exceptions=False)


@pytest.fixture(scope="module")
def cid(reported_wh: Path) -> str:
    return str(query(reported_wh, "SELECT conversation_id FROM conversations ORDER BY 1 LIMIT 1")[0][0])


def _get(client: TestClient, route: str, cid: str, value: str, params: list[str]) -> int:
    path = route.replace("{cid}", cid).replace("{hostile}", quote(value[:4096], safe=""))
    return client.get(path, params=dict.fromkeys(params, value)).status_code


def test_every_route_with_every_hostile_value(client: TestClient, cid: str, caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.INFO)
    bad = []
    for route, params in ROUTES.items():
        for value in HOSTILE:
            if not params and "{hostile}" not in route and value != HOSTILE[0]:
                continue  # a route that reads nothing: once
            for one in [[p] for p in params] or [[]]:
                status = _get(client, route, cid, value, one)
                if status >= 500:
                    bad.append((route, one, value[:40], status))
    assert bad == []
    assert not [r for r in caplog.records if r.levelno >= logging.ERROR or "Traceback" in r.getMessage()]


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    route=st.sampled_from(sorted(ROUTES)),
    value=st.one_of(
        st.integers(min_value=-(10**60), max_value=10**60).map(str),
        st.floats().map(str),
        st.text(max_size=300),
        st.binary(max_size=64).map(lambda b: b.decode("latin-1")),
    ),
    every=st.booleans(),
)
def test_generated_values_never_answer_5xx(
    client: TestClient, cid: str, caplog: pytest.LogCaptureFixture, route: str, value: str, every: bool
) -> None:
    params = ROUTES[route]
    assert _get(client, route, cid, value, params if every else params[:1]) < 500
    assert not [r for r in caplog.records if r.levelno >= logging.ERROR]
