"""Claude Code's OpenTelemetry log events as 2026 versions write them (issue 42, item 3): the raw API bodies
(``OTEL_LOG_RAW_API_BODIES``: the responses' text and calls, the tool outputs the requests send back), ``tool_input``,
``command_name``, the ``compaction`` event, an export request a collector wrote twice, a session resumed in a new
process (its ``event.sequence`` from 1 again) and the OTLP 1.5 ``eventName`` field. Built from the monitoring
documentation (fixtures/built, SOURCES.md); every figure is counted here from the raw export."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from forensics import api
from tests.conftest import FIXTURES, query, run_cli

HERE = FIXTURES / "built" / "claude_code_otel_2026"
EXPORT = HERE / "collector" / "claude-code-logs.jsonl"


def records() -> list[tuple[int, dict]]:
    """(export line, record as {attribute: value, "_name", "_ns"}) for every log record of the file."""
    out = []
    for n, line in enumerate(EXPORT.read_text().splitlines(), 1):
        for rl in json.loads(line)["resourceLogs"]:
            for sl in rl["scopeLogs"]:
                for r in sl["logRecords"]:
                    a = {x["key"]: next(iter(x["value"].values())) for x in r["attributes"]}
                    out.append((n, {**a, "_name": a["event.name"], "_ns": int(r["timeUnixNano"])}))
    return out


def unique() -> list[dict]:
    seen, out = set(), []
    for _, r in records():
        key = json.dumps(r, sort_keys=True)
        if key not in seen:
            seen.add(key)
            out.append(r)
    return sorted(out, key=lambda r: (r["_ns"], int(r["event.sequence"])))


@pytest.fixture(scope="module")
def db(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("otel2026") / "w.duckdb"
    code, _, err = run_cli("ingest", str(EXPORT), "--db", str(out))
    assert code == 0, err
    return out


def test_the_export_is_the_shape_it_stands_for() -> None:
    lines = EXPORT.read_text().splitlines()
    assert len(lines) == 5 and lines[1] == lines[2]  # one export request written twice
    seqs = [int(r["event.sequence"]) for r in unique()]
    assert seqs[-3:] == [1, 2, 3]  # the resumed process counts from 1 again
    names = {r["_name"] for r in unique()}
    assert {"api_request_body", "api_response_body", "compaction", "tool_result", "user_prompt"} <= names


def test_turns_calls_and_outputs_come_from_the_raw_bodies(db: Path) -> None:
    recs = unique()
    prompts = [r["prompt"] for r in recs if r["_name"] == "user_prompt"]
    requests = [r for r in recs if r["_name"] == "api_request"]
    bodies = {r["request_id"]: json.loads(r["body"]) for r in recs if r["_name"] == "api_response_body"}
    got = query(db, "SELECT role, origin, content FROM messages ORDER BY position")
    assert (
        [t for role, _, t in got if role == "user"]
        == prompts
        == ["fix the failing date test", "/compact", "now update the changelog too"]
    )  # the resumed prompt last
    assert [o for role, o, _ in got if role == "user"] == ["person", "harness", "person"]  # /compact: Claude Code's
    said = [
        "\n".join(b["text"] for b in bodies[r["request_id"]]["content"] if b["type"] == "text")
        if r["request_id"] in bodies
        else ""
        for r in requests
    ]
    assert [t for role, _, t in got if role == "assistant"] == said and len(said) == 5
    uses = [b for body in bodies.values() for b in body["content"] if b["type"] == "tool_use"]
    calls = query(
        db, "SELECT call_id, name, arguments, result_position IS NOT NULL, is_error FROM tool_calls ORDER BY position"
    )
    assert [(c, n, json.loads(a)) for c, n, a, *_ in calls] == [(u["id"], u["name"], u["input"]) for u in uses]
    results = {r["tool_use_id"]: r["success"] == "false" for r in recs if r["_name"] == "tool_result"}
    assert (
        [(linked, err) for *_, linked, err in calls]
        == [(True, results[u["id"]]) for u in uses]
        == [(True, True), (True, False)]
    )
    # the Bash output is what the next request sent back; the Edit's was in a body cut at the inline limit
    sent = [
        json.loads(r["body"]) for r in recs if r["_name"] == "api_request_body" and r.get("body_truncated") != "true"
    ]
    outputs = {
        b["tool_use_id"]: b["content"]
        for body in sent
        for m in body["messages"]
        if m["role"] == "user"
        for b in (m["content"] if isinstance(m["content"], list) else [])
        if b["type"] == "tool_result"
    }
    assert query(db, "SELECT content FROM messages WHERE role = 'tool' ORDER BY position") == [
        (outputs[uses[0]["id"]],),
        ("",),
    ]


def test_usage_once_per_request_with_the_response_message_id(db: Path) -> None:
    recs = unique()
    requests = [r for r in recs if r["_name"] == "api_request"]
    bodies = {r["request_id"]: json.loads(r["body"])["id"] for r in recs if r["_name"] == "api_response_body"}
    rows = query(
        db,
        "SELECT request_id, message_id, input_tokens, output_tokens, cache_read_input_tokens, "
        "cache_creation_input_tokens FROM message_usage ORDER BY seq",
    )
    assert rows == [
        (
            r["request_id"],
            bodies.get(r["request_id"]),
            int(r["input_tokens"]),
            int(r["output_tokens"]),
            int(r["cache_read_tokens"]),
            int(r["cache_creation_tokens"]),
        )
        for r in requests
    ]
    tokens = sum(
        int(r[k])
        for r in requests
        for k in ("input_tokens", "output_tokens", "cache_read_tokens", "cache_creation_tokens")
    )
    every = sum(
        int(r[k])
        for _, r in records()
        if r["_name"] == "api_request"
        for k in ("input_tokens", "output_tokens", "cache_read_tokens", "cache_creation_tokens")
    )
    assert (len(requests), tokens, every) == (5, 66_206, 81_720)  # the export written twice holds one request twice
    run = api.usage(db, by="agent").row(0, named=True)
    assert (run["responses"], run["input"] + run["output"]) == (5, tokens)


def test_the_compaction_is_an_event_where_it_happened(db: Path) -> None:
    c = next(r for r in unique() if r["_name"] == "compaction")
    assert query(
        db,
        "SELECT e.kind, e.trigger, e.pre_tokens, e.post_tokens, m.content FROM events e JOIN messages m "
        "ON m.conversation_id = e.conversation_id AND m.position = e.position",
    ) == [("compaction", c["trigger"], int(c["pre_tokens"]), int(c["post_tokens"]), "now update the changelog too")]


def test_the_transcript_beside_it_adds_no_tokens(tmp_path: Path) -> None:
    """The same session's transcript and its export, both ingested: each response counted once (message id and
    request id, which the response bodies give the export's usage)."""
    both = tmp_path / "w.duckdb"
    assert run_cli("ingest", str(HERE), "--db", str(both))[0] == 0
    alone = tmp_path / "alone.duckdb"
    assert run_cli("ingest", str(EXPORT), "--db", str(alone))[0] == 0
    assert query(both, "SELECT count(*) FROM message_usage") == [(7,)]  # 5 in the export, 2 in the transcript
    total = [api.usage(d, by="conversation").select("responses", "input", "output").sum().row(0) for d in (both, alone)]
    assert total[0] == total[1] == (5, 64_820, 1_386)


