"""Claims held against the run's own evidence (docs/definitions.md#problems-a-reviewer-flags ``gave_up_or_false_success``): the assistant says the
work is done while its last results are errors, or the person's next turn says it failed, or no call of the sort the
claim needs ran since the person asked; it declines a task its tools could do. A reply is its text and the words of
the call that ends a turn (``said_sql``: Cline's attempt_completion, OpenHands' finish ...), whatever the agent. SQL
preselects the assistant turns that claim or decline (RE2 patterns, read alike by Python)."""

from __future__ import annotations

import json
import re

import duckdb

from forensics.analyzers.problems.actions import MUTATING_COMMAND, MUTATING_NAME, calls_sql, mutating_sql
from forensics.analyzers.problems.model import Problem, quote_at
from forensics.analyzers.problems.repeat_words import MEANT_RE, NOT_WORK, REPEATED
from forensics.analyzers.problems.restated import REFUSED
from forensics.analyzers.problems.said import CLAIM, CLAIM_RE, DECLINE, DECLINE_RE, EDIT_MARKS, EDITS, prose
from forensics.analyzers.problems.turns import Turn
from forensics.kernel.selection import SELECTED
from forensics.warehouse.tool_errors import sql_str

# the assistant says it changed something (past tense, first person)
CHANGED = (
    r"(?i)\b(?:I['’]?ve|I have)\b[^.\n]{0,80}?\b(?:updated|added|applied|fixed|implemented|modified|changed|"
    r"created|removed|rewritten|refactored|corrected)\b|"
    r"j['’]ai\b[^.\n]{0,80}?\b(?:mis à jour|ajouté|corrigé|appliqué|modifié|implémenté)|"
    r"我已(?:经)?(?:修改|更新|添加|修复)|\bhe (?:añadido|actualizado|corregido|implementado|modificado)\b|"
    r"\bich habe\b[^.\n]{0,60}\b(?:hinzugefügt|aktualisiert|behoben|implementiert|geändert)\b|"
    r"\b(?:adicionei|atualizei|corrigi|implementei|modifiquei)\b|\bho (?:aggiunto|aggiornato|corretto|modificato)\b|"
    r"\bя (?:исправил|добавил|обновил|изменил|реализовал)|(?:修正|追加|更新|変更)しました|"
    r"(?:수정|추가|변경)(?:했습니다|하였습니다|했어요)"
)
# the person's turn shows the work failed: the user_repeated words, a regression named, a crash pasted back (a
# traceback, an uncaught error; a plain error line may be a new issue)
FAILED = re.compile(
    r"(?i)\byou broke\b|\b(?:it['’]?s|is|are|was) broken\b|traceback \(most recent call last\)|"
    r"\bUncaught \w*Error\b"
)
# the person's opening says a thing fails ("\"mise run test:ci\" fails", "the tests fail", "it crashed"): after a
# claim that it was done, what was handed over failed them; "failed to ..." is an error's own words, pasted
FAILS = re.compile(
    r"(?i)\b(?:fails|failing|failed|crashes|crashed|errors out)\b(?! to\b)|"
    r"\b(?:tests|builds|checks|they|these|those|both|all|still) (?:still )?(?:fail|crash)\b|"
    # the same in the other languages people write to agents in
    r"\b(?:échoue|plante|schlägt fehl|stürzt ab|fallan?|falló|falham?|falhou|fallisce|падает|упал[оа]?)\b|"
    r"失败|崩溃|失敗|落ちる|실패"
)
OPENING = 200  # characters of the person's turn read for ``FAILS``: their own words, before what they paste
# ... unless the sentence asks why ("can you explain why they fail now?" asks about a failure the reply fixed)
ASKS_WHY = re.compile(r"(?i)\b(?:why|explain|how come)\b[^.!?\n]*$")


def fails(text: str) -> bool:
    """The person's opening says a thing fails (``FAILS``), not in a sentence that asks why."""
    head = text[:OPENING]
    return any(not ASKS_WHY.search(head[: m.start()]) for m in FAILS.finditer(head))


