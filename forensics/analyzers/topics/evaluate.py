"""Scoring topic switches against labels: micro P/R/F1 (exact and within ±1 turn), Pk and WindowDiff.

Everything is computed over *judged units*: the judged messages of a conversation in order (for labeled
dialogues with roles user+assistant, every turn). A reference shift on a message that is not judged counts
on the next judged message, where the switch first becomes visible to the detector.

Pk (Beeferman et al. 1999) and WindowDiff (Pevzner & Hearst 2002) slide a window of k units, k = half the
mean reference segment length of that dialogue (rounded half up, at least 1), and are averaged over
dialogues: a long dialogue does not outweigh many short ones. Lower is better; marking nothing scores the
share of windows that straddle a reference boundary, which is the floor a detector has to beat.
"""

from __future__ import annotations

import math
import random
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass


@dataclass(frozen=True)
class Reference:
    """One labeled conversation: its judged positions in order and those that start a topic."""

    key: str  # the label's dialogue id (the conversation's native id)
    units: tuple[int, ...]
    shifts: frozenset[int]


@dataclass(frozen=True)
class Scores:
    """One detector's figures over a set of references."""

    predicted: int
    reference: int
    tp: int
    tp_within1: int
    pk: float | None
    windowdiff: float | None

    @property
    def precision(self) -> float:
        return self.tp / self.predicted if self.predicted else 0.0

    @property
    def recall(self) -> float:
        return self.tp / self.reference if self.reference else 0.0

    @property
    def f1(self) -> float:
        return _f1(self.tp, self.predicted, self.reference)

    @property
    def precision_within1(self) -> float:
        return self.tp_within1 / self.predicted if self.predicted else 0.0

    @property
    def recall_within1(self) -> float:
        return self.tp_within1 / self.reference if self.reference else 0.0

    @property
    def f1_within1(self) -> float:
        return _f1(self.tp_within1, self.predicted, self.reference)

    def as_dict(self) -> dict[str, float | int | None]:
        return {
            "predicted": self.predicted,
            "reference": self.reference,
            "tp": self.tp,
            "precision": self.precision,
            "recall": self.recall,
            "f1": self.f1,
            "tp_within1": self.tp_within1,
            "precision_within1": self.precision_within1,
            "recall_within1": self.recall_within1,
            "f1_within1": self.f1_within1,
            "pk": self.pk,
            "windowdiff": self.windowdiff,
        }


def _f1(tp: int, predicted: int, reference: int) -> float:
    return 2 * tp / (predicted + reference) if predicted + reference else 0.0


def reference(key: str, units: Iterable[int], labeled_shifts: Iterable[int]) -> Reference:
    """Place labeled shifts on judged units: a shift on an unjudged message moves to the next judged one."""
    order = sorted(set(units))
    shifts = set()
    for s in labeled_shifts:
        nxt = next((u for u in order if u >= s), None)
        if nxt is not None and nxt != order[0]:  # the first unit opens the dialogue: never a shift
            shifts.add(nxt)
    return Reference(key, tuple(order), frozenset(shifts))


def window_k(ref: Reference) -> int:
    """Half the mean reference segment length, rounded half up, at least 1."""
    return max(1, math.floor(len(ref.units) / (len(ref.shifts) + 1) / 2 + 0.5))


def _boundaries(ref: Reference, marks: Iterable[int]) -> list[int]:
    s = set(marks)
    return [int(u in s) for u in ref.units]


def pk_windowdiff(ref: Reference, predicted: Iterable[int]) -> tuple[float, float] | None:
    """(Pk, WindowDiff) of one dialogue; None when it is too short to hold one window."""
    k = window_k(ref)
    n = len(ref.units)
    if n <= k:
        return None
    r, h = _boundaries(ref, ref.shifts), _boundaries(ref, predicted)
    pk = wd = 0
    for i in range(n - k):
        rc, hc = sum(r[i + 1 : i + k + 1]), sum(h[i + 1 : i + k + 1])
        pk += (rc > 0) != (hc > 0)
        wd += rc != hc
    return pk / (n - k), wd / (n - k)


def _matches(ref: Reference, predicted: set[int], tolerance: int) -> int:
    """Reference shifts matched one-to-one by a prediction at most ``tolerance`` units away."""
    index = {u: i for i, u in enumerate(ref.units)}
    free = sorted(index[p] for p in predicted if p in index)
    hits = 0
    for r in sorted(index[s] for s in ref.shifts):
        cands = [p for p in free if abs(p - r) <= tolerance]
        if cands:
            best = min(cands, key=lambda p: (abs(p - r), p))
            free.remove(best)
            hits += 1
    return hits