def test_a_second_ingest_adds_nothing(tmp_path: Path) -> None:
    copy = tmp_path / EXPORT.name
    shutil.copy(EXPORT, copy)
    out = tmp_path / "w.duckdb"
    assert run_cli("ingest", str(copy), "--db", str(out))[0] == 0
    copy.touch()
    code, text, _ = run_cli("ingest", str(copy), "--db", str(out))
    assert code == 0 and "0 added + 10 unchanged" in text
    assert query(out, "SELECT count(*) FROM message_usage") == [(5,)]


def test_a_record_named_only_by_its_event_name_field(tmp_path: Path) -> None:
    """OTLP 1.5+ log records carry the event's name in ``eventName``; a record with neither a body nor an
    ``event.name`` attribute is still that event."""

    def rec(name: str, seq: int, **attrs: object) -> dict:
        a = {"session.id": "s1", "event.sequence": seq, **attrs}
        return {
            "timeUnixNano": str(1_792_486_800_000_000_000 + seq),
            "eventName": f"claude_code.{name}",
            "attributes": [
                {"key": k, "value": {"intValue": v} if isinstance(v, int) else {"stringValue": v}} for k, v in a.items()
            ],
        }

    doc = {
        "resourceLogs": [
            {
                "resource": {"attributes": []},
                "scopeLogs": [
                    {
                        "scope": {"name": "com.anthropic.claude_code.events"},
                        "logRecords": [
                            rec("user_prompt", 1, prompt="hello"),
                            rec("api_request", 2, request_id="req_1", input_tokens=3, output_tokens=4),
                        ],
                    }
                ],
            }
        ]
    }
    path = tmp_path / "logs.json"
    path.write_text(json.dumps(doc))
    out = tmp_path / "w.duckdb"
    assert run_cli("ingest", str(path), "--db", str(out))[0] == 0
    assert query(out, "SELECT role, content FROM messages ORDER BY position") == [("user", "hello"), ("assistant", "")]
    assert query(out, "SELECT input_tokens, output_tokens FROM message_usage") == [(3, 4)]


def test_without_raw_bodies_the_request_id_alone_joins_the_transcripts_response(tmp_path: Path) -> None:
    """The usual export (no raw bodies): its usage has the request id and no message id; the transcript's has
    both. Each response is still counted once."""
    lines = []
    for line in EXPORT.read_text().splitlines():
        doc = json.loads(line)
        for rl in doc["resourceLogs"]:
            for sl in rl["scopeLogs"]:
                sl["logRecords"] = [
                    r
                    for r in sl["logRecords"]
                    if r["body"]["stringValue"] not in ("claude_code.api_response_body", "claude_code.api_request_body")
                ]
        lines.append(json.dumps(doc))
    folder = tmp_path / "logs"
    shutil.copytree(HERE / "transcript", folder / "transcript")
    (folder / "collector").mkdir()
    (folder / "collector" / EXPORT.name).write_text("\n".join(lines) + "\n")
    db = tmp_path / "w.duckdb"
    assert run_cli("ingest", str(folder), "--db", str(db))[0] == 0
    assert query(db, "SELECT count(*), count(message_id) FROM message_usage") == [(7, 2)]  # only the transcript's
    assert api.usage(db, by="conversation").select("responses", "input", "output").sum().row(0) == (5, 64_820, 1_386)
