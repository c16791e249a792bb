"""Layouts of OpenTelemetry/OpenInference traces and OpenHands conversations that no shared real log has,
written here as their tools write them (small and synthetic): each imports with no flags and reads right."""

from __future__ import annotations

import json
from pathlib import Path

from tests.conftest import query, run_cli


def ingest(path: Path, tmp_path: Path) -> Path:
    db = tmp_path / "w.duckdb"
    code, _, err = run_cli("ingest", str(path), "--db", str(db))
    assert code == 0, err
    return db


def rows(db: Path) -> list[tuple]:
    return query(db, "SELECT role, origin, content FROM messages WHERE on_main_path ORDER BY conversation_id, seq")


def sdk_span(span: str, name: str, start: str, attrs: dict, parent: str | None = None) -> dict:
    """A span as the Python SDK's ``span.to_json()`` writes it."""
    return {
        "name": name,
        "context": {"trace_id": "0xabc", "span_id": span, "trace_state": "[]"},
        "kind": "SpanKind.CLIENT",
        "parent_id": parent,
        "start_time": start,
        "end_time": start,
        "status": {"status_code": "UNSET"},
        "attributes": attrs,
        "events": [],
        "links": [],
        "resource": {"attributes": {"service.name": "app"}, "schema_url": ""},
    }


def test_an_agent_runs_span_dump_with_gen_ai_messages(tmp_path: Path) -> None:
    """``{"spans": [...], "final_output": ...}``: an agent SDK's run saved with the spans it recorded
    (semantic conventions 1.37+: messages as JSON attributes; each call repeats the history)."""
    user = {"role": "user", "parts": [{"type": "text", "content": "Weather in Oslo?"}]}
    call = {
        "role": "assistant",
        "parts": [{"type": "tool_call", "id": "c1", "name": "weather", "arguments": {"city": "Oslo"}}],
    }
    result = {"role": "tool", "parts": [{"type": "tool_call_response", "id": "c1", "response": "4 C, rain"}]}
    answer = {"role": "assistant", "parts": [{"type": "text", "content": "4 C and rain."}]}
    spans = [
        sdk_span(
            "0x1",
            "invoke_agent helper",
            "2025-10-01T10:00:00Z",
            {"gen_ai.operation.name": "invoke_agent", "gen_ai.agent.name": "helper"},
        ),
        sdk_span(
            "0x2",
            "chat gpt-4.1",
            "2025-10-01T10:00:01Z",
            {
                "gen_ai.operation.name": "chat",
                "gen_ai.input.messages": json.dumps([user]),
                "gen_ai.output.messages": json.dumps([call]),
                "gen_ai.usage.input_tokens": 30,
            },
            "0x1",
        ),
        sdk_span(
            "0x3",
            "execute_tool weather",
            "2025-10-01T10:00:02Z",
            {"gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": "weather", "gen_ai.tool.call.id": "c1"},
            "0x1",
        ),
        sdk_span(
            "0x4",
            "chat gpt-4.1",
            "2025-10-01T10:00:03Z",
            {
                "gen_ai.operation.name": "chat",
                "gen_ai.input.messages": json.dumps([user, call, result]),
                "gen_ai.output.messages": json.dumps([answer]),
            },
            "0x1",
        ),
    ]
    f = tmp_path / "run.json"
    f.write_text(json.dumps({"spans": spans, "final_output": "4 C and rain."}, indent=2))
    db = ingest(f, tmp_path)
    assert rows(db) == [
        ("user", "person", "Weather in Oslo?"),
        ("assistant", "assistant", ""),
        ("tool", "tool", "4 C, rain"),
        ("assistant", "assistant", "4 C and rain."),
    ]
    assert query(db, "SELECT name, result_seq IS NOT NULL FROM tool_calls") == [("weather", True)]


