"""Round 7 of the problem detectors' recall (issue 41): readings general in form where a rule leaned on words. A
reply hands its turn's changes over by naming the file they wrote, whatever its words, and the person says they
failed (``claim_contradicted``); a short request the reply neither acted on nor named, spelled out in the person's
next turn (``asked_again_reworded``). Each case is a snippet of its real conversation's shape, with the near misses
beside it."""

from __future__ import annotations

from pathlib import Path

from forensics.analyzers.problems.endings import handed_over
from forensics.analyzers.problems.stopped import RULE as STOPPED  # synthetic runs that end on "Let me look." (round 18)
from tests.test_problems import Session, run, verbatim

EDIT = {"path": "ui/src/App.tsx", "old": "panOnDrag", "new": "panOnDrag={[1, 2]}"}


def test_a_reply_that_hands_over_its_changes_by_the_file_they_wrote_is_a_claim(tmp_path: Path) -> None:
    """codex shell-ws: "I changed the canvas so left-drag no longer pans ... In ui/src/App.tsx" (no claim word) after
    an edit of App.tsx, then "still cannot drag notes"."""
    s = (
        Session("handed")
        .add("user", "I cannot drag the notes on the canvas, fix it")
        .call("edit_file", EDIT, "Edited ui/src/App.tsx")
        .add(
            "assistant",
            "I changed the canvas so left-drag no longer pans the workspace. In ui/src/App.tsx the pan is limited.",
        )
        .add("user", "still cannot drag notes, it starts a selection gesture")
        .add("assistant", "Let me look.")
    )
    found, _ = run(tmp_path, s)
    (claim,) = [f for f in found if f["kind"] == "gave_up_or_false_success" and f["rule"] != STOPPED]
    assert (claim["positions"], claim["rule"]) == ([3, 4], "claim_contradicted")
    assert "(App.tsx)" in claim["norm"] and verbatim(tmp_path, claim)


def test_a_reply_that_names_no_file_its_changes_wrote_claims_nothing(tmp_path: Path) -> None:
    """The near misses (pi, crush): after the same edit the last thing said is a guess at the cause, or the API's
    error, or an abort; then the same "still" turn. No hand-over of work, no false success."""
    found = {}
    for sid, said in (
        ("guess", "Now run it again in both terminals and check what it says. I bet the terminal reads as light."),
        ("error", '[error] API Error POST "https://api.example.com/v1/chat": 400 Bad Request'),
        ("abort", "[aborted] Request was aborted."),
    ):
        s = (
            Session(sid)
            .add("user", "I cannot drag the notes on the canvas, fix it")
            .call("edit_file", EDIT, "Edited ui/src/App.tsx")
            .add("assistant", said)
            .add("user", "still cannot drag notes, it starts a selection gesture")
            .add("assistant", "Let me look.")
        )
        (tmp_path / sid).mkdir()
        found[sid] = [
            f["rule"]
            for f in run(tmp_path / sid, s)[0]
            if f["kind"] == "gave_up_or_false_success" and f["rule"] != STOPPED
        ]
    assert found == {"guess": [], "error": [], "abort": []}


def test_handed_over_reads_the_file_by_name_or_by_an_identifier_stem() -> None:
    """A file name, a path's last part, a patch header; the stem alone only when it is an identifier."""
    patch = '{"command": ["apply_patch", "*** Begin Patch\\n*** Update File: src/TeamSheet.tsx\\n@@"]}'
    assert handed_over("TeamSheet now loads a single team.", patch) == "TeamSheet.tsx"
    assert handed_over("Updated `theme.ts` to log errors.", '{"path": "/w/src/theme/theme.ts"}') == "theme.ts"
    assert handed_over("The theme now falls back to dark.", '{"path": "/w/src/theme/theme.ts"}') == ""
    assert handed_over("Fixed it.", "python - <<'PY'\\nPath('/w/ui/src/App.tsx').write_text(t)") == ""
    assert (
        handed_over("The fix is in App.tsx.", "python - <<'PY'\\nPath('/w/ui/src/App.tsx').write_text(t)") == "App.tsx"
    )


def test_a_short_request_the_reply_did_not_take_up_spelled_out_again(tmp_path: Path) -> None:
    """pi large-session: "sleep", answered by a summary of the session (no call, no word of sleeping), then "dude
    sleep 5 seconds via bash"."""
    s = (
        Session("sleep")
        .add("user", "make the colors less intense")
        .call("edit_file", {"path": "dark.json", "old": "#00ff00", "new": "#00d700"}, "Edited dark.json")
        .add("assistant", "Made the colors less intense.")
        .add("user", "sleep")
        .add("assistant", "Got it! We've made good progress today: the theme system has five new border tokens.")
        .add("user", "dude sleep 5 seconds via bash")
        .call("bash", {"command": "sleep 5"}, "(no output)")
    )
    found, _ = run(tmp_path, s)
    (again,) = [f for f in found if f["kind"] == "user_repeated"]
    assert (again["positions"], again["rule"]) == ([6], "asked_again_reworded")
    assert "neither acting on it nor naming it" in again["norm"] and verbatim(tmp_path, again)


def test_a_short_request_answered_or_acted_on_then_extended_is_no_repeat(tmp_path: Path) -> None:
    """The near misses: the reply names the request ("how to do a crashing schedule" answered about crashing
    schedules, then "example of how to do a crashing schedule": a new request), or acts on it (a call)."""
    named = (
        Session("named")
        .add("user", "crashing schedule")
        .add("assistant", "A crashing schedule compresses the project timeline by adding resources.")
        .add("user", "example of a crashing schedule for a small building project")
        .add("assistant", "Here is one.")
    )
    acted = (
        Session("acted")
        .add("user", "run lint")
        .call("bash", {"command": "pnpm lint"}, "0 problems")
        .add("assistant", "All clean.")
        .add("user", "run lint on the ui package too, with the strict config")
        .add("assistant", "Running it.")
    )
    found, _ = run(tmp_path, named, acted)
    assert [f for f in found if f["kind"] == "user_repeated"] == []
