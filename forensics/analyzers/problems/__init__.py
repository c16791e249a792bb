"""The problems a reviewer flags (docs/definitions.md#problems-a-reviewer-flags): eight kinds, one module per family of evidence.

- the person's own turns (``turns``): ``repeated``: ``user_repeated`` (said again, ``repeat_words``; asked again,
  ``asked_again``; ``pasted``: an error pasted back, a message sent again; ``restated``: a request restated in new
  words; ``stalled``: a push after a turn the agent ended without an answer; a prompt template's opening is never
  compared, ``templates``); ``frustration``; ``pasted``'s ``loop`` (one error pasted back again and again);
- ``instructions``: ``instruction_violated``, where the instruction can be checked by a program;
- ``actions``: the agent's calls: ``redundant_work`` and ``loop`` (same action, same result, nothing changed
  between; the same error again and again);
- ``replies``: ``loop`` in prose (the person asked for input again and again); ``stalled``: turns in a row ending on
  an announcement with nothing done, or on the same reply; the same act announced again and again inside a turn with
  only notes to itself between; one passage said over and over in a message; the same request answered alike;
- ``endings``: ``gave_up_or_false_success`` (a claim the run's evidence contradicts, a task declined); ``doable``:
  a decline the agent took back once the person asked again;
- ``context``: ``context_crowded``;
- ``focus``: ``lost_focus`` where a program can check it (work destroyed right after it was called done; an edit
  that removes far more than the add it announced).

Each finding cites its conversation, positions, a verbatim quote of one of them, the rule that fired and the
norm it was held against. A kind that fires on most conversations of one agent family (``FAMILY_MOST``, at least
``FAMILY_MIN`` conversations) says something about the family, not a run: there each conversation is held against
the family's runs of its length, the messages the kind cites against the family's line of cited messages by length
(``_length_norm``), and only the conversations above it keep their findings (the line runs through the family's
median run, so the kind stays on at most half of that family); the section's norm line says so. Earlier
kinds are kept as detail: the baseline's ``user_pushback`` is the English core of
``user_repeated``'s ``said_again`` rule; drift's ``tool_result_crowding`` and ``no_focus`` stay beside
``context_crowded`` and ``lost_focus``. The findings are written to the derived table ``problem_findings``.
"""

from __future__ import annotations

import dataclasses
import itertools
import math
import re
import statistics
from collections import Counter, defaultdict
from typing import Any

import polars as pl

from forensics.analyzers import reuse
from forensics.analyzers.base import Context, Finding, Section
from forensics.analyzers.declare import Analyzer, CheckRule
from forensics.analyzers.problems import (
    actions,
    context,
    doable,
    endings,
    focus,
    frustration,
    instructions,
    pasted,
    repeated,
    replies,
    stalled,
    stopped,
    templates,
    turns,
    unwritten,
)
from forensics.analyzers.problems.model import KINDS, Problem
from forensics.analyzers.rules.load import Audit, audit_of
from forensics.kernel.selection import SELECTED
from forensics.text.agents import agent_name
from forensics.warehouse import derived

NAME = "problems"
TITLE = "Problems a reviewer flags"
TABLE = "problem_findings"
FAMILY_MOST = 0.5  # a kind on more than this share of a family's conversations is the family's way of working
FAMILY_MIN = 5  # an agent with fewer conversations says little about its way of working (the bar every finding kind is held to: tests/test_drift_judged.py)
COLUMNS: dict[str, Any] = {
    "conversation_id": pl.String,
    "kind": pl.String,
    "position": pl.Int32,
    "positions": pl.List(pl.Int32),
    "quote": pl.String,
    "rule": pl.String,
    "norm": pl.String,
}
SEVERE = ("gave_up_or_false_success", "instruction_violated", "loop", "frustration")
# the detectors run on batches of conversations of at most this many messages (``reuse.rows``), each batch's
# messages and calls copied once: every detector holds a batch's calls, person turns and replies at once, some
# 2 KB a message (the 1/10 bench corpus's 102,135 messages at once held 220 MB more; docs/scale.md)
BATCH = 20_000


TEMPLATES = "_problem_templates"  # per conversation, the prompt templates' openings its turns open with
CACHED = (
    "problems_found"  # the per-conversation findings kept between reports (``reuse.rows``), before the family norms
)
FOUND: dict[str, Any] = {
    "conversation_id": pl.String,
    "kind": pl.String,
    "positions": pl.List(pl.Int32),
    "quote": pl.String,
    "rule": pl.String,
    "norm": pl.String,
    "seq": pl.Int32,  # its place among the conversation's findings: ties of (kind, positions) keep their order
}


