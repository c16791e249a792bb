"""`make bench`: forensics at a million messages, measured beside the anchors it must beat (issue 7).

Generates the corpora once into ``bench/.cache/`` (gen_corpus.py from ``../shared``), then runs every step
``--repeat`` times, round-robin so that machine drift hits every step alike, each step in its own child
process. Prints medians, peak RSS and the target ratios computed from figures of this same run (wall
clock on a shared machine drifts; ratios measured side by side hold), and writes the result as JSON into
``bench/results/``.

Adding a step is one entry in STEPS (and one in TARGETS when it has a target).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(HERE))
from measure import Sample, run  # noqa: E402  (bench/ is a folder of scripts, not a package)

SHARED = Path(os.environ.get("FORENSICS_SHARED", ROOT.parent / "shared"))
PY = sys.executable


@dataclass(frozen=True)
class Paths:
    cache: Path

    @property
    def db(self) -> Path:
        return self.cache / "bench.db"

    @property
    def sessions(self) -> Path:
        return self.cache / "sessions"

    @property
    def grown_db(self) -> Path:
        """1 % more conversations (another seed): what a report after a day of new logs has to read."""
        return self.cache / "grown.db"

    def warehouse(self, name: str) -> Path:
        return self.cache / f"{name}.duckdb"

    @property
    def lake(self) -> Path:
        return self.cache / "lake"


@dataclass(frozen=True)
class Step:
    """One measured command. ``fresh`` names a warehouse deleted before each run (a first ingest)."""

    name: str
    what: str
    argv: Callable[[Paths], list[str]]
    fresh: str | None = None
    max_runs: int | None = None  # for a step that takes minutes: fewer runs than --repeat
    min_runs: int | None = None  # for a step that takes a blink: more runs than --repeat (its median is noisy)
    setup: Callable[[Paths], None] | None = None  # before each run, not timed


FOUR = "baseline,compression,drift,sentinel"  # the analyzers that run per conversation, on either engine


def _forensics(*args: str) -> list[str]:
    return [PY, "-m", "forensics", *args]


def _anchor(name: str, arg: Callable[[Paths], Path]) -> Callable[[Paths], list[str]]:
    return lambda p: [PY, str(HERE / "anchors.py"), name, str(arg(p))]


def _grow(p: Paths) -> None:
    """A copy of bench.db's reported warehouse with 1 % new conversations imported (not timed)."""
    for suffix in ("", ".wal"):
        Path(str(p.warehouse("grown")) + suffix).unlink(missing_ok=True)
    shutil.copy(p.warehouse("sqlite"), p.warehouse("grown"))
    subprocess.run(
        _forensics("ingest", str(p.grown_db), "--db", str(p.warehouse("grown"))),
        check=True,
        stdout=subprocess.DEVNULL,
        env={**os.environ, "CI": "true", "PYTHONPATH": str(ROOT)},
        cwd=ROOT,
    )


BLINK = 15  # runs of a step that takes a fraction of a second

