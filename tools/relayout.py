"""The package layout of issue 40 (importers -> ingest pipeline + formats; the root modules into named packages).

    python tools/relayout.py move       # from the old layout: git mv, split the registry, rewrite every file
    python tools/relayout.py rewrite F.. # only rewrite imports and module names in the files given (a branch
                                         # that still names the old modules: run it over its changed files)

The rewrite is a table of old module -> new module applied to import lines, dotted names ("module:function"
strings, docs) and file paths; re-running it over already rewritten text changes nothing.
"""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

INGEST = "ingestion"  # forensics.ingest is the public ingest() function: the package cannot take its name
PIPELINE = ["discover", "run", "load", "mask", "registry", "locations", "outcome_labels"]
KIT = ["model", "records", "values", "stream", "fastpath", "duckparse", "grades"]
FORMATS = [
    "agentbench",
    "aider",
    "chatgpt",
    "claude_ai",
    "claude_code",
    "cline",
    "codex",
    "continue_dev",
    "cursor",
    "decision_memory",
    "dialogues",
    "gemini_cli",
    "inspect_ai",
    "jsonl",
    "mint",
    "open_webui",
    "openai_chat",
    "openhands",
    "otel",
    "sqlite",
    "swe_agent",
    "tau2",
    "terminal_bench",
]
PACKAGED = {
    "claude_code": [("claude_code_history", "history")],
    "codex": [("codex_history", "history")],
    "openhands": [("openhands_store", "store"), ("openhands_v1", "v1")],
    "otel": [("otel_spans", "spans"), ("otel_messages", "messages")],
}

# old dotted module (below forensics.) -> new dotted module
MODULES: dict[str, str] = {}
for m in PIPELINE:
    MODULES[f"importers.{m}"] = f"{INGEST}.{m}"
MODULES["importers.formats"] = f"{INGEST}.catalog"
for m in KIT:
    MODULES[f"importers.{m}"] = f"formats.kit.{m}"
for m in FORMATS:
    MODULES[f"importers.{m}"] = f"formats.{m}"
    for old, new in PACKAGED.get(m, []):
        MODULES[f"importers.{old}"] = f"formats.{m}.{new}"
for m in ["errors", "redact", "secrets", "batch", "workers", "nopandas", "selection"]:
    MODULES[m] = f"kernel.{m}"
for m in ["labels", "queries"]:
    MODULES[m] = f"warehouse.{m}"
MODULES["compress"] = "text.compress"
for m in ["check", "show", "export", "summary", "output"]:
    MODULES[m] = f"commands.{m}"
MODULES["importers"] = INGEST  # the package itself (docs)
# issue 40 item 6, after the move: modules renamed so that no name clashes (a stdlib module's, a sibling
# package's, a function its own package exports) and caches are called caches. `rewrite` applies these too
# (to dotted names with their ``forensics.`` prefix and to paths), `move` does not (it rebuilds the move only).
RENAMED = {
    "kernel.secrets": "kernel.secret_rules",
    "text.tokenize": "text.tokenizer",
    "analyzers.jsonl": "analyzers.input_jsonl",
    "serve.markdown": "serve.message_markdown",
    "serve.run": "serve.server",
    "formats.otel.messages": "formats.otel.span_messages",
    "analyzers.skills.propose": "analyzers.skills.proposals",
    "analyzers.sentinel.classify": "analyzers.sentinel.verdict",
    "analyzers.failures.differences": "analyzers.failures.contrast",
    "report.kept": "report.cache",
}
REWRITE = {**{k: RENAMED.get(v, v) for k, v in MODULES.items()}, **RENAMED}
# the Format declaration moved out of the registry (the formats import it; the registry detects with it)
DECLARE = {
    "Format",
    "Probe",
    "Side",
    "Chunks",
    "Chunker",
    "Sniff",
    "connect_ro",
    "SNIFF_BYTES",
    "SNIFF_LINES",
    "SQLITE_MAGIC",
    "ZIP_MAGIC",
}


def file_of(dotted: str) -> str:
    """forensics/<path>.py of a new dotted module (a format package's module is its __init__)."""
    parts = dotted.split(".")
    if parts[0] == "formats" and len(parts) == 2 and parts[1] in PACKAGED:
        return f"forensics/formats/{parts[1]}/__init__.py"
    return "forensics/" + "/".join(parts) + ".py"


def old_file(dotted: str) -> str:
    return "forensics/" + dotted.replace(".", "/") + ".py"