def detect(ctx: Context) -> list[Problem]:
    """Every detector's problems over the selected conversations, in kind order. A conversation's findings depend
    on its own rows, the config and the code, and on two things from the others, the agent families that change
    things with their tools (``endings.acting_formats``: part of the key) and which of its turns open with a prompt
    template's opening (``templates.read``, read by user_repeated and pasted_loops: part of its stamp, ``TEMPLATES``): under the same, an unchanged
    conversation's are read back from the warehouse (``reuse.rows``: a report after a day of new logs runs the
    detectors on the new ones only)."""
    acting = endings.acting_formats(ctx.con)
    shared, opens = templates.read(ctx.con)
    ctx.con.execute(
        f"CREATE OR REPLACE TEMP TABLE {TEMPLATES} AS SELECT unnest(?::VARCHAR[]) AS conversation_id, "
        "unnest(?::VARCHAR[]) AS opening",
        [[c for c, _ in opens], [o for _, o in opens]],
    )
    settings = {**ctx.cfg.values, "problems.acting_formats": acting}
    found = reuse.rows(
        ctx.con, settings, CACHED, lambda: _frame(_detected(ctx, acting, shared)), also_reads=TEMPLATES, batch=BATCH
    )
    problems = [
        (seq, Problem(cid, kind, list(positions), quote, rule, norm))
        for cid, kind, positions, quote, rule, norm, seq in found.select(list(FOUND)).iter_rows()
    ]
    problems.sort(key=lambda sp: (KINDS.index(sp[1].kind), sp[1].conversation_id, sp[1].positions, sp[0]))
    return [p for _, p in problems]


def _detected(ctx: Context, acting: list[str], shared: frozenset[tuple[str, ...]]) -> list[Problem]:
    """``_detect`` with the messages and calls of the selected conversations only (``reuse.selected_only``): a
    detector's query joins the selection after reading the whole table, so a report after 1 % new conversations
    read every conversation's rows to keep those of the new ones (0.4 of 1.3 CPU s at 404 conversations). The
    selection is a batch of ``BATCH`` messages at most, so its rows are copied, read from the warehouse once. Each
    conversation's findings depend on its own rows (``detect``): the same either way."""
    with reuse.selected_only(ctx.con, ("messages", "tool_calls"), copied=True):
        return _detect(ctx, acting, shared)


def _detect(ctx: Context, acting: list[str], shared: frozenset[tuple[str, ...]]) -> list[Problem]:
    """Every detector's problems over the selected conversations, in kind order (the rules audit's of them)."""
    con = ctx.con
    ids = {c for (c,) in con.execute(f"SELECT conversation_id FROM {SELECTED}").fetchall()}
    full = audit_of(ctx)
    mine = Audit(
        [r for r in full.rules if r.conversation_id in ids],
        [v for v in full.verdicts if v.conversation_id in ids],
        full.runs,
    )
    actions.prepare(con)
    person = turns.person_turns(con)
    by_conv = turns.by_conversation(person)
    again = pasted.errors_again_of(con, by_conv, shared)  # user_repeated's, pasted_loops' and the claims'
    pasted_again = frozenset((cid, by_conv[cid][k].position) for cid, at in again.items() for k in at)
    ends = stalled.ends_of(con, by_conv)  # user_repeated's asked_after_stall and stalled_loops' turns, read once
    found = (
        context.crowded(con)
        + focus.off_task(con)
        + repeated.user_repeated(person, con, shared, again, ends)
        + instructions.violated(con, found=mine)
        + _covered(
            actions.repeated_actions(con)
            + actions.part_again(con)
            + actions.reread_files(con)
            + actions.failed_again(con)
        )
        + (recurring := actions.recurring_errors(con))
        + actions.failed_edits(con, recurring)
        + pasted.pasted_loops(person, con, shared, again)
        + replies.asked_again(con)
        + stalled.stalled_loops(con, ends)
        + stalled.announced_in_turn(con)
        + stalled.same_passage(con)
        + stalled.same_answer(con)
        + (ended := endings.false_success(con, person, acting, pasted_again))
        + doable.declined_then_done(con, person, shared, ended)
        + stopped.stopped(con, by_conv, ends)
        + unwritten.unwritten(con)
        + frustration.frustration(person)
    )
    return sorted(found, key=lambda p: (KINDS.index(p.kind), p.conversation_id, p.positions))


def _frame(found: list[Problem]) -> pl.DataFrame:
    seq: Counter[str] = Counter()
    rows = []
    for p in found:
        rows.append(
            (p.conversation_id, p.kind, p.positions, p.quote, p.rule, p.norm, seq[p.conversation_id]),
        )
        seq[p.conversation_id] += 1
    return pl.DataFrame(rows, schema=FOUND, orient="row")


