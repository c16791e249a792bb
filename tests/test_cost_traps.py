"""Cost that can be trusted (issue 42, item 5): the traps other tools fall into, each on a real file's shape, the
tokens and dollars counted here straight from the raw lines (json, the shipped table read with tomllib) and
compared with what `forensics usage` says; and a headline that names the tokens it could not price."""

from __future__ import annotations

import json
import shutil
import tomllib
from pathlib import Path

import pytest

from forensics import api
from forensics.analyzers.prices import TABLE, candidates
from tests.agent_counts import json_lines
from tests.conftest import FIXTURES, SHARED, query, run_cli

REAL = SHARED / "data" / "agent-logs"
VOLCANO = (
    REAL / "claude_code" / "Xu-Wentao+dotfile" / ".claude" / "projects" / "-Users-xuwentao-Projects-github-volcano"
)
FORK = (
    REAL
    / "codex_cli"
    / "LAF-US+IDAHO-VAULT"
    / ".codex"
    / "sessions"
    / "2026"
    / "04"
    / "15"
    / "rollout-2026-04-15T11-58-29-019d924b-6bc1-7fa2-aa36-5e5a0e068c59.jsonl"
)
SHIPPED = tomllib.loads(TABLE.read_text())["models"]


def need(path: Path) -> None:
    if not path.exists():
        pytest.skip(f"{path} not found (set FORENSICS_SHARED)")


def _price(model: str) -> dict[str, float] | None:
    return next((SHIPPED[n] for n in candidates(model) if n in SHIPPED), None)


def _responses(folder: Path) -> dict[tuple, dict]:
    """Each Claude Code response once over every transcript of the folder (a side question or a resumed session
    copies its parent's lines, message ids and all), each count the largest any of its lines gives."""
    out: dict[tuple, dict] = {}
    for f in sorted(folder.rglob("*.jsonl")):
        for r in json_lines(f):
            m = r.get("message")
            if r.get("type") != "assistant" or not isinstance(m, dict) or not isinstance(m.get("usage"), dict):
                continue
            if m.get("model") == "<synthetic>":  # Claude Code's own message (an API error): no model answered
                continue
            u, key = m["usage"], (m.get("id"), r.get("requestId"))
            one_h = (u.get("cache_creation") or {}).get("ephemeral_1h_input_tokens", 0)
            got = {
                "model": m.get("model"),
                "input": u.get("input_tokens", 0),
                "output": u.get("output_tokens", 0),
                "read": u.get("cache_read_input_tokens", 0),
                "write": u.get("cache_creation_input_tokens", 0),
                "write_1h": one_h,
                "lines": 1,
            }
            if key in out:
                seen = out[key]
                got = {k: v if k == "model" else max(v, seen[k]) for k, v in got.items()} | {"lines": seen["lines"] + 1}
            out[key] = got
    return out


@pytest.fixture(scope="module")
def volcano(tmp_path_factory: pytest.TempPathFactory) -> Path:
    need(VOLCANO)
    db = tmp_path_factory.mktemp("volcano") / "w.duckdb"
    assert run_cli("ingest", str(VOLCANO), "--db", str(db))[0] == 0
    return db


def test_a_message_id_repeated_across_sessions_is_counted_once(volcano: Path) -> None:
    resp = _responses(VOLCANO)
    copies = sum(
        1
        for f in VOLCANO.rglob("*.jsonl")
        for r in json_lines(f)
        if r.get("type") == "assistant" and isinstance(r.get("message"), dict) and "usage" in r["message"]
    )
    assert copies > len(resp)  # lines repeat responses: across the side question's copy and split responses
    runs = api.usage(volcano, by="agent").row(0, named=True)
    assert runs["input"] == sum(r["input"] + r["read"] + r["write"] for r in resp.values())
    assert runs["output"] == sum(r["output"] for r in resp.values())
    assert runs["responses"] == len(resp)


