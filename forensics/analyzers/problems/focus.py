"""The agent drifts from what it was asked (docs/definitions.md#problems-a-reviewer-flags ``lost_focus``; GUIDE §5:
"scatters over unrelated work, thrashes (destructive or contradictory side actions while stuck), or goes off-task").
Two rules a program can check, each on what the run itself shows, with no person turn between (a person may ask for
anything next):

- ``kept_going_after_done``: the agent says the task (or a piece of work) is done, then, still in the same turn, destroys what it
  had just called finished: it deletes a file its claim names (putting a file back from git, ``git checkout -- f``,
  counts as deleting it), or resets, restores, stashes or cleans the whole work tree. (Deleting a scratch script is
  tidying up, not lost focus: one the claim does not name, or one the run executed or compiled in that turn, before
  or after the claim: "The code has been successfully added to `ReproduceBug.java`. Now, I will compile" and
  ``javac ReproduceBug.java``, then ``rm ReproduceBug.java``. A stash given back, in the same command, ``git stash &&
  pytest; git stash pop``, or by a later call of the run, ``git stash && git checkout main`` ... ``git checkout
  feat && git stash pop``, sets the work aside, and wipes nothing.) Read against the task: the files are the ones the
  claim names in its own words, not in a command the reply shows; a deletion's files are its own command's (``rm -rf
  out && ls | grep -E "(weights.json)"`` deletes no ``weights.json``); a removal the person asked for, in the run's
  task or the request opening the turn ("securely delete the archive", "once done clean up and checkout latest
  main"), is the task; after a step's claim (not the whole task said done), a file the run itself wrote is that
  step's scratch ("The tar archive was created successfully", then it is shredded once encrypted).
- ``removed_more_than_said``: the agent says it will add something (an import, a line, a check), and the edit that
  follows removes far more than it adds (``REMOVED`` lines or more, at least ``SHRINK`` times what it adds), with no
  word of removing, replacing, moving or rewriting said since its last edit: a side action that destroys code.

Many calls the task needs are not lost focus: reads, tests, and edits that do what the agent said are never read here.
"""

from __future__ import annotations

import json
import re

import duckdb

from forensics.analyzers.problems.actions import NEW_KEYS, OLD_KEYS  # an edit's keys, one list
from forensics.analyzers.problems.actions import strings as _strings  # a diff may sit in a nested field
from forensics.analyzers.problems.model import Problem, quote_at
from forensics.analyzers.problems.said import CLAIM_RE, prose
from forensics.analyzers.rules.judge import command_of
from forensics.kernel.selection import SELECTED