# the rule's own references, one click away (in ``rule``), never on the finding's line
REFERENCES = re.compile(r"\s*\((?:GUIDE §5|no corpus norm)[^)]*\)")
ABOVE = "; above {family}'s runs of its length"  # a family's finding kept (``_family_norms``)
ABOVE_AT = re.compile(re.escape(ABOVE).replace(r"\{family\}", r"(\S+)") + "$")


def said(p: Problem) -> str:
    """What a problem was held against, in a reader's words: the norm without the rule's references (GUIDE §5) and
    without "the main path"; nothing where it was the person's own words (the quote says it)."""
    norm = REFERENCES.sub("", p.norm).replace(" on the main path", "")
    norm = ABOVE_AT.sub(lambda m: f"; more than is usual for {agent_name(m[1])} in a conversation of this length", norm)
    if norm.startswith("the person's own"):
        return ""
    if p.kind == "instruction_violated":
        return "broke " + norm
    if p.kind == "context_crowded":
        return "a context of " + norm
    return norm


def _covered(found: list[Problem]) -> list[Problem]:
    """Without the findings whose positions another finding of the same kind and conversation already cites
    (two rules seeing one incident: the first kept, its rule naming the other's too, ``a+b``)."""
    keep: dict[int, Problem] = {}
    also: dict[int, list[str]] = {}
    for i, p in enumerate(found):
        mine = set(p.positions)
        by = next(
            (
                j
                for j, q in enumerate(found)
                if j != i
                and q.kind == p.kind
                and q.conversation_id == p.conversation_id
                and (mine < set(q.positions) or (mine == set(q.positions) and j < i))
            ),
            None,
        )
        if by is None:
            keep[i] = p
        else:
            also.setdefault(by, []).append(p.rule.split(" (")[0])
    out = []
    for i, p in keep.items():
        extra = [r for r in dict.fromkeys(also.get(i, [])) if r not in p.rule]
        out.append(dataclasses.replace(p, rule="+".join([p.rule, *extra])) if extra else p)
    return out


def run(ctx: Context) -> Section:
    found = detect(ctx)
    family = dict(
        ctx.con.execute(
            f"SELECT c.conversation_id, s.format FROM conversations c JOIN sources s "
            f"USING (source_id) JOIN {SELECTED} USING (conversation_id)"
        ).fetchall()
    )
    length = dict(
        ctx.con.execute(
            f"SELECT conversation_id, count(*) FROM messages JOIN {SELECTED} USING (conversation_id) "
            "WHERE on_main_path GROUP BY 1"
        ).fetchall()
    )
    found, norms = _family_norms(found, family, length)
    natives = dict(
        ctx.con.execute(
            f"SELECT conversation_id, native_id FROM conversations JOIN {SELECTED} USING (conversation_id)"
        ).fetchall()
    )
    derived.replace_rows(
        ctx.con,
        TABLE,
        pl.DataFrame(
            [
                {
                    "conversation_id": p.conversation_id,
                    "kind": p.kind,
                    "position": p.position,
                    "positions": p.positions,
                    "quote": p.quote,
                    "rule": p.rule,
                    "norm": p.norm,
                }
                for p in found
            ],
            schema=COLUMNS,
        ),
    )
    total = ctx.selected
    kinds = {}
    for k in KINDS:
        mine = [p for p in found if p.kind == k]
        convs = len({p.conversation_id for p in mine})
        kinds[k] = {"findings": len(mine), "conversations": convs, "share": convs / total if total else 0.0}
    sec = Section(NAME, TITLE, metrics={"kinds": kinds, "conversations": total})
    sec.findings = [
        Finding(
            p.kind,
            "high" if p.kind in SEVERE or len(p.positions) >= 3 else "low",
            p.conversation_id,
            natives.get(p.conversation_id),
            p.positions,
            f"[{p.position}] “{p.quote}”",
            f"{p.rule}; held against {p.norm}",
            float(len(p.positions)),
            said=said(p),
        )
        for p in found
    ]
    sec.norms = norms
    fired = [k for k in KINDS if kinds[k]["findings"]]
    sec.summary = (
        f"{len(found)} problems in {len({p.conversation_id for p in found})} of {total} conversations"
        + (": " + ", ".join(f"{k.replace('_', ' ')} {kinds[k]['findings']}" for k in fired) if fired else "")
        + ". Each cites a verbatim quote, the rule that fired and what it was held against; "
        "lost focus is flagged only where a program can check it (work destroyed right after it was called done, an "
        "edit removing far more than the add it announced)."
    )
    sec.grid = [["kind", "findings", "conversations", "share of conversations"]] + [
        [k, str(kinds[k]["findings"]), str(kinds[k]["conversations"]), f"{kinds[k]['share']:.0%}"] for k in KINDS
    ]
    return sec


