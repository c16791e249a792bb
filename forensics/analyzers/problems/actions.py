"""What the agent's calls show (docs/definitions.md#problems-a-reviewer-flags): the same action repeated with the same result while nothing changed
(``redundant_work``, and ``loop`` from the third time), and the same error met again and again by one tool
(``loop``; "the same error" as the failure signature reads it, ``forensics.analyzers.signature``). SQL does the grouping over every call; Python only shapes the few groups that repeat.

An action is a tool and its canonical arguments (the JSON re-serialised); its result is the result text with
digits masked (timings and ids change between identical runs). "Nothing changed" means no call that changes
files or state (``MUTATING_*``; for a step done again, the shell's own state too: ``SETTING_COMMAND``) succeeded between two
occurrences (a failed edit changed nothing).
"""

from __future__ import annotations

import json
import re
from typing import Any

import duckdb

from forensics.analyzers import signature
from forensics.analyzers.problems.model import QUOTE, Problem
from forensics.analyzers.signature import TEXT_CHARS, Msg
from forensics.kernel.selection import SELECTED
from forensics.text.error_lines import error_line, lint_errors, template
from forensics.warehouse.tool_errors import HARNESS_HEADER
from forensics.warehouse.tool_errors import sql_str as _q

# a call that changes something when it succeeds: an editing tool (not its view command), or a command that writes
MUTATING_NAME = (
    r"(?i)edit|write|patch|replace|create|insert|delete|remove|rename|move|apply|save|commit|install|"
    r"update|modify|upload|set_|put_"
)
VIEW_COMMAND = r"\"command\"\s*:\s*\"view\""
MUTATING_COMMAND = (
    r"apply_patch|sed -i|perl -pi|\s>>?\s*[\w./~\"'$]|\btee\b|\bmv\s|\bcp\s|\brm\s|\btouch\s|mkdir\s|"
    r"chmod\s|git (?:commit|checkout|reset|apply|stash|merge|rebase|add|restore|switch)\b|"
    r"\b(?:npm|pnpm|yarn|pip|pip3|uv|cargo|go|brew|apt|apt-get) (?:install|add|i|get|remove)\b|"
    r"<<|\bpython[0-9.]*\s+-c|\bnode\s+-e|write_text|\.write\(|kill\b|taskkill|docker|systemctl|"
    r"just\s|make\b|"
    # keystrokes typed into another program: an editor (vim in a tmux pane, terminal-bench), a shell; what they change
    # no result shows
    r"\btmux send-keys\b|\bscreen -X stuff\b"
)
# a change to the shell's own state (a variable set, a file sourced): a command run again after it runs in another
# setting, so it is no step done again unchanged (``redundant_work``); the same error met across it is still a loop
SETTING_COMMAND = r"(?:^|\\n|[\"\n;&|(])\s*(?:export\s+\w+=|unset\s+\w|source\s+\S|conda activate\b)"
REREAD_WINDOW = 30  # messages: a read further back may have left the context (compaction, truncation)
ERROR_GAP = 10  # messages: a failure further from the last one of its kind starts another stretch
CALLS = "_problem_calls"
HASHED, HASHED_TAIL = 4000, 2000  # characters of a result's head and tail hashed: alike there, alike in practice
# a result whose first line says the call failed, read as a failure by the loop rule even when the warehouse's
# error rules do not flag it: "[Your proposed edit has introduced new syntax error(s). Please ... retry ...]"
SAYS_FAILED = r"(?i)\b(?:error|errors|failed|failure|invalid|rejected|denied)\b"
SAYS_FAILED_CHARS = 300
ERROR_HEAD = 2000  # characters of a failed call's result read for its error line (where errors are written)
MIN_RESULT = 20  # characters: an identical empty or one-word result repeated is no work done twice
MASK = r"[0-9]+"
# a result that shows its lines numbered (``nl -ba``, ``cat -n``, a read tool's "  40\t" or "40|" or "40: "): three
# numbered lines in a row within its first NUMBERED_HEAD characters
NUMBERED = r"(?m)(?:^[ \t]*[0-9]+(?:\t|→|\||: )[^\n]*\n){3}"
NUMBERED_HEAD = 3000
# lines: a numbered re-read of at most this many lines, of lines read before without numbers, is a citation view
# (Codex's ``nl -ba f | sed -n '290,340p'`` to cite f:307 after ``sed -n '280,380p' f``), not work done twice;
# re-reading pages (200-500 lines) again numbered is (the reviewer's label in codex_cli 019d021f and 019d6d75)
CITE_LINES = 150
POLL = signature.POLL  # a call that only waits on a process it started (``signature.waiting``)


def mutating_sql() -> str:
    """Whether a row of ``tool_calls`` changed something: it did not fail, and it is an editing tool (not its view
    command) or a command that writes."""
    return (
        f"NOT coalesce(is_error, false) AND (regexp_matches(name, '{_q(MUTATING_NAME)}') "
        f"AND NOT regexp_matches(coalesce(arguments, ''), '{_q(VIEW_COMMAND)}') "
        f"OR regexp_matches(coalesce(arguments, ''), '{_q(MUTATING_COMMAND)}'))"
    )


# the keys of a command call that say how the harness runs it, not what it runs: the note shown to the person
# (Claude Code's and Gemini CLI's ``description``, Codex's ``justification``), a permission asked again
# (``with_escalated_permissions``: a command the person rejected, sent again with it, is the same command), a time or
# output limit. Dropped from a call's action when it runs a command (``command``/``cmd``): the same command with a
# new note is the same action (a tool whose ``description`` is its content, an issue filed, keeps it)
HARNESS_KEYS = (
    "description",
    "justification",
    "with_escalated_permissions",
    "sandbox_permissions",
    "timeout",
    "timeout_ms",
    "yield_time_ms",
    "max_output_tokens",
)


def _canon_sql() -> str:
    """A call's action as SQL: its arguments re-serialised (``json``), without ``HARNESS_KEYS`` where it runs a
    command."""
    drop = json.dumps(dict.fromkeys(HARNESS_KEYS))
    return (
        "CASE WHEN json_valid(arguments) AND json_type(arguments) = 'OBJECT' AND (json_exists(arguments, '$.command') "
        f"OR json_exists(arguments, '$.cmd')) THEN json_merge_patch(arguments, '{drop}')::VARCHAR "
        "ELSE coalesce(json(arguments)::VARCHAR, arguments, '') END"
    )


