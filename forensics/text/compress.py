"""Tool-result compression as the seed harness does it (docs/definitions.md#tool-result-compression-replay).

``should_summarize`` decides, ``extract_key_info`` shrinks. Both are pure, so the replay over the warehouse
(``forensics.analyzers.compression``, SQL in ``queries/compression_replay.sql``) can be checked against
them result by result.

Units: sizes are UTF-8 bytes on both sides of the share rule, as the harness (Rust ``str::len``) measures
them. The context of a tool result is everything before it on the main path.

The bound. The seed harness keeps *every* error/panic/失败 line and promises the output "never grows too long"
(全错误行 ... 不超长), so an input made only of error lines needs a cap. Ours: besides the first and last
``head_tail_lines`` lines, at most ``MAX_KEY_LINES`` (20) matching lines from the middle (the first ones:
where a failure starts), and every kept line cut to ``MAX_LINE_CHARS`` (500) characters plus "…" (a
minified JSON result is one line; uncut it would pass through whole). The output therefore holds at most
2·N + 20 lines of ≤ 501 characters, plus one omission marker per gap. Input where nothing would be dropped
or cut (empty, short, few short lines) comes back unchanged, the very same string.
"""

from __future__ import annotations

import re

KEY_LINE = re.compile(r"error|panic|失败", re.IGNORECASE)
KEY_LINE_SQL = "(?i)error|panic|失败"  # the same pattern for DuckDB (RE2)
MAX_KEY_LINES = 20
MAX_LINE_CHARS = 500
CUT_MARK = "…"


def omission_marker(lines: int) -> str:
    return f"[... {lines} lines omitted ...]"


def should_summarize(
    result_bytes: int, context_bytes: int, summarize_bytes: int = 2000, summarize_share: float = 0.40
) -> bool:
    """More than ``summarize_bytes`` (2000 is kept, 2001 summarized), or more than ``summarize_share`` of the
    context before it; an empty context (nothing before the result) gives the share rule nothing to say."""
    return result_bytes > summarize_bytes or (context_bytes > 0 and result_bytes > summarize_share * context_bytes)


def extract_key_info(text: str, head_tail_lines: int = 5) -> str:
    """Error lines plus the first and last ``head_tail_lines`` lines, a marker where lines were left out."""
    lines = text.split("\n")
    n, ht = len(lines), max(head_tail_lines, 0)
    keep = [i < ht or i >= n - ht for i in range(n)]
    budget = MAX_KEY_LINES
    for i in range(ht, n - ht):
        if budget and KEY_LINE.search(lines[i]):
            keep[i], budget = True, budget - 1
    if all(keep) and all(len(x) <= MAX_LINE_CHARS for x in lines):
        return text
    out: list[str] = []
    gap = 0
    for line, kept in zip(lines, keep):
        if not kept:
            gap += 1
            continue
        if gap:
            out.append(omission_marker(gap))
            gap = 0
        out.append(line if len(line) <= MAX_LINE_CHARS else line[:MAX_LINE_CHARS] + CUT_MARK)
    if gap:
        out.append(omission_marker(gap))
    return "\n".join(out)