STEPS: list[Step] = [
    Step("import_click", "anchor: python -c 'import click'", lambda p: [PY, "-c", "import click"], min_runs=BLINK),
    Step("help", "forensics --help", lambda p: _forensics("--help"), min_runs=BLINK),
    Step("version", "forensics --version", lambda p: _forensics("--version"), min_runs=BLINK),
    Step("naive", "anchor: sqlite3 + json.loads + Python baseline counts", _anchor("naive", lambda p: p.db)),
    Step("io_floor", "anchor: fetch every messages string from SQLite", _anchor("io", lambda p: p.db)),
    Step(
        "read_json", "anchor: DuckDB read_json over sessions/, same counts", _anchor("read_json", lambda p: p.sessions)
    ),
    Step(
        "ingest_sqlite",
        "forensics ingest bench.db (first time)",
        lambda p: _forensics("ingest", str(p.db), "--db", str(p.warehouse("sqlite"))),
        fresh="sqlite",
    ),
    Step(
        "reingest_sqlite",
        "forensics ingest bench.db (unchanged)",
        lambda p: _forensics("ingest", str(p.db), "--db", str(p.warehouse("sqlite"))),
    ),
    Step(
        "ingest_jsonl",
        "forensics ingest sessions/ (first time)",
        lambda p: _forensics("ingest", str(p.sessions), "--db", str(p.warehouse("jsonl"))),
        fresh="jsonl",
    ),
    Step(
        "reingest_jsonl",
        "forensics ingest sessions/ (unchanged)",
        lambda p: _forensics("ingest", str(p.sessions), "--db", str(p.warehouse("jsonl"))),
    ),
    Step(
        "report_baseline",
        "forensics report --only baseline (on bench.db's warehouse)",
        lambda p: _forensics(
            "report", "--db", str(p.warehouse("sqlite")), "--only", "baseline", "--out", str(p.cache / "reports")
        ),
    ),
    Step(
        "report_baseline_json",
        "the same, metrics.json only (the analysis without drawing charts)",
        lambda p: _forensics(
            "report",
            "--db",
            str(p.warehouse("sqlite")),
            "--only",
            "baseline",
            "--format",
            "json",
            "--out",
            str(p.cache / "reports"),
        ),
    ),
    Step(
        "report_full",
        "forensics report, every analyzer, first time (topics tokenizes and stores the terms)",
        lambda p: _forensics("report", "--db", str(p.warehouse("sqlite")), "--out", str(p.cache / "reports")),
        max_runs=1,
    ),
    Step(
        "report_full_again",
        "forensics report, every analyzer, again (topics reads the stored terms)",
        lambda p: _forensics("report", "--db", str(p.warehouse("sqlite")), "--out", str(p.cache / "reports")),
        max_runs=1,
    ),
    Step(
        "report_grown",
        "forensics report, every analyzer, after 1 % new conversations (on a copy)",
        lambda p: _forensics("report", "--db", str(p.warehouse("grown")), "--out", str(p.cache / "reports-grown")),
        max_runs=1,
        setup=_grow,
    ),
    # docs/scale.md#spark-the-analyzers-and-the-named-queries-tested: the lake, then the per-conversation analyzers on DuckDB and on Spark local[2] over it (after
    # report_full: the lake carries its topic switches, which drift type 4 reads on both engines)
    Step(
        "export_lake",
        "forensics export --format parquet (bench.db's reported warehouse -> lake/)",
        lambda p: _forensics("export", "--db", str(p.warehouse("sqlite")), "--out", str(p.lake), "--overwrite"),
    ),
    Step(
        "report_four",
        "forensics report --only " + FOUR + " --format json (DuckDB, the warehouse)",
        lambda p: _forensics(
            "report",
            "--db",
            str(p.warehouse("sqlite")),
            "--only",
            FOUR,
            "--format",
            "json",
            "--out",
            str(p.cache / "reports-duckdb"),
        ),
    ),
    Step(
        "report_spark",
        "the same with --engine spark --lake lake/ --spark-master local[2]",
        lambda p: _forensics(
            "report",
            "--engine",
            "spark",
            "--lake",
            str(p.lake),
            "--spark-master",
            "local[2]",
            "--format",
            "json",
            "--out",
            str(p.cache / "reports-spark"),
        ),
        max_runs=1,
    ),
]


@dataclass(frozen=True)
class Target:
    """``step``'s median (seconds, or peak tree RSS in MB) must be at most ``limit`` x ``anchor``'s (or ``limit``)."""

    label: str
    step: str
    limit: float
    anchor: str | None = None
    metric: str = "seconds"  # seconds | rss_mb


TARGETS: list[Target] = [  # issue 28's table first, in its order, then the earlier rounds' targets
    Target("ingest bench.db ≤ 2 × naive loop (masking included)", "ingest_sqlite", 2.0, "naive"),  # issue 46
    Target("ingest sessions/ ≤ 3 × read_json floor", "ingest_jsonl", 3.0, "read_json"),  # issue 46
    Target("report --only baseline ≤ 0.1 × naive loop", "report_baseline", 0.1, "naive"),
    Target("full report (first) ≤ 10 × naive loop", "report_full", 10, "naive"),
    Target("full report (again) ≤ 2 × naive loop", "report_full_again", 2, "naive"),
    Target("report after 1 % new conversations ≤ 3 × naive", "report_grown", 3, "naive"),
    Target("peak memory full report (first) ≤ 500 MB", "report_full", 500, metric="rss_mb"),
    Target("peak memory full report (again) ≤ 500 MB", "report_full_again", 500, metric="rss_mb"),
    Target("forensics --help ≤ 3 × import click", "help", 3, "import_click"),
    Target("forensics --version ≤ 3 × import click", "version", 3, "import_click"),
    Target("peak memory ingest bench.db ≤ 500 MB", "ingest_sqlite", 500, metric="rss_mb"),
    Target("peak memory ingest sessions/ ≤ 500 MB", "ingest_jsonl", 500, metric="rss_mb"),
    Target("re-ingest bench.db ≤ 0.1 × first", "reingest_sqlite", 0.1, "ingest_sqlite"),
    Target("re-ingest sessions/ ≤ 0.1 × first", "reingest_jsonl", 0.1, "ingest_jsonl"),
    Target("report --only baseline, json only ≤ 0.1 × naive", "report_baseline_json", 0.1, "naive"),
    Target("Spark local[2] report ≤ 10 × DuckDB report (4 analyzers)", "report_spark", 10, "report_four"),
]
TERMINAL_ONLY = "baseline,compression,drift"  # the terminal check's report: a line per analyzer expected
SIZE_LIMIT = 1.2  # warehouse bytes / source bytes