def _calls_sql() -> str:
    """Every selected main-path call with an answer: its action, result hash (only where the action repeats: the
    one costly column) and size, error and whether it changed something (``mut``; ``chg``: or the shell's own state,
    ``SETTING_COMMAND``, read by the rules of a step done again unchanged)."""
    return f"""
        WITH t AS (
            SELECT conversation_id AS cid, position AS pos, call_index AS k, name, canon, arguments AS args,
                   coalesce(is_error, false) AS err, result_seq, result_position AS rpos,
                   {mutating_sql()} AS mut,
                   {mutating_sql()} OR NOT coalesce(is_error, false)
                       AND regexp_matches(coalesce(arguments, ''), '{_q(SETTING_COMMAND)}') AS chg,
                   count(*) OVER (PARTITION BY conversation_id, name, canon) AS same
            FROM (SELECT *, {_canon_sql()} AS canon FROM tool_calls
                  WHERE conversation_id IN (SELECT conversation_id FROM {SELECTED}) AND position IS NOT NULL
                    AND result_seq IS NOT NULL)),
        p AS (SELECT conversation_id AS cid, position AS ppos,
                     row_number() OVER (PARTITION BY conversation_id ORDER BY position) AS turns
              FROM messages WHERE on_main_path AND origin = 'person'
                AND conversation_id IN (SELECT conversation_id FROM {SELECTED}))
        SELECT t.cid, t.pos, t.k, t.name, t.canon, t.args, t.err, t.rpos, t.mut, t.chg,
               coalesce(m.content_chars, 0) AS rchars, coalesce(p.turns, 0) AS turns,
               regexp_matches(left(coalesce(m.content, ''), {NUMBERED_HEAD}), '{NUMBERED}') AS numbered,
               CASE WHEN t.same >= 2 THEN md5(regexp_replace(CASE WHEN m.content_chars > {HASHED} + {HASHED_TAIL}
                   THEN left(m.content, {HASHED}) || right(m.content, {HASHED_TAIL}) ELSE coalesce(m.content, '') END,
                   '{MASK}', '0', 'g')) END AS h
        FROM t LEFT JOIN messages m ON m.conversation_id = t.cid AND m.seq = t.result_seq
        ASOF LEFT JOIN p ON p.cid = t.cid AND t.pos >= p.ppos"""


def prepare(con: duckdb.DuckDBPyConnection) -> None:
    """Materialise the selected calls once (``CALLS``) for every detector of this run that reads them."""
    con.execute(f"CREATE OR REPLACE TEMP TABLE {CALLS} AS {_calls_sql()}")


def calls_sql() -> str:
    """The selected calls (``prepare`` first): action, result hash and size, error, whether it changed something."""
    return f"SELECT * FROM {CALLS}"


def repeated_actions(con: duckdb.DuckDBPyConnection) -> list[Problem]:
    """Chains of one action with one result and no change between, in two or more messages (calls of one message
    go out together): two make ``redundant_work`` (rule ``same_action_same_result``), three or more a ``loop`` as
    well. A person turn ends a chain: the person may have changed the files or asked for the call again (a file
    read for one request, read again to edit it for the next)."""
    rows = con.execute(f"""
        WITH c AS ({calls_sql()}),
        w AS (SELECT *, sum(chg::INT) OVER (PARTITION BY cid ORDER BY pos, k ROWS BETWEEN UNBOUNDED PRECEDING
                                             AND 1 PRECEDING) AS muts_before FROM c),
        g AS (SELECT *, coalesce(muts_before, 0) - coalesce(sum(chg::INT) OVER (PARTITION BY cid, name, canon, h
                  ORDER BY pos, k ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING), 0) AS quiet
              FROM (SELECT *, count(*) OVER (PARTITION BY cid, name, canon, h) AS n FROM w WHERE NOT ({POLL}))
              WHERE n >= 2)
        SELECT cid, name, arg_min(args, pos * 100000 + k), bool_or(err), list(pos ORDER BY pos, k), list(rpos ORDER BY pos, k),
               max(rchars)
        FROM g GROUP BY cid, name, canon, h, quiet, turns
        HAVING count(DISTINCT pos) >= 2 AND (bool_or(err) OR max(rchars) >= {MIN_RESULT})
        ORDER BY cid, min(pos), name, canon, h, quiet, turns""").fetchall()
    out: list[Problem] = []
    for cid, name, args, err, pos, rpos, _ in rows:
        quote = args_quote(str(args or ""))
        what = "the same failing call" if err else "the same call with the same result"
        norm = "nothing changed between them: no successful edit or writing command, no person turn (GUIDE §5)"
        cited = sorted(set(pos))  # calls in one message are sent together, before any result: one time
        if err or not lookup(str(name), str(args or "")):
            out.append(Problem(str(cid), "redundant_work", cited, quote, f"same_action_same_result ({name})", norm))
        if len(cited) >= 3:
            out.append(
                Problem(
                    str(cid),
                    "loop",
                    cited,
                    quote,
                    f"same_action_{len(cited)}_times ({name})",
                    f"{what} {len(cited)} times with nothing changed between (GUIDE §5: 3 or more)",
                )
            )
        del rpos
    return out


def part_again(con: duckdb.DuckDBPyConnection) -> list[Problem]:
    """``redundant_work``, rule ``same_action_same_result``, where the second call is a part of the first: the next
    call of one tool whose lines (``action_lines``: blank lines and comments dropped) are all among the previous
    call's, with the same non-empty result and nothing changed between (``chg``: no successful writing call, neither
    call one, no person turn). The same statements run again after "let me correct that" (a ChatGPT code cell
    re-running ``integrate(...)`` without its imports, 0 again), the same patch's hunk sent again: the same action,
    its comments and the lines it already ran aside. The result's size does not matter here (``MIN_RESULT``): the
    lines are the work, and they ran twice."""
    rows = con.execute(f"""
        WITH c AS (SELECT cid, pos, k, name, args, chg AS mut, turns, rpos, err,
                          sum(chg::INT) OVER (PARTITION BY cid ORDER BY pos, k) AS muts FROM {CALLS}),
        l AS (SELECT *, lag(args) OVER w AS args0, lag(pos) OVER w AS pos0, lag(rpos) OVER w AS rpos0,
                     lag(muts) OVER w AS muts0, lag(turns) OVER w AS turns0, lag(mut) OVER w AS mut0
              FROM c WINDOW w AS (PARTITION BY cid, name ORDER BY pos, k))
        SELECT l.cid, l.name, l.pos0, l.pos, l.args0, l.args, l.err
        FROM l JOIN messages a ON a.conversation_id = l.cid AND a.position = l.rpos0 AND a.on_main_path
               JOIN messages b ON b.conversation_id = l.cid AND b.position = l.rpos AND b.on_main_path
        WHERE l.pos0 IS NOT NULL AND l.pos0 < l.pos AND NOT l.mut AND NOT l.mut0 AND l.muts = l.muts0
          AND l.turns = l.turns0 AND l.args <> l.args0 AND coalesce(b.content, '') <> ''
          AND md5(regexp_replace(a.content, '{MASK}', '0', 'g')) = md5(regexp_replace(b.content, '{MASK}', '0', 'g'))
        ORDER BY 1, 4""").fetchall()
    out = []
    for cid, name, pos0, pos, args0, args, err in rows:
        mine, theirs = action_lines(str(args or "")), action_lines(str(args0 or ""))
        if mine and set(mine) <= set(theirs) and mine != theirs:
            # the first line run again, where the arguments' JSON holds it as is
            line = next((x[:QUOTE] for x in mine if len(x) >= 3 and x[:QUOTE] in str(args)), "")
            out.append(
                Problem(
                    str(cid),
                    "redundant_work",
                    [int(pos0), int(pos)],
                    line or args_quote(str(args or "")),
                    f"same_action_same_result ({name})",
                    f"{'the same failing call' if err else 'the same call with the same result'}, its lines a part of "
                    "the last call's (comments aside), nothing changed between (GUIDE §5)",
                )
            )
    return out


