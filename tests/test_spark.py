"""`--engine spark`: the per-conversation analyzers and the named queries on Spark local mode over the lake of the
fixtures give what the warehouse gives (docs/scale.md#spark-the-analyzers-and-the-named-queries-tested). The commands are docs/scale.md's own (its spark-local block), so
the documented path is the tested one. One SparkSession for the whole module (pytest-xdist's loadfile: one worker
runs this file)."""

from __future__ import annotations

import json
import os
import shlex
from pathlib import Path
from typing import Any

import pytest

from bench.run import ENGINE_KEYS, figures
from forensics import ingest
from forensics.analyzers import named_queries
from forensics.report import evidence
from forensics.warehouse import open_warehouse
from tests.conftest import FIXTURES, ROOT, needs_spark, run_cli

pytestmark = pytest.mark.spark
SOURCES = ["seed/seed.db", "sqlite", "sessions", "anthropic", "claude_code", "openai"]  # the agent-log fixtures
SECTIONS = ("baseline", "compression", "drift", "sentinel")
MASTER = "local[2]"


def documented() -> list[list[str]]:
    """The commands of docs/scale.md's spark-local block, as argument lists (comments dropped)."""
    text = (ROOT / "docs" / "scale.md").read_text()
    block = text.split("<!-- spark-local:")[1].split("```")[1]
    return [shlex.split(line, comments=True)[1:] for line in block.splitlines() if line.startswith("forensics ")]


@pytest.fixture
def spark_groups() -> Any:
    from pyspark.sql import SparkSession

    conf = SparkSession.getActiveSession().conf
    conf.set("spark.forensics.groupConversations", "5")
    yield
    conf.unset("spark.forensics.groupConversations")


