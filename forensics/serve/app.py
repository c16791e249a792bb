"""`forensics serve`: a local, read-only web explorer over the warehouse (Starlette, Jinja2 templates).

Each request opens the warehouse read-only for its own duration (so `forensics report` can run between two
clicks), every route answers GET only (anything else gets 405), every rendered string is masked
(``forensics.kernel.redact``), and templates and static files ship inside the package: no CDN, no network.
"""

from __future__ import annotations

import html
import logging
import os
from collections.abc import Callable
from typing import Any

from jinja2 import Environment, PackageLoader, select_autoescape
from markupsafe import Markup
from starlette.applications import Starlette
from starlette.exceptions import HTTPException
from starlette.middleware import Middleware
from starlette.middleware.trustedhost import TrustedHostMiddleware
from starlette.requests import Request
from starlette.responses import HTMLResponse, Response
from starlette.routing import Mount, Route
from starlette.staticfiles import StaticFiles

from forensics import analyzers
from forensics.analyzers.diff import Run, RunDiff, between, load_run, resolve
from forensics.kernel.errors import ForensicsError
from forensics.kernel.redact import mask_frame, redact
from forensics.report import compose
from forensics.report import html as report_html
from forensics.report.document import Block, Paragraph, prose
from forensics.report.text import kind_words, positions_text
from forensics.serve import data
from forensics.serve.headers import SecurityHeaders
from forensics.serve.message_markdown import render as markdown
from forensics.text import personal as personal_data
from forensics.warehouse import frame, open_warehouse, search
from forensics.warehouse.queries import check_read_only

QUERY_ROWS = 500  # rows of a named query shown on its page
PAGE_MAX = 1_000_000  # a page number past this is no page (DuckDB's OFFSET would overflow long before)
ROW_MAX = 2**62  # a message row to search on from (rowids of a warehouse of any size)
# the names the explorer answers to: a page elsewhere that resolves its own name to 127.0.0.1 (DNS rebinding)
# sends its own Host and gets 400
HOSTS = ["127.0.0.1", "localhost", "::1", "[::1]"]
log = logging.getLogger("forensics.serve")
FOLD_CHARS, FOLD_LINES = 1000, 15  # a tool result longer than either arrives folded, its size on the fold
DIFF_CELLS = 4_000_000  # steps(A) x steps(B) the explorer aligns (a few seconds); past it `forensics diff` does
MARKDOWN = {"person", "assistant"}  # origins whose text is read as Markdown; the rest is shown as written


def _finalize(value: Any) -> Any:
    """Every string a template renders is masked, whatever it came from (a macro's output, already built from
    masked strings, is markup to keep)."""
    if isinstance(value, Markup):
        return value
    return redact(value) if isinstance(value, str) else value


def _env() -> Environment:
    env = Environment(
        loader=PackageLoader("forensics.serve", "templates"),
        autoescape=select_autoescape(),
        finalize=_finalize,
        trim_blocks=True,
        lstrip_blocks=True,
    )
    env.filters["positions"] = positions_text
    env.filters["kindwords"] = kind_words
    env.globals["metric_words"] = data.METRIC_WORDS  # a figure as a reader says it, its column name on hover
    env.filters["size"] = lambda b: "–" if b is None else (f"{b / 1024:.1f} KB" if b >= 1024 else f"{b} B")
    env.filters["num"] = lambda v: "–" if v is None else (f"{v:.3g}" if isinstance(v, float) else str(v))
    env.filters["pct"] = lambda v: "–" if v is None else f"{v:.0%}"
    env.filters["tokens"] = lambda v: "–" if v is None else (f"{v / 1e6:.1f} M" if v >= 1e6 else f"{v:,}")
    env.filters["markdown"] = markdown
    env.filters["outcome"] = lambda r: (
        ("passed" if r["success"] else "failed")
        if r["success"] is not None
        else (f"score {r['score']:.3g}" if r["score"] is not None else "")
    )
    # a column name wraps at its _ and / (issue 47: tables fit a 1,280 px window); a cell's class: n for a number
    # (kept on one line, right-aligned), id for a long word such as an id or a path (broken anywhere)
    env.filters["breakable"] = lambda h: Markup(report_html.breakable(redact(str(h))))
    env.filters["cellclass"] = lambda v: (
        "n"
        if isinstance(v, int | float) and not isinstance(v, bool)
        else ("id" if isinstance(v, str) and report_html.LONG_TOKEN.search(v) else "")
    )
    env.tests["folded"] = lambda m: m["role"] == "tool" or m["origin"] == "tool_result"
    return env