def failed_again(con: duckdb.DuckDBPyConnection) -> list[Problem]:
    """``redundant_work``, rule ``failed_step_again``: a call failed, and a later call of the same tool does it again
    with nothing changed between (no successful writing call, no person turn; calls that only look, ``git status``,
    ``git log``, may come between; keys typed into another program, ``MUTATING_COMMAND``, and a variable exported,
    ``SETTING_COMMAND``, are changes) and fails again the same way (the same first line past the harness's headers
    and the same error line, values masked: ``_first_line``, ``_error``): GUIDE §5's "re-running the same failing
    command without change", read from what the two calls run. A command is done again when each of its steps
    (``steps``: its lines, cut at ``&&``, ``||`` and ``;``) is one of the failed command's (the commit re-run without
    the ``git add`` before it) and the text it writes is the same (``body``: an edit with a line dropped or a comment
    reworded is another edit); another call when its arguments are the same. Not when the first was refused by the
    person (their words came with it), nor when the second fails otherwise and a call between looked at the file the
    first one named (it read the file the failed edit needed read first: the retry follows what the failure said).
    The same-action rule's findings (the same arguments, the same result) are read there too."""
    from forensics.analyzers.problems.restated import REFUSED
    from forensics.analyzers.rules.judge import command_of

    rows = con.execute(f"""
        WITH c AS (SELECT c.cid, c.pos, c.k, c.name, c.canon, c.args, c.err, c.turns, c.mut,
                          sum(c.chg::INT) OVER (PARTITION BY c.cid ORDER BY c.pos, c.k) AS muts,
                          left(coalesce(r.content, ''), {SAYS_FAILED_CHARS}) AS said,
                          left(coalesce(r.content, ''), {ERROR_HEAD}) AS text
                   FROM (SELECT * FROM {CALLS} WHERE NOT ({POLL})) c LEFT JOIN messages r
                     ON r.conversation_id = c.cid AND r.position = c.rpos AND r.on_main_path),
        f AS (SELECT * FROM c WHERE err)
        SELECT b.cid, b.name, list(a.pos ORDER BY a.pos DESC, a.k DESC), list(a.args ORDER BY a.pos DESC, a.k DESC),
               list(a.canon ORDER BY a.pos DESC, a.k DESC), list(a.said ORDER BY a.pos DESC, a.k DESC),
               list(a.text ORDER BY a.pos DESC, a.k DESC), b.pos, b.args, b.canon, b.said, b.text
        FROM f b JOIN f a ON a.cid = b.cid AND a.name = b.name AND a.pos < b.pos AND a.turns = b.turns
             AND a.muts = b.muts
        GROUP BY b.cid, b.name, b.pos, b.k, b.args, b.canon, b.said, b.text ORDER BY 1, 8""").fetchall()
    if not rows:
        return []
    looked: dict[str, list[tuple[int, str]]] = {}
    for cid, pos, args in con.execute(
        f"SELECT cid, pos, args FROM {CALLS} WHERE NOT err AND cid IN (SELECT unnest(?::VARCHAR[])) ORDER BY 1, 2",
        [sorted({str(r[0]) for r in rows})],
    ).fetchall():
        looked.setdefault(str(cid), []).append((int(pos), str(args or "")))
    # a call -> the failed call it does again, the quote, the tool, and whether both are the same call with the same
    # result (the same-action rule reads those: a pair or a chain of them alone is its finding, not this rule's)
    links: dict[tuple[str, int], tuple[int, str, str, bool]] = {}
    for cid, name, pos0s, args0s, canon0s, said0s, text0s, pos, args, canon, said, text in rows:
        command = command_of(str(name), str(args or ""))
        mine = steps(command) if command else []
        error = _error(text)
        for pos0, args0, canon0, said0, text0 in zip(pos0s, args0s, canon0s, said0s, text0s):
            if REFUSED.search(_first_line(said0, masked=False)):
                continue
            if command:
                theirs = command_of(str(name), str(args0 or "")) or ""
                if not mine or not set(mine) <= set(steps(theirs)) or body(command) != body(theirs):
                    continue
            elif canon != canon0:
                continue
            stopped = _first_line(said, masked=False)
            if (_first_line(said) != _first_line(said0) or error != _error(text0)) and (
                not REFUSED.search(stopped) or _looked_at(str(args0 or ""), looked.get(str(cid), []), pos0, pos)
            ):
                continue
            quote = mine[0][:QUOTE] if mine else args_quote(str(args or ""))
            links[(str(cid), int(pos))] = (int(pos0), quote, name, canon == canon0 and said == said0)
            break
    out: list[Problem] = []
    redone = {(c, p0) for (c, _), (p0, _, _, _) in links.items()}
    for (cid, pos), (pos0, quote, name, same) in links.items():
        if not same:  # the same arguments with the same result: the same-action rule's finding
            out.append(Problem(cid, "redundant_work", [pos0, pos], quote, f"failed_step_again ({name})", FAILED_AGAIN))
        if (cid, pos) in redone:
            continue  # a later call does it again too: the chain is cited from its last call
        chain, alike = [pos], True
        while (cid, chain[-1]) in links:
            alike = alike and links[(cid, chain[-1])][3]
            chain.append(links[(cid, chain[-1])][0])
        if len(chain) >= 3 and not alike:
            out.append(
                Problem(
                    cid,
                    "loop",
                    sorted(chain),
                    quote,
                    f"failed_step_{len(chain)}_times ({name})",
                    f"a failed call done again {len(chain) - 1} times with nothing changed between, failing each time "
                    "(GUIDE §5: 3 or more)",
                )
            )
    return out


