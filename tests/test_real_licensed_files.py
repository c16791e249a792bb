"""The real files kept in this repository (fixtures/real, SOURCES.md there: copied byte for byte from public
repositories whose licence allows it) of the families whose other real files live only in ../shared (no licence):
each file, pointed at alone with no flags, is detected as its format, nothing is quarantined, every record read is
imported or skipped, and its figures (conversations, the person's messages on the main path, tool calls, answered
calls, failed calls, tokens) equal those counted from the raw file by tests/agent_counts.py."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import NamedTuple

import pytest

from tests import agent_counts as ac
from tests.conftest import FIXTURES, query, run_cli

REAL = FIXTURES / "real"


class Case(NamedTuple):
    fmt: str
    figures: Callable[[Path], tuple[int, int, int, int, int]]  # conversations, person, calls, linked, errors
    tokens: Callable[[Path], int]
    errors_need_result: bool  # the counter counts failed calls among the answered ones only


CASES: dict[str, Case] = {
    # file (under fixtures/real) -> its format and counters
    "codex/jnarowski+agentcmd/packages/agent-cli-sdk/tests/fixtures/codex/full/"
    "rollout-2025-09-24T20-12-23-01997ea4-a70d-7da3-8c20-c736db82a7c5.jsonl": Case(
        "codex", ac.codex_file, ac.codex_tokens, True
    ),
    "copilot_cli/JeffreyCA+azure-dev/0/full.jsonl": Case(
        "copilot-cli", lambda p: ac.copilot_file(p)[:5], lambda p: ac.copilot_file(p).tokens, False
    ),
    "copilot_cli/EntityProcess+agentv/4f/8edb57e3d1/1/full.jsonl": Case(
        "copilot-cli", lambda p: ac.copilot_file(p)[:5], lambda p: ac.copilot_file(p).tokens, False
    ),
    "codex/EntityProcess+agentv/a3/92ff332928/0/full.jsonl": Case("codex", ac.codex_file, ac.codex_tokens, True),
    "gemini_cli/entireio+cli/ab/2b9748b105/0/full.jsonl": Case("gemini-cli", ac.gemini_file, ac.gemini_tokens, True),
    # 2026's Claude Code 2.1.x and Codex 0.141 (tests/test_real_claude_code_2026.py says what each showed)
    **{
        f"claude_code/entireio+cli/{p}/full.jsonl": Case(
            "claude-code", ac.claude_code_file, ac.claude_code_tokens, True
        )
        for p in ("00/c9e2351016/3", "8e/0a64736bc7/0", "d6/5f53d0e8e2/0", "b1/5d3b4e29e9/0", "37/995ebed6e4/3")
    },
    "codex/EntityProcess+agentv/3c/162d1d8ad4/1/full.jsonl": Case("codex", ac.codex_file, ac.codex_tokens, True),
    "mini_swe_agent/SWE-agent+mini-swe-agent/output/deepseek_bench1/django__django-11001/"
    "django__django-11001.traj.json": Case("mini-swe-agent", ac.mini_swe_agent_run, ac.mini_swe_agent_tokens, False),
    "otel/Arize-ai+openinference/js/packages/openinference-vercel/test/__fixtures__/v6-spans/all-spans.json": Case(
        "otel", ac.otel_run, ac.otel_tokens, False
    ),
    "inspect/UKGovernmentBEIS+inspect_ai/tests/scorer/logs/"
    "2025-02-11T15-17-00-05-00_popularity_dPiJifoWeEQBrfWsAopzWr.eval": Case(
        "inspect", ac.inspect_run, ac.inspect_tokens, False
    ),
    # stop 43: the families whose first real file came here (SOURCES.md, last table)
    "cursor/slevin48+cursor-history/state.vscdb": Case("cursor", lambda p: ac.real_cursor(p.parent), lambda p: 0, True),
    # Continue sessions of 2024-12 (chat mode: no tool call, no token count)
    **{
        f"continue/oleg121203+Developer/.continue/sessions/{sid}.json": Case(
            "continue", ac.continue_file, lambda p: 0, True
        )
        for sid in (
            "525473ea-56fc-4902-9c8f-21ad3262cd24",
            "67733f7c-959d-4521-b326-779efe1967e7",
            "a0f97f97-4bf0-4e19-9278-63ec2a715c7c",
            "16ecb5fa-56b3-4b28-8633-0b5bfd43cfbc",  # the fifth labelling round (bench/data/problems-fresh-r5.jsonl)
        )
    },
    # the fifth labelling round's files from Entire CLI checkpoint stores (bench/data/problems-fresh-r5.jsonl)
    **{
        f"claude_code/{p}/full.jsonl": Case("claude-code", ac.claude_code_file, ac.claude_code_tokens, True)
        for p in (
            "JanDeDobbeleer+oh-my-posh/09/11216ed051/1",
            "JanDeDobbeleer+oh-my-posh/0d/cae3896550/1",
            "MoonshotAI+kimi-cli/08/60e52c3d41/0",
            "MoonshotAI+kimi-cli/08/60e52c3d41/1",
            "Nomos-N4s+nomos/0",
            "PackmindHub+context-evaluator/09/597b5bde42/0",
            "PackmindHub+context-evaluator/1b/0a9a02ca76/0",
            "entireio+cli/00/c9e2351016/0",
            "teslamint+entirecontext/0",
        )
    },
    **{
        f"codex/{p}/full.jsonl": Case("codex", ac.codex_file, ac.codex_tokens, True)
        for p in (
            "EntityProcess+agentv/00/34f597b72d/1",
            "EntityProcess+agentv/0b/9f2ac6f3aa/2",
            "jdx+communique/42/7d4e76cb81/0",
            "teslamint+entirecontext/0",
        )
    },
    # the sixth labelling round's files, from the same stores (bench/data/problems-fresh-r6.jsonl)
    **{
        f"claude_code/{p}/full.jsonl": Case("claude-code", ac.claude_code_file, ac.claude_code_tokens, True)
        for p in (
            "JanDeDobbeleer+oh-my-posh/22/523a93a015/0",
            "JanDeDobbeleer+oh-my-posh/27/d853466055/0",
            "JanDeDobbeleer+oh-my-posh/31/4ef6589731/0",
            "MoonshotAI+kimi-cli/08/60e52c3d41/2",
            "MoonshotAI+kimi-cli/3d/feb22da51f/3",
            "MoonshotAI+kimi-cli/5b/2c427a42e0/0",
            "PackmindHub+context-evaluator/4c/be888ae82f/0",
            "PackmindHub+context-evaluator/5d/74e4f052ad/1",
            "PackmindHub+context-evaluator/8c/5caff9d3ff/0",
            "entireio+cli/01/3118c3a750/0",
            "entireio+cli/19/1cb6003d79/0",
            "entireio+cli/20/160c0576c0/0",
        )
    },
    **{
        f"codex/EntityProcess+agentv/{p}/full.jsonl": Case("codex", ac.codex_file, ac.codex_tokens, True)
        for p in ("4f/7325a9ab13/0", "a5/7b22d8d4bd/0", "b9/220e73bdf9/1")
    },
    # the seventh labelling round's files, from repositories new to the rounds (bench/data/problems-fresh-r7.jsonl):
    # Entire CLI checkpoint stores of Claude Code sessions and Codex rollouts committed under .codex/sessions
    **{
        f"claude_code/{p}/full.jsonl": Case("claude-code", ac.claude_code_file, ac.claude_code_tokens, True)
        for p in (
            "tslateman+duet/63/8f582c9071/0",
            "tslateman+duet/ee/9b82bc6f5a/2",
            "Viniciuscarvalho+FitToday/5a/3bf5984554/1",
            "Viniciuscarvalho+FitToday/96/5cae3c2e2c/0",
            "Viniciuscarvalho+FitToday/f4/473875393c/4",
            "yutakobayashidev+repiq/24/723c7a3c59/1",
            "yutakobayashidev+repiq/75/bad684190c/1",
            "yutakobayashidev+repiq/b4/907d0840f0/0",
        )
    },
    **{
        f"codex/EdouardZemb+test-framework/.codex/sessions/2026/01/30/rollout-2026-01-30T{r}.jsonl": Case(
            "codex", ac.codex_file, ac.codex_tokens, True
        )
        for r in (
            "15-15-10-019c0f42-0251-7e03-834f-645efc0e6c73",
            "17-41-49-019c0fc8-46e4-7ae0-ae30-3d085f1d0e43",
            "17-44-20-019c0fca-94b6-7473-9f02-1defdfc7f053",
            "23-59-54-019c1122-6dd3-7010-bbb1-832f3f7479e8",
        )
    },
    # the eighth labelling round's files, from repositories new to the rounds (bench/data/problems-fresh-r8.jsonl):
    # Crush stores committed without their -shm/-wal, Codex rollouts and Entire CLI stores of Claude Code sessions
    **{
        f"crush/{repo}/.crush/crush.db": Case("crush", lambda p: ac.crush_file(p)[:5], lambda p: 0, True)
        for repo in ("AgustinJimenez+llama_cpp_rs_chat", "Starmel+OpenSuperWhisper", "pathum1+Graphlight")
    },
    **{
        f"codex/{p}.jsonl": Case("codex", ac.codex_file, ac.codex_tokens, True)
        for p in (
            "JaydenXsoe+ocodex/.codex/sessions/2025/09/06/rollout-2025-09-06T00-46-49-0006b370-3ba0-4783-b4ad-22ce45b53420",
            "JaydenXsoe+ocodex/.codex/sessions/2025/09/06/rollout-2025-09-06T19-11-43-7e0bf0fc-0880-40a2-b71b-d581cf86adff",
            "Python-AI-Solutions+agentic-neurodata-conversion/.codex/sessions/2025/09/26/"
            "rollout-2025-09-26T17-01-04-019985ca-7ef7-7580-a921-c20ac619f40b",
        )
    },
    **{
        f"claude_code/{p}/full.jsonl": Case("claude-code", ac.claude_code_file, ac.claude_code_tokens, True)
        for p in (
            "theogbrand+napoli-matcha/0c/c3173e5050/0",
            "theogbrand+napoli-matcha/0c/c3173e5050/4",
            "theogbrand+napoli-matcha/0c/c3173e5050/5",
            "obsessiondb+chkit/2c/116c8bd5b9/0",
            "obsessiondb+chkit/2d/2cf8204c57/0",
        )
    },
    # the ninth labelling round's files (bench/data/problems-fresh-r9.jsonl): aider histories, and stores of the Go
    # OpenCode of 2025 (Crush's forerunner, read as crush) committed with a -wal sidecar that was not copied
    **{
        f"aider/{repo}/.aider.chat.history.md": Case("aider", ac.aider_file, ac.aider_tokens, True)
        for repo in ("AlexShchuka+mozgoslav", "Aquaticat+Monochromatic")
    },
    **{
        f"crush/{repo}/.opencode/opencode.db": Case("crush", lambda p: ac.crush_file(p)[:5], lambda p: 0, True)
        for repo in ("kashifkhan0771+utils", "mule-ai+mule")
    },
    # the tenth labelling round's files (bench/data/problems-fresh-r10.jsonl): Codex rollouts from CODEX_HOME
    # directories committed to repositories new to the rounds
    **{
        f"codex/{p}.jsonl": Case("codex", ac.codex_file, ac.codex_tokens, True)
        for p in (
            "242282218+blog-nevigation/.codex/archived_sessions/rollout-2026-02-27T16-01-07-019c9e1d-9dd1-77a2-9bbe-28c7964b3705",
            "MythologIQ+Zo-Qore/.codex/sessions/2026/01/01/rollout-2026-01-01T13-03-39-019b7aba-c623-7db1-bc43-c872c3e50331",
            "MythologIQ+Zo-Qore/.codex/sessions/2026/01/01/rollout-2026-01-01T14-39-37-019b7b12-a437-71c3-b7c1-6485313dd081",
            "MythologIQ+Zo-Qore/.codex/sessions/2026/01/08/rollout-2026-01-08T11-12-11-019b9e61-3f2c-7000-87a2-734b974c8642",
            "hindermath+TinyCalc/.codex/sessions/2026/03/06/rollout-2026-03-06T15-07-24-019cc379-79d6-7c21-885e-132b8a0c295f",
            "hindermath+TinyCalc/.codex/sessions/2026/03/06/rollout-2026-03-06T16-28-16-019cc3c3-849e-75f0-827a-7146c6cab7e8",
        )
    },
    "copilot_cli/EntityProcess+agentv/b4/5ebb0fe0c0/0/full.jsonl": Case(
        "copilot-cli", lambda p: ac.copilot_file(p)[:5], lambda p: ac.copilot_file(p).tokens, False
    ),
    # a ChatGPT data export of 2023-09 (code interpreter), re-indented by the repository's formatter
    "chatgpt/realazthat+chatgpt2graph/examples/conversations.json": Case(
        "chatgpt", lambda p: ac.real_chatgpt(p.parent), lambda p: 0, True
    ),
    "open_webui/apukone+self-hosted-ai-rag/webui.db": Case(
        "open-webui", lambda p: (*ac.open_webui(p.parent), 0), lambda p: 0, True
    ),
    # Harbor's own trajectories (ATIF-v1.5 OpenHands, ATIF-v1.7 Terminus 2 with a context summarisation and its
    # continuation), written by Harbor's integration tests and copied into inspect_scout's fixtures
    **{
        f"atif/meridianlabs-ai+inspect_scout/tests/sources/atif_source/fixtures/{name}.json": Case(
            "atif", lambda p: ac.atif_file(p)[:5], lambda p: ac.atif_file(p).tokens, False
        )
        for name in (
            "openhands_hello-world.trajectory",
            "openhands_hello-world.trajectory.no_function_calling",
            "terminus_2_hello-world-context-summarization-linear-history.trajectory",
            "terminus_2_hello-world-context-summarization-linear-history.trajectory.cont-1",
        )
    },
    # `opencode export` files of OpenCode 1.2.5, two longer than the sniff's head (the info and the first message's
    # info alone tell the format; lucky-cabin's first msg_ id is past the head, behind a summary of diffs)
    **{
        f"opencode/victoryforphil+dark-factory/docs/chats/opencode/session__{name}.json": Case(
            "opencode", lambda p: ac.opencode_file(p)[:5], lambda p: ac.opencode_file(p).tokens, False
        )
        for name in (
            "jolly-eagle__ses_39b5d713cffeRgAoxPIwS3Plus",
            "quiet-meadow__ses_39c0a3da8ffeFQWvKTGUJWivpv",
            "lucky-cabin__ses_39b430a8affeJ8s45wKs0BBaz9",
        )
    },
}


def warehouse_figures(db: Path, errors_need_result: bool) -> tuple[int, ...]:
    errors = "is_error AND result_seq IS NOT NULL" if errors_need_result else "is_error"
    return tuple(
        query(
            db,
            "SELECT (SELECT count(*) FROM conversations), (SELECT count(*) FROM messages WHERE origin = 'person' "
            "AND on_main_path), (SELECT count(*) FROM tool_calls), (SELECT count(result_seq) FROM tool_calls), "
            f"(SELECT count(*) FROM tool_calls WHERE {errors}), (SELECT coalesce(sum(coalesce(input_tokens, 0) + "
            "coalesce(output_tokens, 0) + coalesce(cache_read_input_tokens, 0) + "
            "coalesce(cache_creation_input_tokens, 0)), 0) FROM message_usage)",
        )[0]
    )


# files whose warehouse figures and raw counter disagree, kept visible rather than hidden (strict: a fix shows up)
DISAGREE: dict[str, tuple[int, ...]] = {
    # (aider/Aquaticat+Monochromatic disagreed until round 11: 42 edits, 34 answered, 10 failed against 39, 31, 8;
    # the replies in ask mode are no edits, a reply after a reflected failed match is the model's, and the output
    # after the undo hint is the next input's; tests/test_aider_reflections.py pins each)
}


@pytest.mark.parametrize(
    "name",
    [
        pytest.param(n, marks=pytest.mark.xfail(strict=True, reason="importer and counter disagree (DISAGREE)"))
        if n in DISAGREE
        else n
        for n in sorted(CASES)
    ],
)
def test_each_licensed_real_file_imports_as_its_format_with_the_raw_files_figures(name: str, tmp_path: Path) -> None:
    path, case = REAL / name, CASES[name]
    assert path.is_file(), name
    db = tmp_path / "w.duckdb"
    code, _, err = run_cli("ingest", str(path), "--db", str(db))
    assert code == 0, err
    ((fmt, status, read, imported, quarantined, skipped),) = query(
        db, "SELECT format, status, messages_read, messages_imported, quarantined, skipped FROM import_runs"
    )
    assert (fmt, status) == (case.fmt, "imported")
    assert quarantined == 0 and read == imported + skipped
    assert warehouse_figures(db, case.errors_need_result) == (*case.figures(path), case.tokens(path))


@pytest.mark.parametrize("name", sorted(DISAGREE))
def test_a_file_whose_counter_disagrees_keeps_its_warehouse_figures(name: str, tmp_path: Path) -> None:
    """Until importer and counter agree, the warehouse's own figures for the file are pinned exactly."""
    db = tmp_path / "w.duckdb"
    code, _, err = run_cli("ingest", str(REAL / name), "--db", str(db))
    assert code == 0, err
    assert warehouse_figures(db, CASES[name].errors_need_result) == DISAGREE[name]
    assert tuple(CASES[name].figures(REAL / name))[:2] == DISAGREE[name][:2]  # conversations and persons agree
    assert CASES[name].tokens(REAL / name) == DISAGREE[name][5]