def test_a_phoenix_span_table_whose_llm_spans_hold_only_input_and_output_values(tmp_path: Path) -> None:
    """Phoenix's spans dataframe saved one row per span: the LLM span carries the request and response JSON
    in ``attributes.input.value``/``attributes.output.value``, the tool span its arguments and result."""
    base = {
        "parent_id": None,
        "status_code": "OK",
        "status_message": "",
        "events": [],
        "context.trace_id": "t9",
        "attributes.session.id": "s9",
    }
    llm_in = {"messages": [{"role": "system", "content": "Be brief."}, {"role": "user", "content": "Add 2 and 3"}]}
    llm_out = {
        "choices": [
            {
                "message": {
                    "role": "assistant",
                    "content": None,
                    "tool_calls": [
                        {"id": "k1", "type": "function", "function": {"name": "add", "arguments": '{"a": 2, "b": 3}'}}
                    ],
                }
            }
        ]
    }
    lines = [
        {
            **base,
            "name": "ChatCompletion",
            "span_kind": "LLM",
            "start_time": "2025-10-02T09:00:00Z",
            "context.span_id": "a1",
            "attributes.input.value": json.dumps(llm_in),
            "attributes.input.mime_type": "application/json",
            "attributes.output.value": json.dumps(llm_out),
        },
        {
            **base,
            "name": "add",
            "span_kind": "TOOL",
            "start_time": "2025-10-02T09:00:01Z",
            "context.span_id": "a2",
            "attributes.tool.name": "add",
            "attributes.input.value": '{"a": 2, "b": 3}',
            "attributes.output.value": "5",
        },
    ]
    f = tmp_path / "spans.jsonl"
    f.write_text("".join(json.dumps(x) + "\n" for x in lines))
    db = ingest(f, tmp_path)
    assert rows(db) == [
        ("system", "harness", "Be brief."),
        ("user", "person", "Add 2 and 3"),
        ("assistant", "assistant", ""),
        ("tool", "tool", "5"),
    ]
    columns = {k: {str(i): row.get(k) for i, row in enumerate(lines)} for k in lines[0] | lines[1]}
    g = tmp_path / "by_column" / "spans.json"
    g.parent.mkdir()
    g.write_text(json.dumps(columns))
    assert rows(ingest(g, g.parent)) == rows(db)


def test_an_otlp_span_with_the_oldest_gen_ai_content_events(tmp_path: Path) -> None:
    """Before 1.28 the prompt and completion were JSON in ``gen_ai.content.prompt``/``.completion`` events."""

    def kv(k: str, v: str) -> dict:
        return {"key": k, "value": {"stringValue": v}}

    span = {
        "traceId": "f1",
        "spanId": "e1",
        "name": "chat",
        "startTimeUnixNano": "1730000000000000000",
        "attributes": [kv("gen_ai.system", "openai"), kv("gen_ai.request.model", "gpt-4o")],
        "events": [
            {
                "name": "gen_ai.content.prompt",
                "attributes": [kv("gen_ai.prompt", json.dumps([{"role": "user", "content": "Hi"}]))],
            },
            {
                "name": "gen_ai.content.completion",
                "attributes": [kv("gen_ai.completion", json.dumps([{"role": "assistant", "content": "Hello!"}]))],
            },
        ],
    }
    f = tmp_path / "traces.json"
    f.write_text(json.dumps({"resourceSpans": [{"resource": {"attributes": []}, "scopeSpans": [{"spans": [span]}]}]}))
    assert rows(ingest(f, tmp_path)) == [("user", "person", "Hi"), ("assistant", "assistant", "Hello!")]


def test_an_openhands_v1_conversation_folder_is_read_once_from_its_base_state(tmp_path: Path) -> None:
    """``conversations/<id>/base_state.json`` + ``events/event-<n>-<id>.json`` (the agent SDK's persistence)."""
    conv = tmp_path / "conversations" / "c0ffee"
    (conv / "events").mkdir(parents=True)
    (conv / "base_state.json").write_text(
        json.dumps(
            {
                "id": "c0ffee",
                "agent": {"llm": {"model": "litellm_proxy/claude-sonnet-4"}},
                "stats": {},
                "persistence_dir": str(conv),
                "execution_status": "finished",
            }
        )
    )
    events = [
        {
            "id": "e0",
            "timestamp": "2026-01-05T10:00:00",
            "source": "user",
            "kind": "MessageEvent",
            "llm_message": {"role": "user", "content": [{"type": "text", "text": "List the files"}]},
        },
        {
            "id": "e1",
            "timestamp": "2026-01-05T10:00:02",
            "source": "agent",
            "kind": "ActionEvent",
            "thought": [{"type": "text", "text": "Listing."}],
            "action": {"command": "ls", "kind": "TerminalAction"},
            "tool_name": "terminal",
            "tool_call_id": "t1",
            "llm_response_id": "r1",
            "tool_call": {"id": "t1", "name": "terminal", "arguments": '{"command": "ls"}'},
        },
        {
            "id": "e2",
            "timestamp": "2026-01-05T10:00:03",
            "source": "environment",
            "kind": "ObservationEvent",
            "tool_name": "terminal",
            "tool_call_id": "t1",
            "action_id": "e1",
            "observation": {
                "content": [{"type": "text", "text": "a.py"}],
                "exit_code": 0,
                "kind": "TerminalObservation",
            },
        },
    ]
    events.insert(
        0,
        {
            "id": "s0",
            "timestamp": "2026-01-05T09:59:59",
            "source": "agent",
            "system_prompt": {"type": "text", "text": "You are OpenHands agent." + " " * 70000},
            "tools": [],
            "kind": "SystemPromptEvent",
        },
    )  # larger than a sniff reads
    for n, e in enumerate(events):
        (conv / "events" / f"event-{n:05d}-{e['id']}.json").write_text(json.dumps(e))
    db = ingest(tmp_path, tmp_path)
    assert query(db, "SELECT native_id, model FROM conversations") == [("c0ffee", "litellm_proxy/claude-sonnet-4")]
    assert rows(db)[1:] == [
        ("user", "person", "List the files"),
        ("assistant", "assistant", "Listing."),
        ("tool", "tool", "a.py"),
    ]
    assert query(db, "SELECT count(*) FROM import_runs WHERE status = 'imported'") == [(5,)]


