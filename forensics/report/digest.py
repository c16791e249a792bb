"""The answer first: what to change, the worst conversations and the strongest findings, before any table.

Nothing here measures anything. *What to change* is what `forensics tune` recommends (its tuners, over the
whole warehouse, on the report's connection, handed in by the report's caller as a ``Recommender``), with one
line per key it left alone and why; the rankings order the sections' own findings. Strength is judged against
the corpus: a kind that fires on most conversations (or that an analyzer names in ``Section.norms``) is a
property of the corpus, said once in one line and left out of the rankings; within a severity, a finding
further out in its norm's distribution (its percentile) ranks first. Beside every kind: the share of
conversations it fires on (the trivial reference: a reviewer who marked every conversation would be right that
often). *Worst conversations* weighs each conversation's findings by severity and by how rare their kind is
(a kind that fires everywhere says little about one conversation), so a run flagged by several analyzers
outranks one flagged many times by one rule; a conversation's length is never a weight, nor a measurement of its
shape (``Analyzer.measures``) when the run ended with its work handed over.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Callable, Collection
from dataclasses import asdict, dataclass, field
from typing import Any

import duckdb

from forensics.analyzers.base import Finding, Section
from forensics.config import Config

RANK = {"info": 0, "low": 1, "high": 2}
WORST = 5  # conversations in *Worst conversations*
# what *Worst conversations* does not rank a measurement of (``weighed``, ``report.build.done``): a run (its id), a
# turn (conversation id, the finding's first position), or one kind at a turn (conversation id, position, kind)
Key = str | tuple[str, int] | tuple[str, int, str]
STRONGEST = 10  # findings in *Strongest findings*
PER_KIND = 3  # ... at most this many of one kind while other kinds have findings to show
MOST = 0.5  # a kind flagged in more than this share of the conversations is a property of the corpus
MIN_CORPUS = 10  # ... of a selection of at least this many (three conversations are no corpus)
RARE = 3.0  # the most a kind's rarity weighs: log2(8), a kind on one conversation in eight or fewer


@dataclass
class Change:
    key: str
    current: Any
    recommended: Any
    evidence: str
    effect: str

    @property
    def harness(self) -> bool:
        """A key the harness reads, not one of this tool's own detector thresholds (``Analyzer.detector_sections``)."""
        from forensics import analyzers

        return self.key.partition(".")[0] not in analyzers.detector_sections()


@dataclass
class Norm:
    section: str
    kind: str
    text: str


@dataclass
class Ranked:
    section: str
    finding: Finding


@dataclass
class Worst:
    conversation_id: str
    score: float
    reasons: list[str]
    findings: list[Ranked]


@dataclass
class KindShare:
    """How often a finding kind fires: its trivial reference (the share a mark-every-conversation reviewer gets)."""

    section: str
    kind: str
    findings: int
    conversations: int  # conversations it fires on (any severity)
    share: float | None  # ... of the selection's conversations

    @property
    def text(self) -> str:
        share = "–" if self.share is None else f"{self.share:.0%}"
        return f"{self.kind} fires on {self.conversations} conversations ({share})"


@dataclass
class Digest:
    changes: list[Change] = field(default_factory=list)
    checked: int = 0  # tunables tune looked at
    tuned_over: str = ""  # "42 conversations, 5260 messages"
    toml: str = ""  # the lines to paste into the harness config (harness keys)
    toml_drift: str = ""  # the same for the [drift] detector thresholds
    command: str = ""  # or the command that writes them
    norms: list[Norm] = field(default_factory=list)
    strongest: list[Ranked] = field(default_factory=list)
    worst: list[Worst] = field(default_factory=list)
    skipped: str = ""  # why *What to change* is empty when it was not computed
    kept: list[Change] = field(default_factory=list)  # keys tune left alone, each with why (its evidence)
    kinds: list[KindShare] = field(default_factory=list)  # every finding kind with the share it fires on
    not_in_use: dict[str, str] = field(default_factory=dict)  # analyzer (or part) -> why it had nothing to read

    def as_dict(self, labels: dict[str, str]) -> dict[str, Any]:
        def finding(r: Ranked) -> dict[str, Any]:
            return {"section": r.section, "label": labels.get(r.finding.conversation_id), **asdict(r.finding)}

        return {
            "what_to_change": {
                "changes": [{**asdict(c), "harness": c.harness} for c in self.changes],
                "tunables_checked": self.checked,
                "tuned_over": self.tuned_over,
                "toml": self.toml,
                "toml_drift": self.toml_drift,
                "command": self.command,
                "skipped": self.skipped,
                "left_alone": [{"key": c.key, "value": c.current, "why": c.evidence} for c in self.kept],
            },
            "corpus_norms": [asdict(n) for n in self.norms],
            "finding_kinds": [asdict(k) for k in self.kinds],
            "worst_conversations": [
                {
                    "conversation_id": w.conversation_id,
                    "label": labels.get(w.conversation_id),
                    "score": w.score,
                    "reasons": w.reasons,
                }
                for w in self.worst
            ],
            "strongest_findings": [finding(r) for r in self.strongest],
        }