def _error(text: Any) -> str:
    """How a failed call failed, to tell "failed again the same way" with its first line (``_first_line``): the error
    line the failure signature reads (``text.error_lines``: the exception, the shell's error, else the first line
    past any preamble) of the result past the harness's header lines (``tool_errors.HARNESS_HEADERS``), as its template
    (values masked). The first line alone is a wrapper's in some harnesses: SWE-agent's ``[File: …]`` view above
    ``/bin/bash: line 9: Step: command not found``; the error line alone is a build's closing line under another
    cause. Then the errors a linter lists (``text.error_lines.lint_errors``), each as its template: SWE-agent's refused
    edit says "Your proposed edit has introduced new syntax error(s)" above each, ``- E999 SyntaxError: invalid
    syntax`` or ``- E999 IndentationError: unexpected indent`` under it (an edit re-indented that now fails the other way
    is a retry)."""
    body = "\n".join(x for x in str(text or "").splitlines() if not HEADER_LINE.fullmatch(x))
    return " | ".join(template(x) for x in [error_line(body, flagged=True) or "", *lint_errors(body)])


FAILED_AGAIN = (
    "a failed call done again, nothing changed between (no successful edit or writing command, no person turn), and it "
    "failed again (GUIDE §5: the same failing command re-run without change)"
)
SHELL_STEP = re.compile(r"\s*(?:&&|\|\||;)\s*")
# an edit's arguments, one list of their spellings for every reader (``undone``, ``focus``, ``_looked_at`` here): the
# text replaced and its replacement (Claude Code's ``old_string``, SWE-agent's and OpenHands' ``old_str``, OpenCode's
# ``oldString``, pi's ``oldText``, Cline's ``search``/``replace`` ...), and the file (in any case: ``filePath``)
OLD_KEYS = ("old_string", "old_str", "oldString", "old_text", "oldText", "old_content", "search")
NEW_KEYS = ("new_string", "new_str", "newString", "new_text", "newText", "new_content", "replace")
PATH_KEYS = ("file_path", "filepath", "path", "target_file", "absolute_path", "filename", "file")
PATH_KEY = re.compile(rf"(?i)^(?:{'|'.join(PATH_KEYS)})$")  # a key that names the file
PATH_ARG_RE = re.compile(rf"(?i)\"(?:{'|'.join(PATH_KEYS)})\"\s*:\s*\"([^\"]+)\"")  # ... and its value, in raw JSON


def steps(command: str) -> list[str]:
    """A command's steps: its lines, stripped, without blank and comment lines, each cut at ``&&``, ``||`` and
    ``;``."""
    lines = (x.strip() for x in command.replace("\r", "").split("\n"))
    return [x for ln in lines if ln and not COMMENT_LINE.match(ln) for x in SHELL_STEP.split(ln) if x]


# where a command starts to carry a file's text: SWE-agent's ``edit 12:30`` (its lines up to ``end_of_edit``), a
# here-document (``cat > f <<'EOF'``, ``apply_patch <<'PATCH'``, a commit message)
BODY_START = re.compile(r"(?m)^\s*edit\s+\d+(?::\d+)?\s*$|<<-?\s*['\"]?(\w+)['\"]?[^\n]*$")


def body(command: str) -> list[str]:
    """The text a command writes (``BODY_START``, up to its ``end_of_edit`` or the here-document's closing word), its
    lines that hold a letter or digit, stripped; [] when it carries none. Two commands that write different text are
    two actions, though each line of one is a line of the other: the agent dropped a line of its edit, or reworded a
    comment in it (its comments are the file's text, not the shell's)."""
    m = BODY_START.search(command)
    if not m:
        return []
    end = m.group(1) or "end_of_edit"
    out: list[str] = []
    for x in command[m.end() :].splitlines():
        if x.strip() == end:
            break
        if re.search(r"\w", x):
            out.append(x.strip())
    return out


HEADER_LINE = re.compile(rf"{HARNESS_HEADER}[ \t]*")


def _first_line(text: Any, masked: bool = True) -> str:
    """A result's first line that says something, past the harness's header lines (``tool_errors.HARNESS_HEADERS``:
    "Exit code 1") and the command echoed ("$ cargo build"), digits masked unless ``masked`` is False."""
    line = next(
        (
            x.strip()
            for x in str(text or "").splitlines()
            if x.strip() and not HEADER_LINE.fullmatch(x) and x[:2] != "$ "
        ),
        "",
    )
    return re.sub(MASK, "0", line) if masked else line


def _looked_at(args: str, calls: list[tuple[int, str]], lo: int, hi: int) -> bool:
    """A successful call strictly between ``lo`` and ``hi`` names the file ``args`` names (a path argument)."""
    paths = set(PATH_ARG_RE.findall(args))
    return bool(paths) and any(lo < p < hi and paths & set(PATH_ARG_RE.findall(a)) for p, a in calls)


COMMENT_LINE = re.compile(r"^(?:#|//|--\s)")


def action_lines(args: str) -> list[str]:
    """The lines of a call's longest argument (its code, command or patch), stripped, without blank lines and
    comment lines (``#``, ``//``, ``-- ``)."""
    try:
        value: Any = json.loads(args)
    except ValueError:
        value = args
    text = max(strings(value), key=len, default="")
    return [ln for ln in (x.strip() for x in text.replace("\r", "").split("\n")) if ln and not COMMENT_LINE.match(ln)]


# a lookup: a search or listing tool, or a command each of whose steps only searches or lists. Run again with the
# same result it is neither a file re-read nor a failing command re-run (GUIDE §5's redundant work): a survey's
# ``glob **/package.json`` asked twice costs a line, not work (read as unclear by a reviewer). Three times is a loop.
LOOKUP_TOOL = re.compile(
    r"(?i)^(?:glob|grep|rg|search|find|ls|list|find_files|search_files|file_search|grep_search|codebase_search|"
    r"list_dir|list_directory|list_files)$"
)
LOOKUP_STEP = re.compile(r"^\s*(?:rg|grep|egrep|fgrep|find|fd|ls|tree|cd|sort|uniq|wc)\b")
# a find or fd step that acts on what it finds: deletes it, writes a file, or runs a command on it other than one that
# searches or lists (``find . -delete``, ``fd -x rm``; not ``find . -exec grep -l x {} +``): no lookup
FINDS_AND_ACTS = re.compile(
    r"^\s*(?:find|fd)\b.*\s(?:(?:-delete|-fprint0?|-fprintf|-fls)(?=\s|$)|"
    r"(?:-exec(?:dir)?|-ok(?:dir)?|--exec(?:-batch)?|-[xX])\s+(?!(?:rg|grep|egrep|fgrep|ls|wc|file|stat)\b))"
)
STEP_OR_PIPE = re.compile(r"&&|\|\||;|\n|\|")


def lookup(name: str, args: str) -> bool:
    """A call that only searches or lists (``LOOKUP_TOOL``, or a shell command all of whose steps do: a find that
    deletes or runs a command on what it finds acts, ``FINDS_AND_ACTS``)."""
    if LOOKUP_TOOL.match(name):
        return True
    try:
        value: Any = json.loads(args)
    except ValueError:
        value = args
    if isinstance(value, dict):
        value = value.get("command", value.get("cmd", ""))
    if isinstance(value, list):
        value = value[-1] if value else ""  # ["bash", "-lc", "..."]
    steps = [x for x in STEP_OR_PIPE.split(str(value)) if x.strip()]
    return bool(steps) and all(LOOKUP_STEP.match(x) and not FINDS_AND_ACTS.match(x) for x in steps)


