"""`forensics check`: compare today's metrics with a committed baseline and fail CI on a regression.

The baseline file (JSON) lists, per flat metric key (``section.key.sub`` as in metrics.json), the value,
the better direction (lower / higher / equal) and a tolerance (absolute, or relative to the baseline value).
"""

from __future__ import annotations

import fnmatch
import os
from dataclasses import dataclass
from pathlib import Path
from textwrap import fill
from typing import Any
from xml.sax.saxutils import escape, quoteattr

import orjson

from forensics import analyzers
from forensics.analyzers.declare import CheckRule
from forensics.kernel.columns import middle, terminal_width
from forensics.kernel.errors import ForensicsError

BASELINE_SCHEMA = 1
DIRECTIONS = ("lower", "higher", "equal")
# Default better-direction and tolerance per key pattern, used when a baseline is first written: each analyzer's
# declared rules (``Analyzer.checks``) in report order, then these general ones (any analyzer's shares, precision
# and segmentation errors). First match wins; keys matching nothing are "equal" within 5 % (a change there deserves
# a look).
GENERAL: list[CheckRule] = [
    CheckRule("*.healthy_share", "higher", 0.02, False),
    CheckRule("*.degraded_share", "lower", 0.02, False),
    CheckRule("*precision*", "higher", 0.02, False),
    CheckRule("*recall*", "higher", 0.02, False),
    CheckRule("*f1*", "higher", 0.02, False),
    CheckRule("*.pk*", "lower", 0.02, False),
    CheckRule("*.windowdiff*", "lower", 0.02, False),
    CheckRule("*tool_share*", "lower", 0.02, False),
]


def defaults() -> list[CheckRule]:
    return analyzers.check_rules() + GENERAL


@dataclass(frozen=True)
class Rule:
    value: float | None
    better: str
    tolerance: float
    relative: bool

    def allowed(self) -> float:
        base = abs(self.value or 0.0)
        return self.tolerance * base if self.relative else self.tolerance


@dataclass(frozen=True)
class Verdict:
    key: str
    baseline: float | None
    now: float | None
    delta: float | None
    verdict: str  # ok | better | regressed | missing | new | not in use
    rule: Rule | None
    why: str = ""  # not in use: why the analyzer had nothing to read

    @property
    def failed(self) -> bool:
        return self.verdict in ("regressed", "missing")


def default_rule(key: str, value: float) -> Rule:
    for r in defaults():
        if fnmatch.fnmatchcase(key, r.pattern):
            return Rule(value, r.better, r.tolerance, r.relative)
    return Rule(value, "equal", 0.05, True)


def load_baseline(path: str | os.PathLike[str]) -> dict[str, Rule]:
    p = Path(path)
    if not p.exists():
        raise ForensicsError(f"{p}: no baseline file; write one with `forensics report --write-baseline {p}`")
    try:
        doc = orjson.loads(p.read_bytes())
        rules = {}
        for key, r in doc["metrics"].items():
            better = r.get("better", "equal")
            if better not in DIRECTIONS:
                raise ValueError(f"{key}: better must be one of {', '.join(DIRECTIONS)}")
            rules[key] = Rule(
                None if r.get("value") is None else float(r["value"]),
                better,
                float(r.get("tolerance", 0.0)),
                bool(r.get("relative", False)),
            )
        return rules
    except (orjson.JSONDecodeError, KeyError, TypeError, ValueError, AttributeError) as e:
        raise ForensicsError(
            f'{p}: not a valid baseline file ({e}); expected {{"metrics": {{key: {{"value", '
            '"better", "tolerance"}}}}}}'
        ) from None


def baseline_document(figures: dict[str, float], keep: dict[str, Rule] | None = None) -> dict[str, Any]:
    """A baseline from current figures; rules already in ``keep`` keep their direction and tolerance."""
    metrics = {}
    for key, value in sorted(figures.items()):
        old = (keep or {}).get(key)
        r = Rule(value, old.better, old.tolerance, old.relative) if old else default_rule(key, value)
        metrics[key] = {"value": value, "better": r.better, "tolerance": r.tolerance, "relative": r.relative}
    return {"schema_version": BASELINE_SCHEMA, "metrics": metrics}


def write_baseline(path: str | os.PathLike[str], doc: dict[str, Any]) -> None:
    Path(path).write_bytes(orjson.dumps(doc, option=orjson.OPT_INDENT_2) + b"\n")


