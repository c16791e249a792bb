"""Secret detection measured (docs/secrets.md#the-exposure-ledger-which-secret-where-seen-by-whom, issue 45): precision and recall per rule family on a planted corpus
(bench/secrets_corpus.py), ours beside detect-secrets (its plugins and default filters) and gitleaks' rules.

    python bench/secret_recall.py              # dev half, held-out half, all; per family; the near-misses flagged
    python bench/secret_recall.py --misses     # also every planted secret ours missed and every near-miss it flagged

A planted secret is **found** by a scanner when one of its finds overlaps the secret where it stands in the text
(for a secret wrapped over two lines, either part); ours is also scored **masked** (no 12 characters of it left
unmasked: what ingest needs). A find that overlaps no planted secret is a false positive; precision is found
secrets over found secrets plus false positives. A near-miss sample holds no secret, so any find in it is false.

detect-secrets: ``scan_line`` on each line with its default settings (every plugin, the high-entropy ones
included; the default filters); a find's place is its value's place on its line, else the whole line.
gitleaks: its rule set (bench/gitleaks/gitleaks.toml, vendored under its MIT licence, never read by forensics)
run by a small Python re-implementation of its matching: keywords, regex, secret group, entropy, the global and
per-rule allowlists (regexes, stopwords). Not its decoder (base64/percent decoding, gitleaks 8.20+), nor its
path rules. The trivial references: find nothing; find every token of 20 or more letters and digits.
"""

from __future__ import annotations

import argparse
import math
import re
import sys
import tomllib
from collections import Counter, defaultdict
from collections.abc import Callable
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
# run as a script, this file's folder comes first on the path, where this module would stand in for the standard
# library's `secrets`: the folder is taken off, the repository put on
sys.path[:] = [str(ROOT)] + [p for p in sys.path if Path(p or ".").resolve() != Path(__file__).resolve().parent]

from bench.secrets_corpus import Sample, corpus, held_out  # noqa: E402
from forensics.kernel import secret_rules as ours  # noqa: E402

GITLEAKS = Path(__file__).resolve().parent / "gitleaks" / "gitleaks.toml"
PIECE = 12


@dataclass(frozen=True)
class Find:
    start: int
    end: int
    kind: str


Scanner = Callable[[str], list[Find]]


def scan_ours(text: str) -> list[Find]:
    """As ingest scans a cell: the prefilter (polars, Rust's regex) picks the groups, then the scan runs on them."""
    import polars as pl

    cell = pl.Series([text], dtype=pl.String)
    only = [k for k, p in enumerate(ours.prefilter()) if cell.str.contains(p)[0]]
    return [Find(f.start, f.end, f.kind) for f in ours.scan(text, only)] if only else []


def scan_detect_secrets(text: str) -> list[Find]:
    from detect_secrets.core.scan import scan_line
    from detect_secrets.settings import default_settings

    out = []
    with default_settings():
        pos = 0
        for line in text.split("\n"):
            for s in scan_line(line):
                v = s.secret_value or ""
                at = line.find(v) if len(v) >= 8 else -1
                out.append(Find(pos + at, pos + at + len(v), s.type) if at >= 0 else Find(pos, pos + len(line), s.type))
            pos += len(line) + 1
    return out


def _go_regex(p: str) -> str:
    """Go RE2 syntax in Python's: ``\\z`` is ``\\Z``; a flag group ``(?i)`` after the start applies to the rest
    of its enclosing group, so it becomes ``(?i:...)`` up to that group's end."""
    p = p.replace(r"\z", r"\Z")
    while True:
        at = p.find("(?i)", 1)
        if at < 0:
            return p
        depth, i = 0, at + 4
        while i < len(p):
            c = p[i]
            if c == "\\":
                i += 2
                continue
            if c == "[":  # a character class: skip to its end
                i += 1
                if i < len(p) and p[i] == "^":
                    i += 1
                if i < len(p) and p[i] == "]":
                    i += 1
                while i < len(p) and p[i] != "]":
                    i += 2 if p[i] == "\\" else 1
            elif c == "(":
                depth += 1
            elif c == ")":
                if depth == 0:
                    break
                depth -= 1
            elif c == "|" and depth == 0:
                break  # Go's flag holds to the group's end, past an alternation; close it here, a narrow case
            i += 1
        p = p[:at] + "(?i:" + p[at + 4 : i] + ")" + p[i:]


@dataclass
class GlRule:
    id: str
    rx: re.Pattern[str]
    keywords: tuple[str, ...]
    entropy: float
    group: int
    allow: list[tuple[str, list[re.Pattern[str]], list[str], str]]  # (target, regexes, stopwords, condition)