# the turn opens on a new point ("also ci failed please fix", "different question first, ... throws this error"): what
# fails there is another matter than the claim before it, unless the person says it again (``REPEATED``: "still")
NEW_POINT = re.compile(
    r"(?i)^\W*(?:also|btw|by the way|another thing|one more thing|separately|unrelated|different question|"
    r"on another note|moving on|let['’]?s (?:park|leave) (?:that|this|it)|let['’]?s move on|另外|顺便|对了|此外)(?!\w)"
)
# a regression named: what worked no longer does ("nothing is loading now", "the button stopped working", "it isn't
# loading now": the "n't" of a contraction has no word boundary before it)
REGRESSED = re.compile(
    r"(?i)\bno longer (?:\w+ )?(?:works?|working|loads?|loading|shows?|showing|appears?|renders?|runs?|builds?|compiles?|"
    r"starts?|opens?|displays?|valid|compatible)\b|\bstopped (?:working|loading|showing|rendering|running|responding)\b|"
    r"(?:\b(?:not|no|nothing)|n['’]t)\b[^.\n?!]{0,60}\b(?:loading|showing|rendering|appearing|displaying|working|updating|"
    r"saving|responding)\b[^.\n?!]{0,40}\b(?:now|anymore|any more)\b|"
    r"\bne (?:marche|fonctionne|s['’]affiche|charge) plus\b|\b(?:funktioniert|lädt|geht) (?:jetzt )?nicht mehr\b|"
    r"\bya no (?:funciona|carga|aparece|sale)\b|\bбольше не (?:работает|загружается|показывает|открывается)|"
    r"不再(?:工作|显示|加载|运行)|더 이상 (?:안|작동하지)|もう動かない"
)
# the assistant says it looked (checked, scanned, verified) or states what looking found ("no X was found", "no
# changes are needed", "is already compliant"): a claim that needs evidence a call would have produced
LOOKED = (
    r"(?i)\b(?:after (?:scanning|checking|reviewing|searching|inspecting|analy[sz]ing)|I(?: have|['’]ve)? (?:just )?"
    r"(?:scanned|checked|verified|searched|inspected|reviewed|confirmed|tested)|no [\w`./*-]+(?: [\w`./*-]+){0,4} "
    r"(?:was|were) (?:found|detected)|no changes (?:are|were) (?:needed|required|necessary)|(?:is|are) (?:fully|"
    r"already) (?:[\w-]+-)?(?:compliant|correct|up to date))|j['’]ai (?:vérifié|testé|contrôlé)|我(?:已经?)?(?:检查|验证)"
)
CHANGED_RE, LOOKED_RE = re.compile(CHANGED), re.compile(LOOKED)
REFUSED_SQL = "(?i)" + REFUSED.pattern  # a refused call's result, read in SQL (RE2)
# of the looked claims, those that state what is (not that the agent looked): "no changes are needed", "is already
# correct". A state the agent's own last change left (``left_by``: the changes that worked in the exchange before the
# person's turn wrote what the reply cites) is known without a new call: "those are already correct" about the values
# its last edit wrote is no claim built on nothing (a reviewer read such a finding as false)
STATE_RE = re.compile(
    r"(?i)\bno changes (?:are|were) (?:needed|required|necessary)|\b(?:is|are) (?:fully|already) (?:[\w-]+-)?"
    r"(?:compliant|correct|up to date)"
)
HEAD = 1500  # characters of a reply read for a claim: its summary, not the code it quotes
# the call that ends a turn or a run with words for the person (Cline's attempt_completion, OpenHands' finish, Gemini
# CLI's complete_task, SWE-agent's submit): its words are the reply's claim as much as the message text
FINISH = r"(?i)^(?:attempt_completion|complete_task|task_complete|finish|submit|final_answer|done)$"
FINISH_WORDS = ("result", "message", "summary", "final_answer", "answer", "text", "thought")


def said_sql() -> str:
    """Every selected main-path assistant message that says something (its text, or a ``FINISH`` call's words):
    ``cid``, ``pos``, ``text`` (the first ``HEAD`` characters of the message without its edits' bodies,
    ``said.EDITS``: an aider SEARCH/REPLACE block, a patch, a fenced diff; then the call's words)."""
    words = ", ".join(f"try(json_extract_string(arguments, '$.{w}'))" for w in FINISH_WORDS)
    marks = " OR ".join(f"contains(m.content, '{sql_str(k)}')" for k in EDIT_MARKS)
    return f"""
        SELECT m.conversation_id AS cid, m.position AS pos,
               left(CASE WHEN {marks} THEN regexp_replace(m.content, '{sql_str(EDITS)}', chr(10), 'g')
                    ELSE coalesce(m.content, '') END, {HEAD}) || coalesce(chr(10) || f.said, '') AS text
        FROM messages m JOIN {SELECTED} USING (conversation_id)
        LEFT JOIN (SELECT conversation_id, position, left(string_agg(coalesce({words}), chr(10)), {HEAD}) AS said
                   FROM tool_calls WHERE regexp_matches(name, '{sql_str(FINISH)}') GROUP BY 1, 2) f
          ON f.conversation_id = m.conversation_id AND f.position = m.position
        WHERE m.on_main_path AND m.role = 'assistant' AND (NOT m.blank OR f.said IS NOT NULL)"""


SAID = "_problem_said"  # said_sql() materialised once per run: every claim rule reads the replies from it