_KEYS = sorted((k for k in REWRITE if k != "importers"), key=len, reverse=True)
_DOTTED = re.compile(r"(?<![\w.])(forensics\.)?(" + "|".join(re.escape(k) for k in _KEYS) + r"|importers)(?![\w])")
_PATHS = re.compile(r"(?<![\w.])(forensics/)?(" + "|".join(re.escape(k.replace(".", "/")) for k in _KEYS) + r")\.py\b")
_FROM_PKG = re.compile(r"^(\s*)from forensics(\.importers)? import ([\w ,]+?)(\s*#.*)?$")
_FROM_REGISTRY = re.compile(r"^(\s*)from forensics\.importers\.registry import ([\w ,]+?)(\s*#.*)?$")


def _dotted(m: re.Match[str]) -> str:
    prefix, key = m.group(1), m.group(2)
    if key == "importers":
        return f"forensics.{INGEST}" if prefix else m.group(0)
    if not prefix and not key.startswith("importers."):
        return m.group(0)  # a bare word like "errors" or "labels" is no module name
    return (prefix or "") + REWRITE[key]


def _path(m: re.Match[str]) -> str:
    prefix, key = m.group(1), m.group(2).replace("/", ".")
    if not prefix and not key.startswith("importers."):
        return m.group(0)
    new = file_of(REWRITE[key])
    return new if prefix else new.removeprefix("forensics/")


def _names(text: str) -> list[tuple[str, str | None]]:
    out = []
    for part in text.split(","):
        bits = part.split()
        out.append((bits[0], bits[2] if len(bits) == 3 else None))
    return out


def _from_line(line: str) -> str | None:
    """``from forensics[.importers] import a, b as c`` naming moved modules, regrouped by their new packages;
    ``from forensics.importers.registry import ...`` split between the registry and the Format declaration."""
    m = _FROM_REGISTRY.match(line)
    if m:
        indent, names, comment = m.group(1), _names(m.group(2)), m.group(3) or ""
        groups = {
            "forensics.formats.kit.declare": [n for n in names if n[0] in DECLARE],
            f"forensics.{INGEST}.registry": [n for n in names if n[0] not in DECLARE],
        }
        return _emit(indent, groups, comment)
    m = _FROM_PKG.match(line)
    if not m:
        return None
    indent, pkg, names, comment = m.group(1), m.group(2), _names(m.group(3)), m.group(4) or ""
    base = "importers." if pkg else ""
    if not any(base + n in REWRITE for n, _ in names):
        return None
    groups: dict[str, list[tuple[str, str | None]]] = {}
    for name, alias in names:
        key = base + name
        if key in REWRITE:
            parent, _, leaf = REWRITE[key].rpartition(".")
            groups.setdefault(f"forensics.{parent}" if parent else "forensics", []).append(
                (leaf, alias or (name if leaf != name else None))
            )
        else:
            groups.setdefault("forensics" + (".importers" if pkg else ""), []).append((name, alias))
    return _emit(indent, groups, comment)


def _emit(indent: str, groups: dict[str, list[tuple[str, str | None]]], comment: str) -> str:
    lines = []
    for module, names in groups.items():
        if names:
            listed = ", ".join(f"{n} as {a}" if a and a != n else n for n, a in sorted(names, key=lambda x: x[0]))
            lines.append(f"{indent}from {module} import {listed}")
    lines[0] += comment
    return "\n".join(lines)


def rewrite(text: str) -> str:
    out = []
    for line in text.split("\n"):
        new = _from_line(line)
        out.append(new if new is not None else line)
    text = "\n".join(out)
    text = text.replace('_M = "forensics.importers."', '_M = "forensics.formats."')
    text = _DOTTED.sub(_dotted, text)
    text = _PATHS.sub(_path, text)
    text = text.replace("python -m forensics.apiref", "python docs/apiref.py")
    text = text.replace("from forensics.apiref import", "from docs.apiref import")
    return text


def git(*args: str) -> None:
    subprocess.run(["git", *args], cwd=ROOT, check=True)


def mv(old: str, new: str) -> None:
    (ROOT / new).parent.mkdir(parents=True, exist_ok=True)
    git("mv", old, new)


