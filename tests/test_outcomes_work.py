"""What a run's editor work hands in, read for the run ranking (``outcomes_work``; docs/failures-evaluation.md, branch
`rank12`): a run that changed none of the project's files (its edits only in its own scratch files, or none), and a
change "checked" by a stand-in script in another language that runs nothing of the project."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import duckdb

from forensics.analyzers import outcomes as oc
from forensics.analyzers import outcomes_work as ow
from tests.conftest import run_cli
from tests.test_problems import Session

REAL = Path(__file__).parent.parent / "fixtures" / "real"


def work(calls: list[tuple[str, dict[str, Any]] | tuple[str, dict[str, Any], bool]]) -> ow.Work:
    w, current = ow.Work(), None
    for c in calls:
        name, args, failed = (c[0], c[1], c[2] if len(c) > 2 else False)  # type: ignore[misc]
        current = ow.read_call(w, current, name, json.dumps(args), failed)
    return w


def cmd(text: str) -> dict[str, str]:
    return {"command": text}


FIX = ("edit", cmd("edit 579:580\n        boolean hasDecimal = false;\nend_of_edit"))
OPEN_SOURCE = ("open", cmd("open src/main/java/com/fasterxml/jackson/core/io/NumberInput.java"))


def test_a_java_fix_checked_by_a_python_script_that_imitates_it_is_a_stand_in() -> None:
    """81e12d's shape (Multi-SWE-bench, doubao): the fix edited in the Java source, then `test.py` re-implementing the
    method in Python ("we can't directly import the Java class. We'll simulate the behavior"), run and removed."""
    simulated = (
        "edit 1:1\n# We'll simulate the behavior.\ndef looks_like_valid_number(s):\n    return True\nend_of_edit"
    )
    w = work(
        [
            OPEN_SOURCE,
            FIX,
            ("create", cmd("create test.py")),
            ("edit", cmd("edit 1:1\nimport com.fasterxml.jackson.core.io.NumberInput\nend_of_edit"), True),  # refused
            ("edit", cmd(simulated)),
            ("python", cmd("python test.py")),
            ("rm", cmd("rm test.py")),
            ("submit", cmd("submit")),
        ]
    )
    assert (w.created, w.changed, w.project, w.ran, w.shell_changed) == (
        {"test.py"},
        {"NumberInput.java", "test.py"},
        {"NumberInput.java"},
        [("python", "test.py")],
        False,  # removing its own script changes nothing of the project
    )
    assert w.kinds() == {ow.STAND_IN}


def test_a_script_that_drives_the_toolchain_or_writes_files_is_no_stand_in() -> None:
    """4a46a8's wrapper (passed): a shell script around `javac`; e6dc61's (passed): a Python script that rewrites the
    references to a renamed class. A Python script checking a Python change is no stand-in either."""
    wrapper = work(
        [OPEN_SOURCE, FIX, ("create", cmd("create run.sh")), ("edit", cmd("edit 1:1\njavac Repro.java && java Repro"))]
        + [("bash", cmd("bash run.sh"))]
    )
    rewrite = work(
        [OPEN_SOURCE, FIX, ("create", cmd("create update_references.py"))]
        + [
            ("edit", cmd("edit 1:1\nwith open(path, 'w') as f:\n    f.write(text)")),
            ("python", cmd("python update_references.py")),
        ]
    )
    same = work(
        [("open", {"path": "src/marshmallow/fields.py"}), ("edit", {"search": "a", "replace": "b"})]
        + [
            ("create", {"filename": "reproduce.py"}),
            ("insert", {"text": "print(1)"}),
            ("bash", cmd("python reproduce.py")),
        ]
    )
    assert wrapper.kinds() == rewrite.kinds() == same.kinds() == set()
    assert same.project == {"fields.py"} and same.ran == [("python", "reproduce.py")]


def test_a_run_whose_only_edits_are_its_own_reproduction_changes_nothing_of_the_project() -> None:
    """70b896's shape: `ReproduceIssue.java` created and edited twice, `javac` missing, submitted: no source changed.
    Moving the reproduction into the tests keeps it the run's own; an in-place `sed` on a source file, or an edit
    through the editor, is a change; a `sed` on the machine's apt sources is not the project's."""
    repro = [("create", cmd("create ReproduceIssue.java")), ("edit", cmd("edit 1:1\nclass ReproduceIssue {}"))]
    javac = ("javac", cmd("javac -cp . ReproduceIssue.java"), True)
    assert work([*repro, javac, ("submit", cmd("submit"))]).kinds() == {ow.NO_PROJECT_CHANGE}
    moved = ("mkdir", cmd("mkdir -p src/test/java/x && mv ReproduceIssue.java src/test/java/x/"))
    apt = ("sudo", cmd("sudo sed -i 's/http:\\/\\/a/http:\\/\\/b/g' /etc/apt/sources.list\nsudo apt-get update"))
    assert work([*repro, moved, apt]).kinds() == {ow.NO_PROJECT_CHANGE}
    sed = ("sed", cmd("sed -i 's/a/b/' src/main/java/x/Foo.java"))
    assert work([*repro, sed]).kinds() == set()
    assert work([*repro, OPEN_SOURCE, FIX]).kinds() == set()
    # a refused edit changes nothing; searching alone until the limit neither (read where the agent's runs mostly
    # change the project through the editor: ``project_work``)
    assert work([OPEN_SOURCE, (*FIX, True)]).kinds() == {ow.NO_PROJECT_CHANGE}
    searched = work([("find_file", cmd('find_file "JsonPointer.java"')), ("exit_cost", cmd("exit_cost"))])
    assert searched.kinds() == set() and searched.kinds(edits=True) == {ow.NO_PROJECT_CHANGE}
    # a shell-only agent is never read: which file a shell command created is not known
    assert work([("bash", cmd("cat > fix.py <<'EOF'\nx = 1\nEOF"))]).kinds() == set()


def test_real_editor_runs_change_the_project_and_show_neither(tmp_path: Path) -> None:
    """The real SWE-agent 1.x runs (fixtures/real/swe_agent) and OpenHands' Multi-SWE-bench runs on ponyc
    (fixtures/real/openhands, `str_replace_editor`, a view without `command`): each changed a project file."""
    db = tmp_path / "w.duckdb"
    assert run_cli("ingest", str(REAL / "swe_agent"), str(REAL / "openhands"), "--db", str(db))[0] == 0
    con = duckdb.connect(str(db), read_only=True)
    native = dict(con.execute("SELECT conversation_id, native_id FROM conversations").fetchall())
    got: dict[str, tuple[Any, ...]] = {}
    for cid, nat in native.items():
        w, current = ow.Work(), None
        for name, args, err in con.execute(
            "SELECT coalesce(name, ''), coalesce(arguments, ''), coalesce(is_error, false) FROM tool_calls "
            "WHERE conversation_id = ? ORDER BY position, call_index",
            [cid],
        ).fetchall():
            current = ow.read_call(w, current, name, args, err)
        got[nat] = (w.editor, sorted(w.created), sorted(w.changed), w.shell_changed, w.ran, w.kinds())
    assert ow.project_work(con, dict.fromkeys(native)) == {}
    con.close()
    assert got == {
        "function_calling_simple": (True, [], ["missing_colon.py"], False, [("python", "missing_colon.py")], set()),
        "marshmallow-code__marshmallow-1867": (
            True,
            ["reproduce.py"],
            ["fields.py", "reproduce.py"],
            False,
            [("python", "reproduce.py"), ("python", "reproduce.py")],
            set(),
        ),
        "ponylang__ponyc-4588": (True, [], ["match.c"], True, [], set()),
        "ponylang__ponyc-4593": (True, [], ["command_parser.pony"], False, [], set()),
        "ponylang__ponyc-4595": (True, [], ["parser.c"], True, [], set()),
    }


def test_the_ranking_reads_them_as_problem_kinds(tmp_path: Path) -> None:
    """End to end: six graded SWE-agent-style sessions; the two that changed no project file and the one checked by a
    stand-in are read as those kinds, and their rarity lifts them above the longer runs without a problem."""

    def session(sid: str, calls: list[tuple[str, str]]) -> Session:
        s = Session(sid).add("user", "fix NumberInput.looksLikeValidNumber for '3.'")
        for name, text in calls:
            s.call(name, {"command": text}, "ok")
        return s.add("assistant", "Done.")

    source = ("open", "open src/main/java/NumberInput.java")
    fix = ("edit", "edit 5:5\n    return true;\nend_of_edit")
    repro = [("create", "create Repro.java"), ("edit", "edit 1:1\nclass Repro {}\nend_of_edit")]
    stand = [("create", "create test.py"), ("edit", "edit 1:1\ndef check():\n    return True\nend_of_edit")]
    sessions = [
        session("scratch", [*repro, ("submit", "submit")]),
        session("searched", [("find_file", "find_file NumberInput.java"), ("submit", "submit")]),
        session("stand", [source, fix, *stand, ("python", "python test.py"), ("submit", "submit")]),
    ] + [session(f"fixed{i}", [source, fix, *repro, source, fix, ("submit", "submit")]) for i in range(9)]
    logs = tmp_path / "logs"
    logs.mkdir()
    for s in sessions:
        s.write(logs)
    db = tmp_path / "w.duckdb"
    assert run_cli("ingest", str(logs), "--db", str(db))[0] == 0
    grades = tmp_path / "grades.csv"
    grades.write_text(
        "id,success\nscratch,false\nsearched,false\nstand,false\n"
        + "".join(f"fixed{i},{str(i % 3 != 1).lower()}\n" for i in range(9))  # fixed1, fixed4, fixed7 failed
    )
    assert run_cli("outcomes", str(grades), "--db", str(db))[0] == 0
    from forensics.analyzers.base import Context
    from forensics.analyzers.schema import load_config
    from forensics.kernel.selection import Selection

    con = duckdb.connect(str(db), read_only=True)
    ctx = Context.open(con, load_config(None), Selection())
    runs = oc._runs(ctx)
    kinds = oc.problem_kind_sets(ctx, runs, [])
    native = dict(con.execute("SELECT conversation_id, native_id FROM conversations").fetchall())
    con.close()
    read = {native[c]: ks & {ow.NO_PROJECT_CHANGE, ow.STAND_IN} for c, ks in kinds.items()}
    assert {n: ks for n, ks in read.items() if ks} == {
        "scratch": {ow.NO_PROJECT_CHANGE},
        "searched": {ow.NO_PROJECT_CHANGE},  # 10 of its agent's 11 runs that used the editor changed the project
        "stand": {ow.STAND_IN},
    }
    scores = dict(zip([native[c] for c in runs["conversation_id"]], oc.run_scores(runs, kinds)))
    assert min(scores[n] for n in ("scratch", "searched", "stand")) > max(scores[f"fixed{i}"] for i in range(9))
    failed = [not s for s in runs["success"].to_list()]
    # 6 failed x 6 passed: the three failed fixed runs tie the passed ones (the same work), 27 of 36 pairs; by length
    # alone the three short failed runs rank under every passed one, 9 of 36
    assert oc.auc(oc.run_scores(runs, kinds), failed) == 0.75
    assert oc.auc(oc.run_scores(runs, {}), failed) == oc.auc([float(v) for v in runs["messages"]], failed) == 0.25
    # with fewer than ten runs that used the editor, no run is read for it
    four = ["scratch", "searched", "stand", "fixed0"]
    con = duckdb.connect(str(db), read_only=True)
    some = {c: None for c, n in native.items() if n in four}
    assert {native[c]: ks for c, ks in ow.project_work(con, some).items()} == {"stand": {ow.STAND_IN}}
    con.close()


def test_an_aider_run_with_one_edit_applied_changed_the_project(tmp_path: Path) -> None:
    """fixtures/real/aider: of the 28 runs, none changed nothing. `custom_aider_history.md` 2025-03-18 10:30:55 read
    as seven failed blocks until mend12 (stop 55): aider applied one of them ("The other 1 SEARCH/REPLACE block were
    applied successfully", then "Commit a4e65a0"), so the run changed tests/test_show_time.py and is no
    ``no_project_change``; every other run that edits applied one too."""
    db = tmp_path / "w.duckdb"
    assert run_cli("ingest", str(REAL / "aider"), "--db", str(db))[0] == 0
    con = duckdb.connect(str(db), read_only=True)
    native = dict(con.execute("SELECT conversation_id, native_id FROM conversations").fetchall())
    agent = dict.fromkeys(native, "aider")
    got = {native[c]: ks for c, ks in ow.project_work(con, dict.fromkeys(native), agent).items()}
    calls = con.execute(
        "SELECT count(*), count(*) FILTER (WHERE is_error) FROM tool_calls t JOIN conversations c "
        "USING (conversation_id) WHERE c.native_id = '2025-03-18 10:30:55'"
    ).fetchall()
    con.close()
    assert got == {}
    assert calls == [(7, 6)]