# the agent says the whole task is done; or any claim of work done (``said.CLAIM_RE``: "Fixed the import."): the file
# it then deletes must be one the claim names
DONE = re.compile(
    r"(?im)\b(?:the )?task (?:is )?(?:now )?(?:complete|completed|done|finished)\b|\ball done\b|"
    r"\bfulfill(?:ing|s|ed)? (?:your|the) request\b|"
    r"\bthe (?:task|request|work) (?:has been|is) (?:now )?(?:complete|completed|fulfilled|done|finished)\b|"
    r"\b(?:I have|I['’]?ve) (?:now )?(?:successfully )?(?:completed|finished) (?:the|your) (?:task|request)\b|"
    r"\bla tâche est (?:terminée|accomplie)\b|\btarea (?:completada|terminada)\b|\bAufgabe (?:ist )?(?:erledigt|"
    r"abgeschlossen)\b|\btarefa (?:concluída|completa)\b|\bcompito (?:completato|svolto)\b|задача выполнена|"
    r"任务(?:已)?完成|작업(?:이|을)? 완료|タスク(?:は|が)?完了"
)
# a call that deletes a file; one that wipes the work tree's changes
DELETES_COMMAND = re.compile(r"(?:^|[\s;&|(\"])(?:rm|rmdir|del|unlink|Remove-Item)\s")
DELETES_NAME = re.compile(r"(?i)^(?:delete|remove)|_(?:delete|remove)")
WIPES_COMMAND = re.compile(
    r"\bgit (?:reset --hard|checkout (?:-- )?\.|restore (?![^;&|\n]*--staged\b)(?:--?[\w=-]+ )*\.|clean|"
    r"stash(?! (?:pop|apply|list|show|drop|branch)\b))(?:\s|$|[;&|])"
)
# a stash given back (popped or applied) later in the same command: the work set aside to try something, not wiped
STASH_BACK = re.compile(r"\bgit stash (?:pop|apply)\b")
# files put back from git one by one (``git checkout -- a.py``, ``git restore a.py``): a deletion of those files
RESTORES_FILES = re.compile(r"\bgit (?:checkout --|restore(?![^;&|\n]*--staged\b))\s+(?!\.(?:\s|$))")
# a command that runs or compiles a script (its first file argument): the script is scratch the run tried out
RUNS = re.compile(
    r"(?:\b(?:python[0-9.]*|node|bash|sh|ruby|perl|php|deno|bun|tsx|ts-node|go run|javac|java|kotlinc|scalac|gcc|g\+\+|"
    r"clang|rustc)\s+|(?<![\w/])\./)([\w./-]+)"
)
CLEANUP = re.compile(r"(?i)\b(?:remov|delet|clean)\w*")
# the person asks for a removal (the run's task, or the request that opens the turn): "Securely delete all original
# files", "Delete the service configuration", "once done clean up and checkout latest main"
ASKS_REMOVAL = re.compile(
    r"(?i)\b(?:remov\w*|delet\w*|clean\w*|shred\w*|wip(?:e|es|ed|ing)\b|eras(?:e|es|ed|ing)\b|purg\w*|discard\w*|"
    r"get rid of|reset\w*|revert\w*)|(?:supprim|elimin|entfern|löschen|borra|удал|删除|移除|삭제|削除)"
)
# the commands of a shell line: a deletion's names are its own segment's, not a later ``grep -E "(a|weights.json)"``
SEGMENT = re.compile(r"&&|\|\||[;|\n]")
# a call that writes a file: a redirect, tee, touch, mkdir, cp or mv's target, -o/--output, tar's archive, a create
WRITES = re.compile(
    r"(?:>>?|\btee(?:\s+-a)?|\btouch|\bmkdir(?:\s+-p)?|\bcreate|(?:^|\s)-o|--output(?:=|\s)|"
    r"\btar\s+-?[a-zA-Z]*c[a-zA-Z]*f|\b(?:cp|mv)\s+(?:-\w+\s+)*[\w./-]+)\s*['\"]?([\w./-]+)"
)
WRITE_NAME = re.compile(r"(?i)write|create")
# a file a claim names: a word with a path separator or an extension (`docs/blue.md`, `index.ts`)
NAMED = re.compile(r"[\w.-]*[\w-](?:/[\w.-]+)*\.[A-Za-z][\w]{0,7}\b|[\w.-]+(?:/[\w.-]+)+")
CITED = 3  # destroying calls cited after the claim

# the agent says it will add; and whether it said it would take something away
ADDS = re.compile(
    r"(?i)\b(?:add|adding|insert|inserting|import|importing|append|appending|include|including)\b|"
    r"(?:ajout|añad|hinzufüg|adicion|aggiung|добав|添加|加入|추가|追加)"
)
TAKES = re.compile(
    r"(?i)\b(?:remov\w*|delet\w*|replac\w*|mov(?:e|es|ed|ing)|rewrit\w*|refactor\w*|extract\w*|split\w*|"
    r"clean\w*|drop\w*|simplif\w*|consolidat\w*|dedup\w*|strip\w*|prune\w*|trim\w*|restructur\w*|reorganiz\w*|"
    r"migrat\w*|convert\w*|collaps\w*|merg\w*|revert\w*|undo\w*|shorten\w*|reduc\w*|condens\w*)\b|"
    r"(?:supprim|elimin|entfern|ersetz|remplac|sustitu|удал|замен|删除|移除|替换|삭제|제거|削除|置き換)"
)
REMOVED = 30  # lines an edit removes, at least
SHRINK = 4  # ... and at least this many times the lines it adds
EDIT_NAME = re.compile(r"(?i)edit|patch|replace|write|apply|str_replace|update_file|modify")
SAID_KEYS = ("instructions", "instruction", "description", "thought", "explanation", "reason", "plan")
HEAD = 20_000  # characters of a call's arguments or result read for a diff


