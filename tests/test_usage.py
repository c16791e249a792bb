"""Usage and cost (docs/usage.md): token sums equal to the ones counted straight from the real logs (each format's
rules as its tool documents them, read here with json alone), prices matched by the documented names, costs
from the shipped table and the config's [prices], and the report leading with the runs."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from forensics import api
from forensics.analyzers.prices import PriceTable, candidates, table
from forensics.analyzers.schema import load_config
from forensics.config import ConfigError
from tests.agent_counts import claude_code_usage, codex_rollout_spend, json_lines
from tests.conftest import FIXTURES, SHARED, run_cli

LOGS = SHARED / "data" / "agent-logs"
KINDS = ("input", "cached", "cache_write", "output")


def claude_code_responses(root: Path) -> dict[tuple, dict[str, int]]:
    """Claude Code writes a response one content block per line, each line repeating message.id, requestId and
    the usage so far (Anthropic's: input_tokens without the cache reads and writes); a response's counts are
    the largest its lines give, once per (message.id, requestId) however many transcripts copy it."""
    best: dict[tuple, dict[str, int]] = {}
    for f in sorted(root.rglob("*.jsonl")):
        for o in json_lines(f):
            if (usage := claude_code_usage(o)) is None:
                continue
            key, got = usage
            best[key] = {k: max(v, best.get(key, got)[k]) for k, v in got.items()} | {
                "model": o["message"].get("model")
            }
    return best


def claude_code(root: Path) -> dict[str, int]:
    rs = claude_code_responses(root).values()
    read, write = sum(r["cache_read_input_tokens"] for r in rs), sum(r["cache_creation_input_tokens"] for r in rs)
    return {
        "input": sum(r["input_tokens"] for r in rs) + read + write,
        "cached": read,
        "cache_write": write,
        "output": sum(r["output_tokens"] for r in rs),
    }


def codex(root: Path) -> dict[str, int]:
    """Codex rollouts' own spend (``codex_rollout_spend``: a forked thread's copy of its parent's history taken off)."""
    out = dict.fromkeys(KINDS, 0)
    for f in sorted(root.rglob("rollout-*.jsonl")):
        for k, v in codex_rollout_spend(f)[1].items():
            out[k] += v
    return out


def gemini_cli(root: Path) -> dict[str, int]:
    """Gemini CLI's session files: per message ``tokens`` {input (promptTokenCount, the cache's included), cached,
    output, thoughts, tool (toolUsePromptTokenCount), total}; a message written twice keeps its last copy."""
    out = dict.fromkeys(KINDS, 0)
    for f in sorted(root.rglob("*.json")):
        doc = json.loads(f.read_text(encoding="utf-8"))
        if not isinstance(doc, dict) or not isinstance(doc.get("messages"), list):
            continue
        tokens = {
            m.get("id"): m["tokens"]
            for m in doc["messages"]
            if isinstance(m, dict) and isinstance(m.get("tokens"), dict)
        }
        for t in tokens.values():
            assert t["total"] == t["input"] + t["output"] + t["thoughts"] + t["tool"]
            out["input"] += t["input"] + t["tool"]
            out["cached"] += t["cached"]
            out["output"] += t["output"] + t["thoughts"]
    return out


@pytest.mark.parametrize(
    ("folder", "agent", "count"),
    [
        ("claude_code", "claude-code", claude_code),
        ("codex_cli", "codex", codex),
        ("gemini_cli", "gemini-cli", gemini_cli),
    ],
)
def test_tokens_equal_the_raw_logs(tmp_path: Path, folder: str, agent: str, count) -> None:
    root = LOGS / folder
    if not root.is_dir():
        pytest.skip(f"{root} not found (set FORENSICS_SHARED)")
    db = tmp_path / "w.duckdb"
    assert run_cli("ingest", str(root), "--db", str(db))[0] == 0
    got = api.usage(db, by="agent").filter(agent=agent).row(0, named=True)
    want = count(root)
    assert {k: got[k] for k in KINDS} == want
    assert want["input"] > want["cached"] > 0 and want["output"] > 0


def test_real_claude_code_figures(tmp_path: Path) -> None:
    """The figures of docs/usage.md: on the shared Claude Code logs, streaming lines and copied transcripts
    counted once (the first line of a response said 0-3 output tokens where its last says hundreds)."""
    root = LOGS / "claude_code"
    if not root.is_dir():
        pytest.skip(f"{root} not found (set FORENSICS_SHARED)")
    db = tmp_path / "w.duckdb"
    run_cli("ingest", str(root), "--db", str(db))
    got = api.usage(db, by="agent").row(0, named=True)
    assert (got["responses"], got["input"], got["cached"], got["cache_write"], got["output"]) == (
        154,  # 156 lines of responses, two of them Claude Code's own "<synthetic>" messages (no model answered)
        7192759,
        6712313,
        478615,
        38263,
    )


SHIPPED = {
    "claude-sonnet-4": (3.0, 15.0, 0.3, 3.75),
    "claude-opus-4-1": (15.0, 75.0, 1.5, 18.75),
    "claude-3-5-haiku": (0.8, 4.0, 0.08, 1.0),
}  # input, output, cache read, cache write (prices.toml)


def _fixture_cost(prices: dict[str, tuple[float, float, float, float]]) -> float:
    total = 0.0
    for r in claude_code_responses(FIXTURES / "claude_code").values():
        base = str(r["model"]).rsplit("-", 1)[0]  # the fixtures' names end in a date
        p = prices[base]
        total += (
            r["input_tokens"] * p[0]
            + r["output_tokens"] * p[1]
            + r["cache_read_input_tokens"] * p[2]
            + r["cache_creation_input_tokens"] * p[3]
        ) / 1e6
    return total


def test_cost_from_the_shipped_table_and_the_config(tmp_path: Path) -> None:
    db = tmp_path / "w.duckdb"
    run_cli("ingest", str(FIXTURES / "claude_code"), "--db", str(db))
    row = api.usage(db, by="agent").row(0, named=True)
    assert row["cost"] == pytest.approx(_fixture_cost(SHIPPED), rel=1e-9)
    assert row["unpriced_runs"] == 0 and row["cost"] > 0
    cfg = tmp_path / "harness.toml"
    cfg.write_text('[prices]\n"claude-opus-4-1" = {input = 1.0, output = 2.0, cache_read = 0.5, cache_write = 1.5}\n')
    mine = api.usage(db, by="agent", cfg=load_config(cfg)).row(0, named=True)
    assert mine["cost"] == pytest.approx(_fixture_cost(SHIPPED | {"claude-opus-4-1": (1.0, 2.0, 0.5, 1.5)}), rel=1e-9)
    # a price without cache_read leaves the runs with cache reads without a cost: tokens shown, no guessed cost
    cfg.write_text('[prices]\n"claude-sonnet-4-20250514" = {input = 1.0, output = 2.0}\n')
    runs = api.usage(db, by="conversation", cfg=load_config(cfg))
    sonnet = runs.filter(model="claude-sonnet-4-20250514")
    assert sonnet["cost"].null_count() == sonnet.height == 3 and sonnet["input"].min() > 0
    assert runs.filter(model="claude-opus-4-1-20250805")["cost"].null_count() == 0
    assert api.usage(db, by="agent", cfg=load_config(cfg))["cost"].to_list() == [None]


@pytest.mark.parametrize(
    ("logged", "priced"),
    [
        ("claude-sonnet-4-5-20250929", "claude-sonnet-4-5"),
        ("anthropic/claude-3-haiku-20240307", "claude-3-haiku"),
        ("us.anthropic.claude-3-5-haiku-20241022-v1:0", "claude-3-5-haiku"),
        ("openrouter/anthropic/claude-sonnet-4.5", "claude-sonnet-4-5"),
        ("gpt-4o-mini-2024-07-18", "gpt-4o-mini"),  # not gpt-4o: never by prefix
        ("gpt-4o-2024-08-06", "gpt-4o"),
        ("gpt-4o-2024-05-13", "gpt-4o-2024-05-13"),  # the snapshot priced apart matches itself before its date goes
        ("Gemini 2.5 Pro", "gemini-2.5-pro"),
        ("models/gemini-2.5-flash", "gemini-2.5-flash"),
        ("gemini-2.5-flash-lite", "gemini-2.5-flash-lite"),
        ("x-ai/grok-4-fast", "grok-4-fast"),
        ("deepseek/deepseek-chat", "deepseek-chat"),
        ("o3-mini-high", None),  # ChatGPT's menu name: not o3-mini's price
        ("gpt-5.4", "gpt-5.4"),  # not gpt-5
        ("gpt-5.4-pro", None),  # not gpt-5.4: never by prefix
        ("claude-opus-4-6", "claude-opus-4-6"),
        ("claude-opus-4-9", None),  # not in the table: tokens, no cost
        ("moonshotai/kimi-k2.6", "kimi-k2.6"),
        ("claude-sonnet-4.6", "claude-sonnet-4-6"),
        ("<synthetic>", None),
    ],
)
def test_model_names(logged: str, priced: str | None) -> None:
    hit = table().match(logged)
    assert (hit[0] if hit else None) == priced


def test_the_config_wins_and_names_are_tried_in_order() -> None:
    t = table({"gpt-4o": {"input": 1.0, "output": 1.0}, "claude-opus-4-6": {"input": 5.0, "output": 25.0}})
    assert t.match("gpt-4o-2024-08-06") == ("gpt-4o", "config")
    assert t.match("anthropic/claude-opus-4-6") == ("claude-opus-4-6", "config")
    assert t.match("gpt-4o-mini") == ("gpt-4o-mini", "shipped")
    assert candidates("OpenRouter/Anthropic/Claude-3.5-Sonnet-20241022") == [
        "OpenRouter/Anthropic/Claude-3.5-Sonnet-20241022",
        "openrouter/anthropic/claude-3.5-sonnet-20241022",
        "claude-3.5-sonnet-20241022",
        "claude-3.5-sonnet",
        "claude-3-5-sonnet",
    ]


def test_costs_only_from_prices_that_exist() -> None:
    t = PriceTable("d", "s", {"m": {"input": 2.0, "output": 10.0}}, {})
    assert t.cost("m", {"input": 1_000_000, "output": 100_000, "cache_read": 0, "cache_write": 0}) == 3.0
    assert t.cost("m", {"input": 10, "output": 1, "cache_read": 5, "cache_write": 0}) is None
    assert t.cost("other", {"input": 10, "output": 1}) is None
    assert t.cost("other", {"input": 0, "output": 0}) == 0.0  # nothing used costs nothing, priced or not


def test_the_shipped_table_is_dated_and_sourced() -> None:
    t = table()
    assert t.date == "2026-12-06" and "pricing pages" in t.source
    assert all({"input", "output"} <= set(p) for p in t.shipped.values())


@pytest.mark.parametrize(
    ("body", "error"),
    [
        ('"gpt-4o" = {input = 1.0}', "prices.gpt-4o needs output"),
        ('"gpt-4o" = {input = 1.0, output = -2}', "prices.gpt-4o.output must be a number >= 0"),
        ('"gpt-4o" = {input = 1.0, output = 2.0, cached = 0.5}', "unknown key cached"),
        ('"gpt-4o" = 3.0', "prices.gpt-4o must be a table"),
    ],
)
def test_bad_prices_fail_with_the_line(tmp_path: Path, body: str, error: str) -> None:
    cfg = tmp_path / "harness.toml"
    cfg.write_text(f"# prices\n[prices]\n{body}\n")
    with pytest.raises(ConfigError, match=f"harness.toml:3: .*{error}"):
        load_config(cfg)


def test_cli_and_the_report_lead_with_the_runs(tmp_path: Path) -> None:
    db = tmp_path / "w.duckdb"
    run_cli("ingest", str(FIXTURES / "claude_code"), "--db", str(db))
    code, out, _ = run_cli("usage", "--db", str(db), "--by", "day", "--format", "json")
    days = json.loads(out)
    assert code == 0 and [d["day"] for d in days] == ["2025-09-01", "2025-09-02", "2025-09-03"]
    assert sum(d["runs"] for d in days) == 5 and days[0]["compactions"] == 1
    code, out, _ = run_cli("usage", "--db", str(db))
    assert code == 0 and out.splitlines()[0].split()[:3] == ["agent", "model", "runs"]
    code, _, err = run_cli("usage", "--db", str(db), "--by", "tool")
    assert code == 2 and "cannot group usage by 'tool'" in err and len(err.strip().splitlines()) == 1
    rep = tmp_path / "rep"
    assert run_cli("report", "--db", str(db), "--out", str(rep), "--only", "usage,baseline")[0] == 0
    md = (rep / "report.md").read_text()
    assert md.index("## Runs: tokens, cost") < md.index("## What to change") < md.index("## Baseline")
    m = json.loads((rep / "metrics.json").read_text())["sections"]["usage"]
    assert m["runs"] == 5 and m["cost"] == pytest.approx(_fixture_cost(SHIPPED), rel=1e-9)
    assert m["by_agent_model"]["claude-code/claude-sonnet-4-20250514"]["runs"] == 3
    html = (rep / "report.html").read_text()
    assert html.index("<section id=usage>") < html.index("id=strongest")