def false_success(
    con: duckdb.DuckDBPyConnection,
    turns: list[Turn],
    acting: list[str] | None = None,
    errors_again: frozenset[tuple[str, int]] = frozenset(),
) -> list[Problem]:
    """The claims and refusals of the selected runs; ``acting``: the agent families (source formats) that change
    things with their tools in some selected run (``acting_formats``, default: of the selection); ``errors_again``:
    the person turns (conversation, position) that paste back an error the assistant's change did not remove
    (``pasted.errors_again``)."""
    con.execute(f"CREATE OR REPLACE TEMP TABLE {SAID} AS {said_sql()}")
    try:
        declined = _declined(con)
        return (
            _contradicted(con, turns, errors_again)
            + _over_errors(con)
            + declined
            + _declined_doable(con, declined, acting_formats(con) if acting is None else acting)
            + _without_acting(con)
            + _retracted(con)
        )
    finally:
        con.execute(f"DROP TABLE IF EXISTS {SAID}")


# the reply hands over a change in words as the fix, with no claim word and no call: "I've made some corrections and
# improvements. Here is the updated script:", "Here is the corrected version" (a chat agent's code for the person to
# run); "here is the updated script" alone offers a change, not a fix
HANDED_WORDS = re.compile(
    r"(?i)\bI(?:['’]ve| have)\b[^.\n]{0,60}?\bmade (?:some |a few |several |the |these |all the )?(?:necessary |needed )?"
    r"(?:corrections|fixes)\b|\bI(?:['’]ve| have) made the (?:necessary|needed|required) (?:changes|modifications)\b|"
    r"\bhere(?:['’]s| is) (?:the|your|an?) (?:\w+ )?(?:corrected|fixed|working)\b"
)


def _contradicted(
    con: duckdb.DuckDBPyConnection, turns: list[Turn], errors_again: frozenset[tuple[str, int]] = frozenset()
) -> list[Problem]:
    """``claim_contradicted``: the last thing the assistant said before a person turn claims success, and that person
    turn says the work failed them (the user_repeated patterns, a crash pasted back, a regression named).
    The claim may be made in no claim word: the last thing said ends a turn whose change succeeded, and either the
    person turn names a regression (``REGRESSED``: "nothing is loading now", "it stopped working") or the reply
    names a file that change wrote (``handed_over``: "I changed the canvas ... in ui/src/App.tsx", then "Nope, still
    cannot drag"): the work was handed over as done, in whatever words, and failed. The last
    thing said may come before an earlier person turn the assistant answered with calls alone ("run the tests" after
    "done", then "nothing loads now"): it is still what the person holds the work to. A person turn that pastes back
    the error the reply's change was to remove (``errors_again``, in any language: "всерівно ця помилка: error: ...")
    says it failed them too; there the reply's hand-over may be in words alone (``HANDED_WORDS``: "I've made some
    corrections ... Here is the updated script", a chat agent with no calls). A turn that opens by saying what the
    person meant (``MEANT``: "i meant for entireio/cli ...") corrects how the reply read the request, not the work it
    handed over: its opening is no report of a failure (a reviewer read such a finding as false); nor is a failure in a
    turn that opens on a new point (``NEW_POINT``: "also ci failed please fix" named a CI job another change broke)."""
    by_words = {
        (t.conversation_id, t.position)
        for t in turns
        if t.index > 0
        and t.replied
        and t.answered
        and (
            REPEATED.search(MEANT_RE.sub("", t.text))
            or not NEW_POINT.search(t.text)
            and (NOT_WORK.search(t.text) or FAILED.search(t.text) or REGRESSED.search(t.text) or fails(t.text))
        )
    }
    pushed = by_words | {
        (t.conversation_id, t.position)
        for t in turns
        if t.index > 0 and t.replied and t.answered and (t.conversation_id, t.position) in errors_again
    }
    if not pushed:
        return []
    regressed = {(t.conversation_id, t.position) for t in turns if REGRESSED.search(t.text)}
    con.execute("CREATE OR REPLACE TEMP TABLE _pushed (cid VARCHAR, pos INTEGER, regressed BOOLEAN)")
    # one INSERT of three lists, not a statement per row (executemany: some 1 CPU s at 400 conversations)
    keys = sorted(pushed)
    con.execute(
        "INSERT INTO _pushed SELECT unnest(?::VARCHAR[]), unnest(?::INTEGER[]), unnest(?::BOOLEAN[])",
        [[c for c, _ in keys], [p for _, p in keys], [k in regressed for k in keys]],
    )
    rows = con.execute(f"""
        WITH b AS (
            SELECT p.cid, p.pos, p.regressed, a.position, a.content,
                   regexp_matches(a.content, '{sql_str(CLAIM)}') AS claims,
                   (SELECT string_agg(c.args, chr(10)) FROM ({calls_sql()}) c WHERE c.cid = p.cid AND c.mut
                      AND c.pos < a.position
                      AND c.pos > coalesce((SELECT max(position) FROM messages q WHERE q.conversation_id = p.cid
                          AND q.on_main_path AND q.origin = 'person' AND q.position < a.position), -1)) AS changes
            FROM _pushed p JOIN LATERAL (
                SELECT s.pos AS position, s.text AS content FROM {SAID} s WHERE s.cid = p.cid AND s.pos < p.pos
                  AND trim(s.text) <> ''
                ORDER BY s.pos DESC LIMIT 1) a ON true)
        SELECT cid, pos, position, content, claims, regressed, changes FROM b
        WHERE claims OR changes IS NOT NULL OR regexp_matches(content, '{sql_str(HANDED_WORDS.pattern)}')
        ORDER BY 1, 2""").fetchall()
    con.execute("DROP TABLE _pushed")
    out = []
    worded = {k for k in pushed if k not in errors_again or k in by_words}
    for cid, pos, apos, text, claims, regressed, changes in rows:
        # a claim word in a fenced block is the code's ("echo \"check passed\""), not the reply's (``said.prose``),
        # unless the person's words say the work failed them
        if claims and CLAIM_RE.search(text if (str(cid), int(pos)) in worded else prose(text)):
            rule, norm = "claim_contradicted", "the person's next turn says the claimed work failed them"
        elif regressed:
            rule, norm = (
                "claim_contradicted",
                "the reply handed over its turn's changes; the person's next turn says what they touched no longer "
                "works",
            )
        elif named := handed_over(text, str(changes)):
            rule, norm = (
                "claim_contradicted",
                f"the reply handed over its turn's changes ({named}); the person's next turn says they failed them",
            )
        elif (str(cid), int(pos)) in errors_again and HANDED_WORDS.search(prose(text)):
            rule, norm = (
                "claim_contradicted",
                "the reply handed over a change in words; the person's next turn pastes back the error it was to remove",
            )
        else:
            continue
        out.append(
            Problem(
                str(cid),
                "gave_up_or_false_success",
                [int(apos), int(pos)],
                quote_at(text, CLAIM_RE.search(text) or HANDED_WORDS.search(text)),
                rule,
                norm,
            )
        )
    return out