def off_task(con: duckdb.DuckDBPyConnection) -> list[Problem]:
    """Both rules over the selected conversations' main paths."""
    rows = con.execute(f"""
        SELECT m.conversation_id, m.position, m.role, left(coalesce(m.content, ''), 4000),
               list((t.name, left(coalesce(t.arguments, ''), {HEAD}),
                     coalesce(t.is_error, false) OR t.result_position IS NULL,
                     CASE WHEN regexp_matches(t.name, '{EDIT_NAME.pattern}') THEN left(coalesce(r.content, ''), {HEAD})
                          ELSE '' END) ORDER BY t.call_index)
                 FILTER (WHERE t.name IS NOT NULL)
        FROM messages m JOIN {SELECTED} USING (conversation_id)
        LEFT JOIN tool_calls t ON t.conversation_id = m.conversation_id AND t.position = m.position
        LEFT JOIN messages r ON r.conversation_id = t.conversation_id AND r.position = t.result_position
             AND r.on_main_path
        WHERE m.on_main_path AND m.role IN ('user', 'assistant')
          AND m.conversation_id IN (SELECT conversation_id FROM tool_calls)
        GROUP BY 1, 2, 3, 4 ORDER BY 1, 2""").fetchall()
    by: dict[str, list[tuple[int, str, str, list[tuple[str, str, bool, str]]]]] = {}
    for cid, pos, role, text, calls in rows:
        by.setdefault(str(cid), []).append((int(pos), str(role), str(text), list(calls or [])))
    out: list[Problem] = []
    for cid, msgs in by.items():
        out += _after_done(cid, msgs) + _shrinking_edits(cid, msgs)
    return out


def _command(name: str, args: str) -> str:
    """The shell command a call runs (``rules.judge.command_of``: the one reader of commands), else what it types into
    a process it started (``input``), else the raw arguments of a call that is no JSON object."""
    if (cmd := command_of(name, args)) is not None:
        return cmd
    try:
        d = json.loads(args)
    except ValueError:
        return args
    if not isinstance(d, dict):
        return args
    typed = d.get("input")
    return " ".join(map(str, typed)) if isinstance(typed, list) else str(typed or "")


def _deleted(name: str, args: str) -> set[str]:
    """The base names a deleting call deletes: the operands of its deleting commands (``rm``, ``git checkout --``), each
    read in its own segment of the line; every name of the arguments of a tool named for deleting."""
    command = _command(name, args)
    if DELETES_NAME.search(name) or command == args:
        found = NAMED.findall(args)
    else:
        found = [
            n
            for seg in SEGMENT.split(command)
            if DELETES_COMMAND.search(" " + seg) or RESTORES_FILES.search(seg)
            for n in NAMED.findall(seg)
        ]
    return {n.rsplit("/", 1)[-1] for n in found}


def _destroys(
    name: str, args: str, err: bool, claimed: set[str] | None, given_back: bool = False, wipes: bool = True
) -> bool:
    """The call deletes a file the claim names (``claimed``: base names, the scripts the run executed left out; None:
    any file) or wipes the work tree (``wipes``: False when the person asked for a clean-up); ``err``: the call
    failed or has no answer (cut off: it may never have run); ``given_back``: a later call of the run pops or applies
    the stash this call makes (``_stashes_given_back``)."""
    if err:
        return False
    command = _command(name, args)
    if (w := WIPES_COMMAND.search(command)) and not (
        "stash" in w.group(0) and (given_back or STASH_BACK.search(command, w.end()))
    ):
        return wipes or claimed is None
    if not (DELETES_NAME.search(name) or DELETES_COMMAND.search(command) or RESTORES_FILES.search(command)):
        return False
    if claimed is None:
        return True
    return bool(_deleted(name, args) & claimed)