# what a call reads: a file (a read tool's path argument, or the file of cat / nl / head / tail / sed -n) and the
# range (sed's A,Bp; a read tool's offset, limit or view_range)
READ_TOOL = r"(?i)^(?:read|read_file|view|view_file|open_file|cat|readfile|read_many_files)$"
PATH_ARG = r"\"(?:file_?path|path|target_file|absolute_path|filepath|filename)\"\s*:\s*\"([^\"]+)\""
# (PowerShell's Get-Content too; a path quoted, with a "(group)" folder, or Windows backslashes)
SHELL_READ = (
    r"(?:^|[\s\"(;&|])(?:cat|nl(?: -ba)?|head(?: -n ?\d+| -\d+)?|tail(?: -n ?\d+| -\d+)?|"
    r"sed -n [\\\"']*\d+,\d+p[\\\"']*|(?i:get-content)(?: -path)?)\s+'?((?:[\w./~!\\-]|\([\w-]+\))+\.\w+)"
)


def reread_files(con: duckdb.DuckDBPyConnection) -> list[Problem]:
    """A file's lines read again, by any read command or tool, when earlier reads of that file already covered
    them and nothing changed between (``sed -n '1,260p' f`` then ``sed -n '50,120p' f``): ``redundant_work``, rule
    ``reread_unchanged``. A whole file read again counts only when it reads the same text as the earlier whole read
    (other text: the file changed outside the agent's calls, by the person or a process). Not a re-read:

    - a read after a person turn of one before it: the person shares the workspace and may have changed the file, or
      asked for the work the read starts (a plan approved, then "implement the plan");
    - a citation view: a numbered read of at most ``CITE_LINES`` lines (``nl -ba f | sed -n '290,340p'``) of lines
      the earlier reads showed without numbers, made to cite ``f:307`` in the answer;
    - a read of some lines after an edit of that file failed (``failed_edits_of``: Codex's ``apply_patch`` "Failed to
      find expected lines", then ``sed -n '112,135p'`` of the lines it patches): the agent looks at the lines again to
      rebuild its patch, so reads before the failed edit do not cover it. The whole file read again after a failed
      edit still counts (a Continue session's ``Read`` of AdminPanel.jsx, whole, right after a refused edit and
      again later: labeled redundant by its reviewer).

    SQL keeps the files read twice or more between two person turns."""
    rows = con.execute(f"""
        WITH c AS ({calls_sql()}),
        r AS (SELECT *, CASE WHEN regexp_matches(name, '{_q(READ_TOOL)}') THEN regexp_extract(args, '{_q(PATH_ARG)}', 1)
                             ELSE regexp_extract(args, '{_q(SHELL_READ)}', 1) END AS file
              FROM c),
        w AS (SELECT *, coalesce(sum(mut::INT) OVER (PARTITION BY cid ORDER BY pos, k ROWS BETWEEN UNBOUNDED
                                                     PRECEDING AND 1 PRECEDING), 0) AS muts_before FROM r),
        g AS (SELECT * FROM (SELECT *, count(*) OVER (PARTITION BY cid, file, muts_before, turns) AS n FROM w
                             WHERE file <> '' AND NOT err AND NOT mut AND rchars > 0) WHERE n >= 2)
        SELECT cid, file, list(pos ORDER BY pos, k), list(args ORDER BY pos, k),
               list(coalesce(md5(regexp_replace(regexp_replace(m.content, '{_q(LINE_NUMBER)}', '', 'g'),
                                                '{MASK_RUN}', '0', 'g')), '') ORDER BY pos, k),
               list(numbered ORDER BY pos, k),
               list(regexp_matches(name, '{_q(READ_TOOL)}') ORDER BY pos, k),
               list(coalesce(length(m.content) - length(replace(m.content, chr(10), '')), 0) ORDER BY pos, k),
               list(coalesce(regexp_matches(left(m.content, {CUT_CHARS}), '{_q(CUT_BY_HARNESS)}'), false)
                    ORDER BY pos, k)
        FROM g LEFT JOIN (SELECT conversation_id AS mcid, position AS mpos, content FROM messages WHERE on_main_path) m
          ON m.mcid = g.cid AND m.mpos = g.rpos
        GROUP BY cid, file, muts_before, turns ORDER BY cid, min(pos), file""").fetchall()
    out = []
    failed = failed_edits_of(con, {str(r[0]) for r in rows})
    for cid, file, positions, argss, hashes, numbered, tools, newlines, cuts in rows:
        base = str(file).replace("\\", "/").rsplit("/", 1)[-1]
        fails = [p for p, a in failed.get(str(cid), []) if base in a]
        # (position, first line, last line, text without line numbers, numbered, ...) of each earlier read; a read tool's read with no range
        # showed its first TOOL_READ_LINES lines only, which a later read of lines past them does not repeat
        seen: list[tuple[int, float, float, str, bool, bool, tuple[str, str], bool]] = []
        cited: set[int] = set()
        quote = ""
        for pos, args, h, num, tool, nl, cut in zip(positions, argss, hashes, numbered, tools, newlines, cuts):
            span = lines_read(str(args or ""))
            if span is None or cut:
                # lines not known (tail, a negative offset), or the harness kept the output aside and showed a
                # preview (``CUT_BY_HARNESS``): neither read again nor read before
                continue
            lo, hi = span
            # fewer lines came back than were asked from the top: the whole file was shown, unless the output was cut;
            # held as the whole file only against a later whole read, whose text must then be the same
            ended = lo == 1 and hi != float("inf") and nl + 1 < hi - lo + 1 - SHORT_BY
            where = ("", "") if tool else read_dir(str(args or ""), str(file))
            near = [
                (a, TOOL_READ_LINES if was_tool and (a, b) == WHOLE and span != WHOLE else b, p, was)
                for p, a, b, text, was, was_tool, was_where in (
                    (p, a, float("inf") if end and span == WHOLE else b, text, was, was_tool, was_where)
                    for p, a, b, text, was, was_tool, was_where, end in seen
                )
                if pos - REREAD_WINDOW <= p < pos
                and (span == WHOLE or not any(p <= f < pos for f in fails))
                and was_where == where
                and a <= hi
                and lo <= b
                and (span != WHOLE or (a, b) != WHOLE or text == h != "")
            ]
            cites = bool(num) and hi - lo + 1 <= CITE_LINES and not any(was for *_, was in near)
            if near and not cites and _covered_by(lo, hi, [(a, b) for a, b, _, _ in near]):
                cited |= {p for _, _, p, _ in near} | {pos}
                quote = quote or args_quote(str(args or ""))
            seen.append((pos, lo, hi, h, bool(num), bool(tool), where, ended))
        if len(cited) >= 2:
            out.append(
                Problem(
                    str(cid),
                    "redundant_work",
                    sorted(cited),
                    quote,
                    "reread_unchanged",
                    f"{file}: lines already read, read again with no successful edit or writing "
                    "command and no person turn between (GUIDE §5: re-reading the same unchanged file)",
                )
            )
    return out