def test_every_licensed_real_file_is_listed_in_sources_md() -> None:
    sources = (REAL / "SOURCES.md").read_text(encoding="utf-8")
    for name in CASES:
        family, repo, *rest = name.split("/")
        assert f"`{'/'.join(rest)}`" in sources, name
        assert repo.replace("+", "/") in sources, name
        assert any(p.name.startswith("LICENSE") for p in (REAL / family / repo).iterdir()), name


def test_copilot_cli_messages_the_cli_wrote_as_the_user_are_not_the_persons(tmp_path: Path) -> None:
    """Copilot CLI 1.0.72 writes an AGENTS.md it discovered (``source: instruction-discovery``) and an empty
    ``source: system`` message as user.message events: harness turns, never the person's; the title is the
    person's first prompt, and the responses' own output tokens are kept (the file has no shutdown)."""
    path = REAL / "copilot_cli/JeffreyCA+azure-dev/0/full.jsonl"
    db = tmp_path / "w.duckdb"
    code, _, err = run_cli("ingest", str(path), "--db", str(db))
    assert code == 0, err
    rows = query(db, "SELECT origin, left(content, 40) FROM messages WHERE role = 'user' ORDER BY seq")
    assert [o for o, _ in rows] == ["person", "harness", "harness", "person"]
    assert rows[2][1].lstrip().startswith("<system_reminder>")
    ((title,),) = query(db, "SELECT title FROM conversations")
    assert title.startswith("Can you, without using gh cli or ado tools")
    assert query(db, "SELECT count(*), sum(output_tokens), min(model) FROM message_usage") == [
        (29, 18112, "gpt-5.6-sol")  # 29 of the 35 responses carry a count above 0
    ]