def create_app(db: str | os.PathLike[str], personal: bool = True) -> Starlette:
    """The explorer over the warehouse at ``db`` (which must exist). ``personal``: e-mail addresses, phone, card
    and IBAN numbers masked on every page (``forensics.text.personal``; ``[redact] personal = "off"`` turns it off)."""
    if not os.path.exists(db):
        raise ForensicsError(f"{db}: no warehouse here; run `forensics ingest SOURCE --db {db}` first")
    env = _env()
    shown: Callable[[str], str] = personal_data.mask_markup if personal else (lambda doc: doc)

    def page(template: str, build: Callable[[Any, Request], dict[str, Any] | None]) -> Callable[[Request], Response]:
        def endpoint(request: Request) -> Response:
            try:
                with open_warehouse(db, read_only=True, sealed=True) as wh:
                    ctx = build(wh.con, request)
                if ctx is None:
                    return HTMLResponse(
                        env.get_template("missing.html").render(db=str(db), path=request.url.path), status_code=404
                    )
                status = ctx.pop("status", 200)
                return HTMLResponse(
                    shown(env.get_template(template).render(db=str(db), request=request, **ctx)), status_code=status
                )
            except HTTPException:
                raise
            except ForensicsError as e:  # the warehouse cannot be read now (a report holds it): say so, in one line
                return HTMLResponse(html.escape(redact(str(e))), status_code=503)
            except Exception as e:  # a bug: one line in the log, a plain page to the browser, no traceback
                log.error("%s %s: %s", request.method, request.url.path, redact(f"{type(e).__name__}: {e}")[:300])
                return HTMLResponse("internal error; the explorer's log says what", status_code=500)

        return endpoint

    routes = [
        Route("/", page("overview.html", _overview), methods=["GET"]),
        Route("/conversations", page("conversations.html", _conversations), methods=["GET"]),
        Route("/c/{cid:str}", page("conversation.html", _conversation), methods=["GET"]),
        Route("/c/{cid:str}/m/{position:str}", page("message.html", _message), methods=["GET"]),
        Route("/findings", page("findings.html", _findings), methods=["GET"]),
        Route("/secrets", page("secrets.html", _secrets), methods=["GET"]),
        Route("/search", page("search.html", _search), methods=["GET"]),
        Route("/diff", page("diff.html", _diff), methods=["GET"]),
        Route("/queries", page("queries.html", lambda con, r: {"queries": analyzers.named_queries()}), methods=["GET"]),
        Route("/queries/{name:str}", page("query.html", _query), methods=["GET"]),
        Mount("/static", StaticFiles(packages=[("forensics.serve", "static")]), name="static"),
        # the report's script: the same table sorting as report.html
        Mount("/report-assets", StaticFiles(packages=[("forensics.report", "assets")]), name="report-assets"),
    ]
    return Starlette(
        routes=routes, middleware=[Middleware(TrustedHostMiddleware, allowed_hosts=HOSTS), Middleware(SecurityHeaders)]
    )


def _int(request: Request, name: str, default: int, low: int = 1, high: int = PAGE_MAX) -> int:
    """A page number, position or row from the query string; malformed or out of range: 400, never a 500 from
    the database."""
    raw = request.query_params.get(name)
    if raw is None or raw == "":
        return default
    if not raw.isascii() or not raw.isdigit() or len(raw) > 19 or not low <= int(raw) <= high:
        raise HTTPException(400, f"{name} must be a whole number from {low} to {high}")
    return int(raw)


def _blocks(blocks: tuple[Block, ...]) -> Markup:
    """The report's own blocks (``report.compose``) as report.html renders them, masked as every string a template
    renders is (``_finalize``)."""
    return Markup(redact("\n".join(map(report_html.one, blocks))))


