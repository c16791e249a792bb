"""Keywords (docs/definitions.md#tokenizer-and-keywords): per conversation, the top keywords of its user messages and its distinctive terms.

The user messages are what the seed harness's fallback summarises (extract_keyword_summary: the user's words are
the anchors a compaction must keep), read by the person's own words (``messages.person_text``): a harness
message, a command's expansion or a template's body gives no keyword. Each distinct text is tokenized once (short replies such as 继续 repeat
thousands of times), with the tokenizer mode and top_k of ``[keyword]``. The terms land in the warehouse
table ``conversation_keywords`` (one row per conversation and term) for `forensics query` and notebooks.
"""

from __future__ import annotations

from collections import Counter
from functools import lru_cache
from typing import Any

import duckdb
import polars as pl

from forensics.analyzers import reuse
from forensics.analyzers.base import Chart, Context, Section, Table
from forensics.analyzers.declare import Analyzer
from forensics.analyzers.facts import Fact
from forensics.analyzers.keys import keywords as declared
from forensics.analyzers.keywords import draw
from forensics.analyzers.keywords.settings import KeywordSettings
from forensics.config import Config
from forensics.kernel.selection import SELECTED
from forensics.text.distinctive import distinctive_of
from forensics.text.keywords import content_tokens, top_keywords
from forensics.warehouse import derived

NAME = "keywords"
TITLE = "Keywords and distinctive terms"
DISTINCTIVE_K = 5
CHART_CONVERSATIONS = 6


def counts(con: duckdb.DuckDBPyConnection, cfg: Config) -> pl.DataFrame:
    """Per selected conversation, its user messages and their content tokens with counts, in first-seen order
    (what the top keywords break ties by, and what TF-IDF reads)."""
    mode = str(KeywordSettings.of(cfg).tokenizer)
    rows = con.execute(
        "SELECT c.conversation_id, c.native_id, "
        "list(forensics_scrubbed(CASE WHEN m.origin = 'person' THEN m.person_text ELSE '' END) "
        "ORDER BY m.position) AS texts "
        "FROM messages m JOIN conversations c USING (conversation_id) "
        f"JOIN {SELECTED} USING (conversation_id) "
        "WHERE m.on_main_path AND m.role = 'user' GROUP BY ALL"
    ).fetchall()
    tokens = lru_cache(maxsize=None)(lambda text: content_tokens(text, mode))
    tallies = [Counter(w for t in texts for w in tokens(t or "")) for _, _, texts in rows]
    return pl.DataFrame(
        {
            "conversation_id": pl.Series([r[0] for r in rows], dtype=pl.String),
            "native_id": pl.Series([r[1] for r in rows], dtype=pl.String),
            "user_messages": pl.Series([len(r[2]) for r in rows], dtype=pl.Int32),
            "terms": pl.Series([list(c) for c in tallies], dtype=pl.List(pl.String)),
            "counts": pl.Series([list(c.values()) for c in tallies], dtype=pl.List(pl.Int32)),
        }
    )


def run(ctx: Context) -> Section:
    kw = KeywordSettings.of(ctx.cfg)
    mode, top_k = str(kw.tokenizer), int(kw.top_k)
    rows = ctx.fact("keyword_counts")
    ids, natives = rows["conversation_id"].to_list(), rows["native_id"].to_list()
    sizes = rows["user_messages"].to_list()
    tallies = [Counter(dict(zip(t, n))) for t, n in zip(rows["terms"].to_list(), rows["counts"].to_list())]
    tops = [top_keywords(c, top_k) for c in tallies]

    def weigh() -> list[list[tuple[str, float]]]:
        return distinctive_of([list(c.elements()) for c in tallies], DISTINCTIVE_K)

    if ctx.facts is not None and ctx.facts.local:  # TF-IDF is corpus-wide: kept while no conversation's counts moved
        distinct = [
            [(w, x) for w, x in d]
            for d in reuse.corpus(
                ctx.con, "keywords.distinctive", reuse.inputs(ctx.con, ctx.cfg, "keyword_counts"), weigh
            )
        ]
    else:
        distinct = weigh()
    _write_table(ctx, ids, tops, distinct)
    metrics: dict[str, Any] = {
        "tokenizer": mode,
        "top_k": top_k,
        "conversation_count": len(ids),
        "conversations_without_keywords": sum(1 for t in tops if not t),
        "conversations": {
            cid: {
                "native_id": nid,
                "user_messages": users,
                "keywords": [[w, n] for w, n in top],
                "distinctive": [[w, round(s, 6)] for w, s in dist],
            }
            for cid, nid, users, top, dist in zip(ids, natives, sizes, tops, distinct)
        },
    }
    table = pl.DataFrame(
        {
            "conversation": [ctx.names[c] for c in ids],
            "user_messages": sizes,
            "keywords": [", ".join(f"{w} ({n})" for w, n in top) for top in tops],
            "distinctive terms (TF-IDF)": [", ".join(w for w, _ in d) for d in distinct],
        },
        schema={
            "conversation": pl.String,
            "user_messages": pl.Int64,
            "keywords": pl.String,
            "distinctive terms (TF-IDF)": pl.String,
        },
    )
    sec = Section(
        NAME,
        TITLE,
        metrics=metrics,
        tables=[Table("per_conversation", "Keywords of user messages per conversation", table)],
    )
    sec.summary = (
        f"Top {top_k} keywords of each conversation's user messages (tokenizer {mode}, stop words "
        "removed) and the terms TF-IDF finds distinctive for it against the other conversations."
    )
    charted = sorted(range(len(ids)), key=lambda i: -sizes[i])[:CHART_CONVERSATIONS]
    chart_data = [
        {"conversation": ctx.names[ids[i]], "terms": [[w, s] for w, s in distinct[i]]} for i in charted if distinct[i]
    ]
    if chart_data:
        sec.charts.append(
            Chart(
                "distinctive_terms",
                "Distinctive terms (TF-IDF) of the conversations with the most user messages",
                chart_data,
            )
        )
    return sec


def _write_table(
    ctx: Context, ids: list[str], tops: list[list[tuple[str, int]]], distinct: list[list[tuple[str, float]]]
) -> None:
    """conversation_keywords: kind 'keyword' (count) or 'distinctive' (TF-IDF weight), rank 1 = best."""
    rows = [(cid, "keyword", r, w, float(n)) for cid, top in zip(ids, tops) for r, (w, n) in enumerate(top, 1)]
    rows += [(cid, "distinctive", r, w, s) for cid, d in zip(ids, distinct) for r, (w, s) in enumerate(d, 1)]
    df = pl.DataFrame(
        rows,
        schema={
            "conversation_id": pl.String,
            "kind": pl.String,
            "rank": pl.Int32,
            "term": pl.String,
            "weight": pl.Float64,
        },
        orient="row",
    )
    derived.replace_rows(ctx.con, "conversation_keywords", df)


ANALYZER = Analyzer(
    NAME,
    TITLE,
    run,
    sections=declared.SECTIONS,
    keys=declared.KEYS,
    facts=(Fact("keyword_counts", counts, ("native_id", "conversation_id"), cached=True),),
    reads=("keyword_counts",),
    charts={"distinctive_terms": draw.terms},
    maps=("conversations",),
    tables=(
        derived.Table("conversation_keywords", "selection", "per conversation: top keywords and distinctive terms"),
    ),
    settings=(KeywordSettings,),
)
