"""kept_going_after_done read against the task (issue 41): on the graded runs every finding of the rule was false, a
step's claim followed by a deletion the task asked for or of what the run itself made for that step. Each shape from a
real run (terminal-bench's mini-swe-agent trials, a Codex session of the seventh round), with the near miss that must
still fire (the Gemini CLI run that deletes `blue.md` (in docs/) right after "fulfilling your request")."""

from __future__ import annotations

import json

import pytest

from forensics.analyzers.problems import focus

Msgs = list[tuple[int, str, str, list[tuple[str, str, bool, str]]]]


def _run(task: str, claim: str, *commands: str, before: tuple[str, ...] = (), request: str | None = None) -> Msgs:
    """The task, the ``before`` commands, (a person's ``request`` opening a second turn), the claim, then the
    ``commands``, each its own message."""
    msgs: Msgs = [(0, "user", task, [])]

    def call(command: str) -> None:
        msgs.append((len(msgs), "assistant", "", [("bash", json.dumps({"command": command}), False, "")]))

    for c in before:
        call(c)
    if request is not None:
        msgs.append((len(msgs), "user", request, []))
    msgs.append((len(msgs), "assistant", claim, []))
    for c in commands:
        call(c)
    return msgs


TAR = "THOUGHT: Good! The tar archive was created successfully. Let me verify it.\n\n```bash\nls -la sensitive_files.tar.gz\n```"
SHRED = "shred -vfz -n 3 sensitive_files.tar.gz && rm sensitive_files.tar.gz"


@pytest.mark.parametrize(
    ("claim", "fires"),
    [
        # terminal-bench 017b41 [9]: the archive is named only in the command the reply shows, not by the claim
        (TAR, False),
        ("`sensitive_files.tar.gz` was created successfully.", True),
    ],
)
def test_a_file_named_only_in_the_replys_code_is_not_what_the_claim_names(claim: str, fires: bool) -> None:
    assert bool(focus._after_done("c", _run("Archive the data folder.", claim, SHRED))) is fires


@pytest.mark.parametrize(
    ("command", "fires"),
    [
        # terminal-bench b7487d [57]: the folder removed is the extraction's; weights.json is only grep's pattern
        ('rm -rf model_extracted && ls -la | grep -E "(cli_tool|weights.json|prediction.txt)"', False),
        ("rm -f weights.json && ls -la", True),
    ],
)
def test_a_deletion_reads_the_names_of_its_own_command_only(command: str, fires: bool) -> None:
    claim = "Excellent! I've successfully written `weights.json`."
    assert bool(focus._after_done("c", _run("Write the weights file.", claim, command))) is fires


@pytest.mark.parametrize(
    ("task", "fires"),
    [
        # terminal-bench 017b41's task: "Securely delete ... No unencrypted sensitive data or archives should remain"
        (
            "Create 'sensitive_files.tar.gz', encrypt it, then securely delete the unencrypted sensitive_files.tar.gz.",
            False,
        ),
        ("Create 'sensitive_files.tar.gz' and encrypt it.", True),  # the task asks for no removal
        ("Encrypt the archive; delete the service configuration.", True),  # a removal, of something else
    ],
)
def test_a_deletion_the_task_asks_for_is_the_task(task: str, fires: bool) -> None:
    claim = "`sensitive_files.tar.gz` was created successfully."
    assert bool(focus._after_done("c", _run(task, claim, SHRED))) is fires


@pytest.mark.parametrize(
    ("asks", "fires"),
    [
        # Codex b9cbbd [33]-[42]: the person's "once done clean up and checkout latest main", then a hard reset
        ("once done clean up and checkout latest main", False),
        ("now checkout latest main", True),
    ],
)
def test_a_wipe_the_person_asked_for_in_the_turn_is_the_task(asks: str, fires: bool) -> None:
    msgs = _run(
        "please fix the flaky test",
        "The fix has been pushed successfully to the branch.",
        "git branch backup/main main && git reset --hard origin/main",
        request=asks,
    )
    assert bool(focus._after_done("c", msgs)) is fires


@pytest.mark.parametrize(
    ("claim", "fires"),
    [
        # a step's claim: the archive the run itself made for the step is its scratch once the step is done
        ("`out.tar.gz` was created successfully. Now encrypting it.", False),
        # the whole task said done (Gemini CLI [3]-[8]: "fulfilling your request", then `rm` of `blue.md` (in docs/))
        ("Task complete: `out.tar.gz` was created successfully.", True),
    ],
)
def test_what_the_run_made_is_scratch_after_a_steps_claim_not_after_the_tasks(claim: str, fires: bool) -> None:
    msgs = _run("Back up the data folder.", claim, "rm out.tar.gz", before=("tar -czf out.tar.gz data/",))
    assert bool(focus._after_done("c", msgs)) is fires


def test_the_files_a_run_wrote() -> None:
    msgs = _run(
        "t",
        "c",
        before=(
            "cat <<'EOF' > weights.json\n{}\nEOF",
            "tar -czf /tmp/a.tar.gz src && mkdir -p build/out && touch x.log",
            "cp src/a.py b.py; curl -o page.html http://x",
        ),
    )
    assert focus._created(msgs) == {"weights.json", "a.tar.gz", "out", "x.log", "b.py", "page.html"}