def test_a_chatgpt_code_run_cancelled_by_a_sandbox_reset_is_a_failed_call(tmp_path: Path) -> None:
    """In the real 2023 export, ChatGPT's sandbox was reset under the seventh of eleven python runs: its result says
    ``Code execution state reset.`` with ``aggregate_result.status: cancelled`` (the code never ran to an end), and
    the model reruns it. That call failed; the ten others succeeded, the first two returning a wrong ``0``."""
    path = REAL / "chatgpt/realazthat+chatgpt2graph/examples/conversations.json"
    db = tmp_path / "w.duckdb"
    code, _, err = run_cli("ingest", str(path), "--db", str(db))
    assert code == 0, err
    rows = query(
        db,
        "SELECT t.name, t.is_error, m.content FROM tool_calls t JOIN messages m "
        "ON m.conversation_id = t.conversation_id AND m.seq = t.result_seq ORDER BY t.seq",
    )
    assert len(rows) == 11 and {n for n, _, _ in rows} == {"python"}
    assert [i for i, (_, e, _) in enumerate(rows) if e] == [6]
    assert rows[6][2] == "Code execution state reset."
    assert query(db, "SELECT title, model FROM conversations") == [
        ("Average Distance in U(0,1)", "gpt-4-code-interpreter")
    ]