def test_a_streamed_response_keeps_its_final_counts_not_the_placeholders(volcano: Path) -> None:
    """Claude Code writes a response's content blocks as separate lines, the early ones with placeholder counts
    (output_tokens of 1 or a few): the response's tokens are the largest any line gives."""
    split = {k: v for k, v in _responses(VOLCANO).items() if v["lines"] > 1}
    assert split
    rows = dict(
        ((mid, rid), (i, o))
        for mid, rid, i, o in query(
            volcano,
            "SELECT message_id, request_id, max(input_tokens), max(output_tokens) FROM message_usage GROUP BY 1, 2",
        )
    )
    for key, r in split.items():
        assert rows[key] == (r["input"], r["output"]), key
    small = [r for r in _responses(VOLCANO).values() if r["input"] <= 1 and r["read"] > 0]
    assert small  # an input count of 1 is real (the rest came from the cache): priced, never taken for no usage


def test_cache_writes_are_priced_by_how_long_they_are_kept(volcano: Path) -> None:
    resp = _responses(VOLCANO)
    assert sum(r["write_1h"] for r in resp.values()) > 0 and sum(r["write"] - r["write_1h"] for r in resp.values()) > 0
    expected = 0.0
    for r in resp.values():
        p = _price(r["model"])
        if p is None:  # <synthetic>: no tokens
            assert r["input"] + r["output"] + r["read"] + r["write"] == 0
            continue
        expected += (
            r["input"] * p["input"]
            + r["output"] * p["output"]
            + r["read"] * p["cache_read"]
            + (r["write"] - r["write_1h"]) * p["cache_write"]
            + r["write_1h"] * p["cache_write_1h"]
        ) / 1e6
    runs = api.usage(volcano, by="agent").row(0, named=True)
    assert runs["unpriced_runs"] == 0 and runs["cost"] == pytest.approx(expected, rel=1e-9)
    as_5m = sum(
        (
            r["input"] * p["input"]
            + r["output"] * p["output"]
            + r["read"] * p["cache_read"]
            + r["write"] * p["cache_write"]
        )
        / 1e6
        for r in resp.values()
        if (p := _price(r["model"]))
    )
    assert runs["cost"] > as_5m  # pricing every write as a 5-minute one undercounts


def _codex_own_tokens(path: Path) -> int:
    """The thread's own responses: token_count events after its first own turn (turn_id, a UUIDv7, newer than the
    thread's id), each new total's last_token_usage once."""
    recs, meta, copied, seen, total = list(json_lines(path)), None, False, None, 0
    for r in recs:
        p = r.get("payload") or {}
        if r.get("type") == "session_meta":
            copied = meta is not None and p.get("id") != meta.get("id")
            meta = meta or p
        elif r.get("type") == "turn_context" and copied:
            copied = int(p["turn_id"][:8] + p["turn_id"][9:13], 16) < int(meta["id"][:8] + meta["id"][9:13], 16)
        elif r.get("type") == "event_msg" and p.get("type") == "token_count" and p.get("info"):
            t = p["info"]["total_token_usage"]
            if t != seen and not copied:
                total += p["info"]["last_token_usage"]["total_tokens"]
            seen = t
    return total


def test_a_forked_codex_thread_does_not_count_its_parents_tokens_again(tmp_path: Path) -> None:
    need(FORK)
    db = tmp_path / "w.duckdb"
    assert run_cli("ingest", str(FORK), "--db", str(db))[0] == 0
    (got,) = query(
        db, "SELECT sum(input_tokens + coalesce(cache_read_input_tokens, 0) + output_tokens) FROM message_usage"
    )[0]
    own = _codex_own_tokens(FORK)
    assert got == own
    first_replayed = next(
        r["payload"]["info"]["total_token_usage"]["total_tokens"]
        for r in json_lines(FORK)
        if r.get("type") == "event_msg" and r["payload"].get("type") == "token_count" and r["payload"].get("info")
    )
    assert first_replayed == 39270 and own < 1029770 - 237037 + 1  # the parent's 237,037 tokens are not here