def strength(f: Finding) -> tuple[int, float]:
    """Severity first, then how far out in its corpus (an unplaced finding counts as the median)."""
    return RANK.get(f.severity, 0), 50.0 if f.percentile is None else f.percentile


def norms(sections: list[Section], conversations: int) -> list[Norm]:
    """The analyzers' own corpus lines, and a plain one for any other kind flagged in most conversations."""
    out = [Norm(s.name, k, t) for s in sections for k, t in s.norms.items()]
    named = {n.kind for n in out}
    for s in sections:
        flagged: dict[str, set[str]] = {}
        for f in s.findings:
            if f.severity != "info":
                flagged.setdefault(f.kind, set()).add(f.conversation_id)
        for kind, convs in flagged.items():
            if kind not in named and conversations >= MIN_CORPUS and len(convs) > MOST * conversations:
                out.append(
                    Norm(s.name, kind, f"{kind.replace('_', ' ')} in {len(convs)} of {conversations} conversations")
                )
    return out


def rank(sections: list[Section], norm_kinds: set[str]) -> list[Ranked]:
    """Every finding a reader should act on (not info, not a corpus norm), one per conversation and kind (a
    finding of no conversation, by its native_id), strongest first."""
    best: dict[tuple[str, str], Ranked] = {}
    for s in sections:
        for f in s.findings:
            if f.severity == "info" or f.kind in norm_kinds:
                continue
            key = (f.conversation_id or f"-{f.native_id}", f.kind)
            if key not in best or strength(f) > strength(best[key].finding):
                best[key] = Ranked(s.name, f)
    return sorted(
        best.values(),
        key=lambda r: (
            *(-x for x in strength(r.finding)),
            r.finding.kind,
            r.finding.summary,
            r.finding.conversation_id,
        ),
    )  # ties by what a reader sees, then the id (it hashes the file's path: another folder, another order)


def strongest(ranked: list[Ranked]) -> list[Ranked]:
    """The first STRONGEST of ``ranked``, at most PER_KIND of a kind while the others have more to show: the
    strongest findings across analyzers, not ten of one rule."""
    picked: list[Ranked] = []
    for cap in (PER_KIND, STRONGEST):
        for r in ranked:
            if (
                len(picked) < STRONGEST
                and r not in picked
                and sum(p.finding.kind == r.finding.kind for p in picked) < cap
            ):
                picked.append(r)
    return sorted(picked, key=ranked.index)


def kinds(sections: list[Section], conversations: int) -> list[KindShare]:
    """Every finding kind with the conversations it fires on, the most frequent first."""
    out = []
    for s in sections:
        convs: dict[str, set[str]] = {}
        counts: Counter[str] = Counter()
        for f in s.findings:
            counts[f.kind] += 1
            convs.setdefault(f.kind, set()).update([f.conversation_id] if f.conversation_id else [])
        out += [
            KindShare(s.name, k, counts[k], len(convs[k]), len(convs[k]) / conversations if conversations else None)
            for k in counts
        ]
    return sorted(out, key=lambda k: (-k.conversations, k.section, k.kind))