# the file a change wrote: an editing tool's path argument (its key in any case: OpenCode's "filePath"), a patch's
# file header (apply_patch's "*** Update File:", a diff's "+++ b/"), or a path with a folder and an extension in a
# writing command ("Path('/w/ui/src/App.tsx')"), in the change's arguments (JSON: a newline is written "\n")
CHANGED_FILE = re.compile(
    r"\"(?i:file_?path|path|target_file|absolute_path|filename)\"\s*:\s*\"([^\"]+)\"|"
    r"\*\*\* (?:Update|Add) File: ([^\s\\\"]+)|\+\+\+ (?:b/)?([^\s\\\"]+)|"
    r"(?:[\w.~-]*/)+([\w.-]+\.[A-Za-z][A-Za-z0-9]{0,7})\b"
)
# a file named in a reply by its stem alone ("TeamSheet now ...") when the stem is an identifier, not a word: at least
# STEM_MIN characters with a capital inside, a digit, "_" or "-" (TeamSheet, user_message, app-shell; not "theme")
STEM_MIN = 4
IDENTIFIER = re.compile(r".[A-Z]|[0-9_-]")
# a name read as a word: no ASCII letter, digit, "_" or "-" against it (Chinese is written against a file name, with no
# space: "修改了App.tsx中的拖动逻辑")
_WORD = r"(?<![A-Za-z0-9_-]){}(?![A-Za-z0-9_-])"


def _unescaped(value: str | None) -> str | None:
    """A JSON string's value (``value`` as written between its quotes): a name outside ASCII may be written escaped
    ("docs/\\u8bf4\\u660e.md", as Python's json.dumps writes it), and a reply names it unescaped."""
    if value is None or "\\" not in value:
        return value
    try:
        return str(json.loads(f'"{value}"'))
    except ValueError:
        return value


def handed_over(reply: str, changes: str) -> str:
    """The first file the turn's changes wrote (``changes``: their arguments) that the reply names, by its file name
    or by its stem when that is an identifier (``IDENTIFIER``), as a word: the reply reports those changes.
    Nothing when it names none (an error, an abort, a guess about the cause)."""
    seen: set[str] = set()
    for m in CHANGED_FILE.finditer(changes):
        name = (_unescaped(m.group(1)) or m.group(2) or m.group(3) or m.group(4)).replace("\\", "/")
        name = name.rstrip("/").rsplit("/", 1)[-1]
        stem = name.rsplit(".", 1)[0]
        if not name or name in seen:
            continue
        seen.add(name)
        if re.search(_WORD.format(re.escape(name)), reply) or (
            len(stem) >= STEM_MIN and IDENTIFIER.search(stem) and re.search(_WORD.format(re.escape(stem)), reply)
        ):
            return name
    return ""