# the real files tested elsewhere, each against its own counter
ELSEWHERE = {
    "aider/tom-doerr+simple_test_project/custom_aider_history.md": "tests/test_aider_reflections.py",
    "claude_code/marot+spotter/test/fixtures/transcripts/4d5611e5-241a-462a-8d15-5122611a9569.jsonl": (
        "tests/test_real_claude_code_compaction.py"
    ),
    "claude_code/marot+spotter/test/fixtures/transcripts/4d5611e5-241a-462a-8d15-5122611a9569/subagents/"
    "agent-acompact-e1f845.jsonl": "tests/test_real_claude_code_compaction.py",
    "goose/jwp23+dotfiles/.local/share/goose/sessions/sessions.db": "tests/test_real_logs_2026.py",
    "openhands/evaluation/benchmarks/multi_swe_bench/examples/output.jsonl": "tests/test_openhands_eval.py",
    # the families of issue 42 added with their real files; the Crush store is read with its WAL and shared memory
    "crush/dbos-inc+dbos-transact-golang/.crush/crush.db": "tests/test_real_new_families.py",
    "crush/dbos-inc+dbos-transact-golang/.crush/crush.db-shm": "tests/test_real_new_families.py",
    "crush/dbos-inc+dbos-transact-golang/.crush/crush.db-wal": "tests/test_real_new_families.py",
    "openclaw/Gracula-bot+Gracula/.openclaw/agents/main/sessions/model-test-kilocode.jsonl": (
        "tests/test_real_new_families.py"
    ),
    "pi/badlogic+pi-mono/packages/coding-agent/test/fixtures/large-session.jsonl": "tests/test_real_new_families.py",
    "kimi_cli/MoonshotAI+kimi-cli/outputs/scikit-learn__scikit-learn-26323/20251030-164452/"
    "00d5060aaec3fda180930ea52304b87b/531d195b-6436-426e-b010-4bf723a992de.jsonl": "tests/test_real_new_families.py",
    "kimi_cli/MoonshotAI+kimi-cli/outputs/scikit-learn__scikit-learn-26323/20251030-164452/"
    "00d5060aaec3fda180930ea52304b87b/531d195b-6436-426e-b010-4bf723a992de_read_2.jsonl": (
        "tests/test_real_new_families.py"
    ),
    "kimi_cli/MoonshotAI+kimi-cli/outputs/scikit-learn__scikit-learn-26323/20251030-165708/sessions/"
    "00d5060aaec3fda180930ea52304b87b/d8447fa8-9d8e-41af-9fc6-a12e4a196b6c.jsonl": "tests/test_real_new_families.py",
    "letta/letta-ai+agent-file/memgpt_agent/memgpt_agent_with_convo.af": "tests/test_real_new_families.py",
    "letta/letta-ai+agent-file/customer_service_agent/customer_service.af": "tests/test_real_new_families.py",
    "letta/letta-ai+agent-file/agents/@letta-ai/loop/loop.af": "tests/test_real_new_families.py",
    "letta/letta-ai+agent-file/workflow_agent/outreach_workflow_agent.af": "tests/test_real_new_families.py",
    "nanobot/niancpu+nanobot/.nanobot/workspace/sessions/cli_direct.jsonl": "tests/test_real_new_families.py",
    "moatless/aorwall+moatless-tools/tests/trajectories/django__django-9296/trajectory.json": (
        "tests/test_real_new_families.py"
    ),
    "moatless/aorwall+moatless-tools/tests/trajectories/psf__requests-1724/trajectory.json": (
        "tests/test_real_new_families.py"
    ),
    "hermes/foodoaiprojects+hermes-agent/.hermes/sessions/session_20260421_163501_b244f5.json": (
        "tests/test_real_new_families.py"
    ),
    # the Entire CLI's checkpoints of one session each (full.jsonl beside its metadata.json): one conversation
    **{
        f"{family}/entireio+cli/{checkpoint}/0/{name}": "tests/test_entire_checkpoints.py"
        for family, checkpoint, names in (
            ("claude_code", "9b/3838281539", ("full.jsonl", "metadata.json")),
            ("claude_code", "9f/e3cfdef74d", ("full.jsonl", "metadata.json")),
            ("gemini_cli", "9c/53780d06b7", ("full.jsonl", "metadata.json")),
            ("gemini_cli", "c9/45f262e88d", ("full.jsonl", "metadata.json")),
            ("gemini_cli", "ab/2b9748b105", ("metadata.json",)),
        )
        for name in names
    },
    "claude_code/JanDeDobbeleer+oh-my-posh/1c/fa5e2d5f1f/0/full.jsonl": "tests/test_claude_code_origins.py",
    "claude_code/JanDeDobbeleer+oh-my-posh/1c/fa5e2d5f1f/0/metadata.json": "tests/test_claude_code_origins.py",
    "swe_agent/trajectories/demonstrations/function_calling_simple.traj": "tests/test_real_shapes.py",
    "swe_agent/trajectories/demonstrations/replay__marshmallow-code__marshmallow-1867__function_calling_replace_"
    "from_source/marshmallow-code__marshmallow-1867.traj": "tests/test_real_shapes.py",
}


