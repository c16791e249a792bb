"""``user_repeated`` (docs/definitions.md#problems-a-reviewer-flags): the person had to repeat or correct. A person
turn after an answer that says the work failed them or that they said it before (``repeat_words``), asks again
what they asked (``asked_again``), pastes back an error or sends a message again (``pasted``), or restates a
request in new words (``restated``)."""

from __future__ import annotations

import re

import duckdb

from forensics.analyzers.problems import pasted, restated, stalled, undone
from forensics.analyzers.problems.asked_again import asked_before, norm
from forensics.analyzers.problems.model import Problem, quote_at
from forensics.analyzers.problems.repeat_words import DIRECTIVES, NOT_WORK, REPEATED, unit
from forensics.analyzers.problems.templates import opening, shared
from forensics.analyzers.problems.turns import Turn, by_conversation, incidents


def user_repeated(
    turns: list[Turn],
    con: duckdb.DuckDBPyConnection | None = None,
    templates: frozenset[tuple[str, ...]] | None = None,
    again_of: dict[str, pasted.Again] | None = None,
    ends: stalled.Ends | None = None,
) -> list[Problem]:
    """A person turn after an answer that says the work failed them or that they said it before (``said_again``),
    or that asks again, nearly word for word, what one of their last turns asked (``asked_again``); with the
    warehouse (``con``), one that pastes back an error the assistant's change did not remove (``error_again``) or
    sends the same message again after it got no reply (``sent_again``, ``pasted``), or restates a request in new
    words (``asked_again_reworded``, ``asked_again_undone``: ``restated``), or follows a turn the agent ended
    without an answer (``asked_after_stall``: ``stalled``). Turns that follow one
    another, each flagged, are one incident: one finding. ``templates``: the prompt templates' openings (``templates``;
    default: of ``turns``); ``again_of``: ``pasted.errors_again_of``, when computed already (for ``pasted_loops``
    too); ``ends``: ``stalled.ends_of``, the same (for ``stalled_loops`` too)."""
    hits: list[tuple[Turn, str, str]] = []
    norms: dict[tuple[str, int], str] = {}
    by_conv = by_conversation(turns)
    templates = shared(turns) if templates is None else templates
    resent = _resent_after_silence(con, by_conv) if con is not None else {}
    # what the replies did, for the conversations where a turn may restate an earlier one (two person turns or more)
    replies_of = restated.replies(con, [c for c, v in by_conv.items() if len(v) > 1]) if con is not None else None
    if again_of is None:
        again_of = pasted.errors_again_of(con, by_conv, templates) if con is not None else {}
    undone_of = undone.undone_turns(con, by_conv) if con is not None else {}
    stalled_of = stalled.stalled_turns(con, by_conv, ends) if con is not None else {}
    for cid, conv in by_conv.items():
        again = again_of.get(cid, {})
        # the first turn that says the work failed them or that they said it before: a later "not working" is said again
        said_at = next((j for j, e in enumerate(conv) if NOT_WORK.search(e.text) or REPEATED.search(e.text)), len(conv))
        prompts = {k: o for k, t in enumerate(conv) if (o := opening(t.text)) in templates}
        directives = _directives(conv)
        reworded = restated.restated(replies_of.get(cid, []) if replies_of is not None else None, conv, prompts)
        for k, t in enumerate(conv):
            if t.index == 0 or not t.replied:
                if k in resent.get(cid, {}):
                    hits.append((t, "sent_again", quote_at(t.text)))
                continue
            said = REPEATED.search(t.text) or (NOT_WORK.search(t.text) if said_at < k else None)
            directive = _directive_again(directives, k)
            asked = asked_before(t, [e for e in conv[max(0, k - 6) : k] if e.answered_next], templates)
            error = again.get(k)
            other = reworded.get(k)
            if other and asked and other[0] == "asked_again_reworded":
                other = None  # the same request asked again word for word: asked_again's reading
            rules = [
                r
                for r, x in (
                    ("said_again", said),
                    ("directive_again", directive),
                    ("asked_again", asked),
                    ("error_again", error),
                    ("sent_again", k in resent.get(cid, {})),
                    (other[0] if other else "", other),
                    ("undone_after", k in undone_of.get(cid, {})),
                    ("asked_after_stall", k in stalled_of.get(cid, {})),
                )
                if x
            ]
            if rules:  # every rule that reads the turn is named; the quote is the first one's
                if said or directive or not error:
                    quote = quote_at(t.text, said or directive)
                else:
                    quote = quote_at(t.full or t.text, error[1])
                hits.append((t, "+".join(rules), quote))
                if error and not (said or directive or asked):
                    norms[(cid, t.position)] = error[2]
                if other and not (said or directive or asked or error):
                    norms[(cid, t.position)] = other[1]
                elif (why := undone_of.get(cid, {}).get(k) or stalled_of.get(cid, {}).get(k)) and not (
                    said or directive or asked or error or other
                ):
                    norms[(cid, t.position)] = why
    return incidents(
        hits,
        "user_repeated",
        "the person's own earlier turns in this conversation (no corpus norm: their words)",
        norms,
    )


def _resent_after_silence(con: duckdb.DuckDBPyConnection, by_conv: dict[str, list[Turn]]) -> dict[str, dict[int, str]]:
    """``pasted.sent_again`` over the conversations whose log keeps replies and where a person turn is the one
    before it again with no reply between (their times read only there)."""
    cands = [
        cid
        for cid, conv in by_conv.items()
        if conv[0].answered
        and any(
            not conv[k - 1].answered_next and norm(conv[k - 1].text) == norm(conv[k].text) for k in range(1, len(conv))
        )
    ]
    if not cands:
        return {}
    when = pasted.times(con, cands)
    return {cid: found for cid in cands if (found := pasted.sent_again(by_conv[cid], when.get(cid, {})))}


def _directives(conv: list[Turn]) -> list[dict[int, tuple[re.Match[str], str | None]]]:
    """Per turn of ``conv``, the standing directives it says (by their index in ``DIRECTIVES``), each with its match
    and the unit it is about (``repeat_words.unit``): the one it names, else the one the nearest turn saying the same
    directive names (before or after it: "let's go through them one at a time" answered by "one question at a time
    plz" is about questions), else none."""
    said = [{i: m for i, d in enumerate(DIRECTIVES) if (m := d.search(t.text))} for t in conv]
    out: list[dict[int, tuple[re.Match[str], str | None]]] = [{} for _ in conv]
    for k, found in enumerate(said):
        for i, m in found.items():
            named = unit(m)
            if named is None:
                near = sorted((abs(j - k), j) for j, f in enumerate(said) if i in f and unit(f[i]) is not None)
                named = unit(said[near[0][1]][i]) if near else None
            out[k][i] = (m, named)
    return out


def _directive_again(said: list[dict[int, tuple[re.Match[str], str | None]]], k: int) -> re.Match[str] | None:
    """The first standing directive turn ``k`` says that an earlier turn said too, about the same unit where both are
    about one (``_directives``): "make the following changes one at a time" is a new directive after the questions
    were gone through one at a time (a reviewer read that finding as false); a bare "one at a time" is said again."""
    for i, (m, mine) in said[k].items():
        if any(i in e and (mine is None or e[i][1] is None or e[i][1] == mine) for e in said[:k]):
            return m
    return None