# a call that acts (not a read or a listing): it runs a command or edits; the claim that ends a turn is about it
COMMAND_NAME = r"(?i)bash|shell|exec|run|terminal|command|ipython|python|execute"
COMMAND_ARG = r"\"(?:command|cmd|code)\"\s*:"


def _over_errors(con: duckdb.DuckDBPyConnection) -> list[Problem]:
    """``claim_over_errors``: a turn's last reply (before the person's next turn, or the run's end) claims success
    while the turn's last step failed and nothing it did after that step succeeded: the last call that acts (a
    command or an edit, tried: ``COMMAND_*``, ``actions.MUTATING_*``) or, where none acts after it, the turn's last
    result, is an error. The reads that follow a failed edit ("string not found") change nothing it claims. A call
    the person refused (``restated.REFUSED``: "The user doesn't want to proceed with this tool use", then their words)
    did not fail: the person stopped it, and the reply after it answers them (a reviewer read "Option A: ... State is
    always complete from the start", an answer to the words that refused an edit, as no claim over an error)."""
    rows = con.execute(f"""
        WITH m AS (SELECT conversation_id AS cid, position AS pos, role, blank,
                          sum((origin = 'person')::INT) OVER (PARTITION BY conversation_id ORDER BY position) AS turn
                   FROM messages JOIN {SELECTED} USING (conversation_id) WHERE on_main_path),
        fin AS (SELECT m.cid, m.turn, arg_max(m.pos, m.pos) AS pos, arg_max(s.text, m.pos) AS text
                FROM m JOIN {SAID} s ON s.cid = m.cid AND s.pos = m.pos GROUP BY 1, 2),
        r AS (SELECT c.*, c.err AND NOT coalesce(regexp_matches(left(q.content, 300), '{sql_str(REFUSED_SQL)}'), false)
                          AS failed
              FROM ({calls_sql()}) c LEFT JOIN messages q
                ON q.conversation_id = c.cid AND q.position = c.rpos AND q.on_main_path),
        c AS (SELECT c.cid, m.turn, c.pos, c.k, c.rpos, c.failed AS err,
                     c.mut OR regexp_matches(c.name, '{sql_str(COMMAND_NAME)}')
                       OR regexp_matches(c.args, '{sql_str(COMMAND_ARG)}')
                       OR c.failed AND regexp_matches(c.name, '{sql_str(MUTATING_NAME)}')
                       OR c.failed AND regexp_matches(c.args, '{sql_str(MUTATING_COMMAND)}') AS acts
              FROM r c JOIN m ON m.cid = c.cid AND m.pos = c.pos),
        step AS (SELECT fin.cid, fin.turn, fin.pos, fin.text,
                        arg_max(c.err, c.pos * 100000 + c.k) FILTER (WHERE c.acts) AS acted_err,
                        arg_max(c.rpos, c.pos * 100000 + c.k) FILTER (WHERE c.acts) AS acted_rpos,
                        arg_max(c.err, c.rpos) AS last_err, max(c.rpos) AS last_rpos
                 FROM fin JOIN c ON c.cid = fin.cid AND c.turn = fin.turn AND c.rpos < fin.pos GROUP BY 1, 2, 3, 4)
        SELECT cid, coalesce(acted_rpos, last_rpos), pos, text FROM step
        WHERE coalesce(acted_err, last_err) AND regexp_matches(text, '{sql_str(CLAIM)}') ORDER BY 1, 3""").fetchall()
    out = []
    for cid, rpos, pos, text in rows:
        if (m := CLAIM_RE.search(text)) is None:
            continue  # a claim word said of work still to do (``said.CLAIM_RE``)
        out.append(
            Problem(
                str(cid),
                "gave_up_or_false_success",
                [int(rpos), int(pos)],
                quote_at(text, m),
                "claim_over_errors",
                "the turn's last step before the claim (a command or an edit, else its last result) failed",
            )
        )
    return out


def _declined(con: duckdb.DuckDBPyConnection) -> list[Problem]:
    """``declined_with_tools``: the final answer declines ("I cannot ...") in a run whose agent changed things
    with its tools (a successful editing or writing call in this conversation): the task was in its reach."""
    rows = con.execute(f"""
        WITH fin AS (SELECT cid, arg_max(pos, pos) AS pos, arg_max(text, pos) AS text
                     FROM {SAID} GROUP BY 1)
        SELECT cid, pos, text FROM fin
        WHERE regexp_matches(text, '{sql_str(DECLINE)}')
          AND fin.cid IN (SELECT cid FROM ({calls_sql()}) WHERE mut) ORDER BY 1""").fetchall()
    return [
        Problem(
            str(cid),
            "gave_up_or_false_success",
            [int(pos)],
            quote_at(text, DECLINE_RE.search(text)),
            "declined_with_tools",
            "the agent changed things with its tools in this run, so the task was in its reach",
        )
        for cid, pos, text in rows
    ]