def _sqlite_side(p: Path) -> bool:
    """The -shm/-wal pair SQLite writes beside a WAL-mode store whenever it is read (the eighth round's Crush stores
    were committed without theirs; .gitignore keeps them out): not a file of its own unless the repository had it."""
    store = p.with_name(p.name.removesuffix("-shm").removesuffix("-wal"))
    name = p.relative_to(REAL).as_posix()
    return p.name.endswith(("-shm", "-wal")) and store.is_file() and name not in ELSEWHERE


def test_every_real_file_here_is_tested() -> None:
    """A real file added to fixtures/real without a test of its figures fails here, naming it."""
    here = {
        p.relative_to(REAL).as_posix()
        for p in REAL.rglob("*")
        if p.is_file() and not p.name.startswith("LICENSE") and p.name != "SOURCES.md" and not _sqlite_side(p)
    }
    assert sorted(here - set(CASES) - set(ELSEWHERE)) == []
    for name, test in ELSEWHERE.items():
        assert (REAL.parent.parent / test).is_file(), test
        assert name.rsplit("/", 1)[-1].split("-")[0] in (REAL.parent.parent / test).read_text(encoding="utf-8") or (
            name.split("/")[0] in (REAL.parent.parent / test).read_text(encoding="utf-8")
        ), (name, test)


