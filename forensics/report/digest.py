"""The answer first: what to change, the worst conversations and the strongest findings, before any table.

Nothing here measures anything. *What to change* is what `forensics tune` recommends (its tuners, over the
whole warehouse, on the report's connection, handed in by the report's caller as a ``Recommender``); the rankings order the sections' own findings. Strength is
judged against the corpus: a kind that fires on most conversations (or that an analyzer names in
``Section.norms``) is a property of the corpus, said once in one line and left out of the rankings; within
a severity, a finding further out in its corpus's distribution (its percentile) ranks first.
"""
from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from typing import Any

import duckdb

from forensics.analyzers.base import Finding, Section
from forensics.config import Config

RANK = {"info": 0, "low": 1, "high": 2}
WORST = 5  # conversations in *Worst conversations*
STRONGEST = 10  # findings in *Strongest findings*
PER_KIND = 3  # ... at most this many of one kind while other kinds have findings to show
MOST = 0.5  # a kind flagged in more than this share of the conversations is a property of the corpus
MIN_CORPUS = 10  # ... of a selection of at least this many (three conversations are no corpus)


@dataclass
class Change:
    key: str
    current: Any
    recommended: Any
    evidence: str
    effect: str

    @property
    def harness(self) -> bool:
        """A key the harness reads; ``[drift]`` keys are this tool's own detector thresholds."""
        return not self.key.startswith("drift.")


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

    def as_dict(self, labels: dict[str, str]) -> dict[str, Any]:
        def finding(r: Ranked) -> dict[str, Any]:
            return {"section": r.section, "label": labels.get(r.finding.conversation_id), **asdict(r.finding)}

        return {"what_to_change": {"changes": [{**asdict(c), "harness": c.harness} for c in self.changes],
                                   "tunables_checked": self.checked,
                                   "tuned_over": self.tuned_over, "toml": self.toml, "toml_drift": self.toml_drift,
                                   "command": self.command,
                                   "skipped": self.skipped},
                "corpus_norms": [asdict(n) for n in self.norms],
                "worst_conversations": [{"conversation_id": w.conversation_id, "label": labels.get(w.conversation_id),
                                         "score": w.score, "reasons": w.reasons} for w in self.worst],
                "strongest_findings": [finding(r) for r in self.strongest]}


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
                out.append(Norm(s.name, kind, f"{kind.replace('_', ' ')} in {len(convs)} of {conversations} "
                                              "conversations"))
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
    return sorted(best.values(), key=lambda r: (*(-x for x in strength(r.finding)), r.finding.kind,
                                                r.finding.conversation_id))


def strongest(ranked: list[Ranked]) -> list[Ranked]:
    """The first STRONGEST of ``ranked``, at most PER_KIND of a kind while the others have more to show: the
    strongest findings across analyzers, not ten of one rule."""
    picked: list[Ranked] = []
    for cap in (PER_KIND, STRONGEST):
        for r in ranked:
            if len(picked) < STRONGEST and r not in picked and sum(p.finding.kind == r.finding.kind
                                                                  for p in picked) < cap:
                picked.append(r)
    return sorted(picked, key=ranked.index)


def worst(ranked: list[Ranked]) -> list[Worst]:
    """Conversations by the weight of their findings (high 3, low 1, plus how far out each is); a finding of no
    conversation is in *Strongest findings* only."""
    per: dict[str, list[Ranked]] = {}
    for r in ranked:
        if r.finding.conversation_id:
            per.setdefault(r.finding.conversation_id, []).append(r)
    generic = Counter(r.finding.rule for r in ranked)  # a rule many findings share says less than their summary

    def line(f: Finding) -> str:
        return f.rule if f.rule and generic[f.rule] < 2 else f.summary

    scored = []
    for cid, rs in per.items():
        score = weight(rs)
        reasons = [f"{r.finding.kind.replace('_', ' ')} ({r.finding.severity}): {line(r.finding)}" for r in rs[:2]]
        scored.append(Worst(cid, round(score, 3), reasons, rs))
    return sorted(scored, key=lambda w: (-w.score, w.conversation_id))[:WORST]


def weight(rs: list[Ranked]) -> float:
    """A conversation's score in *Worst conversations*: high 3, low 1, plus how far out each finding is."""
    return sum((3 if r.finding.severity == "high" else 1) + strength(r.finding)[1] / 100 for r in rs)


def scores(sections: list[Section], conversations: int) -> dict[str, float]:
    """Every conversation's *Worst conversations* score (those without a ranked finding are absent: 0), the
    ranking the outcome analyzer checks against which runs failed."""
    ranked = rank(sections, {n.kind for n in norms(sections, conversations)})
    per: dict[str, list[Ranked]] = {}
    for r in ranked:
        if r.finding.conversation_id:
            per.setdefault(r.finding.conversation_id, []).append(r)
    return {cid: weight(rs) for cid, rs in per.items()}


@dataclass
class Advice:
    """What `forensics tune` recommends, handed to the digest as data by the report's caller (the report layer
    runs no tuner): every key it looked at, over how much."""

    changes: list[Change]  # the keys whose value would change
    checked: int  # tunables the tuners looked at
    tuned_over: str  # "42 conversations, 5260 messages"


Recommender = Callable[[duckdb.DuckDBPyConnection, Config, list[str], bool, "str | None"], Advice]
"""(connection, config, analyzers the report ran, topics_fresh, questions) -> Advice: run by the report on its own
connection, after the analyzers, so the tuners see the tables they wrote."""


def recommend(d: Digest, advice: Advice, cfg: Config, analyzers: list[str], db: str, questions: str | None = None) -> None:
    """Fill *What to change* from ``advice``: the changes, the TOML to paste and the command that writes it."""
    if not advice.checked:
        d.skipped = (f"no tuner sweeps what this report ran ({', '.join(analyzers)}); `forensics tune --db {db}` "
                     "gives every recommendation")
        return
    d.changes = sorted(advice.changes, key=lambda c: (c.key.startswith("drift."), c.key))
    d.checked, d.tuned_over = advice.checked, advice.tuned_over
    d.toml = toml_lines([c for c in d.changes if c.harness])
    d.toml_drift = toml_lines([c for c in d.changes if not c.harness])
    d.command = (f"forensics tune --db {db} --config {cfg.path or 'harness.toml'}"
                 + (f" --questions {questions}" if questions else "") + " --write")


def toml_lines(cs: list[Change]) -> str:
    import tomlkit

    lines: list[str] = []
    for section in dict.fromkeys(c.key.split(".", 1)[0] for c in cs):
        lines.append(f"[{section}]")
        lines += [f"{c.key.split('.', 1)[1]} = {tomlkit.item(c.recommended).as_string()}  # was {c.current!r}"
                  for c in cs if c.key.startswith(section + ".")]
    return "\n".join(lines)


def build(sections: list[Section], conversations: int) -> Digest:
    d = Digest()
    d.norms = norms(sections, conversations)
    ranked = rank(sections, {n.kind for n in d.norms})
    d.strongest = strongest(ranked)
    d.worst = worst(ranked)
    return d
