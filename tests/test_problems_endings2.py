"""Loops by cause and hand-backs by evidence (issue 41, branch ``ending2``; docs/failures-evaluation.md, round 5 of the
problems): each case a snippet of the real conversation it came from (texts verbatim, cut), ingested and reported
through the real pipeline, beside the near miss that must not fire."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from forensics.analyzers.problems.actions import progressed
from forensics.analyzers.problems.model import QUOTE
from tests.test_problems import Session, run, verbatim

# fixtures/real/opencode (1c2e5c95): tsc run after each apply_patch; the node_modules errors stay, the agent's shrink
NODE = (
    "node_modules/elysia-protobuf/src/index.ts(5,44): error TS2307: Cannot find module 'elysia/error' or its "
    "corresponding type declarations.\n"
    "node_modules/elysia-protobuf/src/index.ts(24,26): error TS2694: Namespace '\"node:crypto\".webcrypto' has no "
    "exported member 'BufferSource'.\n"
)
OWN_1 = (
    "src/http/routes/product-routes.ts(9,14): error TS7031: Binding element 'body' implicitly has an 'any' type.\n"
    "src/protobuf.ts(4,8): error TS2459: Module '\"elysia-protobuf\"' declares 'Schemas' locally, but it is not exported.\n"
)
OWN_2 = "src/protobuf.ts(22,42): error TS2322: Type 'Record<string, unknown>' is not assignable to type 'Schemas'.\n"
TSC = {"command": "bunx tsc --noEmit", "workdir": "/Users/alex/repos/vfp/dark-factory/core"}


def call(s: Session, name: str, args: dict[str, Any], result: str, error: bool = False, text: str = "") -> Session:
    s.calls += 1
    cid = f"c{s.calls}"
    s.add(
        "assistant",
        text,
        tool_calls=[{"id": cid, "type": "function", "function": {"name": name, "arguments": json.dumps(args)}}],
    )
    return s.add("tool", result, tool_call_id=cid, is_error=error)


def patch(s: Session, path: str) -> Session:
    text = f"*** Begin Patch\n*** Update File: {path}\n*** End Patch"
    return call(s, "apply_patch", {"patchText": text}, f"Success. Updated the following files:\nM {path}")


def tsc_session(sid: str, outputs: list[str]) -> Session:
    s = Session(sid).add("user", "Refactor the routes to use elysia-protobuf, then make tsc pass")
    for k, out in enumerate(outputs):
        if k:
            patch(s, "core/src/protobuf.ts")
        call(s, "bash", TSC, out, error=True)
    return s.add("assistant", "The remaining errors are in node_modules/elysia-protobuf.")


def test_a_check_run_again_after_each_edit_with_fewer_errors_is_progress_not_a_loop(tmp_path: Path) -> None:
    """The lead's false loop: tsc three times, an edit before each, the agent's own errors shrinking (the
    node_modules errors, which its edits cannot touch, stay)."""
    found, _ = run(tmp_path, tsc_session("tsc", [NODE + OWN_1, NODE + OWN_2, NODE]))
    assert [f for f in found if f["kind"] == "loop"] == []


def test_the_same_output_after_each_edit_is_a_loop(tmp_path: Path) -> None:
    """The near miss: the edits do not touch the error (the output comes back the same): a loop."""
    found, _ = run(tmp_path, tsc_session("same", [NODE + OWN_2] * 3))
    loops = [(f["rule"], f["positions"], f["quote"]) for f in found if f["kind"] == "loop"]
    assert loops == [("same_error_3_times (bash)", [1, 2, 5, 6, 9, 10], NODE.split("\n")[0][:QUOTE])]
    assert all(verbatim(tmp_path, f) for f in found if f["kind"] == "loop")


def test_progress_is_another_output_once_run_noise_is_masked() -> None:
    assert progressed(NODE + OWN_1, NODE + OWN_2)
    assert progressed(NODE + OWN_2, NODE)
    assert not progressed("1 failed, 3 passed in 0.53s\n", "1 failed, 3 passed in 0.61s\n")
    assert not progressed("FAILED at 12:03:44 (build 3fa9c21d)", "FAILED at 12:04:10 (build 77be01aa)")
    assert progressed("src/a.ts(5,1): error TS2304", "src/a.ts(9,1): error TS2304")  # other lines


# shared gemini_cli (93c0da34): the tools it reaches for are not registered; each refusal alike
REFUSED = (
    'Tool "{}" not found in registry. Tools must use the exact names that are registered. Did you mean one of: '
    '"read_file", "glob", "web_fetch"?'
)
FIREBASE = '{\n  "hosting": {\n    "public": "build"\n  }\n}'


def test_one_refusal_met_through_several_tools_is_a_loop(tmp_path: Path) -> None:
    s = Session("registry").add("user", "Corrige la configuration de déploiement firebase")
    call(s, "read_file", {"absolute_path": "firebase.json"}, FIREBASE)
    call(
        s,
        "replace",
        {"file_path": "firebase.json", "old_string": "build", "new_string": "dist"},
        REFUSED.format("replace"),
        True,
    )
    call(s, "write_file", {"file_path": "firebase.json", "content": "{}"}, REFUSED.format("write_file"), True)
    call(
        s,
        "run_shell_command",
        {"command": "sed -i s/build/dist/ firebase.json"},
        REFUSED.format("run_shell_command"),
        True,
    )
    s.add("assistant", "I am unable to modify the `firebase.json` file directly.")
    found, _ = run(tmp_path, s)
    loops = [(f["rule"], f["positions"], f["quote"]) for f in found if f["kind"] == "loop"]
    assert loops == [
        (
            "same_error_3_times (replace+run_shell_command+write_file)",
            [3, 4, 5, 6, 7, 8],
            REFUSED.format("replace")[:QUOTE],
        )
    ]
    assert all(verbatim(tmp_path, f) for f in found if f["kind"] == "loop")
    # and the decline is no hand-back: the session has no shell (its command tool is not registered)
    assert [f for f in found if f["rule"] == "declined_doable"] == []


def test_a_tool_that_works_between_the_refusals_breaks_the_loop(tmp_path: Path) -> None:
    s = Session("works").add("user", "Corrige la configuration de déploiement firebase")
    call(
        s,
        "replace",
        {"file_path": "firebase.json", "old_string": "a", "new_string": "b"},
        REFUSED.format("replace"),
        True,
    )
    call(s, "write_file", {"file_path": "firebase.json", "content": "{}"}, REFUSED.format("write_file"), True)
    call(
        s,
        "replace",
        {"file_path": "vite.config.js", "old_string": "a", "new_string": "b"},
        "Successfully modified file",
    )
    call(
        s,
        "replace",
        {"file_path": "firebase.json", "old_string": "c", "new_string": "d"},
        REFUSED.format("replace"),
        True,
    )
    found, _ = run(tmp_path, s)
    assert [f for f in found if f["kind"] == "loop"] == []


# fixtures/real/continue (a0f97f97): no tools; the person runs each proposed script and pastes the error back
JUSTFILE = (
    "error: Unknown start of token:\n——▶ justfile:19:7\n│\n19 │   @cd ../.. && curl --fail -o .git/hooks/commit-msg "
    "https://raw.githubusercontent.com/hazcod/semantic-commit-hook/master/commit-msg \\\n│       ^"
)
PROPOSAL = "To fix this, add this line to your `set1.sh` script:\n```bash\nsed -i 's/^@/\\/bin\\/true &/' justfile\n```"


def pasted_session(sid: str, errors: list[str]) -> Session:
    s = Session(sid)
    for k, err in enumerate(errors):
        s.add("user", f"{err}\nвиправ помилку в скрипті щоб він закінчив роботу докінця set1.sh")
        s.add("assistant", PROPOSAL if k < len(errors) - 1 else "Here is the rewritten script.")
    return s


def test_one_error_pasted_back_three_times_after_each_proposal_is_a_loop(tmp_path: Path) -> None:
    found, _ = run(tmp_path, pasted_session("pasted", [JUSTFILE] * 3))
    loops = [(f["rule"], f["positions"], f["quote"]) for f in found if f["kind"] == "loop"]
    assert loops == [("same_error_pasted_3_times", [0, 2, 4], "error: Unknown start of token:")]
    assert all(verbatim(tmp_path, f) for f in found if f["kind"] == "loop")


def test_an_error_pasted_back_once_is_no_loop(tmp_path: Path) -> None:
    other = "psql: ERROR: query returned no rows"
    found, _ = run(tmp_path, pasted_session("twice", [JUSTFILE, JUSTFILE, other]))
    assert [f for f in found if f["kind"] == "loop"] == []


# shared gemini_cli (594227e0): a shell it used, then the install handed back to the person
GCLOUD = (
    "Output: gcloud : The term 'gcloud' is not recognized as the name of a cmdlet, function, script file, or operable "
    "program."
)
HANDED = (
    "I understand. As an AI agent, I cannot directly install software or modify your system's PATH. This is a manual "
    "step you'll need to complete on your end."
)


def test_a_shell_step_handed_back_in_a_session_with_a_shell_is_giving_up(tmp_path: Path) -> None:
    s = Session("gcloud").add("user", "Help Logan set the required environment variables for Vertex AI")
    call(s, "run_shell_command", {"command": "gcloud config get-value project"}, GCLOUD, True)
    s.add("assistant", "It appears that the `gcloud` command is not recognized on your system.")
    s.add("user", "Please ensure that the Google Cloud SDK is installed and that gcloud is accessible in your PATH.")
    s.add("assistant", HANDED)
    found, _ = run(tmp_path, s)
    got = [(f["rule"], f["positions"], f["quote"], f["norm"]) for f in found if f["kind"] == "gave_up_or_false_success"]
    assert got == [
        (
            "declined_doable",
            [5],
            HANDED[:QUOTE].strip(),
            "this conversation runs commands with run_shell_command, so the step it hands back was in its reach",
        )
    ]


# fixtures/real/codex (7a23aae0): `rg '\[gone\]'` matching nothing is the confirmation, not a failure
def test_an_empty_search_in_codex_wrapper_lines_is_no_failed_step(tmp_path: Path) -> None:
    s = Session("gone").add("user", "switch to main and delete the stale local branch")
    call(
        s,
        "exec_command",
        {"cmd": "git switch main && git branch -D fix/openai-codex-target-env"},
        "Chunk ID: 979bfd\nWall time: 0.5417 seconds\nProcess exited with code 0\nOriginal token count: 12\nOutput:\nSwitched to branch 'main'\n",
    )
    empty = (
        "Chunk ID: 94c2d6\nWall time: 0.0000 seconds\nProcess exited with code 1\nOriginal token count: 0\nOutput:\n"
    )
    call(s, "exec_command", {"cmd": "git branch -vv | rg '\\[gone\\]'"}, empty, True)
    s.add("assistant", "Done.\n\n- Pruned remote refs and confirmed no local branches still show `[gone]` upstreams.")
    found, _ = run(tmp_path, s)
    assert [f for f in found if f["rule"] == "claim_over_errors"] == []
