"""How a summary names a file or a command: a module's name for its Elixir or Ruby file, a command
without its message, and a message's words read as prose, not as paths."""

from __future__ import annotations

from forensics.analyzers.compaction.facts import mentions_command, mentions_path


def test_a_module_name_names_its_file_only_in_languages_where_a_file_is_its_module() -> None:
    text = "read key files: sessionlive, panelistlive, and ashcomputer.liveview"
    assert mentions_path(text, "live/pane_list_live.ex")
    assert mentions_path(text, "ash_computer/live_view.ex")
    assert not mentions_path(text, "live/pane_list_live.py")  # a Python module may hold any class
    assert not mentions_path("the panelistlives page", "live/pane_list_live.ex")
    assert not mentions_path(text, "lib/session.ex")  # one word: no module name to tell it by


def test_a_command_with_a_message_is_named_without_it() -> None:
    key = 'bd close spotter-dov.1 --reason="extracted shared transcript computer and component. both'
    assert mentions_command("closed with `bd close spotter-dov.1`", key)
    assert not mentions_command("closed with `bd close spotter-dov.12`", key)
    assert not mentions_command("closed it", key)
    assert mentions_command("ran git commit after the tests", "git commit -m 'fix the parser at last'")
    assert not mentions_command("ran git", "git -m 'fix the parser at last'")  # one word left: too little
    assert not mentions_command("ran bd close", "bd close x-1 --reason=done")  # a one-word reason is no message
