"""Which turns of a run the person asked to be wide (``signature``): their request names many things (files, issues,
items of a list) or asks for all of something ("fix all of them", "each one", "every test"). There a measurement of
the run's breadth (many targets read, a context filled with their output) is what was asked for, not a sign that the
work went astray (``report.build.done``). Read on the person's own words (``prose.own_words``: not the code, output
and traces they paste, whose paths and "for each" are no request)."""

from __future__ import annotations

import re

import duckdb

from forensics.text.prose import own_words

# a verb of work (what an agent is asked to do to things), the head of a request for all of a kind
WORK = (
    r"check|review|fix|go (?:through|over)|read|update|analy[sz]e|list|move|turn|test|run|rename|migrate|convert|"
    r"delete|remove|refactor|audit|inspect|scan|investigate|rank|look (?:at|through|into|over)|handle|implement|"
    r"apply|address|process|create|add|make|write|document|clean(?: up)?|find|search|compare|verify|summari[sz]e|"
    r"translate|port|change|replace|edit|modify|resolve|close|triage|categori[sz]e|label|tag|upgrade|install|build|"
    r"deploy|commit|push|merge|copy|download|fetch|collect|gather|cover|do|try|debug|explain|describe|take|mark|sort|"
    r"group|split|organi[sz]e|format|lint|rewrite|generate|extract|parse|validate|sync"
)
# a request for all of a kind: a verb of work whose object, in the same clause, is all, each or every of something
# ("fix all of them", "check every issue", "take each one of them"; not "all right", "that's all", "each other",
# "every time", nor a property said of each thing: "a plot at each point", "the pass rate of each assertion")
ALL = re.compile(
    rf"\b(?:{WORK})\b[^.?!;:\n]{{0,40}}?\b(?:all\s+(?:of\s+)?(?:the|these|those|them|its|their|our|my|your)\b"
    r"|(?:every|each)\s+(?!other\b|time\b|day\b|week\b|now\b)[a-z]+)"
    # or the work said after its object: "for each inline comment you addressed, post a reply" (not a format's
    # "For each response: ...")
    rf"|\bfor\s+(?:each|every)\s+[^.?!;:\n]{{1,80}}?,\s*(?:please\s+)?(?:{WORK}|post|reply|respond|comment)\b",
    re.IGNORECASE,
)
# the same in Chinese: a verb of work, not done already (了, 过), then in its clause all or each of something ("修复所有
# 测试", "检查每个文件"; not "检查了所有文件", a report of work done, nor "所有测试都通过了", no work asked)
WORK_ZH = (
    "检查|审查|查看|修复|修改|修正|更新|处理|测试|运行|删除|移除|重构|分析|列出|实现|添加|创建|重命名|迁移|转换|整理|"
    "翻译|替换|清理|优化|格式化|审核|排查|解决|补充|改写|生成"
)
ALL_ZH = re.compile(rf"(?:{WORK_ZH})(?![了过])[^。！？；\n]{{0,20}}?(?:所有|全部|每个|每一个|每条|每一条|每项|每一项)")
# a sentence asking why or how ("why did you change the header for each page", "how does it handle every icon"):
# a question about what is, no request for breadth
QUESTION = re.compile(r"^\W*(?:(?:why|how|what|where|when|who|which)\b|为什么|为何|怎么|如何|哪)", re.IGNORECASE)
SENTENCE = re.compile(r"(?<=[.!?])\s+|(?<=[。！？])|\n+")
# an item of a list the person wrote: a line opening with a bullet or a number ("- x", "* x", "3. x", "2) x")
ITEM = re.compile(r"^[ \t]*(?:[-*•]|\d{1,3}[.)])[ \t]+\S", re.MULTILINE)
# a thing the request names: a path (a letter in it; "308/308" and "and/or" are none) or a file name with an
# extension, or an issue or pull request number; never from the middle of a word or a path
_NAMED = (
    r"(?<![\w/.~-])(?:(?!(?i:and/or)\b)(?:[\w.-]+/)+[\w.-]*[A-Za-z][\w.-]*|[\w-]+\.[a-z]{1,5}\b(?![\w(/])|"
    r"(?<!&)#\d{1,6}\b)"
)
NAMED = re.compile(_NAMED)
# things named as a list: one after another, separated by commas, "and", "or" (in Chinese too: ，、 和 或), or one per
# line ("a.py, b.py and c.py", "a.py、b.py 和 c.py"), in backticks or quotes or bare; not the paths a pasted log or
# trace scatters among its words
_ONE = rf"[`'\"]?{_NAMED}[`'\"]?"
LISTED = re.compile(rf"{_ONE}(?:(?:[ \t]*[,;\n，、；][ \t]*(?:(?:and|or)\s+)?|\s+(?:and|or|和|或|及|以及)\s+){_ONE})+")
URL = re.compile(r"\b[a-z][a-z0-9+.-]*://\S+", re.IGNORECASE)  # one thing, whatever its path
ITEMS = 5  # list items or distinct things named at least this many: the request names its breadth


def asks_wide(text: str) -> bool:
    """Whether a person's request asks for breadth, in their own words (``own_words``): all or each of something as
    the object of a verb of work (``ALL``, ``ALL_ZH``), outside a why or how question (``QUESTION``), or ``ITEMS`` or
    more items of a list (``ITEM``) or distinct files, paths and issue numbers named as a list (``LISTED``)."""
    own = own_words(text)
    if any(ALL.search(s) or ALL_ZH.search(s) for s in SENTENCE.split(own) if not QUESTION.match(s)):
        return True
    if len(ITEM.findall(own)) >= ITEMS:
        return True
    listed = LISTED.finditer(URL.sub(" ", own))
    return any(len({m.group(0).lower() for m in NAMED.finditer(x.group(0))}) >= ITEMS for x in listed)


def asked(con: duckdb.DuckDBPyConnection, at: list[tuple[str, int]]) -> set[tuple[str, int]]:
    """Of ``at`` (conversation id, position), those whose turn's request asks for breadth (``asks_wide``): the words
    of the person's main-path message at or before the position. A Claude Code session handed a hostile audit of
    dozens of findings, "turn each one of them into github issues ... and fix all of them", read 60 targets for that
    request (one of the shared real logs)."""
    if not at:
        return set()
    rows = con.execute(
        """
        WITH a AS (SELECT unnest($cids::VARCHAR[]) AS cid, unnest($pos::INTEGER[]) AS pos)
        SELECT a.cid, a.pos,
               (SELECT coalesce(m.person_text, m.content) FROM messages m
                WHERE m.conversation_id = a.cid AND m.on_main_path AND m.origin = 'person' AND m.position <= a.pos
                ORDER BY m.position DESC LIMIT 1) AS request
        FROM a
        """,
        {"cids": [c for c, _ in at], "pos": [p for _, p in at]},
    ).fetchall()
    return {(str(cid), int(pos)) for cid, pos, request in rows if request and asks_wide(request)}