# the reply declines the request as a whole (not one step of it: "I am unable to modify firebase.json" when the
# editing tool is missing is a reason, not a refusal of the task)
WHOLE_REQUEST = re.compile(r"(?i)\b(?:fulfill|complete|do|help with)\s+(?:this|that|the|your)\s+(?:request|task)\b")
# the reply declines a step a shell does ("I cannot directly install software or modify your system's PATH"): in a
# conversation whose agent has a command tool and used it, the step is handed back to the person for nothing
SHELL_STEP = (
    r"(?i)\bI(?: cannot| can['’]t| can ?not| am unable to|['’]m unable to| am not able to|['’]m not able to|"
    r" don['’]t have the ability to) "
    r"(?:directly |actually |myself )?(?:install|run|execute|set up|set|modify|configure|download|restart)\b"
)
SHELL_STEP_RE = re.compile(SHELL_STEP)
# a call answered by the harness that the tool is missing: the session has no such tool ("Tool "run_shell_command" not
# found in registry"), so a step declined for want of it is a reason, not a hand-back
NO_TOOL = r"(?i)\btool\b[^\n]{0,60}\bnot (?:found|available|registered|enabled)|\bunknown tool\b|\bno such tool\b"
# calls that only talk to the person (ask, answer, report completion): no step of the task
TALK_CALL = r"(?i)ask|respond|question|followup|follow_up|completion|complete_task|reply|message|notify"


def acting_formats(con: duckdb.DuckDBPyConnection) -> list[str]:
    """The agent families (source formats) with a call that changed something, answered, on the main path, in some
    selected conversation: the one thing a conversation's findings read from the others (``_declined_doable``)."""
    return [
        str(f)
        for (f,) in con.execute(f"""
            SELECT DISTINCT s.format FROM tool_calls t JOIN {SELECTED} USING (conversation_id)
            JOIN conversations c USING (conversation_id) JOIN sources s USING (source_id)
            WHERE t.position IS NOT NULL AND t.result_seq IS NOT NULL AND s.format IS NOT NULL AND {mutating_sql()}
            ORDER BY 1""").fetchall()
    ]


def _declined_doable(con: duckdb.DuckDBPyConnection, already: list[Problem], acting: list[str]) -> list[Problem]:
    """``declined_doable`` (GUIDE §5: "stopping or handing off early when the task was doable"): a reply says it
    cannot ("I cannot fulfill this request", "I can't use `read_file`") and hands the turn back (no call but one
    that talks to the person before the person's next turn or the end), while the means are there: it declines
    the request as a whole in a run of an agent family that changes things with its tools elsewhere, or it names
    as unusable a tool this conversation calls successfully."""
    seen = {(p.conversation_id, p.positions[0]) for p in already}
    rows = con.execute(
        f"""
        WITH c AS ({calls_sql()}),
        fam AS (SELECT c2.conversation_id AS cid, s.format FROM conversations c2 JOIN sources s USING (source_id)),
        used AS (SELECT cid, list(DISTINCT name) AS names FROM c WHERE NOT err GROUP BY 1),
        shell AS (SELECT c.cid, min(c.name) AS shell FROM c LEFT JOIN messages r
                    ON r.conversation_id = c.cid AND r.position = c.rpos AND r.on_main_path
                  WHERE (regexp_matches(c.name, '{sql_str(COMMAND_NAME)}')
                         OR regexp_matches(c.args, '{sql_str(COMMAND_ARG)}'))
                    AND NOT (c.err AND regexp_matches(left(coalesce(r.content, ''), 400), '{sql_str(NO_TOOL)}'))
                  GROUP BY 1),
        a AS (SELECT s.cid, s.pos, s.text,
                     (SELECT min(position) FROM messages q WHERE q.conversation_id = s.cid
                      AND q.on_main_path AND q.origin = 'person' AND q.position > s.pos) AS nextp
              FROM {SAID} s WHERE regexp_matches(s.text, '{sql_str(DECLINE)}|{sql_str(SHELL_STEP)}'))
        SELECT a.cid, a.pos, a.text, list_contains($acting::VARCHAR[], f.format), coalesce(u.names, []), sh.shell
        FROM a JOIN fam f USING (cid) LEFT JOIN used u USING (cid) LEFT JOIN shell sh USING (cid)
        WHERE NOT EXISTS (SELECT 1 FROM c WHERE c.cid = a.cid AND c.pos >= a.pos
                          AND (a.nextp IS NULL OR c.pos < a.nextp) AND NOT regexp_matches(c.name, '{sql_str(TALK_CALL)}'))
        ORDER BY 1, 2""",
        {"acting": acting},
    ).fetchall()
    out = []
    for cid, pos, text, family_acts, names, shell in rows:
        if (str(cid), int(pos)) in seen:
            continue
        m = DECLINE_RE.search(text)
        after = text[m.start() : m.end() + 80] if m else ""
        named = next((n for n in names if n and re.search(rf"(?<![\w-]){re.escape(n)}(?![\w-])", after)), None)
        if m and named is not None:
            norm = f"this conversation calls {named} successfully, so the step was in its reach"
        elif m and family_acts and WHOLE_REQUEST.search(after):
            norm = "this agent changes things with its tools in other runs, so the request was in its reach"
        elif shell is not None and (m := SHELL_STEP_RE.search(text)):
            norm = f"this conversation runs commands with {shell}, so the step it hands back was in its reach"
        else:
            continue
        out.append(
            Problem(str(cid), "gave_up_or_false_success", [int(pos)], quote_at(text, m), "declined_doable", norm)
        )
    return out