PACKAGE_DOCS = {
    "forensics/kernel/__init__.py": '"""The shared kernel: what every layer may import (errors, redaction and secret rules, the batch\n'
    'process settings and worker processes, the selection). It imports nothing else of forensics."""\n',
    "forensics/commands/__init__.py": '"""The commands\' library code below ``forensics.api``: `forensics check`, `show`, `export`, the ingest\n'
    'summary and the query output writers."""\n',
    "forensics/formats/kit/__init__.py": '"""What a format is written with: the declaration (``declare``: Format, Probe, Side), the model of a\n'
    "conversation (``model``), the columnar records (``records``) and the shared parsers (``values``,\n"
    '``stream``, ``fastpath``, ``duckparse``, ``grades``)."""\n',
}
INGEST_DOC = '''"""The ingest pipeline: every log format read into the warehouse, lossless (each line or row imported, skipped
and counted, or quarantined with its raw bytes and a reason).

``catalog`` names the built-in formats (so the CLI offers them without importing one); ``registry`` lists them
(built-in and plug-ins through the ``forensics.formats`` entry point) and picks one per file; ``discover`` expands
paths into sources; ``run`` is the orchestrator `forensics ingest` calls; ``load`` writes the parsed batches into
DuckDB; ``mask`` masks secrets on the way. The formats themselves are ``forensics.formats``.
"""
'''


def move() -> None:
    for key, new in MODULES.items():
        if key == "importers":
            continue
        mv(old_file(key), file_of(new))
    mv("forensics/formats.py", "forensics/_formats_api.py")  # the plug-in API becomes the formats package's face
    mv("forensics/_formats_api.py", "forensics/formats/__init__.py")
    mv("forensics/config.py", "forensics/config/__init__.py")
    mv("forensics/apiref.py", "docs/apiref.py")
    mv("forensics/importers/__init__.py", f"forensics/{INGEST}/__init__.py")
    (ROOT / f"forensics/{INGEST}/__init__.py").write_text(INGEST_DOC)
    for path, doc in PACKAGE_DOCS.items():
        (ROOT / path).write_text(doc)
        git("add", path)
    _split_registry()
    _fix_queries_root()
    _contracts()
    _registry_users()
    files = subprocess.run(["git", "ls-files"], cwd=ROOT, check=True, capture_output=True, text=True).stdout.split()
    for name in files:
        if _rewritable(name):
            p = ROOT / name
            text = p.read_text(encoding="utf-8")
            new = rewrite(text)
            if new != text:
                p.write_text(new, encoding="utf-8")
    subprocess.run(
        [
            sys.executable,
            "-m",
            "ruff",
            "check",
            "--fix",
            "--select",
            "I",
            "forensics",
            "tests",
            "bench",
            "docs",
            "notebooks",
            "tools",
        ],
        cwd=ROOT,
        check=False,
        capture_output=True,
    )


def _rewritable(name: str) -> bool:
    if name.startswith(("docs/notes/", "notes/", "tools/relayout.py", "fixtures/")):
        return False
    return name.endswith((".py", ".md", ".toml", ".ipynb", ".sql", ".cfg", ".yml", ".yaml", ".txt")) or name in (
        "Makefile",
        ".ci/run",
    )


def _split_registry() -> None:
    """registry.py -> formats/kit/declare.py (Side, Chunks, Format, Probe, connect_ro: what a format declares)
    and ingestion/registry.py (the list of formats, detection)."""
    path = ROOT / f"forensics/{INGEST}/registry.py"
    text = path.read_text()
    head, rest = text.split("SNIFF_BYTES = ", 1)
    body, tail = rest.split("@functools.cache\ndef builtin", 1)
    connect = tail[tail.index("def connect_ro(") :]
    tail = tail[: tail.index("def connect_ro(")].rstrip() + "\n"
    declare = (
        '"""What a format declares: its name, a content sniff over a ``Probe`` (a file\'s first bytes), a reader or\n'
        "a columnar task, and its side files (``Side``). The registry (``forensics.ingestion.registry``) lists the\n"
        'formats and detects with these; a format imports only this and the rest of the kit."""\n'
        "from __future__ import annotations\n\n"
        "import fnmatch\nimport functools\nimport glob\nimport re\nimport sqlite3\nimport zipfile\n"
        "from collections.abc import Callable\nfrom dataclasses import dataclass\nfrom pathlib import Path\n"
        "from typing import Any\nfrom urllib.parse import quote\n\nimport orjson\n\n"
        "from forensics.errors import SourceError\nfrom forensics.importers import model, values\n"
        "from forensics.importers.records import Parsed, split_lines\n\n"
        "SNIFF_BYTES = " + body.rstrip() + "\n\n\n" + connect
    )
    registry_head = (
        head.replace("import fnmatch\n", "")
        .replace("import glob\n", "")
        .replace("import re\n", "")
        .replace("import sqlite3\n", "")
        .replace("import zipfile\n", "")
        .replace("from dataclasses import dataclass\n", "")
        .replace("from urllib.parse import quote\n", "")
        .replace("\nimport orjson\n", "")
        .replace("from forensics.importers import model, values\n", "")
        .replace("from forensics.importers.records import Parsed, split_lines\n", "")
        .replace("from forensics.errors import SourceError\n", "")
        .replace("from collections.abc import Callable\n", "")
    )
    registry_head = registry_head.replace(
        "from forensics.importers.formats import BUILTIN, FALLBACK, plugin_entry_points\n",
        "from forensics.importers.formats import BUILTIN, FALLBACK, plugin_entry_points\n"
        "from forensics.importers.registry import Format, Probe, Side\n",
    )
    registry = registry_head.rstrip() + "\n\n\n@functools.cache\ndef builtin" + tail
    (ROOT / "forensics/formats/kit/declare.py").write_text(declare)
    path.write_text(registry)
    git("add", "forensics/formats/kit/declare.py")