def _allow(spec: dict) -> tuple[str, list[re.Pattern[str]], list[str], str]:
    return (
        spec.get("regexTarget", "secret"),
        [re.compile(_go_regex(x)) for x in spec.get("regexes", [])],
        [w.lower() for w in spec.get("stopwords", [])],
        spec.get("condition", "OR"),
    )


@lru_cache(maxsize=1)
def gitleaks_rules() -> tuple[list[GlRule], tuple[str, list[re.Pattern[str]], list[str], str]]:
    import warnings

    warnings.filterwarnings("ignore", "Possible nested set", FutureWarning)  # Go's [[...] is a literal [ here too
    cfg = tomllib.loads(GITLEAKS.read_text())
    out = []
    for r in cfg["rules"]:
        if "regex" not in r:
            continue  # a path-only rule (pkcs12 files)
        out.append(
            GlRule(
                r["id"],
                re.compile(_go_regex(r["regex"])),
                tuple(k.lower() for k in r.get("keywords", [])),
                float(r.get("entropy", 0)),
                int(r.get("secretGroup", 0)),
                [_allow(a) for a in r.get("allowlists", [])],
            )
        )
    return out, _allow(cfg.get("allowlist", {}))


def _entropy(s: str) -> float:
    n = len(s)
    return -sum(c / n * math.log2(c / n) for c in Counter(s).values()) if n else 0.0


def _allowed(a: tuple[str, list[re.Pattern[str]], list[str], str], secret: str, match: str, line: str) -> bool:
    target, regexes, stopwords, condition = a
    subject = {"secret": secret, "match": match, "line": line}.get(target, secret)
    hits = []
    if regexes:
        hits.append(any(rx.search(subject) for rx in regexes))
    if stopwords:
        hits.append(any(w in secret.lower() for w in stopwords))
    if not hits:
        return False
    return all(hits) if condition == "AND" else any(hits)


def scan_gitleaks(text: str) -> list[Find]:
    rules, glob = gitleaks_rules()
    low = text.lower()
    out = []
    for r in rules:
        if r.keywords and not any(k in low for k in r.keywords):
            continue
        for m in r.rx.finditer(text):
            g = r.group or next((i for i in range(1, (m.re.groups or 0) + 1) if m.group(i)), 0)
            secret, start, end = m.group(g), m.start(g), m.end(g)
            if r.entropy and _entropy(secret) < r.entropy:
                continue
            ls = text.rfind("\n", 0, m.start()) + 1
            le = text.find("\n", m.end())
            line = text[ls : le if le >= 0 else len(text)]
            if _allowed(glob, secret, m.group(0), line) or any(_allowed(a, secret, m.group(0), line) for a in r.allow):
                continue
            out.append(Find(start, end, r.id))
    return out


TOKEN = re.compile(r"[A-Za-z0-9_\-+/=.]{20,}")


def scan_every_token(text: str) -> list[Find]:
    return [
        Find(m.start(), m.end(), "token")
        for m in TOKEN.finditer(text)
        if re.search(r"[A-Za-z]", m.group()) and re.search(r"\d", m.group())
    ]


SCANNERS: dict[str, Scanner] = {
    "ours": scan_ours,
    "detect-secrets": scan_detect_secrets,
    "gitleaks": scan_gitleaks,
    "every long token": scan_every_token,
    "nothing": lambda text: [],
}


def _spans(s: Sample, secret: str) -> list[tuple[int, int]]:
    """Where a planted secret stands: its lines' parts when it is wrapped."""
    at = s.text.find(secret)
    out, pos = [], at
    for part in secret.split("\n"):
        out.append((pos, pos + len(part)))
        pos += len(part) + 1
    return out


def _masked(text: str, secret: str, finds: list[Find]) -> bool:
    """No 12 characters of the secret left outside every find."""
    at = text.find(secret)
    covered = [False] * len(secret)
    for f in finds:
        for i in range(max(f.start, at), min(f.end, at + len(secret))):
            covered[i - at] = True
    run = 0
    for c, ch in zip(covered, secret):
        run = 0 if c or ch == "\n" else run + 1
        if run >= PIECE:
            return False
    return True


@dataclass
class Tally:
    planted: int = 0
    found: int = 0
    masked: int = 0
    false: int = 0

    def recall(self) -> float | None:
        return self.found / self.planted if self.planted else None

    def precision(self) -> float | None:
        return self.found / (self.found + self.false) if self.found + self.false else None


