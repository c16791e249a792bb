"""The per-model compliance state machine (docs/definitions.md#sentinel-compliance; the seed harness's evaluateReply), replayed over history.

The probe must stay silent on models that never comply (a probe users learn to ignore is worse than none),
so only a model that has produced a Healthy reply is *known compliant* and can raise an alarm; a model with
no Healthy reply among its first ``window`` judged replies is Muted for good, across new conversations.
For a known-compliant model the first non-Healthy reply of a conversation latches that conversation as
degraded; only a new conversation starts clean.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from forensics.analyzers.sentinel.verdict import HEALTHY
from forensics.kernel.errors import ForensicsError

# what the probe did with one reply
OK, UNKNOWN, ALARM, DEGRADED, MUTED = "healthy", "unknown", "alarm", "degraded", "muted"
OUTCOMES = (OK, UNKNOWN, ALARM, DEGRADED, MUTED)


def compliance_key(provider: str | None, model: str | None) -> str:
    """``provider/model`` with ``/`` and ``\\`` replaced by ``_`` (the seed's sanitizeKey for QSettings groups)."""
    key = f"{provider or 'unknown'}/{model or 'unknown'}"
    return key.replace("/", "_").replace("\\", "_")


@dataclass
class ModelState:
    """What the probe remembers about one compliance key."""

    judged: int = 0  # judged replies seen so far
    known_compliant: bool = False
    muted: bool = False
    muted_at: int | None = None  # judged-reply ordinal (0-based) whose verdict muted the model
    healthy_after_mute: int = 0  # Healthy replies the mute ignored: evidence of a false mute


@dataclass
class ComplianceTracker:
    """Feed final replies in time order; ``observe`` answers what the probe did with each."""

    window: int = 3
    models: dict[str, ModelState] = field(default_factory=dict)
    onsets: dict[str, int] = field(default_factory=dict)  # conversation -> position that latched it degraded

    def __post_init__(self) -> None:
        if self.window < 1:
            raise ForensicsError(f"sentinel.compliance_window must be at least 1, got {self.window}")

    def observe(self, key: str, conversation: str, position: int, status: str) -> str:
        """The outcome of one judged reply: healthy, unknown (model not yet known), alarm (this reply latches
        its conversation), degraded (a further miss in a latched conversation) or muted."""
        m = self.models.setdefault(key, ModelState())
        ordinal, m.judged = m.judged, m.judged + 1
        if m.muted:
            m.healthy_after_mute += status == HEALTHY
            return MUTED
        if status == HEALTHY:
            m.known_compliant = True
            return OK
        if m.known_compliant:
            if conversation in self.onsets:
                return DEGRADED
            self.onsets[conversation] = position
            return ALARM
        if ordinal + 1 >= self.window:  # the window is spent without one Healthy reply
            m.muted, m.muted_at = True, ordinal
        return UNKNOWN