def weight(f: Finding, share: float | None) -> float:
    """What one finding says about its conversation: its severity (high 2, low 1), times how rare its kind is (a
    kind on every conversation says nothing of one: log2(1 / share), at most RARE, so one odd finding does not
    outweigh several problems), times how far out it lies in its norm (0.5 at its median, 1 at its end; 0.75
    unplaced)."""
    rarity = min(RARE, math.log2(1 / share)) if share else RARE
    out = 0.75 if f.percentile is None else 0.5 + f.percentile / 200
    return (2 if f.severity == "high" else 1) * max(rarity, 0.25) * out


def weighed(ranked: list[Ranked], done: Collection[Key]) -> list[Ranked]:
    """The findings *Worst conversations* weighs: ``ranked`` without the measurements (``Analyzer.measures``: a
    request read widely, a large or crowded context) of the runs in ``done``, which ended with their work handed over,
    nor those whose turn waits on a process the run started (``done`` holds (conversation id, the finding's first
    position): ``report.build.done``), nor a measurement of breadth (``Analyzer.wide``) where the turn's request asked
    for that breadth (``done`` holds (conversation id, position, kind)). There the measurement is true and says
    nothing went wrong: a run that read 22 files and answered, all done, was third of the real logs' five worst on its
    width and size alone, a Codex coordinator third on the old topic's folder named in its status checks while its
    worker did the new task, and a session asked to turn each finding of a long audit into an issue and fix all of
    them among the five worst on the 60 targets it read. Beside a finding of something that went wrong, or in a run
    cut off, stopped or given up, it still weighs."""
    if not done:
        return ranked
    from forensics import analyzers

    kinds = analyzers.measure_kinds()
    return [
        r
        for r in ranked
        if not (
            r.finding.kind in kinds
            and (
                r.finding.conversation_id in done
                or (
                    r.finding.positions
                    and (
                        (r.finding.conversation_id, min(r.finding.positions)) in done
                        or (r.finding.conversation_id, min(r.finding.positions), r.finding.kind) in done
                    )
                )
            )
        )
    ]


def worst(
    ranked: list[Ranked], shares: dict[str, float | None] | None = None, done: Collection[Key] = ()
) -> list[Worst]:
    """Conversations by the summed weight of their findings (``weight``: one per kind, see ``rank``; the n-th kind of
    one analyzer divided by n, its detectors read the same turns), so findings of several analyzers add up and a
    kind that fires everywhere adds little; a finding of no conversation is in *Strongest findings* only; a
    measurement of a run in ``done`` not at all (``weighed``). Each comes with why: its findings, strongest first,
    and their norms."""
    shares = shares or {}
    per: dict[str, list[Ranked]] = {}
    for r in weighed(ranked, done):
        if r.finding.conversation_id:
            per.setdefault(r.finding.conversation_id, []).append(r)
    # the rule in a reader's words where the analyzer says them, else in its own; one many findings share says less
    # than their summary (a quote)
    generic = Counter(r.finding.said or r.finding.rule for r in ranked)

    def line(f: Finding) -> str:
        why = f.said or f.rule
        return why if why and generic[why] < 2 else f.summary

    def reason(f: Finding) -> str:
        share = shares.get(f.kind)
        fires = "" if share is None else f", fires on {share:.0%} of conversations"
        held = f"; held against {f.among}" if f.among and not f.said else ""
        return f"{f.kind.replace('_', ' ')} ({f.severity}{fires}): {line(f)}{held}"

    scored = []
    for cid, rs in per.items():
        rs = once(rs, shares)
        scored.append(Worst(cid, round(score_of(rs, shares), 3), [reason(r.finding) for r in rs[:3]], rs))
    # a tie is broken by what the reader sees (its reasons), not by the id: ids hash the file's path, so the same logs
    # read from another folder would list another conversation
    return sorted(scored, key=lambda w: (-w.score, w.reasons, w.conversation_id))[:WORST]


def once(rs: list[Ranked], shares: dict[str, float | None]) -> list[Ranked]:
    """One conversation's findings, strongest first, each evidence once: a finding whose kind restates another
    analyzer's kind, read off the same evidence (``Analyzer.restates``: drift's ``tool_result_crowding`` restates
    problems' ``context_crowded``, both the share of tool output in the context), is left out beside a stronger
    finding of the two. Bulky tool output counted twice put a Crush run that only read files third of the real logs'
    five worst."""
    from forensics import analyzers

    same = analyzers.restated()
    kept: list[Ranked] = []
    evidence: set[str] = set()
    for r in sorted(rs, key=lambda r: -weight(r.finding, shares.get(r.finding.kind))):
        read = same.get(r.finding.kind, r.finding.kind)
        if read not in evidence:
            kept.append(r)
            evidence.add(read)
    return kept


