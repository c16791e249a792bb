"""Norms per agent (issue 24): a drift figure is judged against conversations of the same kind, never a pool.

A pool of unlike agents makes one agent's normal work another's outlier: a customer-service agent's requests read
one record each, so a pooled fence of 6 made every coding agent's request "wide". So a figure is held against
its **kind**: the log format (the agent that wrote it, ``sources.format``), a sub-agent's transcript apart from
its parent's (it is handed one task), and the model within the format where that alone has enough values.

Too few values of a kind: no norm is fitted (a fence over four sessions is noise) and the rule's documented
default applies instead; the finding says which (``Norm.text``). The seed's thresholds are a norm only for the
seed harness they were written for (``SEED_FORMATS``). And a drift kind flagged in most conversations
of one agent (``MIN_AGENT_CONVERSATIONS`` or more) is that agent's way of working: it is said once, as a norm
line, not as a finding per conversation (``agents_where_most``).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass

from forensics.analyzers.drift.corpus import Distribution
from forensics.text.agents import agent_name

MIN_VALUES = 20  # values of one kind before its fence is fitted (Tukey's fence over fewer says little)
MIN_CONVERSATIONS = 5  # ... coming from at least this many conversations: one long session is no norm
MIN_AGENT_CONVERSATIONS = 5  # conversations of one agent before "most of them" is a property of the agent
SEED_FORMATS = (
    "sqlite",
    "jsonl",
)  # the seed harness's own stores: the kind of agent the seed harness's thresholds describe


def kind_of(fmt: str | None, sub_agent: bool = False) -> str:
    """The kind of agent a conversation is: its log format, a sub-agent's transcript apart."""
    return f"{fmt or 'unknown'}{' sub-agent' if sub_agent else ''}"


@dataclass(frozen=True)
class Norm:
    kind: str  # "codex", "codex gpt-5-codex", "claude-code sub-agent"
    what: str  # "requests", "conversations"
    fence: float | None  # None: too few values, the rule's default applies
    values: int
    conversations: int

    @property
    def agent(self) -> str:
        """The kind of agent as a reader says it ("Codex CLI", "Claude Code's sub-agents")."""
        return agent_name(self.kind)

    def learned(self) -> str:
        """Where a fitted norm came from, in a reader's words: "learned from its 450 requests in 30 conversations"."""
        unit = self.what.split(" ")[0]  # "requests with tool calls" -> "requests"
        if self.what == "conversations":
            return f"learned from its {_count(self.values, 'conversation')}"
        return f"learned from its {self.values} {unit} in {_count(self.conversations, 'conversation')}"

    def said(self, measure: str, default: str) -> str:
        """Which norm a finding was held against, in a reader's words (the finding's line; ``text`` is the rule's
        detail): ``measure`` what the norm would have learned ("the usual width of a request"), ``default``
        what applies without one ("the default limit of 10 targets applies").

        "Codex CLI: only 1 conversation (5 needed) to learn the usual width of a request, so the default limit of 10
        targets applies"; with a norm: "judged against the runs of Codex CLI (learned from its 450 requests in
        30 conversations)"."""
        if self.fence is not None:
            return f"judged against the runs of {self.agent} ({self.learned()})"
        unit = self.what.split(" ")[0].rstrip("s")  # "requests with tool calls" -> "request"
        if self.what != "conversations" and self.values < MIN_VALUES:
            few = f"only {_count(self.values, unit)} ({MIN_VALUES} needed)"
        elif self.what != "conversations":
            few = f"only {_count(self.conversations, 'conversation')} ({MIN_CONVERSATIONS} needed)"
        else:
            few = f"only {_count(self.values, 'conversation')} ({MIN_VALUES} needed)"
        return f"{self.agent}: {few} to learn {measure}, so {default}"

    def text(self, default: str) -> str:
        """Which norm a finding was held against, in the rule's own terms (its detail, one click away; ``said`` is
        what the finding's line says)."""
        if self.fence is not None:
            return f"{self.kind}'s norm: fence {self.fence:.3g} over {self.values} {self.what}" + (
                f" of {self.conversations} conversations" if self.what != "conversations" else ""
            )
        if self.what == "conversations":
            return f"no norm for {self.kind} ({self.values} conversations, fewer than {MIN_VALUES}): {default}"
        return (
            f"no norm for {self.kind} ({self.values} {self.what} of {self.conversations} conversations, fewer "
            f"than {MIN_VALUES} of {MIN_CONVERSATIONS}): {default}"
        )


def _count(n: int, unit: str) -> str:
    return f"{n} {unit}{'' if n == 1 else 's'}"


def fit(rows: Iterable[tuple[str, str | None, str, float | None]], what: str) -> dict[tuple[str, str | None], Norm]:
    """Per (kind, model) the norm its values are held against: the model's own fence where that model has
    enough values, else its kind's, else none. ``rows``: (kind, model, conversation_id, value)."""
    by_kind: dict[str, list[tuple[str | None, str, float]]] = defaultdict(list)
    for kind, model, cid, v in rows:
        if v is not None:
            by_kind[kind].append((model, cid, float(v)))
    out: dict[tuple[str, str | None], Norm] = {}
    for kind, vals in by_kind.items():
        whole = _norm(kind, what, vals)
        for model in {m for m, _, _ in vals}:
            own = _norm(f"{kind} {model}", what, [v for v in vals if v[0] == model]) if model else whole
            out[(kind, model)] = own if own.fence is not None else whole
    return out


def _norm(kind: str, what: str, vals: list[tuple[str | None, str, float]]) -> Norm:
    convs = len({c for _, c, _ in vals})
    enough = len(vals) >= MIN_VALUES and convs >= MIN_CONVERSATIONS
    return Norm(kind, what, Distribution([v for _, _, v in vals]).fence() if enough else None, len(vals), convs)


def agents_where_most(flagged: dict[str, set[str]], conversations: dict[str, str]) -> dict[str, tuple[int, int]]:
    """Agents (kinds) on most of whose conversations a drift kind fired: kind -> (flagged, conversations).
    ``flagged``: kind -> flagged conversation ids; ``conversations``: conversation id -> kind."""
    sizes: dict[str, int] = defaultdict(int)
    for kind in conversations.values():
        sizes[kind] += 1
    return {
        k: (len(c), sizes[k])
        for k, c in flagged.items()
        if sizes[k] >= MIN_AGENT_CONVERSATIONS and len(c) > sizes[k] / 2
    }
