"""The do-no-harm floor of topic-switch detection (docs/definitions.md#topic-switches), on every labeled set, at the default config.

At the default operating point the marker must never segment worse than marking nothing (Pk), and must beat
marking every judged turn on F1 in the default (user) mode, random marking at the base rate in the dialogue
mode. Each set runs as a user would run it: ingest, then `forensics report --labels` (tests/data/topics/
README.md says where the sets come from). The exact figures are pinned too, so a change that moves them is
seen and its new figures written down on purpose (`bench/topics.py` prints the full tables).
"""

from __future__ import annotations

import lzma
from dataclasses import replace
from pathlib import Path

import pytest

from forensics import ingest
from forensics.analyzers.schema import defaults
from forensics.analyzers.topics.settings import TopicSettings
from forensics.api import report
from forensics.kernel.selection import Selection
from forensics.text import engine

DATA = Path(__file__).parent / "data" / "topics"
DIALOGUE = defaults().with_settings(
    replace(TopicSettings.of(defaults()), roles=["user", "assistant"], open_domain=True)
)
RJIEBA = engine.NAME == "rjieba"  # its tagger names a few more places and people (docs/scale.md, issue 46)
# set: (files, config, baseline the F1 must beat, (markers, hits) at the defaults)
SETS = {
    # was (920, 740) / (919, 739): a marker across a content-free turn off work (好，地址在哪？ then a new request: woz7)
    "crosswoz": (["crosswoz-val.zh.jsonl"], defaults(), "all", (937, 754) if RJIEBA else (936, 753)),
    # was (1026, 767): negated and more request phrasings, a bare "Yes." accepting with the next sentence; then (1047,
    # 789): a request whose object books the thing in play is none, "book a taxi" is one (issue 43 item 3); then (978,
    # 807): a booking of the thing in play with only its particulars, a search retried after "nothing found; something
    # else?" continue (issue 43, shift6: 55 markers fewer, 7 of them hits); then (924, 801): tidy6; then (921, 801): an
    # accepted booking offer with only its particulars, a booking object in another form ("a stay" after "staying");
    # then (966, 838): the turn after a content-free one is read against the last turn with a topic off work too
    # ("Thank you so much!" then "I also need a taxi": issue 43, woz7; 45 markers more, 37 of them hits); then (964,
    # 838): a search asked for again after "nothing found. Anything else I can help with?" continues (found7: 2 false
    # markers fewer, both on the dev half)
    "multiwoz": (["multiwoz-val.en.jsonl"], defaults(), "all", (964, 838)),
    # was (90, 90), then (111, 92): the work scorer, then its combiner (issue 43; docs/topics-evaluation.md, round 4)
    # then (123, 91) before round 6 (a marker across a content-free turn such as 继续: issue 43, topics-evaluation.md)
    # then (164, 124): a marker across a content-free turn off work too (woz7: 28 markers more, all hits); then (163,
    # 124): a turn after which the tools touch only what they touched just before continues where the judge is unsure
    # (topics12, work.follows_up: one false marker fewer)
    "generated": (["gen5.db", "gen6.db"], defaults(), "all", (163, 124)),
    "kdconv": (["kdconv-dev.zh.jsonl"], DIALOGUE, "random", (299, 106) if RJIEBA else (293, 103)),
    "tiage": (["tiage-train-dev.jsonl"], DIALOGUE, "random", (357, 196)),
}


def _unpacked(name: str, tmp: Path) -> Path:
    out = tmp / name
    out.write_bytes(lzma.decompress((DATA / f"{name}.xz").read_bytes()))
    return out


@pytest.mark.parametrize("name", SETS)
def test_the_default_marker_never_segments_worse_than_silence(name: str, tmp_path: Path) -> None:
    files, cfg, floor, pinned = SETS[name]
    sources = [_unpacked(f, tmp_path) for f in files]
    db = tmp_path / "w.duckdb"
    if files[0].endswith(".jsonl"):
        labels = sources[0]
        ingest(sources, db=db, fmt="dialogues")
    else:
        labels = tmp_path / "labels.jsonl"
        labels.write_bytes(b"".join((DATA / f.replace(".db", ".labels.jsonl")).read_bytes() for f in files))
        ingest(sources, db=db)
    rep, _ = report(db, tmp_path / "out", ["json"], "topics", Selection(), cfg, labels=str(labels))
    d = rep.sections[0].metrics["evaluation"]["detectors"]
    ours = d["ours"]
    assert ours["pk"] <= d["none"]["pk"], (name, ours["pk"], d["none"]["pk"])
    assert ours["f1"] > d[floor]["f1"], (name, ours["f1"], d[floor]["f1"])
    assert (ours["predicted"], ours["tp"]) == pinned


def test_open_domain_talk_is_not_judged_by_default(tmp_path: Path) -> None:
    """Both roles judged (human-human chit-chat) at the defaults: "not judged: open-domain", nothing marked, so Pk
    equals marking nothing's (on TIAGE the marker's F1 is under marking every turn: issue 43)."""
    sources = [_unpacked("tiage-train-dev.jsonl", tmp_path)]
    db = tmp_path / "w.duckdb"
    ingest(sources, db=db, fmt="dialogues")
    cfg = defaults().with_settings(replace(TopicSettings.of(defaults()), roles=["user", "assistant"]))
    rep, _ = report(db, tmp_path / "out", ["json"], "topics", Selection(), cfg, labels=str(sources[0]))
    sec = rep.sections[0]
    assert sec.metrics["not_judged"] == "open-domain" and sec.metrics["switches"] == 0
    assert "Not judged: open-domain" in sec.summary
    d = sec.metrics["evaluation"]["detectors"]
    assert d["ours"]["predicted"] == 0 and d["ours"]["pk"] == d["none"]["pk"]