def _family_norms(
    found: list[Problem], family: dict[str, str], length: dict[str, int]
) -> tuple[list[Problem], dict[str, str]]:
    """Where a kind fires on most conversations of a family, hold each conversation against that family's runs of
    its length: the messages the kind cites, kept only where the conversation cites more than the family's line at
    its length (``_length_norm``; every conversation of the family counted, those without the kind at 0). The line
    runs through the family's median run, so the kind stays on at most half of the family. Say so once per (kind,
    family)."""
    size = Counter(family.values())
    hit: dict[tuple[str, str], set[str]] = defaultdict(set)
    cited: dict[tuple[str, str], set[int]] = defaultdict(set)
    for p in found:
        hit[(p.kind, family.get(p.conversation_id, ""))].add(p.conversation_id)
        cited[(p.kind, p.conversation_id)].update(p.positions)
    common = {
        key for key, convs in hit.items() if size[key[1]] >= FAMILY_MIN and len(convs) > FAMILY_MOST * size[key[1]]
    }
    keep: dict[tuple[str, str], set[str]] = {}
    norms = {}
    for kind, fam in sorted(common):
        members = sorted(c for c, f in family.items() if f == fam)
        runs = {c: (max(length.get(c, 1), 1), len(cited[(kind, c)])) for c in members}
        above, slope = _length_norm(runs)
        keep[(kind, fam)] = {c for c in hit[(kind, fam)] if c in above}
        norms[f"{kind}:{fam}"] = (
            f"{kind.replace('_', ' ')} in {len(hit[(kind, fam)])} of {size[fam]} conversations of {agent_name(fam)}: "
            f"how this agent works, so a conversation is flagged only where it cites more of its messages than the "
            f"agent's runs of its length (messages cited grow as length^{slope:.2f} over its runs): "
            f"{len(keep[(kind, fam)])} conversations"
        )
    out = []
    for p in found:
        key = (p.kind, family.get(p.conversation_id, ""))
        if key not in common:
            out.append(p)
        elif p.conversation_id in keep[key]:
            out.append(dataclasses.replace(p, norm=f"{p.norm}{ABOVE.format(family=key[1])}"))
    return out, norms


def _length_norm(runs: dict[str, tuple[int, int]]) -> tuple[set[str], float]:
    """The runs of one family (main-path messages, messages a kind cites) that cite more than the family's runs of
    their length, and the line's slope. A run's messages are not all calls, and an incident cites two or three of
    them however long the run, so a long run's share of cited messages is small (the median share held every long
    Codex session with re-reads under it): the family's line of log(1 + cited) against log(length), fitted by
    Theil–Sen (the median of the slopes between pairs of runs of different lengths: a few odd runs do not tilt it;
    0 when every run has one length) through the family's median run (the intercept is the median of the runs'
    offsets). A run is above its length's norm when its offset exceeds that median, so at most half are."""
    pts = {c: (math.log(n), math.log1p(k)) for c, (n, k) in runs.items()}
    slopes = [(y2 - y1) / (x2 - x1) for (x1, y1), (x2, y2) in itertools.combinations(pts.values(), 2) if x1 != x2]
    slope = round(statistics.median(slopes), 2) + 0.0 if slopes else 0.0  # (+ 0.0: never -0.00)
    offset = {c: y - slope * x for c, (x, y) in pts.items()}
    middle = statistics.median(offset.values())
    return {c for c, o in offset.items() if o > middle + 1e-9}, slope


ANALYZER = Analyzer(
    NAME,
    TITLE,
    run,
    checks=(CheckRule("problems.kinds.*", "lower", 0.10, True),),  # more problems found on the same logs: a regression
    heavy=True,  # the claim rules' reply table and every person turn: the report's peak once topics is done
    wide=("context_crowded",),  # a context filled with what a request for breadth read is what it asked
    measures=("context_crowded",),  # the context's size and its share of tool output (GUIDE §5), a measurement
    tables=(
        reuse.cached_table(CACHED),
        derived.Table(
            TABLE,
            "selection",
            "one row per problem a reviewer flags (docs/definitions.md#problems-a-reviewer-flags): kind, the first cited "
            "main-path position, every cited position, a verbatim quote, the rule and the norm",
        ),
    ),
)