def test_no_text_says_a_source_kept_here_has_no_licence() -> None:
    """A repository fixtures/real/SOURCES.md keeps a file of, under a licence, is not called unlicensed anywhere in
    the tests or the docs ("<owner>/<name>; no licence" or "… (no licence)" naming it): AlexShchuka/mozgoslav was
    measured at stop 46 as having none and is MIT at its HEAD (689e4106), kept in fixtures/real/aider since stop 54;
    tests/test_aider_reflections.py still said it had none."""
    import re

    root = FIXTURES.parent
    licensed = set()
    for row in (FIXTURES / "real" / "SOURCES.md").read_text(encoding="utf-8").splitlines():
        cells = [c.strip() for c in row.split("|")]
        if (
            len(cells) > 4
            and (m := re.match(r"`([\w.-]+/[\w.-]+)@", cells[2]))
            and re.match(r"MIT|Apache|BSD", cells[4])
        ):
            licensed.add(m.group(1))
    assert "AlexShchuka/mozgoslav" in licensed
    texts = [*sorted((root / "tests").glob("*.py")), *sorted((root / "docs").glob("*.md"))]
    said = [
        f"{t.relative_to(root)}: {repo}"
        for t in texts
        for repo in sorted(licensed)
        if re.search(re.escape(repo) + r"`?[;,)]? *(?:\(|,|;)? *no licen[cs]e", t.read_text(encoding="utf-8"))
    ]
    assert said == []