def idle(key: str, not_in_use: dict[str, str]) -> str | None:
    """Why the metric ``key`` is not in use (its analyzer, or the part of it, had nothing to read), or None."""
    return next((why for p, why in not_in_use.items() if key == p or key.startswith(p + ".")), None)


def compare(
    rules: dict[str, Rule], figures: dict[str, float], not_in_use: dict[str, str] | None = None
) -> list[Verdict]:
    """Each baseline rule against today's figure; a metric of an analyzer ``not_in_use`` (prefix -> why) is
    skipped with its reason: neither a pass nor a regression."""
    out = []
    for key, rule in rules.items():
        why = idle(key, not_in_use or {})
        if why is not None:
            out.append(Verdict(key, rule.value, None, None, "not in use", rule, why))
            continue
        now = figures.get(key)
        if now is None:
            out.append(Verdict(key, rule.value, None, None, "missing", rule))
            continue
        if rule.value is None:
            out.append(Verdict(key, None, now, None, "ok", rule))
            continue
        delta = now - rule.value
        tol = rule.allowed() + 1e-12
        worse = {"lower": delta > tol, "higher": delta < -tol, "equal": abs(delta) > tol}[rule.better]
        better = {"lower": delta < -tol, "higher": delta > tol, "equal": False}[rule.better]
        out.append(Verdict(key, rule.value, now, delta, "regressed" if worse else "better" if better else "ok", rule))
    return out


def junit(verdicts: list[Verdict]) -> str:
    """JUnit XML of the verdicts, one testcase per metric (a regression a failure): `forensics check --junit`."""
    fails = sum(v.failed for v in verdicts)
    cases = []
    for v in verdicts:
        body = ""
        if v.failed:
            msg = (
                f"{v.key}: baseline {v.baseline}, now {v.now}, delta {v.delta}; better is "
                f"{v.rule.better if v.rule else '?'} within {v.rule.allowed() if v.rule else 0:g}"
            )
            body = f"<failure message={quoteattr(msg)} type={quoteattr(v.verdict)}>{escape(msg)}</failure>"
        elif v.verdict == "not in use":
            body = f"<skipped message={quoteattr(f'not in use: {v.why}')}/>"
        cases.append(f'  <testcase classname="forensics.commands.check" name={quoteattr(v.key)}>{body}</testcase>')
    return (
        f'<?xml version="1.0" encoding="utf-8"?>\n<testsuite name="forensics check" tests="{len(verdicts)}" '
        f'failures="{fails}" errors="0" skipped="{sum(v.verdict == "not in use" for v in verdicts)}">\n'
        + "\n".join(cases)
        + "\n</testsuite>\n"
    )


def table(verdicts: list[Verdict]) -> str:
    """The verdicts as the table `forensics check` prints: metric, baseline, now, delta, verdict (a regression in capitals)."""

    def f(x: float | None) -> str:
        return "–" if x is None else f"{x:.6g}"

    rows = [("metric", "baseline", "now", "delta", "verdict")] + [
        (
            v.key,
            f(v.baseline),
            f(v.now),
            ("+" if (v.delta or 0) > 0 else "") + f(v.delta),
            v.verdict.upper() if v.failed else v.verdict,
        )
        for v in verdicts
    ]
    w = [max(len(r[i]) for r in rows) for i in range(5)]
    # on a terminal the metric's name gives way (its middle elided: its section and its figure stay), never a figure
    w[0] = max(len(rows[0][0]), min(w[0], terminal_width() - sum(w[1:]) - 2 * 4))
    lines = ["  ".join(middle(c, w[0]).ljust(w[0]) if i == 0 else c.rjust(w[i]) for i, c in enumerate(r)) for r in rows]
    n = sum(v.failed for v in verdicts)
    skipped: dict[str, list[str]] = {}
    for v in verdicts:
        if v.verdict == "not in use":
            skipped.setdefault(v.why, []).append(v.key.rsplit(".", 1)[0])
    lines.append(
        f"{len(verdicts)} metrics: {n} regressed, {sum(v.verdict == 'better' for v in verdicts)} better"
        + (f", {sum(map(len, skipped.values()))} skipped as not in use" if skipped else "")
    )
    lines += [  # wrapped at a terminal's width (issue 47), whole on a pipe
        fill(
            f"not in use ({', '.join(sorted({k.split('.')[0] for k in keys}))}, {len(keys)} metrics): {why}",
            terminal_width(),
            subsequent_indent="  ",
            break_long_words=False,
            break_on_hyphens=False,
        )
        for why, keys in skipped.items()
    ]
    return "\n".join(lines)
