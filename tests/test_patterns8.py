"""The patterns the last stop added or changed (git diff 0f4e5e2 3ca9ba3), each family held to the edge cases where a
miss is a defect: contractions with a typographic apostrophe (’, as chat models and phones write it), case, and the
other languages the logs hold (Chinese)."""

from __future__ import annotations

import pytest

APOSTROPHES = ("'", "’")


@pytest.mark.parametrize("a", APOSTROPHES)
def test_gave_up_reads_either_apostrophe(a: str) -> None:
    """``signature.ends.GAVE_UP``: "I’m unable", "I can’t", "I couldn’t", "I’m sorry, but" end a run given up."""
    from forensics.analyzers.signature import Msg, ended

    for said in (
        f"I{a}m unable to reach the server from this sandbox.",
        f"I{a}m not able to reach the server from this sandbox.",
        f"I can{a}t find the deployment key anywhere.",
        f"I couldn{a}t find the deployment key anywhere.",
        f"I{a}m sorry, but the deployment needs credentials I do not have.",
        f"I{a}M UNABLE TO REACH THE SERVER.",
    ):
        run_ = [Msg(0, "user", "person", None, "Deploy the site"), Msg(1, "assistant", "assistant", "coder", said)]
        assert ended(run_)[0] == "gave_up", said


@pytest.mark.parametrize("a", APOSTROPHES)
def test_a_shell_step_declined_in_either_contraction(a: str) -> None:
    """``problems.endings.SHELL_STEP``: "I am not able to install" is a shell step handed back, and so is "I’m not
    able to install"; the DECLINE of said.py reads "I’m unable to" alike."""
    from forensics.analyzers.problems.endings import SHELL_STEP_RE
    from forensics.analyzers.problems.said import DECLINE_RE

    for said in (
        f"I{a}m not able to install Node for you.",
        f"I{a}m unable to install Node for you.",
        f"I can{a}t restart the server myself.",
        f"I don{a}t have the ability to run commands.",
        "I AM NOT ABLE TO INSTALL NODE FOR YOU.",
    ):
        assert SHELL_STEP_RE.search(said) is not None, said
    assert DECLINE_RE.search(f"I{a}m unable to edit that file.") is not None
    assert SHELL_STEP_RE.search(f"Once I{a}m able to install it, I will.") is None


@pytest.mark.parametrize("a", APOSTROPHES)
def test_a_request_to_check_the_work_in_either_spelling(a: str) -> None:
    """``topics.work.checks_work``: "Let’s run the tests", "can you please run the tests", in any case."""
    from forensics.analyzers.topics.work import checks_work

    for said in (
        f"Let{a}s run the tests again",
        "can you please run the tests",
        "Could you please re-run the linter?",
        "ok, please can you check it works",
        "RUN THE TESTS",
        "Thanks! Now try again",
    ):
        assert checks_work(said), said
    for said in ("Let me know what you think", "Can you please add a login page", "the test run failed"):
        assert not checks_work(said), said


@pytest.mark.parametrize("a", APOSTROPHES)
def test_a_result_not_seen_in_either_contraction(a: str) -> None:
    """``topics.work.misses_result``: "I’m not seeing", "I don’t see", "it isn’t showing", in any case."""
    from forensics.analyzers.topics.work import misses_result

    for said in (
        f"I{a}m not seeing a network request when I load the page",
        f"I don{a}t see the new fields in the gui",
        f"I didn{a}t see any change",
        f"I can{a}t see the button",
        f"the chart isn{a}t showing",
        f"the rows weren{a}t displayed",
        "NOTHING HAPPENS when I click it",
    ):
        assert misses_result(said), said
    assert not misses_result("I see the new fields now, thanks")


def test_files_named_as_a_list_with_chinese_commas() -> None:
    """``signature.asked.LISTED``: a Chinese request lists files with 、 or ，, as an English one with commas."""
    from forensics.analyzers.signature.asked import asks_wide

    assert asks_wide("修改 a.py, b.py, c.py, d.py 和 e.py 里的导入")
    assert asks_wide("修改 a.py、b.py、c.py、d.py、e.py 里的导入")
    assert asks_wide("请看一下 src/a.ts，src/b.ts，src/c.ts，src/d.ts，src/e.ts")
    assert not asks_wide("修改 a.py 和 b.py 里的导入")