# the assistant says it ran or tested something (a command, the tests, the app) or reports what running showed
RAN = (
    r"(?i)\bI(?: have|['’]ve)? (?:just |also )?(?:ran|run|re-?ran|executed|tested|launched|compiled|built and ran)\b|"
    r"\b(?:all|the) (?:\w+ )?tests? (?:now )?(?:pass(?:es|ed)?|succeeded|are green)\b|\bthe build (?:now )?"
    r"(?:succeeds|succeeded|passes|passed)\b|j['’]ai (?:exécuté|lancé|testé)|我(?:已经?)?(?:运行|测试)了|"
    r"\bich habe\b[^.\n]{0,60}\b(?:ausgeführt|getestet)\b|\bhe (?:ejecutado|probado)\b|実行しました|テストしました"
)
RAN_RE = re.compile(RAN)
NEGATED = re.compile(r"(?i)(?:\b(?:not|never|pas|nicht|no)|n['’]t)\b")  # "n't" ends a word: no boundary before it
# each act a reply may claim, the calls since the person's last turn that would back it, and what it was held
# against: a change needs a call that changed something; a run, a call that runs a command; a look, any call
ACTS = (
    ("changed", CHANGED_RE, "changed", "no call since the person's last turn changed anything"),
    ("ran", RAN_RE, "ran", "no call since the person's last turn ran a command"),
    ("looked", LOOKED_RE, "called", "no call at all ran since the person's last turn"),
)

CODE_SPAN = re.compile(r"`([^`\n]{1,80})`")


def left_by(reply: str, changes: str) -> bool:
    """The reply's code spans (```userMsgBg```, ```#343541```) are mostly (half or more) in the arguments of the changes
    its agent made just before (``changes``): it states what it wrote."""
    spans = {x.strip() for x in CODE_SPAN.findall(reply[:HEAD]) if x.strip()}
    return bool(spans) and bool(changes) and 2 * sum(x in changes for x in spans) >= len(spans)