def score_of(rs: list[Ranked], shares: dict[str, float | None]) -> float:
    """A conversation's score in *Worst conversations*: its findings' weights, strongest first, each evidence once
    (``once``), the n-th kind of one analyzer divided by n (a second kind of one analyzer mostly re-reads the same
    turns)."""
    seen: Counter[str] = Counter()
    score = 0.0
    for r in once(rs, shares):
        score += weight(r.finding, shares.get(r.finding.kind)) / (1 + seen[r.section])
        seen[r.section] += 1
    return score


def scores(sections: list[Section], conversations: int, done: Collection[Key] = ()) -> dict[str, float]:
    """Every conversation's *Worst conversations* score (those without a ranked finding are absent: 0), the
    ranking the outcome analyzer checks against which runs failed; ``done`` as in ``worst``."""
    ranked = rank(sections, {n.kind for n in norms(sections, conversations)})
    shares: dict[str, float | None] = {k.kind: k.share for k in kinds(sections, conversations)}
    per: dict[str, list[Ranked]] = {}
    for r in weighed(ranked, done):
        if r.finding.conversation_id:
            per.setdefault(r.finding.conversation_id, []).append(r)
    return {cid: score_of(rs, shares) for cid, rs in per.items()}


@dataclass
class Advice:
    """What `forensics tune` recommends, handed to the digest as data by the report's caller (the report layer
    runs no tuner): every key it looked at, over how much."""

    changes: list[Change]  # the keys whose value would change
    checked: int  # tunables the tuners looked at
    tuned_over: str  # "42 conversations, 5260 messages"
    kept: list[Change] = field(default_factory=list)  # the keys left alone, each with why


Recommender = Callable[[duckdb.DuckDBPyConnection, Config, list[str], "str | None"], Advice]
"""(connection, config, analyzers the report ran, questions) -> Advice: run by the report on its own
connection, after the analyzers, so the tuners see the tables they wrote."""


def recommend(
    d: Digest, advice: Advice, cfg: Config, analyzers: list[str], db: str, questions: str | None = None
) -> None:
    """Fill *What to change* from ``advice``: the changes, the TOML to paste and the command that writes it."""
    if not advice.checked:
        d.skipped = (
            f"no tuner sweeps what this report ran ({', '.join(analyzers)}); `forensics tune --db {db}` "
            "gives every recommendation"
        )
        return
    d.changes = sorted(advice.changes, key=lambda c: (not c.harness, c.key))
    d.kept = sorted(advice.kept, key=lambda c: (not c.harness, c.key))
    d.checked, d.tuned_over = advice.checked, advice.tuned_over
    d.toml = toml_lines([c for c in d.changes if c.harness])
    d.toml_drift = toml_lines([c for c in d.changes if not c.harness])
    d.command = (
        f"forensics tune --db {db} --config {cfg.path or 'harness.toml'}"
        + (f" --questions {questions}" if questions else "")
        + " --write"
    )


def toml_lines(cs: list[Change]) -> str:
    import tomlkit

    lines: list[str] = []
    for section in dict.fromkeys(c.key.split(".", 1)[0] for c in cs):
        lines.append(f"[{section}]")
        lines += [
            f"{c.key.split('.', 1)[1]} = {tomlkit.item(c.recommended).as_string()}  # was {c.current!r}"
            for c in cs
            if c.key.startswith(section + ".")
        ]
    return "\n".join(lines)


def build(sections: list[Section], conversations: int, done: Collection[Key] = ()) -> Digest:
    """The digest of ``sections`` over ``conversations``; ``done``: the runs that ended with their work handed over
    (``worst``)."""
    d = Digest()
    d.not_in_use = {k: v for s in sections for k, v in s.not_in_use.items()}
    d.norms = norms(sections, conversations)
    d.kinds = kinds(sections, conversations)
    ranked = rank(sections, {n.kind for n in d.norms})
    d.strongest = strongest(ranked)
    d.worst = worst(ranked, {k.kind: k.share for k in d.kinds}, done)
    return d
