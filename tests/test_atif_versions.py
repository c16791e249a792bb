"""Each field ATIF added from v1.2 to v1.8, read as its schema says (Harbor RFC 0001 and the models that write it;
docs/formats.md lists what each version added). Every document here is built from the schema, one field at a time."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from forensics.formats import atif
from forensics.formats.kit.model import Conversation, Log
from tests.agent_counts import Tally, atif_file
from tests.conftest import query, run_cli


def _doc(steps: list[dict[str, Any]], version: str = "ATIF-v1.8", **top: Any) -> dict[str, Any]:
    return {
        "schema_version": version,
        "session_id": "s-1",
        "agent": {"name": "terminus-2", "version": "2.0.0", "model_name": "m-agent"},
        "steps": steps,
        **top,
    }


def _read(tmp_path: Path, doc: dict[str, Any]) -> tuple[list[Conversation], Log]:
    path = tmp_path / "trajectory.json"
    path.write_text(json.dumps(doc), encoding="utf-8")
    log = Log(str(path))
    return atif.read(str(path), log), log


def _call(cid: str, name: str = "bash") -> dict[str, Any]:
    return {"tool_call_id": cid, "function_name": name, "arguments": {"keystrokes": "ls\n"}}


def test_v1_2_observation_on_a_system_step_is_a_tool_message(tmp_path: Path) -> None:
    convs, _ = _read(
        tmp_path,
        _doc(
            [
                {"step_id": 1, "source": "user", "message": "fix it"},
                {
                    "step_id": 2,
                    "source": "system",
                    "message": "context",
                    "observation": {"results": [{"content": "$ ls\nREADME"}]},
                },
            ],
            "ATIF-v1.2",
        ),
    )
    roles = [(t.role, t.text) for t in convs[0].turns]
    assert roles == [("user", "fix it"), ("system", "context"), ("tool", "$ ls\nREADME")]
    assert convs[0].turns[2].answers is None


def test_v1_3_v1_4_token_ids_and_logprobs_are_not_tokens_counted(tmp_path: Path) -> None:
    step = {
        "step_id": 2,
        "source": "agent",
        "message": "done",
        "metrics": {
            "prompt_tokens": 120,
            "completion_tokens": 7,
            "cached_tokens": 100,
            "cost_usd": 0.01,
            "prompt_token_ids": [1, 2, 3],
            "completion_token_ids": [4, 5],
            "logprobs": [-0.1, -0.2],
        },
    }
    convs, _ = _read(tmp_path, _doc([{"step_id": 1, "source": "user", "message": "go"}, step], "ATIF-v1.4"))
    (u,) = convs[0].turns[1].usage
    assert (u.prompt_tokens, u.output_tokens, u.cache_read_input_tokens, u.model) == (120, 7, 100, "m-agent")


def test_v1_5_tool_definitions_are_counted_not_read(tmp_path: Path) -> None:
    doc = _doc([{"step_id": 1, "source": "user", "message": "go"}], "ATIF-v1.5")
    doc["agent"]["tool_definitions"] = [{"type": "function", "function": {"name": "bash"}}]
    convs, log = _read(tmp_path, doc)
    assert len(convs[0].turns) == 1 and log.ignored["agent.tool_definitions"] == 1


def test_v1_6_content_parts_text_read_images_counted(tmp_path: Path) -> None:
    msg = [
        {"type": "text", "text": "What is on this card?"},
        {"type": "image", "source": {"media_type": "image/png", "path": "media/card.png"}},
    ]
    result = [
        {"type": "text", "text": "screenshot taken"},
        {"type": "image", "source": {"media_type": "image/png", "path": "media/shot.png"}},
    ]
    steps = [
        {"step_id": 1, "source": "user", "message": msg},
        {
            "step_id": 2,
            "source": "agent",
            "message": "",
            "tool_calls": [_call("c1", "screenshot")],
            "observation": {"results": [{"source_call_id": "c1", "content": result}]},
        },
    ]
    convs, log = _read(tmp_path, _doc(steps, "ATIF-v1.6"))
    assert [t.text for t in convs[0].turns] == ["What is on this card?", "", "screenshot taken"]
    assert convs[0].turns[2].answers == "c1" and log.ignored["image part"] == 2


def test_v1_8_audio_parts_are_counted(tmp_path: Path) -> None:
    msg = [
        {"type": "text", "text": "listen"},
        {"type": "audio", "source": {"media_type": "audio/wav", "path": "media/a.wav", "duration_sec": 1.5}},
    ]
    convs, log = _read(tmp_path, _doc([{"step_id": 1, "source": "user", "message": msg}]))
    assert convs[0].turns[0].text == "listen" and log.ignored["audio part"] == 1


def _parent_with_children() -> dict[str, Any]:
    child = {
        "schema_version": "ATIF-v1.8",
        "session_id": "s-1",  # a child may share the parent's session: the document id names it
        "trajectory_id": "search-1",
        "agent": {"name": "searcher", "version": "1", "model_name": "m-small"},
        "steps": [
            {"step_id": 1, "source": "user", "message": "find the config"},
            {
                "step_id": 2,
                "source": "agent",
                "message": "config.toml",
                "model_name": "m-small",
                "metrics": {"prompt_tokens": 50, "completion_tokens": 5},
            },
        ],
    }
    steps = [
        {"step_id": 1, "source": "user", "message": "set the port"},
        {
            "step_id": 2,
            "source": "agent",
            "message": "",
            "tool_calls": [_call("d1", "delegate"), _call("d2", "delegate")],
            "observation": {
                "results": [
                    {
                        "source_call_id": "d1",
                        "content": None,
                        "subagent_trajectory_ref": [{"trajectory_id": "search-1", "session_id": "s-1"}],
                    },
                    {"source_call_id": "d2", "subagent_trajectory_ref": [{"trajectory_path": "subagents/lint.json"}]},
                ]
            },
            "metrics": {"prompt_tokens": 200, "completion_tokens": 20},
            "llm_call_count": 1,
        },
    ]
    return _doc(steps, trajectory_id="root", subagent_trajectories=[child])


def test_v1_7_embedded_subagents_are_children_and_refs_answer_their_calls(tmp_path: Path) -> None:
    convs, _ = _read(tmp_path, _parent_with_children())
    assert [(c.id, c.parent) for c in convs] == [("s-1", None), ("s-1/search-1", "s-1")]
    assert convs[1].model == "m-small" and convs[1].provider == "searcher"
    results = [t for t in convs[0].turns if t.role == "tool"]
    assert [(t.answers, t.text) for t in results] == [
        ("d1", "sub-agent trajectory search-1"),
        ("d2", "sub-agent trajectory subagents/lint.json"),
    ]


def test_a_subagent_ref_written_as_one_object(tmp_path: Path) -> None:
    step = {
        "step_id": 2,
        "source": "agent",
        "message": "",
        "tool_calls": [_call("d1", "delegate")],
        "observation": {
            "results": [
                {
                    "source_call_id": "d1",
                    "subagent_trajectory_ref": {"session_id": "sub-9", "trajectory_path": "sub-9.json"},
                }
            ]
        },
    }
    convs, _ = _read(tmp_path, _doc([{"step_id": 1, "source": "user", "message": "go"}, step], "ATIF-v1.6"))
    assert convs[0].turns[-1].text == "sub-agent trajectory sub-9.json"


def test_copied_context_is_skipped_and_marks_the_continuation(tmp_path: Path) -> None:
    steps = [
        {"step_id": 1, "source": "user", "message": "the task", "is_copied_context": True},
        {
            "step_id": 2,
            "source": "agent",
            "message": "earlier answer",
            "is_copied_context": True,
            "metrics": {"prompt_tokens": 10, "completion_tokens": 1},
        },
        {"step_id": 3, "source": "user", "message": "Here is a summary of the work so far"},
        {
            "step_id": 4,
            "source": "agent",
            "message": "continuing",
            "metrics": {"prompt_tokens": 30, "completion_tokens": 3},
        },
    ]
    convs, log = _read(tmp_path, _doc(steps, "ATIF-v1.7", continued_trajectory_ref="trajectory.cont-2.json"))
    assert [t.text for t in convs[0].turns] == ["Here is a summary of the work so far", "continuing"]
    (ev,) = convs[0].events
    assert (ev.kind, ev.before, ev.trigger, ev.detail) == ("continuation", 0, None, {"copied_steps": 2})
    assert log.skipped["copied context step"] == 2 and log.ignored["continued_trajectory_ref"] == 1


def test_an_unknown_source_is_quarantined_not_guessed(tmp_path: Path) -> None:
    convs, log = _read(
        tmp_path,
        _doc([{"step_id": 1, "source": "tool", "message": "x"}, {"step_id": 2, "source": "user", "message": "hi"}]),
    )
    assert [t.text for t in convs[0].turns] == ["hi"] and len(log.batch.quar["location"]) == 1


def test_the_warehouse_links_children_results_and_counts_as_the_counter(tmp_path: Path) -> None:
    trial = tmp_path / "trial" / "agent"
    trial.mkdir(parents=True)
    path = trial / "trajectory.json"
    path.write_text(json.dumps(_parent_with_children()), encoding="utf-8")
    db = tmp_path / "w.duckdb"
    code, _, err = run_cli("ingest", str(path), "--db", str(db))
    assert code == 0, err
    assert atif_file(path) == Tally(2, 2, 2, 2, 0, 275)
    rows = query(
        db,
        "SELECT c.native_id, p.native_id FROM conversations c LEFT JOIN conversations p ON p.conversation_id = c.parent_conversation_id ORDER BY 1",
    )
    assert rows == [("s-1", None), ("s-1/search-1", "s-1")]
    (linked,) = query(db, "SELECT count(result_seq) FROM tool_calls")[0]
    assert linked == 2


HARBOR = (
    Path(__file__).parent.parent
    / "fixtures"
    / "real"
    / "atif"
    / "meridianlabs-ai+inspect_scout"
    / "tests"
    / "sources"
    / "atif_source"
    / "fixtures"
)


def test_harbors_terminus_2_summarisation_and_its_continuation(tmp_path: Path) -> None:
    """Harbor v0.16.1's own golden run (ATIF-v1.7): the handoff step's context_management is a compaction naming its
    three summarising sub-agents (no message of their references), the continuation's four copied steps are skipped
    behind a continuation event, and the task, not Terminus 2's template, is the person's words and the title."""
    db = tmp_path / "w.duckdb"
    for name in ("", ".cont-1"):
        code, _, err = run_cli(
            "ingest",
            str(HARBOR / f"terminus_2_hello-world-context-summarization-linear-history.trajectory{name}.json"),
            "--db",
            str(db),
        )
        assert code == 0, err
    events = query(db, "SELECT kind, position, detail FROM events ORDER BY kind")
    assert [(k, p) for k, p, _ in events] == [("compaction", 7), ("continuation", 0)]
    assert json.loads(events[0][2])["subagents"] == [
        f"trajectory.summarization-1-{s}.json" for s in ("summary", "questions", "answers")
    ]
    assert json.loads(events[1][2]) == {"copied_steps": 4}
    task = 'Create a file called hello.txt with "Hello, world!" as the content.'
    assert query(db, "SELECT title FROM conversations WHERE title IS NOT NULL") == [(task,)]
    assert query(db, "SELECT person_text FROM messages WHERE origin = 'person'") == [(task,)]


def test_openhands_example_prompt_gives_the_task_as_the_persons_words(tmp_path: Path) -> None:
    db = tmp_path / "w.duckdb"
    code, _, err = run_cli(
        "ingest", str(HARBOR / "openhands_hello-world.trajectory.no_function_calling.json"), "--db", str(db)
    )
    assert code == 0, err
    task = 'Create a file called hello.txt with "Hello, world!" as the content.'
    assert query(db, "SELECT title FROM conversations") == [(task,)]


def test_task_templates_own_words_python_and_sql_agree() -> None:
    import duckdb

    from forensics.warehouse.own_words import own_words, own_words_sql

    terminus = "You are an AI assistant tasked with solving command-line tasks in a Linux environment. Format...\n\nTask Description:\nFix the build.\nThen run tests.\n\nCurrent terminal state:\n$ "
    openhands = "Here's a running example of how to perform a task with the provided tools.\n...\n--------------------- NEW TASK DESCRIPTION ---------------------\nCount the lines.\n\n--------------------- END OF NEW TASK DESCRIPTION ---------------------\n"
    quoted = "Please explain this prompt:\nTask Description:\nx\n\nCurrent terminal state:"  # not the harness's opening
    con = duckdb.connect()
    for text, words in (
        (terminus, "Fix the build.\nThen run tests."),
        (openhands, "Count the lines."),
        (quoted, quoted),
    ):
        assert own_words(text) == words
        assert con.execute(f"SELECT {own_words_sql('$1')}", [text]).fetchone() == (words,)


def test_terminus_2_summarisation_prompts_are_the_harness_words(tmp_path: Path) -> None:
    """Terminus 2 (harbor/agents/terminus_2/terminus_2.py) writes its summarisation's prompts as user steps: the
    handoff request, the new agent's questions and the answers handed over are the harness's, the task the person's."""
    steps = [
        {"step_id": 1, "source": "user", "message": "Create hello.txt."},
        {
            "step_id": 2,
            "source": "system",
            "message": "Performed context summarization and handoff to continue task.",
            "extra": {"context_management": {"type": "compaction", "boundary": "replace"}},
            "observation": {
                "results": [
                    {
                        "subagent_trajectory_ref": [
                            {
                                "session_id": "s-1-summarization-1-summary",
                                "trajectory_path": "trajectory.summarization-1-summary.json",
                            }
                        ]
                    }
                ]
            },
        },
        {
            "step_id": 3,
            "source": "user",
            "message": "Here are the answers the other agent provided.\n\nHere are the answers:\n\n1. ...",
        },
        {
            "step_id": 4,
            "source": "user",
            "message": "The next agent has a few questions for you, please answer each of them one by one in detail:\n\n1. ?",
        },
        {
            "step_id": 5,
            "source": "user",
            "message": "You are about to hand off your work to another AI agent.\n            Please provide a comprehensive summary",
        },
        {
            "step_id": 6,
            "source": "user",
            "message": "You are picking up work from a previous AI agent on this task:\n\n**Original Task:** Create hello.txt.",
        },
    ]
    convs, log = _read(tmp_path, _doc(steps, "ATIF-v1.5"))
    assert [t.origin for t in convs[0].turns] == ["person", "harness", "harness", "harness", "harness", "harness"]
    assert [(e.kind, e.before) for e in convs[0].events] == [("compaction", 1)] and log.skipped[
        "sub-agent reference"
    ] == 1
    assert atif_file(tmp_path / "trajectory.json").person == 1


