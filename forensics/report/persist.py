"""A report's findings and per-conversation figures, kept in the warehouse for `forensics serve`.

The explorer shows what the analyzers found without running them again (a full report of a million messages
takes minutes; a page must answer in under a second): `forensics report` writes these tables, replacing the
rows of the conversations and analyzers it covered, and the explorer reads them.

- ``report_findings``: one row per finding (every finding, not only the ones a report lists);
- ``report_conversations``: per conversation, its label and the baseline figures, with its finding counts;
- ``report_runs``: one row per report (time, selection, analyzers, the digest as JSON).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import duckdb
import orjson
import polars as pl

from forensics import analyzers
from forensics.analyzers.declare import Analyzer
from forensics.kernel.selection import SELECTED
from forensics.warehouse import derived

if TYPE_CHECKING:
    from forensics.report.build import Report

FINDINGS: dict[str, Any] = {
    "section": pl.String,
    "kind": pl.String,
    "severity": pl.String,
    "conversation_id": pl.String,
    "native_id": pl.String,
    "positions": pl.List(pl.Int32),
    "summary": pl.String,
    "rule": pl.String,
    "value": pl.Float64,
    "percentile": pl.Float64,
    "among": pl.String,
    "said": pl.String,
    "corpus_norm": pl.Boolean,
}
METRICS = [
    "messages",
    "user",
    "assistant",
    "tool",
    "tool_calls",
    "parallel_turns",
    "tool_results_gt_2kb",
    "tool_results_gt_10kb",
    "empty_assistant_share",
    "continue_nags",
    "short_user_share",
    "asst_tool_ratio",
]
# each figure as a reader says it (the explorer's conversations page shows these, the identifier on hover)
METRIC_WORDS = {
    "messages": "messages",
    "user": "user messages",
    "assistant": "replies",
    "tool": "tool messages",
    "tool_calls": "tool calls",
    "parallel_turns": "replies with parallel calls",
    "tool_results_gt_2kb": "tool results over 2 KB",
    "tool_results_gt_10kb": "tool results over 10 KB",
    "empty_assistant_share": "share of replies without text",
    "continue_nags": "“continue” nudges",
    "short_user_share": "share of short user turns",
    "asst_tool_ratio": "reply text per tool output",
}
CONVERSATIONS: dict[str, Any] = {
    "conversation_id": pl.String,
    "label": pl.String,
    "full_label": pl.String,
    **{m: pl.Float64 if m.endswith(("_share", "_ratio")) else pl.Int64 for m in METRICS},
}


RUNS: dict[str, Any] = {
    "generated_at": pl.String,
    "selection": pl.String,
    "analyzers": pl.List(pl.String),
    "digest": pl.String,
}


def write(con: duckdb.DuckDBPyConnection, report: Report) -> None:
    """Replace the selected conversations' rows of the analyzers this report ran."""
    norm_kinds = {n.kind for n in report.digest.norms}
    rows = [
        {
            "section": s.name,
            "kind": f.kind,
            "severity": f.severity,
            "conversation_id": f.conversation_id,
            "native_id": f.native_id,
            "positions": f.positions,
            "summary": f.summary,
            "rule": f.rule,
            "value": f.value,
            "percentile": f.percentile,
            "among": f.among,
            "said": f.said,
            "corpus_norm": f.kind in norm_kinds,
        }
        for s in report.sections
        for f in s.findings
    ]
    sections = ", ".join(f"'{s.name}'" for s in report.sections) or "''"
    selected = f"conversation_id IN (SELECT conversation_id FROM {SELECTED})"
    # a finding of no conversation (a decision conflict from a conversation the source lacks) is every report's
    derived.replace_rows(
        con,
        "report_findings",
        pl.DataFrame(rows, schema=FINDINGS),
        f"({selected} OR conversation_id = '') AND section IN ({sections})",
    )
    base = next(
        ((s, a.conversation_figures) for s in report.sections if (a := _declared(s.name)) and a.conversation_figures),
        None,
    )  # the analyzer whose per-conversation figures the explorer lists
    if base is not None:
        per = base[0].metrics[base[1]]
        conv = [
            {
                "conversation_id": cid,
                "label": report.labels[cid].text,
                "full_label": report.labels[cid].full,
                **{m: v[m] for m in METRICS},
            }
            for cid, v in per.items()
        ]
        derived.replace_rows(con, "report_conversations", pl.DataFrame(conv, schema=CONVERSATIONS), selected)
    log_run(con, report)


def _declared(name: str) -> Analyzer | None:
    """The declaration of the analyzer of a section (none for a plug-in no longer installed)."""
    return next((a for a in analyzers.declarations() if a.name == name), None)


def log_run(con: duckdb.DuckDBPyConnection, report: Report) -> None:
    """Append the report's row to ``report_runs`` (a report kept whole logs its run again: ``report.cache``)."""
    labels = {cid: lab.text for cid, lab in report.labels.items()}
    derived.append_rows(
        con,
        "report_runs",
        pl.DataFrame(
            {
                "generated_at": [report.meta["generated_at"]],
                "selection": [orjson.dumps(report.meta["selection"]).decode()],
                "analyzers": [list(report.meta["analyzers"])],
                "digest": [orjson.dumps(report.digest.as_dict(labels), option=orjson.OPT_NON_STR_KEYS).decode()],
            },
            schema=RUNS,
        ),
    )
