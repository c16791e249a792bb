"""Writes explore.ipynb and runs it, so that it is committed with its outputs and renders where the repo is
browsed. The notebook holds exploration only, through the public API (``forensics``, ``forensics.api``); logic
lives in the package. tests/test_notebook.py runs it again and compares.

    python notebooks/make_explore.py
"""

from pathlib import Path

import nbformat
from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook

CELLS = [
    new_markdown_cell(
        "# Exploring a forensics warehouse\n\nIngest the bundled fixtures into a temporary warehouse, "
        "look at the baseline table, then drill into one conversation. Every call here is the supported "
        "Python API (`import forensics`); the CLI is a thin layer over the same functions."
    ),
    new_code_cell(
        "import tempfile\nfrom pathlib import Path\n\nimport forensics\nfrom forensics import api\n\n"
        "root = Path.cwd() if (Path.cwd() / 'fixtures').exists() else Path.cwd().parent\n"
        "work = Path(tempfile.mkdtemp())\ndb = work / 'explore.duckdb'\n"
        "run = forensics.ingest([root / 'fixtures' / 'seed' / 'seed.db', root / 'fixtures' / 'sessions'], db=db)\n"
        "run.totals()"
    ),
    new_markdown_cell("## The baseline table ([definitions](../docs/definitions.md)), one row per conversation"),
    new_code_cell(
        "base = api.baseline(db)\n"
        "base.select(['native_id', 'messages', 'tool_calls', 'tool_results_gt_2kb', 'empty_assistant_share', "
        "'asst_tool_ratio'])"
    ),
    new_code_cell(
        "import matplotlib.pyplot as plt\n\n"
        "fig, ax = plt.subplots(figsize=(5, 3))\n"
        "ax.scatter(base['tool_results_gt_2kb'], base['empty_assistant_share'])\n"
        "ax.set_xlabel('tool results > 2 KB')\nax.set_ylabel('share of empty assistant turns')\nplt.close(fig)\nfig"
    ),
    new_markdown_cell("## Drill into one conversation: its messages and its largest tool results"),
    new_code_cell("msgs = api.messages('d6614e0b', db)\nmsgs.group_by('role').len().sort('role')"),
    new_code_cell(
        "calls = api.tool_calls('d6614e0b', db)\n"
        "calls.sort('result_bytes', descending=True).select(['position', 'name', 'arguments', "
        "'result_position', 'result_bytes']).head(5)"
    ),
    new_markdown_cell("## A named query (`queries/*.sql`), read-only, secrets masked"),
    new_code_cell("api.query('quarantine', db).select(['location', 'reason', 'raw_bytes']).head(5)"),
    new_markdown_cell("## The whole report, as `forensics report` writes it"),
    new_code_cell("result, files = api.report(db, work / 'reports', ['md', 'json'])\n[f.name for f in files]"),
    new_markdown_cell(
        "The analyzers left their tables in the warehouse. Drift findings, with the positions that "
        "prove them (open one with `forensics show CONVERSATION --positions ...`):"
    ),
    new_code_cell(
        "drift = api.query('drift_findings', db)\n"
        "drift.filter(drift['severity'] == 'high').select(['native_id', 'kind', 'positions']).head(8)"
    ),
    new_markdown_cell("Tool-result compression replay at the configured thresholds:"),
    new_code_cell(
        "comp = result.section('compression').metrics\n"
        "{k: comp[k] for k in ('results', 'summarized', 'tool_share_before', 'tool_share_after')}"
    ),
    new_markdown_cell(
        "Keywords per conversation (jieba + Han 2-grams, stop words removed) and sentinel compliance per model:"
    ),
    new_code_cell(
        'api.query("SELECT c.native_id, k.term, k.weight FROM conversation_keywords k JOIN conversations c "\n'
        "          \"USING (conversation_id) WHERE k.kind = 'keyword' AND k.rank = 1 ORDER BY 1\", db).head(5)"
    ),
    new_markdown_cell(
        "## Every finding of the report, as one table\n\n`forensics.findings()` reads what the last "
        "report found (each with the positions that prove it and the norm it was held against):"
    ),
    new_code_cell(
        "found = forensics.findings(db)\nfound.group_by(['section', 'kind']).len().sort(['section', 'kind'])"
    ),
    new_code_cell("models = api.query('sentinel_models', db)\nmodels['compliance_key'].to_list()"),
    new_markdown_cell(
        "## Outcomes: which runs failed and where two runs of a task part\n\nBenchmark "
        "logs carry each run's grade; it lands in the warehouse at import ([outcomes](../docs/outcomes.md)). "
        "`forensics.outcomes()` lists them:"
    ),
    new_code_cell(
        "import polars as pl\n\nruns_db = work / 'runs.duckdb'\nforensics.ingest([root / 'fixtures' / 'outcomes'], db=runs_db)\n"
        "(forensics.outcomes(runs_db).group_by(['format', 'model'])\n"
        " .agg(runs=pl.len(), success_rate=pl.col('success').cast(pl.Int8).mean()).sort(['format', 'model']))"
    ),
    new_code_cell(
        "task_runs, diff = api.task_diff('medagentbench-std/96', runs_db)\n"
        "[(r.model, r.success, len(r.steps)) for r in task_runs], diff.to_dict()['first_divergence']"
    ),
    new_markdown_cell(
        "## Usage and cost\n\nThe runs per agent and model: tokens (input = all sent, cached "
        "= read from the prompt cache), cost at the shipped dated prices or `[prices]` in the config "
        "(docs/usage.md), tool-error rate, success rate with its interval:"
    ),
    new_code_cell(
        "forensics.usage(db, by='agent,model').select(['agent', 'model', 'runs', 'input', 'cached_share', 'output', "
        "'cost', 'tool_error_rate'])"
    ),
]


def execute(nb: nbformat.NotebookNode, root: Path) -> nbformat.NotebookNode:
    """``nb`` run top to bottom from the repository's root, its outputs kept."""
    from nbclient import NotebookClient

    NotebookClient(nb, timeout=300, kernel_name="python3", resources={"metadata": {"path": str(root)}}).execute()
    return nb


def main() -> None:
    nb = new_notebook(
        cells=CELLS, metadata={"kernelspec": {"name": "python3", "display_name": "Python 3", "language": "python"}}
    )
    for i, cell in enumerate(nb.cells):
        cell.id = f"cell-{i}"  # stable ids: a regenerated notebook differs only where its content does
    here = Path(__file__).resolve().parent
    nbformat.write(execute(nb, here.parent), here / "explore.ipynb")


if __name__ == "__main__":
    main()