def failed_edits_of(con: duckdb.DuckDBPyConnection, cids: set[str]) -> dict[str, list[tuple[int, str]]]:
    """The failed edits of these conversations, (position, arguments) in order: an editing tool's call (not its view
    command) or an ``apply_patch`` command, that failed."""
    if not cids:
        return {}
    rows = con.execute(
        rf"""SELECT cid, pos, args FROM {CALLS}
            WHERE err AND cid IN (SELECT unnest(?::VARCHAR[]))
              AND (regexp_matches(name, '{_q(MUTATING_NAME)}') AND NOT regexp_matches(args, '{_q(VIEW_COMMAND)}')
                   OR regexp_matches(args, 'apply_patch|\*\*\* (?:Update|Add|Delete) File'))
            ORDER BY cid, pos, k""",
        [sorted(cids)],
    ).fetchall()
    out: dict[str, list[tuple[int, str]]] = {}
    for cid, pos, args in rows:
        out.setdefault(str(cid), []).append((int(pos), str(args or "")))
    return out


# the directory a shell read's relative path is read from: the call's working directory argument (Codex's
# ``workdir``) and the last ``cd`` before the read in its command; ``cat opencode.jsonc`` after ``cd repos/a`` and
# after ``cd repos/b`` read two files
WORKDIR_ARGS = ("workdir", "cwd", "dir_path", "directory")
CD = re.compile(r"\bcd\s+(?:\"([^\"]*)\"|'([^']*)'|([^\s;&|]+))")


def read_dir(args: str, file: str) -> tuple[str, str]:
    """Where a shell read of ``file`` reads from, as (working directory argument, last ``cd`` target before the
    read); ``("", "")`` for an absolute path (``/``, ``~`` or a drive letter), which names its file wherever it is
    read from. A ``cd`` to a variable stays its text (``$MAIN``): two reads compare only when they name the same."""
    if file.startswith(("/", "~")) or re.match(r"[A-Za-z]:[\\/]", file):
        return ("", "")
    try:
        value: Any = json.loads(args)
    except ValueError:
        value = args
    workdir = next((str(value[k]) for k in WORKDIR_ARGS if isinstance(value, dict) and value.get(k)), "")
    if isinstance(value, dict):
        value = {k: v for k, v in value.items() if k not in WORKDIR_ARGS}
    command = " ".join(strings(value))
    m = SHELL_READ_PY.search(command)
    cds = list(CD.finditer(command, 0, m.start(1) if m else len(command)))
    last = cds[-1] if cds else None
    return (workdir, next((g for g in last.groups() if g is not None), "") if last else "")


WHOLE = (1.0, float("inf"))
# a read's result the harness kept aside, showing the agent a preview only: Claude Code's "<persisted-output> Output
# too large (59.5KB). Full output saved to: … Preview (first 2KB):" (the file's later lines were never shown)
CUT_BY_HARNESS = r"^\s*<persisted-output>|^Output too large \("
CUT_CHARS = 200
# a read's result, compared with an earlier whole read's, without the line numbers a numbered read adds ("  12: ",
# "12\t", "12→"): the same text read once plain and once numbered (Get-Content, then Get-Content numbered; sed -n
# '1,200p' of a short file, then nl -ba) is the same unchanged file
LINE_NUMBER = r"(?m)^[ \t]*[0-9]+(?:\t|→|\||: )"
MASK_RUN = r"[0-9][0-9.]*"  # numbers masked whole ("Wall time: 4.6 seconds" and "3 seconds" alike)
SHORT_BY = 5  # lines: a range from the top that came back this much shorter than asked reached the file's end
# lines a read tool shows when no range is asked: Claude Code's Read, Crush's and OpenCode's view/read and Gemini CLI's
# read_file all stop at 2,000 (their tool descriptions say so); a shell ``cat`` shows the whole file
TOOL_READ_LINES = 2000
SED_RANGE = re.compile(r"\bsed\s+-n\s+[\\\"']*(\d+)\s*,\s*(\d+)p")
HEAD_LINES = re.compile(r"\bhead\s+(?:-n\s*|-)(\d+)")
TAIL = re.compile(r"\btail\b")
TAIL_LINES = re.compile(r"\btail\s+(?:-n\s*|-)(\+?)(\d+)")


def lines_read(args: str) -> tuple[float, float] | None:
    """The lines a read call reads, first and last (1-based; the whole file ``(1, inf)``), from its arguments: a
    read tool's ``offset``/``limit``, ``view_range``, ``start_line``/``end_line``; a command's ``sed -n A,Bp`` or
    ``head -n N``. None when the lines are not known from the call (``tail``, a negative offset)."""
    try:
        value: Any = json.loads(args)
    except ValueError:
        value = args
    if isinstance(value, dict):
        value = {k: int(v) if isinstance(v, str) and v.lstrip("-").isdigit() else v for k, v in value.items()}
        if isinstance(r := value.get("view_range"), list) and len(r) == 2 and all(isinstance(x, int) for x in r):
            return (max(r[0], 1), float("inf") if r[1] < 0 else r[1])
        start = value.get("start_line", value.get("line_start"))
        end = value.get("end_line", value.get("line_end"))
        if isinstance(start, int) or isinstance(end, int):
            return (start if isinstance(start, int) else 1, end if isinstance(end, int) else float("inf"))
        offset, limit = value.get("offset", value.get("line_offset")), value.get("limit", value.get("n_lines"))
        if isinstance(offset, int) or isinstance(limit, int):
            lo = offset if isinstance(offset, int) else 1
            if lo < 0:
                return None
            lo = max(lo, 1)
            return (lo, lo + limit - 1 if isinstance(limit, int) and limit > 0 else float("inf"))
    command = _read_step(" ".join(strings(value)))
    if m := SED_RANGE.search(command):
        return (int(m.group(1)), int(m.group(2)))
    if m := HEAD_LINES.search(command):
        n = int(m.group(1))
        if t := TAIL_LINES.search(command, m.end()):  # head -n N | tail -n M: the last M of N; tail -n +K: K..N
            return (int(t.group(2)), n) if t.group(1) else (max(n - int(t.group(2)) + 1, 1), n)
        return None if TAIL.search(command, m.end()) else (1, n)
    if TAIL.search(command):
        return None
    return WHOLE


SHELL_READ_PY = re.compile(SHELL_READ)
STEP_SEPARATOR = re.compile(r"&&|\|\||;|\n")