def _without_acting(con: duckdb.DuckDBPyConnection) -> list[Problem]:
    """``claimed_without_acting``: a reply (its text, or its completion call's) claims an act that needs a call of
    some sort (it changed something: "I've updated ...", a change, ``CHANGED``; it ran or tested: "all tests pass",
    ``RAN``; it looked: "I checked", "no changes are needed", ``LOOKED``) while no call of that sort ran since the
    person's last turn, in a run whose agent does make such calls elsewhere (it could have): a claim built on
    nothing, read alike in every agent's way of ending a turn."""
    rows = con.execute(f"""
        WITH c AS ({calls_sql()}),
        r AS (SELECT cid, pos, mut, args, regexp_matches(name, '{sql_str(COMMAND_NAME)}')
                                    OR regexp_matches(args, '{sql_str(COMMAND_ARG)}') AS runs FROM c),
        can AS (SELECT cid, bool_or(mut) AS changed, bool_or(runs) AS ran, true AS called FROM r GROUP BY 1),
        a AS (SELECT s.cid, s.pos, s.text,
                     (SELECT max(position) FROM messages q WHERE q.conversation_id = s.cid AND q.on_main_path
                      AND q.origin = 'person' AND q.position < s.pos) AS since
              FROM {SAID} s WHERE s.cid IN (SELECT cid FROM can)
                AND regexp_matches(s.text, '{sql_str(CHANGED)}|{sql_str(RAN)}|{sql_str(LOOKED)}')),
        b AS (SELECT a.*, (SELECT max(position) FROM messages q WHERE q.conversation_id = a.cid AND q.on_main_path
                           AND q.origin = 'person' AND q.position < a.since) AS before FROM a)
        SELECT b.cid, b.since, b.pos, b.text, can.changed, can.ran,
               coalesce(bool_or(r.mut), false), coalesce(bool_or(r.runs), false), count(r.pos) > 0
               OR EXISTS (SELECT 1 FROM tool_calls t WHERE t.conversation_id = b.cid AND t.position > b.since
                          AND t.position <= b.pos),
               (SELECT string_agg(q.args, chr(10)) FROM r q WHERE q.cid = b.cid AND q.mut
                AND q.pos > coalesce(b.before, -1) AND q.pos < b.since)
        FROM b JOIN can USING (cid) LEFT JOIN r ON r.cid = b.cid AND r.pos > b.since AND r.pos <= b.pos
        WHERE b.since IS NOT NULL GROUP BY 1, 2, 3, 4, 5, 6, b.before ORDER BY 1, 3""").fetchall()
    out = []
    for cid, since, pos, text, can_change, can_run, changed, ran, called, last_changes in rows:
        could = {"changed": can_change, "ran": can_run, "called": True}
        did = {"changed": changed, "ran": ran, "called": called}
        for act, pattern, needs, norm in ACTS:
            m = pattern.search(text)
            if m is None or NEGATED.search(m.group()) or did[needs] or not could[needs]:
                continue
            if act == "looked" and STATE_RE.search(m.group()) and left_by(text, str(last_changes or "")):
                continue  # the state its own last change left (STATE_RE)
            out.append(
                Problem(
                    str(cid),
                    "gave_up_or_false_success",
                    [int(since), int(pos)],
                    quote_at(text, m),
                    "claimed_without_acting",
                    f"{norm}, and this agent does make such calls in this run: the claim ({act}) is built on nothing",
                )
            )
            break
    return out


# the agent says its earlier answer was invented ("You're right, I apologize - I made that up."): the answer it gave as
# fact was none (GUIDE §5: claims correct while the conversation shows otherwise), whoever caught it; or it concedes
# that what it said or shipped was wrong, in the words that answer the person's doubt: "You're right to question this -
# it's **not** different" (its diagnosis, acted on, taken back), "You're right — the editor only had Start/End" (work
# called done, incomplete), "It identifies a real defect in the `fallback_template` code we shipped"
MADE_UP = r"(?i)\bI (?:made (?:that|it|this|those|these) up|(?:invented|fabricated|hallucinated) (?:that|it|this|those|these)\b)"
RETRACTED = re.compile(
    MADE_UP + r"|\byou['’]re (?:absolutely |totally |completely )?right\b[^.\n]{0,40}?[-—:,.!]\s*(?:\*\*)?(?:the|it|"
    r"that|this|I|my|we)\b[^.\n]{0,60}?\b(?:only|never|didn['’]t|wasn['’]t|isn['’]t|doesn['’]t|did not|was not|is not|"
    r"does not|not|missing|wrong|incorrect)\b|"
    r"\b(?:defect|bug|regression) in (?:the|my|our) [^.\n]{0,40}?(?:code|change|fix|implementation) (?:I|we) "
    r"(?:shipped|wrote|added|made|introduced)\b"
)
MADE_UP_RE = re.compile(MADE_UP)


def _retracted(con: duckdb.DuckDBPyConnection) -> list[Problem]:
    """``claim_retracted``: a reply says the agent made up what it said before (``RETRACTED``): cites the retraction
    and the agent's last reply with words before the turn it answers (the person's, or the tool result that carries
    their words), where the invented answer was given."""
    rows = con.execute(f"""
        SELECT s.cid, s.pos, s.text,
               (SELECT max(q.pos) FROM {SAID} q WHERE q.cid = s.cid AND q.pos < s.pos AND trim(q.text) <> ''
                  AND q.pos < coalesce((SELECT max(m.position) FROM messages m WHERE m.conversation_id = s.cid
                      AND m.on_main_path AND m.role IN ('user', 'tool') AND m.position < s.pos
                      AND (m.origin = 'person' OR m.content LIKE '%the user said%')), -1))
        FROM {SAID} s WHERE regexp_matches(s.text, '{sql_str(RETRACTED.pattern)}') ORDER BY 1, 2""").fetchall()
    return [
        Problem(
            str(cid),
            "gave_up_or_false_success",
            sorted({int(pos)} | ({int(before)} if before is not None else set())),
            quote_at(text, RETRACTED.search(text)),
            "claim_retracted",
            "the agent says it made up what it answered before: an answer given as fact with nothing behind it"
            if MADE_UP_RE.search(text)
            else "the agent concedes that what it said or shipped before was wrong: a claim the conversation shows "
            "otherwise",
        )
        for cid, pos, text, before in rows
    ]