def test_a_codex_running_total_that_resets_starts_a_new_count(tmp_path: Path) -> None:
    """Codex versions whose token_count carries only the running total: a total that goes down (a new process
    on the same rollout) is that response's own count, not a negative difference. Lines shaped like the real
    0.34 rollout's (Monotoba/OpenPrintKit), last_token_usage left out as the early versions write them."""

    def count(total: int) -> str:
        return json.dumps(
            {
                "timestamp": "2025-10-31T19:05:00.000Z",
                "type": "event_msg",
                "payload": {
                    "type": "token_count",
                    "info": {
                        "total_token_usage": {
                            "input_tokens": total - 40,
                            "cached_input_tokens": 0,
                            "output_tokens": 40,
                            "reasoning_output_tokens": 0,
                            "total_tokens": total,
                        },
                        "model_context_window": 272000,
                    },
                },
            }
        )

    def reply(n: int) -> str:
        return json.dumps(
            {
                "timestamp": "2025-10-31T19:05:00.000Z",
                "type": "response_item",
                "payload": {
                    "type": "message",
                    "role": "assistant",
                    "content": [{"type": "output_text", "text": f"reply {n}"}],
                },
            }
        )

    meta = json.dumps(
        {
            "timestamp": "2025-10-31T19:02:58.000Z",
            "type": "session_meta",
            "payload": {
                "id": "c61729d4-da6d-46a4-9a29-ec2c614e5e23",
                "timestamp": "2025-10-31T19:02:58.000Z",
                "cwd": "/w",
                "originator": "codex_cli_rs",
                "cli_version": "0.34.0",
            },
        }
    )
    f = tmp_path / "rollout-2025-10-31T19-02-58-c61729d4-da6d-46a4-9a29-ec2c614e5e23.jsonl"
    f.write_text(
        "\n".join([meta, reply(1), count(1000), count(1000), reply(2), count(2500), reply(3), count(800)]) + "\n"
    )
    db = tmp_path / "w.duckdb"
    assert run_cli("ingest", str(f), "--db", str(db))[0] == 0
    rows = query(db, "SELECT input_tokens + output_tokens FROM message_usage ORDER BY seq")
    assert [r[0] for r in rows] == [1000, 1500, 800]


def test_the_headline_names_the_unpriced_tokens_and_their_models(tmp_path: Path) -> None:
    src = tmp_path / "logs"
    shutil.copytree(FIXTURES / "agents" / "copilot_cli", src / "copilot")
    shutil.copytree(FIXTURES / "agents" / "qwen_code", src / "qwen")
    chats = next((src / "qwen").rglob("*.jsonl"))
    chats.write_text(chats.read_text().replace("qwen3-coder-plus", "qwen3-coder-next-preview"))  # not in the table
    db = tmp_path / "w.duckdb"
    assert run_cli("ingest", str(src), "--db", str(db))[0] == 0
    rep = tmp_path / "rep"
    assert run_cli("report", "--db", str(db), "--out", str(rep), "--only", "usage")[0] == 0
    m = json.loads((rep / "metrics.json").read_text())["sections"]["usage"]
    assert m["unpriced_models"] == "qwen3-coder-next-preview" and m["unpriced_tokens"] == 40340
    assert m["priced_cost"] == pytest.approx(
        (52000 - 40000 - 9000) * 3.0 / 1e6
        + 40000 * 0.3 / 1e6
        + 9000 * 3.75 / 1e6
        + 900 * 15.0 / 1e6
        + (46000 - 40000) * 1.75 / 1e6
        + 40000 * 0.175 / 1e6
        + 600 * 14.0 / 1e6
    )
    md = (rep / "report.md").read_text()
    assert (
        f"${m['priced_cost']:,.2f} priced at the prices of 2026-12-06 (or the config's [prices]); 40 k tokens "
        "of qwen3-coder-next-preview unpriced (1 run: their tokens are counted, their cost is not)"
    ) in md


def test_every_shipped_price_has_its_source_and_date() -> None:
    doc = tomllib.loads(TABLE.read_text())
    assert doc["date"] == "2026-12-06"
    for name, p in doc["models"].items():
        assert {"input", "output", "src", "on"} <= set(p), name
        assert len(p["on"]) == 10 and p["on"] <= doc["date"], name
        if "cache_write" in p and name.startswith("claude-"):
            assert p["cache_write_1h"] == pytest.approx(2 * p["input"]), name  # Anthropic: 1 h writes cost 2 x input
    for needed in (
        "claude-opus-4-6",
        "claude-sonnet-4-6",
        "claude-opus-4-5",
        "gpt-5.2-codex",
        "gpt-5.3-codex",
        "gpt-5.4",
        "gemini-3-pro-preview",
        "gemini-2.5-pro",
        "deepseek-v4-flash",
        "qwen3-coder-plus",
        "kimi-k2.6",
        "glm-4.7",
        "mimo-v2.6-pro",
    ):
        assert needed in doc["models"], needed