def _read_step(command: str) -> str:
    """The step of a chained command (``&&``, ``||``, ``;``, a new line) that holds its first file read, the one the
    rule names (SQL's ``regexp_extract``); a pipe stays in it (``nl -ba f | sed -n '50,120p'``). A range written in
    another step reads another file: ``cat alert.json && head -50 incident.txt`` reads alert.json whole."""
    m = SHELL_READ_PY.search(command)
    if m is None:
        return command
    starts = [s.end() for s in STEP_SEPARATOR.finditer(command, 0, m.start(1))]
    end = STEP_SEPARATOR.search(command, m.end(1))
    return command[starts[-1] if starts else 0 : end.start() if end else len(command)]


def _covered_by(lo: float, hi: float, seen: list[tuple[float, float]]) -> bool:
    """Lines lo..hi all lie in the union of the ``seen`` ranges (a whole file read, ``(1, inf)``, covers a later
    whole read of it)."""
    at = lo
    for a, b in sorted(seen):
        if a <= at <= b:
            if b >= hi:
                return True
            at = b + 1
    return False


def recurring_errors(con: duckdb.DuckDBPyConnection) -> list[Problem]:
    """One tool failing with the same error three or more times in a row: no success of that tool between, each
    within ``ERROR_GAP`` messages of the last (``loop``, rule ``same_error_N_times``). A failure is a result the
    warehouse reads as an error, or one whose first line says it failed (``SAYS_FAILED``: a harness that rejects
    an edit and asks for a retry answers without an error flag). "The same error" is the failure
    signature's (``signature.errors``: the line naming the error, values masked; ``signature.occurrences`` groups
    them), so a run's loop and its recurring error are read alike. SQL keeps the tools that failed three times."""
    rows = con.execute(f"""
        WITH c0 AS ({calls_sql()}),
        c AS (SELECT c0.*, c0.err OR regexp_matches(coalesce(split_part(left(m.content, {SAYS_FAILED_CHARS}), chr(10), 1), ''),
                                             '{_q(SAYS_FAILED)}') AS bad
              FROM c0 LEFT JOIN messages m ON m.conversation_id = c0.cid AND m.position = c0.rpos AND m.on_main_path),
        e AS (SELECT c.*, sum((NOT bad)::INT) OVER (PARTITION BY cid, name ORDER BY pos, k) AS run FROM c),
        f AS (SELECT e.*, count(DISTINCT pos) OVER (PARTITION BY cid, name, run) AS n,
                     count(DISTINCT pos) OVER (PARTITION BY cid) AS n_all FROM e WHERE bad)
        SELECT f.cid, f.name, f.run, f.pos, f.rpos, f.canon,
               CASE WHEN m.content_chars > 2 * {TEXT_CHARS} THEN left(m.content, {TEXT_CHARS}) || chr(10)
                    || right(m.content, {TEXT_CHARS}) ELSE coalesce(m.content, '') END, f.n >= 3
        FROM f JOIN messages m ON m.conversation_id = f.cid AND m.position = f.rpos AND m.on_main_path
        WHERE f.n_all >= 3 ORDER BY f.cid, f.name, f.run, f.pos, f.k""").fetchall()
    # per tool (a run of its failures, no success of it between) and, across tools, every failure of the
    # conversation: one error met through several tools (``"replace" not found``, then ``"write_file" not found``)
    groups: dict[tuple[str, str, int], list[tuple[int, int, str, str]]] = {}
    names: dict[tuple[str, int], str] = {}
    for cid, name, run, pos, rpos, canon, text, own in rows:
        call = (int(pos), int(rpos), str(canon), str(text))
        if own:
            groups.setdefault((str(cid), str(name), int(run)), []).append(call)
        groups.setdefault((str(cid), ANY_TOOL, 0), []).append(call)
        names[(str(cid), int(rpos))] = str(name)
    cids = sorted({cid for cid, *_ in groups})
    edits, successes = _edits(con, cids), _successes(con, cids)
    out: list[Problem] = []
    # each output's errors, read once: it is in its tool's group and in ANY_TOOL's
    read: dict[tuple[str, int], list[tuple[int, str]]] = {}
    for (cid, name, _), calls in groups.items():
        calls.sort()
        errs = []
        for _, rpos, _, text in calls:
            if (cid, rpos) not in read:
                read[(cid, rpos)] = signature.errors([Msg(rpos, "tool", "tool", None, text, error=True)])
            errs += read[(cid, rpos)]
        at = {rpos: (pos, canon, text) for pos, rpos, canon, text in calls}
        for rposs in signature.occurrences(errs).values():
            for stretch in _stretches(sorted(set(rposs), key=lambda r: at[r][0]), at, edits.get(cid, [])):
                n = len({at[r][0] for r in stretch})
                if n < 3:
                    continue
                if name == ANY_TOOL:
                    tools = {names[(cid, r)] for r in stretch}
                    lo, hi = at[stretch[0]][0], at[stretch[-1]][0]
                    if len(tools) < 2 or any(lo < p < hi and t in tools for p, t in successes.get(cid, [])):
                        continue  # one tool's (read above), or one of them worked between
                    name = "+".join(sorted(tools))
                text = at[stretch[0]][2]
                # the line that names the error (the signature's), else the first: "AssertionError: Expected 18 but
                # got 19", not MINT's "Observation:" header
                first = next((ln.strip() for ln in text.splitlines() if ln.strip()), "")
                header = BARE_HEADER.match(text)
                named = text[header.end() :].split("\n", 1)[0].strip() if header else ""
                line = (named or signature.error_line(text, flagged=True) or first)[:QUOTE]
                cited = sorted({at[r][0] for r in stretch} | set(stretch))
                distinct = len({at[r][1] for r in stretch})
                out.append(
                    Problem(
                        cid,
                        "loop",
                        cited,
                        line,
                        f"same_error_{n}_times ({name})",
                        f"{name} failed {n} times in a row with the same error, {distinct} distinct "
                        f"argument sets (GUIDE §5: 3 or more without progress)",
                    )
                )
    return sorted(out, key=lambda p: (p.conversation_id, p.positions))


# an editing tool (``failed_edits``): it changes a file's text when it works (not a shell, not its view command, not
# a to-do list: Claude Code's ``TodoWrite``, ``todo_write``, ``update_todos`` keep the agent's plan, not a file)
EDIT_TOOL = r"(?i)edit|patch|replace|write|apply|update_file|modify|insert"
NOT_EDIT_TOOL = r"(?i)todo"
FAILED_EDITS = 3  # failed edits of one tool in a row, at least