def score(refs: Sequence[Reference], predictions: Mapping[str, Iterable[int]]) -> Scores:
    """Micro P/R/F1 over all references, Pk and WindowDiff averaged over dialogues."""
    predicted = reference_n = tp = tp1 = 0
    pks, wds = [], []
    for ref in refs:
        units = set(ref.units)
        pred = {p for p in predictions.get(ref.key, ()) if p in units and p != ref.units[0]}
        predicted += len(pred)
        reference_n += len(ref.shifts)
        tp += len(pred & ref.shifts)
        tp1 += _matches(ref, pred, 1)
        pw = pk_windowdiff(ref, pred)
        if pw is not None:
            pks.append(pw[0])
            wds.append(pw[1])
    return Scores(
        predicted, reference_n, tp, tp1, sum(pks) / len(pks) if pks else None, sum(wds) / len(wds) if wds else None
    )


# ------------------------------------------------------------------------------------------- baselines


def mark_all(refs: Sequence[Reference]) -> dict[str, set[int]]:
    return {r.key: set(r.units[1:]) for r in refs}


def mark_none(refs: Sequence[Reference]) -> dict[str, set[int]]:
    return {r.key: set() for r in refs}


def mark_random(refs: Sequence[Reference], seed: int = 0) -> dict[str, set[int]]:
    """Each unit after the first marked with probability = the labeled base rate (fixed seed)."""
    eligible = sum(len(r.units) - 1 for r in refs)
    rate = sum(len(r.shifts) for r in refs) / eligible if eligible else 0.0
    rng = random.Random(seed)
    return {r.key: {u for u in r.units[1:] if rng.random() < rate} for r in refs}


def tfidf_cosines(
    refs: Sequence[Reference], tokens: Mapping[str, Mapping[int, list[str]]], window: int = 2
) -> dict[str, dict[int, float]]:
    """Cosine (sublinear TF x smoothed IDF over the judged units) between each unit and the ``window`` before it."""
    df: Counter[str] = Counter()
    n = 0
    for r in refs:
        for u in r.units:
            df.update(set(tokens[r.key].get(u, ())))
            n += 1
    idf = {t: math.log((n + 1) / (c + 1)) + 1 for t, c in df.items()}

    def vec(ts: Iterable[str]) -> dict[str, float]:
        return {t: (1 + math.log(c)) * idf[t] for t, c in Counter(ts).items()}

    out: dict[str, dict[int, float]] = {}
    for r in refs:
        toks = [tokens[r.key].get(u, []) for u in r.units]
        out[r.key] = {
            u: _cosine(vec(toks[i]), vec(t for j in range(max(0, i - window), i) for t in toks[j]))
            for i, u in enumerate(r.units)
            if i
        }
    return out


def _cosine(a: Mapping[str, float], b: Mapping[str, float]) -> float:
    num = sum(v * b.get(t, 0.0) for t, v in a.items())
    den = math.sqrt(sum(v * v for v in a.values()) * sum(v * v for v in b.values()))
    return num / den if den else 0.0


def tuned_threshold(
    refs: Sequence[Reference], values: Mapping[str, Mapping[int, float]], higher_is_switch: bool
) -> tuple[float, Scores]:
    """The threshold on a per-unit value that maximises exact F1 (ties: the more conservative one)."""
    sign = 1.0 if higher_is_switch else -1.0
    items = sorted(
        ((sign * v, u in r.shifts) for r in refs for u, v in values.get(r.key, {}).items() if u != r.units[0]),
        key=lambda x: -x[0],
    )
    total = sum(len(r.shifts) for r in refs)
    best_f1, best_i, tp = -1.0, -1, 0
    for i, (v, hit) in enumerate(items):  # marking the i+1 highest values
        tp += hit
        if i + 1 < len(items) and items[i + 1][0] == v:
            continue  # a threshold cannot split equal values
        f1 = _f1(tp, i + 1, total)
        if f1 > best_f1 + 1e-12:
            best_f1, best_i = f1, i
    th = sign * items[best_i][0] if best_i >= 0 else (1.0 if higher_is_switch else 0.0)
    pred = {
        r.key: {u for u, v in values.get(r.key, {}).items() if (v >= th if higher_is_switch else v <= th)} for r in refs
    }
    return th, score(refs, pred)
