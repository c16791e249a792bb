"""``gave_up_or_false_success`` read from what the run did next (docs/definitions.md#problems-a-reviewer-flags; GUIDE
§5: "stopping or handing off early when the task was doable"): the agent declined a request ("I cannot ...", "I don't
have a way to ..."), the person asked for it again (``restated``'s ``asked_again_undone``: their answer to the
decline, naming what the request named), and the agent's answer to that declines nothing and does something (a
call, or a reply): the run itself shows the request was in its reach (rule ``declined_then_done``). The decline is
held against the agent's own next answer, not against a list of what agents can do."""

from __future__ import annotations

import duckdb

from forensics.analyzers.problems import restated
from forensics.analyzers.problems.model import Problem, quote_at
from forensics.analyzers.problems.said import DECLINE, DECLINE_RE
from forensics.analyzers.problems.templates import opening
from forensics.analyzers.problems.turns import Turn, by_conversation
from forensics.kernel.selection import SELECTED
from forensics.warehouse.tool_errors import sql_str

END = 2147483647


def declined_then_done(
    con: duckdb.DuckDBPyConnection,
    turns: list[Turn],
    templates: frozenset[tuple[str, ...]],
    already: list[Problem],
) -> list[Problem]:
    """Every decline the agent took back once asked again, in the selected conversations with two person turns or
    more and a reply that declines (SQL picks them). ``already``: the findings of the kind; a decline one of them
    cites is theirs."""
    by_conv = by_conversation(turns)
    cands = [cid for cid, conv in by_conv.items() if len(conv) > 1 and conv[0].answered]
    if not cands:
        return []
    declining = [
        str(c)
        for (c,) in con.execute(
            f"""SELECT DISTINCT conversation_id FROM messages
                WHERE conversation_id IN (SELECT unnest(?::VARCHAR[])) AND on_main_path AND role = 'assistant'
                  AND conversation_id IN (SELECT conversation_id FROM {SELECTED})
                  AND regexp_matches(left(coalesce(content, ''), {restated.CONTEXT_CHARS}),
                                     '{sql_str(DECLINE)}|{sql_str(restated.DECLINED.pattern)}')
                ORDER BY 1""",
            [cands],
        ).fetchall()
    ]
    cited = {(p.conversation_id, x) for p in already if p.kind == "gave_up_or_false_success" for x in p.positions}
    replies_of = restated.replies(con, declining)
    out: list[Problem] = []
    for cid in declining:
        conv, replies = by_conv[cid], replies_of.get(cid, [])
        prompts = {k: o for k, t in enumerate(conv) if (o := opening(t.text)) in templates}
        index = {t.position: k for k, t in enumerate(conv)}
        for k, (rule, _, earlier) in sorted(restated.restated(replies, conv, prompts).items()):
            j = index.get(earlier)
            if rule != "asked_again_undone" or j is None:
                continue
            answer = restated.between(replies, conv[j].position, conv[j + 1].position)
            refused, _, declined = restated.what_was_refused(answer)
            said = [r for r in answer if r[1] == "assistant" and r[2].strip()]
            if refused or not declined or not said or (cid, said[-1][0]) in cited:
                continue  # a call the person refused is their choice, not the agent giving up
            upto = conv[k + 1].position if k + 1 < len(conv) else END
            after = [r for r in restated.between(replies, conv[k].position, upto) if r[1] == "assistant"]
            if not any(r[3] or r[2].strip() for r in after) or any(
                DECLINE_RE.search(r[2]) or restated.DECLINED.search(r[2]) for r in after
            ):
                continue
            pos, text = said[-1][0], said[-1][2]
            out.append(
                Problem(
                    cid,
                    "gave_up_or_false_success",
                    [pos, conv[k].position],
                    quote_at(text, DECLINE_RE.search(text) or restated.DECLINED.search(text)),
                    "declined_then_done",
                    f"asked again at [{conv[k].position}], the agent then did it without declining: the request "
                    "was in its reach",
                )
            )
    return out