def test_a_handoff_continues_the_conversation_and_pydantic_ai_events_are_read(tmp_path: Path) -> None:
    """Two agents under one trace: the second is handed the history (its first call opens with the same request),
    so it continues the first one's conversation. Pydantic AI keeps a call's messages as an ``events`` attribute."""
    ask = {"event.name": "gen_ai.user.message", "role": "user", "content": "Refund order 7"}
    hand = {
        "event.name": "gen_ai.choice",
        "index": 0,
        "message": {
            "role": "assistant",
            "tool_calls": [
                {"id": "h1", "type": "function", "function": {"name": "transfer_to_refunds", "arguments": "{}"}}
            ],
        },
    }
    done = {"event.name": "gen_ai.tool.message", "role": "tool", "id": "h1", "content": "transferred"}
    reply = {"event.name": "gen_ai.choice", "index": 0, "message": {"role": "assistant", "content": "Refunded."}}
    spans = [
        sdk_span(
            "0xa",
            "invoke_agent triage",
            "2025-10-03T08:00:00Z",
            {"gen_ai.operation.name": "invoke_agent", "gen_ai.agent.name": "triage"},
        ),
        sdk_span(
            "0xb",
            "chat gpt-4o",
            "2025-10-03T08:00:01Z",
            {"gen_ai.operation.name": "chat", "events": json.dumps([ask, hand])},
            "0xa",
        ),
        sdk_span(
            "0xc",
            "invoke_agent refunds",
            "2025-10-03T08:00:02Z",
            {"gen_ai.operation.name": "invoke_agent", "gen_ai.agent.name": "refunds"},
        ),
        sdk_span(
            "0xd",
            "chat gpt-4o",
            "2025-10-03T08:00:03Z",
            {
                "gen_ai.operation.name": "chat",
                "events": json.dumps([ask, {**hand, "event.name": "gen_ai.assistant.message"}, done, reply]),
            },
            "0xc",
        ),
    ]
    f = tmp_path / "spans.json"
    f.write_text("\n".join(json.dumps(x, indent=4) for x in spans))
    db = ingest(f, tmp_path)
    assert query(db, "SELECT count(*) FROM conversations") == [(1,)]
    assert rows(db) == [
        ("user", "person", "Refund order 7"),
        ("assistant", "assistant", ""),
        ("tool", "tool", "transferred"),
        ("assistant", "assistant", "Refunded."),
    ]