def _stashes_given_back(msgs: list[tuple[int, str, str, list[tuple[str, str, bool, str]]]]) -> set[tuple[int, int]]:
    """The calls (message index, call index) whose ``git stash`` a later call of the run gives back (``git stash pop``
    or ``apply``), stashes and pops paired last in, first out; a stash popped in its own command is not counted here
    (``_destroys`` reads that one)."""
    stack: list[tuple[int, int]] = []
    back = set()
    for i, (_, _, _, calls) in enumerate(msgs):
        for j, (name, args, err, _) in enumerate(calls):
            command = _command(name, args)
            w = WIPES_COMMAND.search(command)
            if w and "stash" in w.group(0):
                if not err and not STASH_BACK.search(command, w.end()):
                    stack.append((i, j))
            elif STASH_BACK.search(command) and stack:
                back.add(stack.pop())
    return back


def _hits(
    msgs: list[tuple[int, str, str, list[tuple[str, str, bool, str]]]],
    lo: int,
    hi: int,
    claimed: set[str],
    back: set[tuple[int, int]],
    wipes: bool = True,
) -> list[int]:
    """The positions of messages ``lo`` to ``hi`` (excluded) with a call that destroys what the claim names."""
    return [
        msgs[i][0]
        for i in range(lo, hi)
        for j, (n, a, e, _) in enumerate(msgs[i][3])
        if _destroys(n, a, e, claimed, (i, j) in back, wipes)
    ]


def _created(msgs: list[tuple[int, str, str, list[tuple[str, str, bool, str]]]]) -> set[str]:
    """The base names these messages' calls wrote: a shell redirect, ``tee``, ``touch``, ``mkdir``, the target of
    ``cp`` or ``mv``, ``-o``/``--output``, ``tar -cf``'s archive, a ``create`` command; a tool named for writing or
    creating, the names in its arguments."""
    out = set()
    for _, _, _, calls in msgs:
        for name, args, err, _ in calls:
            if err:
                continue
            command = _command(name, args)
            if command == args and WRITE_NAME.search(name):
                out |= {n.rsplit("/", 1)[-1] for n in NAMED.findall(args)}
            out |= {m.group(1).rsplit("/", 1)[-1] for m in WRITES.finditer(command)}
    return out


def _executed(msgs: list[tuple[int, str, str, list[tuple[str, str, bool, str]]]]) -> set[str]:
    """The base names of the scripts these messages' commands ran (``python reproduce.py``, ``./run.sh``)."""
    out = set()
    for _, _, _, calls in msgs:
        for name, args, _, _ in calls:
            for m in RUNS.finditer(_command(name, args)):
                out.add(m.group(1).rsplit("/", 1)[-1])
    return out


def _after_done(cid: str, msgs: list[tuple[int, str, str, list[tuple[str, str, bool, str]]]]) -> list[Problem]:
    """Per turn (the messages between two user-role messages) that deletes or wipes at all: its first claim of work
    done, and the calls after it that destroy what the claim names."""
    out = []
    back = _stashes_given_back(msgs)
    starts = [k for k in range(len(msgs)) if msgs[k][1] != "user" and (k == 0 or msgs[k - 1][1] == "user")]
    for start in starts:
        end = next((j for j in range(start, len(msgs)) if msgs[j][1] == "user"), len(msgs))
        turn = msgs[start:end]
        if not any(
            _destroys(n, a, e, None, (start + i, j) in back)
            for i, (_, _, _, calls) in enumerate(turn)
            for j, (n, a, e, _) in enumerate(calls)
        ):
            continue  # the claims are read only where something was deleted (the claim patterns are costly)
        k, m = next(
            (
                (k, m)
                for k, (_, _, text, _) in enumerate(turn)
                if (m := DONE.search(words := prose(text)) or CLAIM_RE.search(words))
            ),
            (0, None),
        )
        if m is None:
            continue
        pos, _, text, _ = turn[k]
        # the files the claim names in its own words (not in a command it shows), unless it announces their removal
        # itself (a planned clean-up); the scripts the run executed are scratch
        own = prose(text)
        claimed = set() if CLEANUP.search(own) else {n.rsplit("/", 1)[-1] for n in NAMED.findall(own)}
        # what the person asked for: the run's task (its first user-role message) and the request opening the turn;
        # a removal they asked for (a file they name, or a clean-up of the tree) is the task, not "kept going"
        first = next((i for i, m in enumerate(msgs) if m[1] == "user"), start)
        asked = "\n".join(msgs[i][2] for i in sorted({first, start - 1}) if 0 <= i < start and msgs[i][1] == "user")
        wipes = not ASKS_REMOVAL.search(asked)
        hits = _hits(msgs, start + k + 1, end, claimed, back, wipes)
        if hits:
            claimed -= _executed(msgs[:end])  # the scripts run before the claim, with it or after it
            if not wipes:
                claimed = {n for n in claimed if n not in asked}
            if not DONE.search(own):  # a step's claim: what the run itself made for a step is its scratch
                claimed -= _created(msgs[:end])
            hits = _hits(msgs, start + k + 1, end, claimed, back, wipes)
        if hits:
            cited = list(dict.fromkeys(hits))[:CITED]
            out.append(
                Problem(
                    cid,
                    "lost_focus",
                    [pos, *cited],
                    quote_at(text, m),
                    "kept_going_after_done",
                    f"said the work was done at [{pos}], then destroyed it at {cited} before the person said "
                    "anything (GUIDE §5: destructive side actions)",
                )
            )
    return out