def score(samples: list[Sample], scan: Scanner) -> tuple[dict[str, Tally], dict[str, int], list[str], list[str]]:
    """Per family: planted, found, masked, false finds (a false find is charged to the family whose secrets its
    kind finds most often); per near-miss kind: samples flagged; and the misses and false finds, by sample id."""
    fams: dict[str, Tally] = defaultdict(Tally)
    flagged: dict[str, int] = Counter()
    kind_family: dict[str, Counter[str]] = defaultdict(Counter)
    false_kinds: list[tuple[str, str]] = []
    missed, falsely = [], []
    for s in samples:
        finds = scan(s.text)
        used = set()
        for secret in s.secrets:
            t = fams[s.family]
            t.planted += 1
            spans = _spans(s, secret)
            hit = [f for f in finds if any(f.start < e and f.end > b for b, e in spans)]
            used.update(hit)
            if hit:
                t.found += 1
                for f in hit:
                    kind_family[f.kind][s.family] += 1
                t.masked += _masked(s.text, secret, finds)
            else:
                missed.append(s.id)
        extra = [f for f in finds if f not in used]
        if not s.positive and extra:
            flagged[s.family.split(":", 1)[1]] += 1
        for f in extra:
            false_kinds.append((f.kind, s.id))
            falsely.append(f"{s.id}: {f.kind} {s.text[f.start : f.end][:60]!r}")
    for kind, _ in false_kinds:
        fam = kind_family[kind].most_common(1)[0][0] if kind_family[kind] else "other"
        fams[fam].false += 1
    return fams, flagged, missed, falsely


def _pct(v: float | None) -> str:
    return "   –  " if v is None else f"{v:6.3f}"


def report(samples: list[Sample], title: str, misses: bool = False) -> dict[str, tuple[float | None, float | None]]:
    results = {name: score(samples, scan) for name, scan in SCANNERS.items()}
    families = sorted({s.family for s in samples if s.positive})
    nears = Counter(s.family.split(":", 1)[1] for s in samples if not s.positive)
    print(
        f"\n== {title}: {sum(len(s.secrets) for s in samples)} planted secrets in "
        f"{sum(s.positive for s in samples)} samples, {sum(nears.values())} near-misses"
    )
    names = list(SCANNERS)
    print(f"{'family':<12}{'n':>5}  " + "  ".join(f"{n[:16]:>16} R / P " for n in names))
    totals: dict[str, tuple[float | None, float | None]] = {}
    for fam in [*families, "other", "ALL"]:
        row = []
        n = 0
        for name in names:
            fams = results[name][0]
            if fam == "ALL":
                t = Tally(*(sum(getattr(x, k) for x in fams.values()) for k in ("planted", "found", "masked", "false")))
                totals[name] = (t.recall(), t.precision())
            else:
                t = fams.get(fam, Tally())
            n = t.planted
            row.append(f"{_pct(t.recall())} / {_pct(t.precision())}")
        if fam == "other" and all("–" in r.split("/")[1] for r in row):
            continue
        print(f"{fam:<12}{n:>5}  " + "  ".join(f"{r:>22}" for r in row))
    t = Tally(
        *(sum(getattr(x, k) for x in results["ours"][0].values()) for k in ("planted", "found", "masked", "false"))
    )
    print(f"ours, masked whole (no {PIECE} characters left): {t.masked}/{t.planted} = {t.masked / t.planted:.3f}")
    print(
        "near-misses flagged (samples), by kind: "
        + "; ".join(
            f"{k} /{nears[k]}: " + ", ".join(f"{n} {results[n][1].get(k, 0)}" for n in names[:3]) for k in sorted(nears)
        )
    )
    by_context: dict[str, list[int]] = defaultdict(lambda: [0, 0])
    missed = set(results["ours"][2])
    for s in samples:
        if s.positive:
            by_context[s.context][0] += 1
            by_context[s.context][1] += s.id not in missed
    print("ours, recall by context: " + ", ".join(f"{c} {f}/{n}" for c, (n, f) in sorted(by_context.items())))
    if misses:
        print("ours missed: " + ", ".join(results["ours"][2]))
        print("ours, false finds:\n  " + "\n  ".join(results["ours"][3]))
    return totals


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--misses", action="store_true", help="list ours' misses and false finds")
    args = ap.parse_args()
    samples = corpus()
    dev = [s for s in samples if not held_out(s)]
    held = [s for s in samples if held_out(s)]
    report(dev, "dev half", args.misses)
    report(held, "held-out half", args.misses)
    totals = report(samples, "all")
    r, p = totals["ours"]
    ok = r is not None and p is not None and r >= 0.95 and p >= 0.95
    print(f"\ntarget recall >= 0.95 and precision >= 0.95: ours {r:.3f} / {p:.3f}: {'met' if ok else 'missed'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
