"""The last stop's merged diff (git diff 0f4e5e2 3ca9ba3) read again line by line: each defect found there, a case
that fails on the code as it was merged and holds on the mended one."""

from __future__ import annotations

import io
import sys
from contextlib import redirect_stdout
from pathlib import Path
from types import SimpleNamespace

import pytest

ROOT = Path(__file__).resolve().parents[1]


def test_handed_over_names_a_file_as_a_word_not_inside_another_name() -> None:
    """``handed_over``'s docstring: the reply names the file "as a word". A file name inside a longer one is another
    file ("studio.py" is not "io.py", "test_utils.py" is not "utils.py")."""
    from forensics.analyzers.problems.endings import handed_over

    assert handed_over("Updated studio.py to log errors.", '{"path": "/w/src/io.py"}') == ""
    assert handed_over("Added three cases to test_utils.py.", '{"path": "/w/src/utils.py"}') == ""
    assert handed_over("Updated io.py to log errors.", '{"path": "/w/src/io.py"}') == "io.py"
    assert handed_over("The fix is in src/utils.py.", '{"path": "/w/src/utils.py"}') == "utils.py"
    assert handed_over("Changed `utils.py`: the parser now strips.", '{"path": "/w/src/utils.py"}') == "utils.py"


def test_and_or_is_no_path_a_request_names() -> None:
    """``asked.NAMED``'s comment: "308/308" and "and/or" are no path. "and/or" was one, so four files and an "and/or"
    in a list made five things named."""
    from forensics.analyzers.signature.asked import NAMED, asks_wide

    assert NAMED.findall("use a and/or b") == []
    assert NAMED.findall("use a And/Or b") == []
    assert NAMED.findall("see src/app.py and docs/and/or.md") == ["src/app.py", "docs/and/or.md"]
    assert not asks_wide("Look at a.py, b.py, c.py, and/or d.py for the bug")
    assert asks_wide("Look at a.py, b.py, c.py, d.py and e.py for the bug")


@pytest.mark.parametrize(
    "said",
    [
        "Please don't proceed yet, I want to check the address first.",
        "I'm not sure how to proceed with the exchange.",
        "No, do not go ahead with that.",
        "I don’t want you to proceed.",
    ],
)
def test_a_negated_go_ahead_is_no_consent(said: str) -> None:
    """``decisive._consented``: "don't proceed", "not sure how to proceed" (AgentRx's tau-bench run 80 says it) refuse
    or hesitate; "No, go ahead" and "yes" consent."""
    from forensics.analyzers.failures.decisive import _consented
    from forensics.analyzers.signature import Msg

    def run(text: str) -> list[Msg]:
        return [
            Msg(0, "user", "person", None, "I want to exchange my shirt"),
            Msg(1, "assistant", "assistant", "agent", "Here is what I found."),
            Msg(2, "user", "person", None, text),
            Msg(3, "assistant", "assistant", "agent", "", calls=1, call_names=("exchange_items",)),
        ]

    msgs = run(said)
    assert not _consented(msgs, msgs[3])
    for yes in ("Yes, please.", "No, go ahead.", "Sounds good, proceed.", "YES I CONFIRM"):
        msgs = run(yes)
        assert _consented(msgs, msgs[3]), yes


def test_bench_failures_dev_prints_the_signatures_of_the_dev_half(monkeypatch: pytest.MonkeyPatch) -> None:
    """``bench/failures.py --dev`` shows the dev half only: the signatures section under the table, "the same runs",
    counts the dev runs, not the held-out ones too."""
    sys.path.insert(0, str(ROOT))
    from bench import failures

    def row(half: str, cluster: str) -> dict:
        sig = SimpleNamespace(cluster=cluster, ended="gave_up", error_template=None)
        return {
            "half": half,
            "n": 3,
            "step": 1,
            "agent": "a",
            "ours": 1,
            "our_agent": "a",
            "rule": "first_reply",
            "names": ["p", "a", "a"],
            "before_err": 2,
            "first_reply": 1,
            "most": "a",
            "sig": sig,
        }

    rows = [row("dev", "x"), row("dev", "x"), row("held-out", "y"), row("held-out", "y"), row("held-out", "z")]
    monkeypatch.setattr(failures, "located", lambda *a: rows)
    out = io.StringIO()
    with redirect_stdout(out):
        failures.where(Path("runs.jsonl"), Path("."), "runs", halves=("dev",))
    text = out.getvalue()
    assert "signatures: 1; runs in a signature shared by 2 or more: 2 of 2" in text, text
    assert "How they ended: {'gave_up': 2}" in text