def test_a_subagent_file_names_its_parent_session(tmp_path: Path) -> None:
    """Terminus 2's summarising sub-agents are written to their own files, agent.extra.parent_session_id naming the
    trajectory they summarise: the warehouse links them, in whichever order the files are read."""
    parent = _doc([{"step_id": 1, "source": "user", "message": "Create hello.txt."}], "ATIF-v1.5")
    child = _doc(
        [
            {
                "step_id": 1,
                "source": "user",
                "message": "You are about to hand off your work to another AI agent.",
                "is_copied_context": True,
            },
            {"step_id": 2, "source": "agent", "message": "Summary: created test_dir."},
        ],
        "ATIF-v1.5",
        session_id="s-1-summarization-1-summary",
    )
    child["agent"]["extra"] = {"parent_session_id": "s-1", "summarization_index": 1}
    agent = tmp_path / "trial" / "agent"
    agent.mkdir(parents=True)
    (agent / "trajectory.summarization-1-summary.json").write_text(json.dumps(child), encoding="utf-8")
    (agent / "trajectory.json").write_text(json.dumps(parent), encoding="utf-8")
    db = tmp_path / "w.duckdb"
    code, _, err = run_cli("ingest", str(agent), "--db", str(db))
    assert code == 0, err
    rows = query(
        db,
        "SELECT c.native_id, p.native_id FROM conversations c LEFT JOIN conversations p ON p.conversation_id = c.parent_conversation_id ORDER BY 1",
    )
    assert rows == [("s-1", None), ("s-1-summarization-1-summary", "s-1")]