CONTRACTS = """[[tool.importlinter.contracts]]
name = "layers: the API over the commands over tuning over the report over the analyzers over the ingest pipeline, the formats, the warehouse and the kernel"
type = "layers"
layers = [
  "forensics.api",
  "forensics.commands | forensics.serve | forensics.spark",
  "forensics.tuning",
  "forensics.report",
  "forensics.analyzers",
  "forensics.config",
  "forensics.text | forensics.ingestion",
  "forensics.formats",
  "forensics.warehouse",
  "forensics.kernel",
]

[[tool.importlinter.contracts]]
name = "analysis reads no presentation: no CLI, API, commands, report, explorer, tuning, charts or web stack"
type = "forbidden"
source_modules = ["forensics.analyzers", "forensics.text", "forensics.config"]
forbidden_modules = ["forensics.cli", "forensics.api", "forensics.commands", "forensics.report", "forensics.serve",
                     "forensics.tuning", "matplotlib", "starlette", "jinja2"]

[[tool.importlinter.contracts]]
name = "the ingest pipeline, the formats, the warehouse and the kernel never import the analysis above them"
type = "forbidden"
source_modules = ["forensics.ingestion", "forensics.formats", "forensics.warehouse", "forensics.kernel"]
forbidden_modules = ["forensics.analyzers", "forensics.report", "forensics.tuning", "forensics.commands",
                     "forensics.serve", "forensics.spark"]
"""


def _contracts() -> None:
    p = ROOT / "pyproject.toml"
    text = p.read_text()
    start = text.index("[[tool.importlinter.contracts]]")
    end = text.index('[[tool.importlinter.contracts]]\nname = "no cycle')
    text = text[:start] + CONTRACTS + "\n" + text[end:]
    text = text.replace(
        'module = ["forensics.warehouse.*", "forensics.report.*", "forensics.importers.*"]',
        'module = ["forensics.warehouse.*", "forensics.report.*", "forensics.ingestion.*", "forensics.formats.*"]',
    )
    p.write_text(text)


def _registry_users() -> None:
    """The pipeline's modules that named the declaration through the registry name it where it is."""
    for name in ("discover", "run"):
        p = ROOT / f"forensics/importers/{name}.py"
        if not p.exists():
            p = ROOT / f"forensics/{INGEST}/{name}.py"
        text = p.read_text()
        new = re.sub(r"\bregistry\.(Probe|Format|Side|Chunks|connect_ro)\b", r"declare.\1", text)
        if new != text:
            new = new.replace(
                "\nfrom forensics.importers import",
                "\nfrom forensics.formats.kit import declare\nfrom forensics.importers import",
                1,
            )
            p.write_text(new)


def _fix_queries_root() -> None:
    p = ROOT / "forensics/warehouse/queries.py"
    text = p.read_text()
    old = 'return Path(__file__).resolve().parent.parent / "queries"'
    assert old in text
    p.write_text(text.replace(old, 'return Path(__file__).resolve().parents[2] / "queries"'))


if __name__ == "__main__":
    if sys.argv[1] == "move":
        move()
    elif sys.argv[1] == "rewrite":
        done = []
        for f in sys.argv[2:]:
            t = Path(f).read_text(encoding="utf-8")
            n = rewrite(t)
            if n != t:
                Path(f).write_text(n, encoding="utf-8")
                done.append(f)
                print("rewrote", f)
        py = [f for f in done if f.endswith(".py")]
        if py:  # the imports in order again (ruff's isort rule, as `make lint` checks it)
            subprocess.run(
                [sys.executable, "-m", "ruff", "check", "--fix", "--select", "I", *py], check=False, capture_output=True
            )
