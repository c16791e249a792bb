"""Writes explore.ipynb (outputs stripped). The notebook holds exploration only; logic lives in the package.

    python notebooks/make_explore.py
"""
from pathlib import Path

import nbformat
from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook

CELLS = [
    new_markdown_cell("# Exploring a forensics warehouse\n\nIngest the bundled fixtures into a temporary warehouse, "
                      "look at the baseline table, then drill into one conversation. Every call here is the supported "
                      "Python API (`import forensics`); the CLI is a thin layer over the same functions."),
    new_code_cell("import tempfile\nfrom pathlib import Path\n\nimport forensics\nfrom forensics import api\n\n"
                  "root = Path.cwd() if (Path.cwd() / 'fixtures').exists() else Path.cwd().parent\n"
                  "work = Path(tempfile.mkdtemp())\ndb = work / 'explore.duckdb'\n"
                  "run = forensics.ingest([root / 'fixtures' / 'seed' / 'seed.db', root / 'fixtures' / 'sessions'], db=db)\n"
                  "run.totals()"),
    new_markdown_cell("## The baseline table (SPEC §4), one row per conversation"),
    new_code_cell("base = api.baseline(db)\n"
                  "base.select(['native_id', 'messages', 'tool_calls', 'tool_results_gt_2kb', 'empty_assistant_share', "
                  "'asst_tool_ratio'])"),
    new_code_cell("from forensics.report.charts import figure\n\nfig = figure()\nax = fig.axes[0]\n"
                  "ax.scatter(base['tool_results_gt_2kb'], base['empty_assistant_share'])\n"
                  "ax.set_xlabel('tool results > 2 KB'); ax.set_ylabel('share of empty assistant turns')\nfig"),
    new_markdown_cell("## Drill into one conversation: its messages and its largest tool results"),
    new_code_cell("msgs = api.messages('d6614e0b', db)\n"
                  "msgs.group_by('role').len().sort('role')"),
    new_code_cell("calls = api.tool_calls('d6614e0b', db)\n"
                  "calls.sort('result_bytes', descending=True).select(['position', 'name', 'arguments', "
                  "'result_position', 'result_bytes']).head(5)"),
    new_markdown_cell("## A named query (`queries/*.sql`), read-only, secrets masked"),
    new_code_cell("api.query('quarantine', db).head(5)"),
    new_markdown_cell("## The whole report, as `forensics report` writes it"),
    new_code_cell("result, files = api.report(db, work / 'reports', ['md', 'json'])\n[f.name for f in files]"),
    new_markdown_cell("The analyzers left their tables in the warehouse. Drift findings, with the positions that "
                      "prove them (open one with `forensics show CONVERSATION --positions ...`):"),
    new_code_cell("drift = api.query('drift_findings', db)\n"
                  "drift.filter(drift['severity'] == 'high').select(['native_id', 'kind', 'positions']).head(8)"),
    new_markdown_cell("Tool-result compression replay at the configured thresholds, and a few points of the sweep:"),
    new_code_cell("comp = result.section('compression').metrics\n"
                  "{k: comp[k] for k in ('results', 'summarized', 'tool_share_before', 'tool_share_after')}"),
    new_code_cell("from forensics.analyzers.compression import sweep\nfrom forensics.analyzers.base import Context\n"
                  "from forensics.config import defaults\nfrom forensics.selection import Selection\n\n"
                  "with forensics.open_warehouse(db) as wh:\n"
                  "    Context.open(wh.con, defaults(), Selection())\n"
                  "    grid = sweep(wh.con, [1000, 2000, 5000], [0.4])\n"
                  "grid.select(['summarize_bytes', 'summarized_share', 'tool_share_after'])"),
    new_markdown_cell("Keywords per conversation (jieba + Han 2-grams, stop words removed) and sentinel compliance per model:"),
    new_code_cell("kw = result.section('keywords')\nkw.tables[0].df.head(5)"),
    new_code_cell("models = api.query('sentinel_models', db)\nmodels['compliance_key'].to_list()"),
    new_markdown_cell("## Outcomes: which runs failed (SPEC §20) and where two runs of a task part (§21)\n\nBenchmark "
                      "logs carry each run's grade; it lands in `conversation_outcomes` at import (docs/outcomes.md)."),
    new_code_cell("runs_db = work / 'runs.duckdb'\nforensics.ingest([root / 'fixtures' / 'outcomes'], db=runs_db)\n"
                  "api.query(\"SELECT s.format AS agent, c.model, count(*) AS runs, avg(o.success::INT) AS success_rate \"\n"
                  "          \"FROM conversation_outcomes o JOIN conversations c USING (conversation_id) \"\n"
                  "          \"JOIN sources s USING (source_id) GROUP BY ALL ORDER BY 1, 2\", runs_db)"),
    new_code_cell("task_runs, diff = api.task_diff('medagentbench-std/96', runs_db)\n"
                  "[(r.model, r.success, len(r.steps)) for r in task_runs], diff.to_dict()['first_divergence']"),
    new_markdown_cell("## Usage and cost (SPEC §22)\n\nThe runs per agent and model: tokens (input = all sent, cached "
                      "= read from the prompt cache), cost at the shipped dated prices or `[prices]` in the config "
                      "(docs/usage.md), tool-error rate, success rate with its interval:"),
    new_code_cell("api.usage(db, by='agent,model').select(['agent', 'model', 'runs', 'input', 'cached_share', 'output', "
                  "'cost', 'tool_error_rate'])"),
]


def main() -> None:
    nb = new_notebook(cells=CELLS, metadata={"kernelspec": {"name": "python3", "display_name": "Python 3",
                                                            "language": "python"}})
    nbformat.write(nb, Path(__file__).with_name("explore.ipynb"))


if __name__ == "__main__":
    main()