def _overview(con: Any, request: Request) -> dict[str, Any]:
    digest = data.digest(con)
    wrong = data.what_went_wrong(con)
    if wrong and wrong["ungraded"]:  # as the report's HTML says it: escaped, its `code spans` as code
        wrong["ungraded"] = _blocks((Paragraph(prose(wrong["ungraded"])),))
    return {
        "digest": digest,
        "what_to_change": _blocks(compose.what_to_change(digest["what_to_change"])) if digest else "",
        "reported": data.reported(con),
        "wrong": wrong,
        "conversations": con.execute("SELECT count(*) FROM conversations").fetchall()[0][0],
    }


def _conversations(con: Any, request: Request) -> dict[str, Any]:
    q = request.query_params
    f = data.Filters(
        q.get("source", ""),
        q.get("model", ""),
        q.get("since", ""),
        q.get("until", ""),
        q.get("kind", ""),
        q.get("agent", ""),
        q.get("outcome", ""),
        q.get("sort", "findings" if data.reported(con) else "label"),
        q.get("dir", "desc") == "desc",
        _int(request, "page", 1),
    )
    rows, total = data.conversations(con, f)
    return {
        "rows": rows,
        "total": total,
        "filters": f,
        "choices": data.choices(con),
        "reported": data.reported(con),
        "metrics": data.METRICS,
        "pages": max(1, -(-total // data.PAGE)),
        "query": {k: v for k, v in q.items() if k not in ("page", "sort", "dir")},
    }


def _conversation(con: Any, request: Request) -> dict[str, Any] | None:
    conv = data.conversation(con, request.path_params["cid"])
    if conv is None:
        return None
    cid = conv["conversation_id"]
    found, _ = data.findings(con, conversation_id=cid)
    cited: dict[int, list[int]] = {}  # position -> the findings (their index on this page) that cite it
    for i, f in enumerate(found, 1):
        for p in f["positions"] or []:
            cited.setdefault(p, []).append(i)
    at = _int(request, "at", -1, low=0)  # a position to show (a finding's evidence, a search hit), in context
    start = max(0, at - data.CONTEXT) if at >= 0 else _int(request, "from", 0, low=0)
    messages = data.transcript(con, cid, start)
    windows = data.windows(con, cid)
    return {
        "conv": conv,
        "findings": found,
        "cited": cited,
        "start": start,
        "at": at,
        "shown": {m["position"] for m in messages},
        "messages": messages,
        "windows": windows,
        "earlier": max([w for w in windows if w < start] or [-1]),
        "page_size": data.TRANSCRIPT_PAGE,
        "later": None if len(messages) < data.TRANSCRIPT_PAGE else messages[-1]["position"] + 1,
        "text_max": data.TEXT_MAX,
        "fold_chars": FOLD_CHARS,
        "fold_lines": FOLD_LINES,
        "markdown_origins": MARKDOWN,
    }


def _message(con: Any, request: Request) -> dict[str, Any] | None:
    conv = data.conversation(con, request.path_params["cid"])
    raw = request.path_params["position"]  # a path segment, parsed here: 40 digits are no INTEGER, a 404
    if not (raw.isascii() and raw.isdigit() and len(raw) <= 9):
        return None
    msg = conv and data.message(con, conv["conversation_id"], int(raw))
    return {"conv": conv, "msg": msg} if msg else None


def _findings(con: Any, request: Request) -> dict[str, Any]:
    q = request.query_params
    rows, total = data.findings(
        con, kind=q.get("kind", ""), severity=q.get("severity", ""), page=_int(request, "page", 1)
    )
    return {
        "rows": rows,
        "total": total,
        "kind": q.get("kind", ""),
        "severity": q.get("severity", ""),
        "kinds": data.choices(con)["kinds"],
        "page": _int(request, "page", 1),
        "pages": max(1, -(-total // data.FINDINGS_PAGE)),
        "reported": data.reported(con),
    }


def _secrets(con: Any, request: Request) -> dict[str, Any]:
    """The secret exposure ledger (docs/secrets.md#the-exposure-ledger-which-secret-where-seen-by-whom), read through the view an analyzer declares: each secret by kind and
    fingerprint, each copy linked to its masked position, the rotation checklist."""
    read = analyzers.view("secret_ledger")
    found = read(con) if read is not None else {"secrets": [], "rotation": []}
    return {"found": found, "labels": data.labels_of(con) if found["secrets"] else {}}


def _search(con: Any, request: Request) -> dict[str, Any]:
    q = request.query_params
    s = search.Search(q.get("q", ""), q.get("mode") == "regex", q.get("role", ""), q.get("agent", ""))
    after = _int(request, "after", 0, low=0, high=ROW_MAX)
    ctx: dict[str, Any] = {
        "s": s,
        "result": None,
        "error": "",
        "agents": data.choices(con)["agents"],
        "page_size": search.PAGE,
        "after": after,
        "query": {k: v for k, v in q.items() if k != "after"},
    }
    if s.q:
        try:
            ctx["result"] = result = search.search(con, s, after)
        except search.BadSearch as e:
            ctx["error"], ctx["status"] = str(e), 400
            return ctx
        labels = data.labels_of(con)
        for h in result.hits:
            h["label"] = labels[h["conversation_id"]].text
    return ctx


def _diff(con: Any, request: Request) -> dict[str, Any]:
    a, b = request.query_params.get("a", ""), request.query_params.get("b", "")
    if not a or not b:
        return {"d": None, "error": "", "pairs": data.task_pairs(con)}
    try:
        ra, rb = (load_run(con, resolve(con, x)) for x in (a, b))
    except ForensicsError as e:  # an unknown or ambiguous id: said on the page
        return {"d": None, "error": redact(str(e)), "pairs": [], "status": 404}
    if len(ra.steps) * len(rb.steps) > DIFF_CELLS:
        return {
            "d": None,
            "pairs": [],
            "status": 400,
            "error": f"{len(ra.steps)} and {len(rb.steps)} steps are too many to align here; "
            f"`forensics diff {ra.conversation_id} {rb.conversation_id}` does it in the terminal",
        }
    d = between(ra, rb)
    return {
        "d": d,
        "rows": _aligned(d),
        "error": "",
        "pairs": [],
        "counts": {op: sum(x.op == op for x in d.aligned) for op in ("same", "changed", "only_a", "only_b")},
    }


def _aligned(d: RunDiff) -> list[dict[str, Any]]:
    """The alignment as the page's rows: each side's step (or none), the op, and whether it holds the first
    divergence (docs/outcomes.md#run-diff: step ``d.divergence`` of A or of B)."""
    rows, marked = [], False
    for x in d.aligned:
        past = (x.a is not None and x.a >= d.divergence) or (x.b is not None and x.b >= d.divergence)
        rows.append({"op": x.op, "a": _step(d.a, x.a), "b": _step(d.b, x.b), "first": past and not marked})
        marked = marked or past
    return rows


def _step(run: Run, i: int | None) -> dict[str, Any] | None:
    if i is None:
        return None
    s = run.steps[i]
    return {
        "conv": run.conversation_id,
        "position": s.position,
        "name": s.name,
        "arguments": redact(s.arguments),
        "said": " ".join(redact(run.said.get(s.position) or "").split()),
    }  # masked whole, before any cut


def _query(con: Any, request: Request) -> dict[str, Any] | None:
    name = request.path_params["name"]
    try:
        q = analyzers.named_query(name)
    except ForensicsError:
        return None
    try:
        check_read_only(con, q.sql)
    except ForensicsError as e:  # a named query that would write: refused on its page
        return {"q": q, "columns": [], "rows": [], "error": redact(str(e)), "more": False, "limit": QUERY_ROWS}
    try:
        df = mask_frame(frame(con, f"SELECT * FROM ({q.sql}) LIMIT {QUERY_ROWS + 1}"))
        error = ""
    except Exception as e:  # a derived table not written yet: say so on the page
        df, error = None, redact(str(e).splitlines()[0])
    rows = [] if df is None else [[_cell(v) for v in r] for r in df.head(QUERY_ROWS).iter_rows()]
    return {
        "q": q,
        "columns": [] if df is None else df.columns,
        "rows": rows,
        "error": error,
        "more": df is not None and df.height > QUERY_ROWS,
        "limit": QUERY_ROWS,
    }


def _cell(v: Any) -> str:
    if v is None:
        return "–"
    if isinstance(v, float):
        return f"{v:.4g}"
    if isinstance(v, (bytes, bytearray)):
        return bytes(v)[:64].hex() + ("…" if len(v) > 64 else "")
    text = str(v)
    return text if len(text) <= 300 else text[:299] + "…"