@pytest.fixture(scope="module")
def lake(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """The fixtures' warehouse, then the documented commands in its folder: a local report (every analyzer: topics
    writes the switches drift reads), the export, the report on Spark from the lake, a named query on Spark."""
    needs_spark()
    d = tmp_path_factory.mktemp("spark")
    ingest([FIXTURES / s for s in SOURCES], db=d / "forensics.duckdb")
    commands = documented()
    assert [c[0] for c in commands] == ["report", "export", "report", "query"] and "--engine" in commands[2]
    outputs = []
    cwd = os.getcwd()
    os.chdir(d)
    try:
        for args in commands:
            spark = ["--spark-master", MASTER] if "--engine" in args else []  # local[*] is 2 cores here too
            code, out, err = run_cli(*args, *spark)
            assert code == 0, (args, err)
            outputs.append(out)
    finally:
        os.chdir(cwd)
    return {
        "dir": d,
        "out": outputs[2],
        "query": outputs[3],
        "local": json.loads((d / "reports" / "local" / "metrics.json").read_text()),
        "spark": json.loads((d / "reports" / "spark" / "metrics.json").read_text()),
    }


def test_every_figure_of_the_four_sections_is_the_local_reports(lake: dict[str, Any]) -> None:
    local, spark = lake["local"], lake["spark"]
    assert spark["analyzers"] == list(SECTIONS) and spark["engine"] == "spark"
    for name in SECTIONS:
        assert spark["sections"][name] == local["sections"][name], name  # every figure, exactly
    assert [f for f in spark["findings"]] == [f for f in local["findings"] if f["section"] in SECTIONS]
    # the fixtures' own figures, so equal cannot mean equally empty
    base, comp, drift, sentinel = (spark["sections"][s] for s in SECTIONS)
    assert base["conversation_count"] == 42
    assert base["tool_result_bytes_histogram"]["counts"] == [787, 308, 341, 314, 245, 163, 209, 10, 0]
    assert (comp["results"], comp["summarized"]) == (2377, 972)
    # issue 24: held against each agent's own norms (crowding is the sqlite harness's way of working: a norm line)
    # branch woz7: a request after a content-free turn is marked in booking chats too: one more true topic switch
    # ("Let's park that. Issue with the licensing scheme…"), one more interleave episode (was 32, and 7 flagged)
    assert drift["interleave_computed"] and drift["episodes"] == 33
    assert drift["conversations_flagged"] == {
        "tool_result_crowding": 0,
        "tool_dispersion": 11,
        "compaction_topic_loss": 1,
        "topic_interleave": 8,
        "no_focus": 5,
    }
    # only the fixtures whose harness asks for the sentinel (realistic.db, anthropic.db, the JSONL sessions)
    assert (sentinel["judged_replies"], sentinel["degraded_conversations"]) == (481, 10)


def test_every_figure_of_metrics_json_is_a_local_four_section_reports(lake: dict[str, Any]) -> None:
    """Not only the four sections: the findings, the worst conversations, the strongest findings, the norms, the
    selection... every figure a local report of the same analyzers writes, but for what names the engine."""
    d = lake["dir"]
    code, _, err = run_cli(
        "report", "--db", str(d / "forensics.duckdb"), "--only", ",".join(SECTIONS), "--format", "json",
        "--out", str(d / "four-local"),
    )  # fmt: skip
    assert code == 0, err
    local = json.loads((d / "four-local" / "metrics.json").read_text())
    spark = lake["spark"]
    assert set(local) - ENGINE_KEYS == set(spark) - ENGINE_KEYS
    mine, theirs = (figures(r) for r in (local, spark))
    differ = {k: (mine.get(k), theirs.get(k)) for k in mine.keys() | theirs.keys() if mine.get(k) != theirs.get(k)}
    assert not differ, sorted(differ.items())[:20]
    assert len(mine) > 3000  # the figures compared (the fixtures' 42 conversations)


def test_the_spark_report_is_written_as_a_local_one_with_its_evidence(lake: dict[str, Any]) -> None:
    d, out = lake["dir"], Path("reports") / "spark"
    assert lake["out"].split() == [str(out / f) for f in ("metrics.json", "report.md", "report.html")]
    md, html = (d / out / "report.md").read_text(), (d / out / "report.html").read_text()
    assert f"(on Spark, {MASTER})" in md and "## Sentinel compliance" in md and "## Drift phenomena" in md
    assert "not computed on Spark" in lake["spark"]["what_to_change"]["skipped"]
    # the cited messages were read from the lake by Spark: each as the warehouse shows it
    embedded = json.loads(
        html.split('<script type="application/json" id=evidence-data>')[1].split("</script>")[0].replace("<\\/", "</")
    )
    cited = {cid: {int(p) for p in msgs} for cid, msgs in embedded.items()}
    assert sum(map(len, cited.values())) > 100
    with open_warehouse(d / "forensics.duckdb", read_only=True) as wh:
        local = evidence.fetch(wh.con, cited)
    for cid, msgs in embedded.items():
        for p, msg in msgs.items():
            assert msg == json.loads(json.dumps(local[cid][int(p)].as_dict())), (cid, p)


def test_a_selection_on_spark_is_the_local_selection(lake: dict[str, Any], spark_groups: None) -> None:
    """--model narrows what is reported; the sentinel still replays every model's whole history. The workers get
    groups of about 5 conversations here (the report above had all 42 in one)."""
    d = lake["dir"]
    code, _, err = run_cli(
        "report",
        "--db",
        str(d / "forensics.duckdb"),
        "--out",
        str(d / "sel-local"),
        "--format",
        "json",
        "--only",
        "baseline,sentinel",
        "--model",
        "glm-5.2",
    )
    assert code == 0, err
    code, _, err = run_cli(
        "report",
        "--engine",
        "spark",
        "--lake",
        str(d / "lake"),
        "--spark-master",
        MASTER,
        "--out",
        str(d / "sel-spark"),
        "--format",
        "json",
        "--only",
        "baseline,sentinel",
        "--model",
        "glm-5.2",
    )
    assert code == 0, err
    local, spark = (json.loads((d / o / "metrics.json").read_text()) for o in ("sel-local", "sel-spark"))
    assert spark["conversations"] == local["conversations"] < lake["spark"]["conversations"]
    for name in ("baseline", "sentinel"):
        assert spark["sections"][name] == local["sections"][name], name


def test_the_documented_query_ran_on_spark(lake: dict[str, Any]) -> None:
    code, local, err = run_cli(
        "query", "sentinel_failures", "--db", str(lake["dir"] / "forensics.duckdb"), "--format", "csv"
    )
    assert code == 0, err
    assert sorted(lake["query"].splitlines()) == sorted(local.splitlines()) and len(local.splitlines()) > 500


@pytest.mark.parametrize("name", [q.name for q in named_queries()])
def test_every_named_query_gives_the_same_rows_on_both_engines(lake: dict[str, Any], name: str) -> None:
    from forensics.spark.sql import UNSUPPORTED

    d = lake["dir"]
    code, spark_out, err = run_cli(
        "query", name, "--engine", "spark", "--lake", str(d / "lake"), "--spark-master", MASTER, "--format", "json"
    )
    if name in UNSUPPORTED:
        assert code == 2 and f"the named query {name} does not run on Spark: " in err, err
        return
    assert code == 0, err
    code, local_out, err = run_cli("query", name, "--db", str(d / "forensics.duckdb"), "--format", "json")
    assert code == 0, err
    spark_rows, local_rows = json.loads(spark_out), json.loads(local_out)
    assert len(spark_rows) == len(local_rows) > 0
    key = lambda r: json.dumps(r, sort_keys=True, ensure_ascii=False)  # noqa: E731  (ties on ORDER BY: any order)
    assert sorted(spark_rows, key=key) == sorted(local_rows, key=key)


def test_bad_usage_is_one_line_and_exit_2(lake: dict[str, Any], tmp_path: Path) -> None:
    d = lake["dir"]
    for args, says in [
        (["report", "--engine", "spark"], "pass --lake DIR"),
        (["report", "--lake", str(d / "lake")], "pass --lake DIR"),
        (["report", "--engine", "spark", "--lake", str(tmp_path)], "no views.sql"),
        (["report", "--engine", "spark", "--lake", str(d / "lake"), "--only", "topics"], "run on a warehouse only"),
        (["report", "--engine", "spark", "--lake", str(d / "lake"), "--split-at", "2026-06-20"], "single report"),
        (["query", "DELETE FROM messages", "--engine", "spark", "--lake", str(d / "lake")], "refused"),
    ]:
        code, _, err = run_cli(*args, "--spark-master", MASTER) if "--engine" in args else run_cli(*args)
        assert code == 2 and says in err and len(err.strip().splitlines()) == 1, (args, err)