def test_an_openhands_v0_session_folder_and_the_trajectory_api_answer(tmp_path: Path) -> None:
    """``sessions/<sid>/metadata.json`` + ``events/<n>.json`` + ``event_cache/<a>-<b>.json`` (the V0 server's
    file store): one conversation, each event once; ``{"trajectory": [...]}`` as the server answers it."""
    sess = tmp_path / "sessions" / "abc123"
    (sess / "events").mkdir(parents=True)
    (sess / "event_cache").mkdir()
    (sess / "metadata.json").write_text(
        json.dumps(
            {
                "conversation_id": "abc123",
                "title": "Fix it",
                "llm_model": "anthropic/claude-sonnet-4",
                "last_updated_at": None,
            }
        )
    )
    events = [
        {
            "id": 0,
            "timestamp": "2025-06-01T10:00:00",
            "source": "user",
            "message": "Fix the typo",
            "action": "message",
            "args": {"content": "Fix the typo", "image_urls": None, "wait_for_response": False},
        },
        {
            "id": 1,
            "timestamp": "2025-06-01T10:00:05",
            "source": "agent",
            "message": "Running",
            "action": "run",
            "args": {"command": "grep -rn teh .", "thought": "Find it."},
            "tool_call_metadata": {
                "function_name": "execute_bash",
                "tool_call_id": "toolu_1",
                "model_response": {"id": "r1"},
                "total_calls_in_response": 1,
            },
        },
        {
            "id": 2,
            "timestamp": "2025-06-01T10:00:06",
            "source": "agent",
            "message": "Command finished",
            "observation": "run",
            "content": "a.md:3: teh",
            "extras": {"command": "grep -rn teh .", "metadata": {"exit_code": 0}},
            "cause": 1,
            "tool_call_metadata": {"function_name": "execute_bash", "tool_call_id": "toolu_1"},
        },
        {
            "id": 10,
            "timestamp": "2025-06-01T10:00:09",
            "source": "user",
            "message": "",
            "action": "message",
            "args": {"content": "Please continue on whatever approach you think is suitable."},
        },
    ]
    for e in events:
        (sess / "events" / f"{e['id']}.json").write_text(json.dumps(e))
    (sess / "event_cache" / "0-25.json").write_text(json.dumps(events))
    db = ingest(tmp_path / "sessions", tmp_path)
    assert query(db, "SELECT native_id, model FROM conversations") == [("abc123", "anthropic/claude-sonnet-4")]
    assert rows(db) == [
        ("user", "person", "Fix the typo"),
        ("assistant", "assistant", "Find it."),
        ("tool", "tool", "a.md:3: teh"),
        ("user", "harness", "Please continue on whatever approach you think is suitable."),
    ]
    api = tmp_path / "api" / "trajectory-abc123.json"
    api.parent.mkdir()
    api.write_text(json.dumps({"trajectory": events}))
    assert rows(ingest(api, api.parent)) == rows(db)


def test_zipkin_spans_with_openllmetry_indexed_attributes(tmp_path: Path) -> None:
    """Zipkin v2 JSON as the OTel Zipkin exporter writes it; OpenLLMetry's ``gen_ai.prompt.N.*`` tags."""
    spans = [
        {
            "traceId": "5af7",
            "id": "b1",
            "name": "openai.chat",
            "timestamp": 1730000000000000,
            "duration": 900,
            "localEndpoint": {"serviceName": "bot"},
            "tags": {
                "llm.request.type": "chat",
                "gen_ai.system": "OpenAI",
                "gen_ai.request.model": "gpt-4o",
                "gen_ai.prompt.0.role": "user",
                "gen_ai.prompt.0.content": "Say hi",
                "gen_ai.completion.0.role": "assistant",
                "gen_ai.completion.0.content": "Hi!",
                "gen_ai.usage.prompt_tokens": "5",
                "gen_ai.usage.completion_tokens": "2",
            },
        }
    ]
    f = tmp_path / "zipkin.json"
    f.write_text(json.dumps(spans))
    db = ingest(f, tmp_path)
    assert rows(db) == [("user", "person", "Say hi"), ("assistant", "assistant", "Hi!")]
    assert query(db, "SELECT input_tokens, output_tokens FROM message_usage") == [(5, 2)]


def test_messages_on_the_inference_details_event(tmp_path: Path) -> None:
    """1.37+ lets an instrumentation record the messages on a ``gen_ai.client.inference.operation.details``
    event instead of the span's attributes."""
    span = sdk_span("0x9", "chat claude", "2025-11-01T12:00:00Z", {"gen_ai.operation.name": "chat"})
    span["events"] = [
        {
            "name": "gen_ai.client.inference.operation.details",
            "timestamp": "2025-11-01T12:00:01Z",
            "attributes": {
                "gen_ai.input.messages": json.dumps([{"role": "user", "parts": [{"type": "text", "content": "Ping"}]}]),
                "gen_ai.output.messages": json.dumps(
                    [{"role": "assistant", "parts": [{"type": "text", "content": "Pong"}]}]
                ),
            },
        }
    ]
    f = tmp_path / "spans.jsonl"
    f.write_text(json.dumps(span) + "\n")
    assert rows(ingest(f, tmp_path)) == [("user", "person", "Ping"), ("assistant", "assistant", "Pong")]