def _lines(text: str) -> int:
    return text.count("\n") + 1 if text else 0


def _diff(text: str) -> tuple[int, int]:
    """Lines a unified diff or a patch removes and adds."""
    minus = plus = 0
    for line in text.splitlines():
        if line.startswith(("---", "+++", "***")):
            continue
        if line.startswith("-"):
            minus += 1
        elif line.startswith("+"):
            plus += 1
    return minus, plus


def _change(args: str, result: str) -> tuple[int, int] | None:
    """Lines an edit call removes and adds: its old and new text, a patch in its arguments, or the diff its result
    shows; None when none of them is there."""
    try:
        d = json.loads(args)
    except ValueError:
        d = None
    if isinstance(d, dict):
        old = next((d[k] for k in OLD_KEYS if isinstance(d.get(k), str)), None)
        new = next((d[k] for k in NEW_KEYS if isinstance(d.get(k), str)), None)
        if old is not None and new is not None:
            return _lines(old), _lines(new)
        for s in _strings(d):
            if "\n@@" in s or s.startswith("*** Begin Patch"):
                return _diff(s)
    try:
        r = json.loads(result)
    except ValueError:
        r = result
    for s in _strings(r):
        if s.startswith("--- ") or "\n@@ " in s:
            return _diff(s)
    return None


def _said(text: str, calls: list[tuple[str, str, bool, str]]) -> str:
    """What an assistant message says: its text and its calls' words of intent."""
    words = [text]
    for _, args, _, _ in calls:
        try:
            d = json.loads(args)
        except ValueError:
            continue
        if isinstance(d, dict):
            words += [str(d[k]) for k in SAID_KEYS if isinstance(d.get(k), str)]
    return "\n".join(w for w in words if w)


def _shrinking_edits(cid: str, msgs: list[tuple[int, str, str, list[tuple[str, str, bool, str]]]]) -> list[Problem]:
    out = []
    said: list[tuple[int, str]] = []  # what the assistant said since its last edit (or the person's last turn)
    for pos, role, text, calls in msgs:
        if role == "user":
            said = []
            continue
        words = _said(text, calls)
        if words.strip():
            said.append((pos, words))
        for name, args, err, result in calls:
            if err or not EDIT_NAME.search(name):
                continue
            change = _change(args, result)
            if change is None:
                continue
            removed, added = change
            intent = "\n".join(w for _, w in said)
            add = next(((p, m) for p, w in reversed(said) if (m := ADDS.search(w))), None)
            if removed >= REMOVED and removed >= SHRINK * added and add and not TAKES.search(intent):
                at, m = add
                text_at = next(w for p, w in said if p == at)
                out.append(
                    Problem(
                        cid,
                        "lost_focus",
                        sorted({at, pos}),
                        quote_at(text_at, m),
                        "removed_more_than_said",
                        f"said at [{at}] it would add, then an edit removed {removed} lines and added {added} "
                        f"(GUIDE §5: destructive side actions; here {REMOVED}+ lines removed, {SHRINK}x what it adds, "
                        "no removal said)",
                    )
                )
            said = []
    return out
