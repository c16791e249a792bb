"""One list of an edit's argument keys (``problems.actions.OLD_KEYS``, ``NEW_KEYS``, ``PATH_KEYS``), read by
``undone`` (``undone_after``), ``focus`` (``removed_more_than_said``) and ``actions._looked_at`` (``failed_step_again``):
an edit spelled as OpenCode spells it (``filePath``, ``oldString``, ``newString``), which ``focus`` read as no edit
before the lists were one, is read by every rule; the near miss, an edit without the old text, by none."""

from __future__ import annotations

import json
from pathlib import Path

from forensics.analyzers.problems import actions, focus, undone
from tests.test_problems import Session
from tests.test_problems_endings2 import call
from tests.test_problems_recall10 import found

OLD = "\n".join(f"    check_{i}(value)  # the {i}th check" for i in range(40))
NEW = "import json\n" + OLD.split("\n", 1)[0]


def test_every_reader_reads_the_one_list() -> None:
    assert focus.OLD_KEYS is undone.OLD_KEYS is actions.OLD_KEYS
    assert focus.NEW_KEYS is undone.NEW_KEYS is actions.NEW_KEYS
    assert undone.PATH_KEY is actions.PATH_KEY
    assert [k for k in ("filePath", "FILE_PATH", "file", "path", "target") if actions.PATH_KEY.match(k)] == [
        "filePath",
        "FILE_PATH",
        "file",
        "path",
    ]


def test_an_opencode_edit_is_read_by_each_rule() -> None:
    args = json.dumps({"filePath": "src/app.py", "oldString": OLD, "newString": NEW})
    assert focus._change(args, "") == (40, 2)  # OpenCode's spelling: None when focus had its own shorter list
    removed, added, _, _ = undone.change_of([("edit", args)])
    assert len(removed["app.py"]) == 39 and added["app.py"] == {"import json"}
    read = json.dumps({"filePath": "src/app.py"})
    assert actions._looked_at(args, [(5, read)], 1, 9)  # the path in any case: "filePath" as "file_path"
    assert not actions._looked_at(args, [(5, read)], 5, 9)  # near miss: the read is not between
    assert focus._change(json.dumps({"filePath": "src/app.py", "newString": NEW}), "") is None  # no old text


def test_an_opencode_edit_that_removes_what_it_said_it_adds_is_lost_focus(tmp_path: Path) -> None:
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    s = Session("oc").add("user", "log the value in src/app.py")
    args = {"filePath": "src/app.py", "oldString": OLD, "newString": NEW}
    call(s, "edit", args, "Edit applied successfully.", text="I'll add the json import at the top.")
    s.add("assistant", "Added the import.")
    assert found(tmp_path / "a", s, "lost_focus") == [([1], "removed_more_than_said")]
    # near miss: the same edit said as a rewrite
    s = Session("oc2").add("user", "log the value in src/app.py")
    call(s, "edit", args, "Edit applied successfully.", text="I'll add the json import and rewrite the checks.")
    s.add("assistant", "Done.")
    assert found(tmp_path / "b", s, "lost_focus") == []
