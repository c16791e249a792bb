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


@pytest.mark.parametrize("a", APOSTROPHES)
def test_a_reply_that_found_nothing_in_either_contraction(a: str) -> None:
    """``topics.signals._FOUND_NOTHING`` (found7) reads "isn’t", "don’t", tokenized "is n't", and any case;
    ``_SEARCHES_AGAIN`` a search asked for again in any case."""
    from forensics.analyzers.topics.signals import _FOUND_NOTHING, _SEARCHES_AGAIN

    for reply in (
        f"There isn{a}t one in that area.",
        f"We don{a}t have any guesthouses there.",
        "there is n't one in the north",
        "UNFORTUNATELY THERE ARE NONE.",
        "I cannot find one.",
    ):
        assert _FOUND_NOTHING.search(reply) is not None, reply
    assert _FOUND_NOTHING.search("The Gonville Hotel is in the centre.") is None
    for said in (
        "HOW ABOUT a cheaper one?",
        "And what about Italian?",
        "Are there any in the east?",
        "Do you have a 4 star one?",
    ):
        assert _SEARCHES_AGAIN.search(said) is not None, said
    assert _SEARCHES_AGAIN.search("I need a taxi to the hotel.") is None


def test_a_request_for_all_of_a_kind_in_any_case_apostrophe_and_language() -> None:
    """``signature.asked.ALL``: the object of a verb of work is all or each of something, in any case, after a
    contraction either way, in Chinese too (``ALL_ZH``); not a why or how question, nor work reported done."""
    from forensics.analyzers.signature.asked import asks_wide

    for said in (
        "Fix all of them",
        "FIX ALL THE FAILING TESTS",
        "Can’t you just check every file?",
        "Let’s review each commit in the branch",
        "For each inline comment you addressed, post a reply",
        "请修复所有失败的测试",
        "好的。检查每个文件的导入",
    ):
        assert asks_wide(said), said
    for said in (
        "Why did you change the header for each page?",
        "That's all, thanks",
        "all good",
        "每个人都有",
        "我检查了所有文件",
        "所有测试都通过了",
        "为什么修改了每个页面的标题？",
    ):
        assert not asks_wide(said), said


def test_files_named_as_a_list_with_chinese_commas() -> None:
    """``signature.asked.LISTED``: a Chinese request lists files with 、 or ，, as an English one with commas."""
    from forensics.analyzers.signature.asked import asks_wide

    assert asks_wide("修改 a.py, b.py, c.py, d.py 和 e.py 里的导入")
    assert asks_wide("修改 a.py、b.py、c.py、d.py、e.py 里的导入")
    assert asks_wide("请看一下 src/a.ts，src/b.ts，src/c.ts，src/d.ts，src/e.ts")
    assert not asks_wide("修改 a.py 和 b.py 里的导入")


@pytest.mark.parametrize("a", APOSTROPHES)
def test_consent_in_any_case_and_not_when_negated(a: str) -> None:
    """``failures.decisive.CONSENT``: a yes in any case consents; a go-ahead negated by a contraction either way does
    not."""
    from forensics.analyzers.failures.decisive import _consented
    from forensics.analyzers.signature import Msg

    def consented(text: str) -> bool:
        msgs = [
            Msg(0, "user", "person", None, "Exchange my shirt"),
            Msg(1, "assistant", "assistant", "agent", "Found your order."),
            Msg(2, "user", "person", None, text),
            Msg(3, "assistant", "assistant", "agent", "", calls=1, call_names=("exchange_items",)),
        ]
        return _consented(msgs, msgs[3])

    assert consented("YES")
    assert consented("Yeah, go ahead")
    assert not consented(f"Please don{a}t proceed yet")
    assert not consented(f"I{a}m not sure how to proceed")


def test_a_find_that_acts_in_any_spelling_of_its_flags() -> None:
    """``problems.actions.FINDS_AND_ACTS``: fd's -X and --exec-batch act like -x; find's -execdir and -ok like -exec."""
    import json

    from forensics.analyzers.problems.actions import lookup

    def shell(command: str) -> bool:
        return lookup("bash", json.dumps({"command": command}))

    assert not shell("fd -e tmp -X rm")
    assert not shell("fd -e tmp --exec-batch rm")
    assert not shell("find . -name '*.o' -execdir rm {} +")
    assert not shell("find . -name '*.o' -ok rm {} \\;")
    assert shell("fd -e py -x wc -l")


def test_a_file_handed_over_in_chinese_text() -> None:
    """``problems.endings.handed_over``: a Chinese reply writes a file name or its stem against its words, with no
    space ("修改了App.tsx中的拖动逻辑"); a name inside a longer ASCII name is still another file."""
    from forensics.analyzers.problems.endings import handed_over

    edit = '{"path": "/w/ui/src/App.tsx"}'
    assert handed_over("修改了App.tsx中的拖动逻辑", edit) == "App.tsx"
    assert handed_over("已修复：App.tsx。", edit) == "App.tsx"
    patch = '{"command": ["apply_patch", "*** Begin Patch\\n*** Update File: src/TeamSheet.tsx\\n@@"]}'
    assert handed_over("TeamSheet现在只加载一个队伍", patch) == "TeamSheet.tsx"
    assert handed_over("修改了MyApp.tsx", edit) == ""


def test_a_file_name_outside_ascii_written_escaped_in_the_arguments() -> None:
    """``problems.endings.handed_over``: arguments written by Python's json.dumps escape a name outside ASCII
    ("\\u8bf4\\u660e.md"); the reply names it as it is ("说明.md"). A Windows path's escaped backslashes stay folders."""
    from forensics.analyzers.problems.endings import handed_over

    assert handed_over("已更新 说明.md 的目录", '{"path": "docs/\\u8bf4\\u660e.md"}') == "说明.md"
    assert handed_over("Updated résumé.md", '{"path": "docs/r\\u00e9sum\\u00e9.md"}') == "résumé.md"
    assert handed_over("The fix is in App.tsx.", '{"file_path": "C:\\\\w\\\\ui\\\\App.tsx"}') == "App.tsx"
    assert handed_over("The fix is in App.tsx.", '{"file_path": "C:\\\\w\\\\ui\\\\Other.tsx"}') == ""


def test_a_path_argument_in_any_case() -> None:
    """``problems.endings.CHANGED_FILE``: an editing tool's path argument is read whatever the case of its key
    (OpenCode's edit writes ``filePath``), a bare file name too."""
    from forensics.analyzers.problems.endings import handed_over

    assert handed_over("Fixed the drag in App.tsx.", '{"filePath": "App.tsx", "oldString": "a"}') == "App.tsx"
    assert handed_over("Fixed the drag in App.tsx.", '{"FILE_PATH": "App.tsx"}') == "App.tsx"
    assert handed_over("Fixed the drag in App.tsx.", '{"file_path": "App.tsx"}') == "App.tsx"