@dataclass
class StepResult:
    name: str
    what: str
    samples: list[Sample] = field(default_factory=list)

    @property
    def seconds(self) -> float:
        return statistics.median(s.seconds for s in self.samples)

    @property
    def runs(self) -> int:
        return len(self.samples)

    @property
    def cpu_s(self) -> float:
        return statistics.median(s.cpu_s for s in self.samples)

    @property
    def rss_mb(self) -> float:
        return max(s.tree_rss_mb for s in self.samples)

    @property
    def max_process_mb(self) -> float:
        return max(s.max_rss_mb for s in self.samples)


def generate(paths: Paths, conversations: int) -> None:
    """Build the two corpora once (deterministic: seed 1, bench profile); kept until `make clean-bench`."""
    gen = SHARED / "bench" / "gen_corpus.py"
    if not gen.exists() and not (paths.db.exists() and paths.sessions.exists() and paths.grown_db.exists()):
        sys.exit(f"bench: {gen} not found; set FORENSICS_SHARED to the shared/ folder")
    paths.cache.mkdir(parents=True, exist_ok=True)
    common = ["--profile", "bench", "--seed", "1"]
    if not paths.db.exists():
        print(f"generating {paths.db} ...", file=sys.stderr)
        subprocess.run(
            [PY, str(gen), "sqlite", str(paths.db), "--conversations", str(conversations), *common], check=True
        )
    if not paths.grown_db.exists():
        subprocess.run(
            [
                PY,
                str(gen),
                "sqlite",
                str(paths.grown_db),
                "--conversations",
                str(max(1, conversations // 100)),
                "--profile",
                "bench",
                "--seed",
                "2",
            ],
            check=True,
        )
    if not paths.sessions.exists():
        print(f"generating {paths.sessions}/ ...", file=sys.stderr)
        tmp = paths.cache / "sessions.tmp"
        shutil.rmtree(tmp, ignore_errors=True)
        subprocess.run([PY, str(gen), "jsonl", str(tmp), "--sessions", str(conversations), *common], check=True)
        (tmp / "labels.jsonl").rename(paths.cache / "sessions.labels.jsonl")  # not a session: keep it out
        tmp.rename(paths.sessions)


def measure(paths: Paths, steps: list[Step], repeat: int) -> list[StepResult]:
    env = {**os.environ, "CI": "true", "PYTHONPATH": str(ROOT)}
    results = {s.name: StepResult(s.name, s.what) for s in steps}
    for r in range(max([repeat, *(s.min_runs or 0 for s in steps)])):
        for s in steps:
            if r >= (s.max_runs if s.max_runs is not None else max(repeat, s.min_runs or 0)):
                continue
            if s.fresh:
                for suffix in ("", ".wal"):
                    Path(str(paths.warehouse(s.fresh)) + suffix).unlink(missing_ok=True)
            if s.setup:
                s.setup(paths)
            sample = run(s.argv(paths), env=env, cwd=ROOT)
            results[s.name].samples.append(sample)
            print(
                f"  run {r + 1}/{repeat} {s.name:16} {sample.seconds:7.2f} s {sample.cpu_s:7.2f} CPU s "
                f"{sample.tree_rss_mb:7.0f} MB",
                file=sys.stderr,
            )
    return list(results.values())


def sizes(paths: Paths) -> dict[str, dict[str, float]]:
    src = {"sqlite": paths.db.stat().st_size, "jsonl": sum(f.stat().st_size for f in paths.sessions.glob("*.jsonl"))}
    out = {}
    for name, nbytes in src.items():
        wh = paths.warehouse(name)
        if wh.exists():
            out[name] = {
                "source_mb": nbytes / 1e6,
                "warehouse_mb": wh.stat().st_size / 1e6,
                "ratio": wh.stat().st_size / nbytes,
            }
    return out


def verdicts(results: list[StepResult], size: dict[str, dict[str, float]]) -> list[dict[str, object]]:
    by = {r.name: r for r in results}
    out: list[dict[str, object]] = []
    for t in TARGETS:
        if t.step not in by or (t.anchor and t.anchor not in by):
            continue
        value = by[t.step].rss_mb if t.metric == "rss_mb" else by[t.step].seconds
        ratio = value / by[t.anchor].seconds if t.anchor else value
        # the same ratio in CPU seconds: on a machine others load, wall time stretches and CPU time holds
        cpu = by[t.step].cpu_s / by[t.anchor].cpu_s if t.anchor and by[t.anchor].cpu_s else None
        out.append(
            {
                "target": t.label,
                "value": round(ratio, 3),
                "limit": t.limit,
                "met": ratio <= t.limit,
                "cpu_ratio": None if cpu is None else round(cpu, 3),
            }
        )
    for name, s in size.items():
        out.append(
            {
                "target": f"warehouse size ({name}) ≤ {SIZE_LIMIT} × source",
                "value": round(s["ratio"], 3),
                "limit": SIZE_LIMIT,
                "met": s["ratio"] <= SIZE_LIMIT,
            }
        )
    return out


def terminal(paths: Paths) -> dict[str, object] | None:
    """Issue 28's last row: `report` on a terminal prints a progress line per analyzer (stderr on a pseudo-terminal,
    CI unset); the value is the lines seen, the limit the analyzers run. None: no warehouse to report on."""
    import pty
    import re

    if not paths.warehouse("sqlite").exists():
        return None
    master, slave = pty.openpty()
    env = {k: v for k, v in os.environ.items() if k != "CI"} | {"PYTHONPATH": str(ROOT)}
    proc = subprocess.Popen(
        _forensics(
            "report",
            "--db",
            str(paths.warehouse("sqlite")),
            "--only",
            TERMINAL_ONLY,
            "--format",
            "json",
            "--out",
            str(paths.cache / "reports-terminal"),
        ),
        stdout=subprocess.DEVNULL,
        stderr=slave,
        env=env,
        cwd=ROOT,
    )
    os.close(slave)
    seen = b""
    while True:
        try:
            data = os.read(master, 4096)
        except OSError:  # EIO: the report is done and its terminal closed
            break
        if not data:
            break
        seen += data
    os.close(master)
    proc.wait()
    expected = len(TERMINAL_ONLY.split(","))
    lines = [
        line
        for line in seen.decode(errors="replace").splitlines()
        if re.match(r"forensics: \S+ +\d+\.\d s  \(\d+/\d+\)", line)
    ]
    return {
        "target": "report on a terminal: a line per analyzer",
        "value": len(lines),
        "limit": expected,
        "met": len(lines) == expected and proc.returncode == 0,
    }


def same_figures(paths: Paths) -> str | None:
    """Whether every figure of the Spark report's metrics.json is the DuckDB report's (None: one did not run)."""
    files = [paths.cache / d / "metrics.json" for d in ("reports-duckdb", "reports-spark")]
    if not all(f.exists() for f in files):
        return None
    local, spark = (figures(json.loads(f.read_text())) for f in files)
    differ = sorted(k for k in local.keys() | spark.keys() if local.get(k) != spark.get(k))
    if not differ:
        return f"every figure of metrics.json equal ({len(local)} figures; {FOUR})"
    return f"DIFFERENT: {len(differ)} of {len(local)} figures, e.g. " + ", ".join(differ[:5])


# what names the engine in a metrics.json, or only a warehouse has (its import tally, the tuners, the cache's
# tally); tests/test_spark.py compares with these
ENGINE_KEYS = {
    "engine",
    "lake",
    "spark_master",
    "warehouse",
    "generated_at",
    "reused",
    "data_quality",
    "what_to_change",
}


def figures(x: object, path: str = "") -> dict[str, object]:
    """Every figure of a metrics.json (the engine's own keys left out) as path -> value."""
    if isinstance(x, dict):
        keep = {k: v for k, v in x.items() if path or k not in ENGINE_KEYS}
        return {k: v for key, val in keep.items() for k, v in figures(val, f"{path}.{key}").items()}
    if isinstance(x, list):
        return {k: v for i, val in enumerate(x) for k, v in figures(val, f"{path}[{i}]").items()} or {path: []}
    return {path: x}


def python_share(paths: Paths) -> dict[str, int] | None:
    """How many rows of bench.db the importer parses in Python rather than in DuckDB (bench/python_path.py)."""
    done = subprocess.run(
        [PY, str(HERE / "python_path.py"), str(paths.db)],
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        cwd=ROOT,
    )
    return json.loads(done.stdout) if done.returncode == 0 else None


def machine() -> dict[str, object]:
    cpu = next(
        (
            line.split(":", 1)[1].strip()
            for line in Path("/proc/cpuinfo").read_text().splitlines()
            if line.startswith("model name")
        ),
        platform.processor(),
    )
    mem = int(Path("/proc/meminfo").read_text().split()[1]) / (1 << 20)
    import duckdb
    import polars

    return {
        "cpu": cpu,
        "cores": os.cpu_count(),
        "ram_gb": round(mem, 1),
        "python": platform.python_version(),
        "duckdb": duckdb.__version__,
        "polars": polars.__version__,
        "os": platform.platform(),
    }


def table(results: list[StepResult], checks: list[dict[str, object]], naive: float | None) -> str:
    lines = [f"{'step':17} {'median s':>9} {'÷ naive':>8} {'CPU s':>7} {'tree MB':>8} {'max proc MB':>12} runs  what"]
    for r in results:
        ratio = f"{r.seconds / naive:8.2f}" if naive else f"{'':8}"
        lines.append(
            f"{r.name:17} {r.seconds:9.2f} {ratio} {r.cpu_s:7.2f} {r.rss_mb:8.0f} {r.max_process_mb:12.0f}"
            f" {r.runs:4}  {r.what}"
        )
    lines.append(
        "(tree MB: peak PSS of the whole process tree; max proc MB: peak RSS of its largest process; "
        "CPU s: user + system, whole tree)"
    )
    lines += ["", f"{'target':48} {'measured':>9} {'limit':>7}  verdict  {'in CPU s':>8}"]
    for c in checks:
        cpu = f"{c['cpu_ratio']:8.3f}" if c.get("cpu_ratio") is not None else ""
        lines.append(
            f"{c['target']:48} {c['value']:9.3f} {c['limit']:7} {'  met    ' if c['met'] else '  MISSED '}{cpu}"
        )
    lines.append(
        "(measured: the ratio of wall-clock medians, or MB; in CPU s: the same ratio in CPU seconds of the "
        "whole process tree)"
    )
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    ap.add_argument("--repeat", type=int, default=3, help="runs per step; the table shows medians")
    ap.add_argument("--conversations", type=int, default=4000, help="corpus size (4000 = ~1M messages)")
    ap.add_argument("--cache", type=Path, default=HERE / ".cache", help="where the corpora and warehouses live")
    ap.add_argument(
        "--only",
        help="comma-separated step names (anchors are cheap: include them for ratios); "
        "'terminal' for the progress-line check",
    )
    a = ap.parse_args(argv)
    paths = Paths(a.cache)
    generate(paths, a.conversations)
    steps = [s for s in STEPS if not a.only or s.name in a.only.split(",")]
    started = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
    results = measure(paths, steps, a.repeat)
    size = sizes(paths)
    checks = verdicts(results, size)
    if not a.only or "terminal" in a.only.split(","):
        term = terminal(paths)
        checks += [term] if term else []
    naive = next((r.seconds for r in results if r.name == "naive"), None)
    info = machine()
    print(
        f"forensics bench, {started}, {info['cpu']} ({info['cores']} cores, {info['ram_gb']} GB), "
        f"Python {info['python']}, DuckDB {info['duckdb']}; medians of {a.repeat} runs"
    )
    print(table(results, checks, naive))
    for name, s in size.items():
        print(f"{name}: source {s['source_mb']:.0f} MB -> warehouse {s['warehouse_mb']:.0f} MB ({s['ratio']:.2f} ×)")
    python = python_share(paths) if any(r.name == "ingest_sqlite" for r in results) else None
    if python:
        print(
            f"sqlite: {python['rows_python']} of {python['rows']} rows ({python['messages_python']} of "
            f"{python['messages']} messages) of an unusual shape for the DuckDB parse, which is "
            + ("on: they took Python" if python["in_duckdb"] else "off (sqlite.IN_DUCKDB): every row took Python")
        )
    same = same_figures(paths)
    if same is not None:
        print(f"Spark and DuckDB reports: {same}")
    out = HERE / "results" / f"bench-{started.replace(':', '')}.json"
    out.parent.mkdir(exist_ok=True)
    out.write_text(
        json.dumps(
            {
                "started": started,
                "machine": info,
                "repeat": a.repeat,
                "steps": [
                    {
                        "name": r.name,
                        "what": r.what,
                        "median_s": r.seconds,
                        "cpu_s": r.cpu_s,
                        "peak_tree_pss_mb": r.rss_mb,
                        "max_process_mb": r.max_process_mb,
                        "samples": [asdict(s) for s in r.samples],
                    }
                    for r in results
                ],
                "sizes": size,
                "targets": checks,
                "sqlite_python_path": python,
            },
            indent=2,
        )
    )
    print(f"wrote {out.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