def failed_edits(con: duckdb.DuckDBPyConnection, already: list[Problem]) -> list[Problem]:
    """``loop``, rule ``failed_edit_N_times``: one editing tool (``EDIT_TOOL``, not ``NOT_EDIT_TOOL``) called
    ``FAILED_EDITS`` or more times in a row, no other call between, each call failing (an error, or a result whose first line says it failed,
    ``SAYS_FAILED``), on one file where the calls name one: the same change tried again and again and refused each
    time, whatever the words of the refusals (a failed edit changes nothing, so nothing progressed; GUIDE §5: the
    same action repeated 3 or more times without progress). A stretch one of whose calls the same-error rule cites
    (``already``) is left to it: one incident, one finding."""
    rows = con.execute(f"""
        WITH c AS (SELECT c0.*, c0.err OR regexp_matches(coalesce(split_part(left(m.content, {SAYS_FAILED_CHARS}),
                                                   chr(10), 1), ''), '{_q(SAYS_FAILED)}') AS bad,
                          regexp_extract(c0.args, '{_q(PATH_ARG)}', 1) AS file,
                          regexp_matches(c0.name, '{_q(EDIT_TOOL)}')
                            AND NOT regexp_matches(c0.name, '{_q(NOT_EDIT_TOOL)}')
                            AND NOT regexp_matches(coalesce(c0.args, ''), '{_q(VIEW_COMMAND)}') AS edit
                   FROM {CALLS} c0 LEFT JOIN messages m ON m.conversation_id = c0.cid AND m.position = c0.rpos
                        AND m.on_main_path),
        n AS (SELECT cid FROM c WHERE bad AND edit GROUP BY cid HAVING count(DISTINCT pos) >= {FAILED_EDITS})
        SELECT cid, pos, name, bad AND edit, file, args, rpos FROM c WHERE cid IN (SELECT cid FROM n)
        ORDER BY cid, pos, k""").fetchall()
    cited = {(p.conversation_id, x) for p in already for x in p.positions}
    out: list[Problem] = []
    runs: list[list[tuple[str, int, str, str, str, int | None]]] = []
    for cid, pos, name, failed, file, args, rpos in rows:
        call = (str(cid), int(pos), str(name), str(file or ""), str(args or ""), None if rpos is None else int(rpos))
        last = runs[-1][-1] if runs and runs[-1] and failed else None
        if last is not None and last[0] == call[0] and last[2] == call[2] and last[3] == call[3]:
            runs[-1].append(call)
        elif failed:
            runs.append([call])
        else:
            runs.append([])  # another call between: the run is over
    for run in runs:
        positions = sorted({c[1] for c in run})
        if len(positions) < FAILED_EDITS:
            continue
        cid, name, file = run[0][0], run[0][2], run[0][3]
        if any((cid, x) in cited for x in positions):
            continue  # the same-error rule reads this incident
        where = f" on {file}" if file else ""
        out.append(
            Problem(
                cid,
                "loop",
                sorted(set(positions) | {c[5] for c in run if c[5] is not None}),
                args_quote(run[-1][4]),
                f"failed_edit_{len(positions)}_times ({name})",
                f"{name} failed {len(positions)} times in a row{where}, no other call between: a failed edit changes "
                "nothing (GUIDE §5: 3 or more without progress)",
            )
        )
    return out


# a first line that only says the call failed ("ERROR:" then the error on the next line, OpenHands' editor): the
# quote is the line after it. The errors stay grouped by the bare header: three failed edits of one spot, each
# refused in other words, are the same action without progress (GUIDE §5; the blind labels mark them so)
BARE_HEADER = re.compile(r"\A\s*(?i:errors?|failed|failure)\s*:?[ \t]*\n\s*")


def _stretches(rposs: list[int], at: dict[int, tuple[int, str, str]], edits: list[int]) -> list[list[int]]:
    """The results split where a call is more than ``ERROR_GAP`` messages from the last one, or where it made
    progress: a change succeeded between the two calls (``edits``: positions of successful changing calls) and the
    output is another (``progressed``: fewer errors, other errors, other lines; the same error line may stay, as a
    type checker's errors in code the agent does not own stay while its own shrink). The same output after a change
    is the change not touching the error: the loop goes on."""
    out: list[list[int]] = []
    for r in rposs:
        if out:
            last = out[-1][-1]
            a, b = at[last][0], at[r][0]
            if b - a <= ERROR_GAP and not (any(a < e < b for e in edits) and progressed(at[last][2], at[r][2])):
                out[-1].append(r)
                continue
        out.append([r])
    return out


# what differs between two runs of one command that did the same: durations, clock times, hex ids, fractions
RUN_NOISE = re.compile(
    r"\b\d+(?:\.\d+)?\s*(?:ms|s|sec|seconds|µs)\b|\d{1,2}:\d{2}(?::\d{2})?|\b0x[0-9a-fA-F]+\b|\b[0-9a-f]{7,}\b|\d+\.\d+"
)


def progressed(before: str, after: str) -> bool:
    """Two outputs of a failing step tell of progress: they differ once run noise (``RUN_NOISE``) is masked."""
    return RUN_NOISE.sub("#", before).strip() != RUN_NOISE.sub("#", after).strip()


ANY_TOOL = "*"


def _successes(con: duckdb.DuckDBPyConnection, cids: list[str]) -> dict[str, list[tuple[int, str]]]:
    """Per conversation, (position, tool) of the calls that did not fail."""
    if not cids:
        return {}
    out: dict[str, list[tuple[int, str]]] = {}
    for cid, pos, name in con.execute(
        f"SELECT cid, pos, name FROM {CALLS} WHERE NOT err AND cid IN (SELECT unnest(?::VARCHAR[])) ORDER BY 1, 2",
        [cids],
    ).fetchall():
        out.setdefault(str(cid), []).append((int(pos), str(name)))
    return out


def _edits(con: duckdb.DuckDBPyConnection, cids: list[str]) -> dict[str, list[int]]:
    """Per conversation, the positions of the calls that changed something and succeeded (``mut``)."""
    if not cids:
        return {}
    out: dict[str, list[int]] = {}
    for cid, pos in con.execute(
        f"SELECT cid, pos FROM {CALLS} WHERE mut AND cid IN (SELECT unnest(?::VARCHAR[])) ORDER BY 1, 2", [cids]
    ).fetchall():
        out.setdefault(str(cid), []).append(int(pos))
    return out


def args_quote(args: str) -> str:
    """A verbatim part of the arguments' JSON: the longest string value's first line, where the JSON holds it
    as is (a value with escapes is quoted as the JSON has it)."""
    try:
        value: Any = json.loads(args)
    except ValueError:
        return args[:QUOTE]
    for v in sorted(strings(value), key=len, reverse=True):
        line = v.strip().split("\n", 1)[0][:QUOTE]
        if len(line) >= 3 and line in args:
            return line
    return args[:QUOTE]


def strings(v: Any) -> list[str]:
    """Every string in a parsed JSON value, nested ones too."""
    if isinstance(v, str):
        return [v]
    if isinstance(v, dict):
        return [s for x in v.values() for s in strings(x)]
    if isinstance(v, list):
        return [s for x in v for s in strings(x)]
    return []
