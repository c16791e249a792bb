"""``user_repeated`` for a request restated in new words (GUIDE §5: "the person repeats an instruction or request
... repeats caused by the assistant's non-answer or non-fix also count"; docs/definitions.md#problems-a-reviewer-flags).
A reviewer reads a restatement from what the request is about and what was done since it was first asked, not from
its wording: a later person turn asks again for the *object* of an earlier one (its content words, names, paths),
and the replies since did not do it. Two rules:

- ``asked_again_reworded``: the later turn holds ``COVER`` or more of the earlier request's content terms, at least
  ``MIN_SHARED`` of them (all of them when the earlier request names fewer): the same deliverable asked for again
  in other words, with more said or fewer ("create a custom theme for me then open it with the code command" ...
  "ok, create a new custom theme and open it with code command"). Word-for-word repeats are ``asked_again``'s.
  A request shorter than ``MIN_SHORT`` terms counts when the person's next turn holds all of them and says more,
  after a reply that did not take it up (no call, none of its terms named: ``_not_taken_up``).
- ``asked_again_undone``: since the earlier request, the agent's call for it was refused (the harness's own words:
  Claude Code "The user doesn't want to proceed", Codex "patch rejected by user", Gemini CLI "User did not allow",
  Crush "Permission denied", SWE-agent "The user rejected"), or the agent declined it ("I don't have a way to"), or
  its last reply offered help as if nothing had been asked ("Sure thing! What would you like to work on?"), and the
  later turn, neither a question nor
  an addition nor an approval ("looks good but add ..."), names what the earlier request or the refused call named
  (``UNDONE_COVER`` of the request's terms, or one of the refused call's or of the words that announced it), or
  only says "again". It must be the person's next turn after the refusal or the decline: their answer to it.

Content terms: the person's own words (``prose.own_words``: no pasted code, logs or IDE context), stop words out,
Han text as character pairs (``keywords.content_tokens``, ``bigram``), Latin words folded by a light stemmer
(themes/theme, created/create), identifiers and paths whole.
"""

from __future__ import annotations

import functools
import re
from typing import TYPE_CHECKING

import duckdb

from forensics.analyzers.problems.said import CLAIM_RE, DECLINE_RE
from forensics.kernel.selection import SELECTED
from forensics.text.cues import ADDITION_CUES
from forensics.text.identifiers import target_tokens, values_text
from forensics.text.keywords import content_tokens
from forensics.text.prose import own_words

if TYPE_CHECKING:
    from forensics.analyzers.problems.turns import Turn

COVER = 0.7  # share of the earlier request's content terms the later turn holds: the same request asked again
MIN_SHARED = 4  # ... and at least this many of them (a short request: all of them, and at least MIN_SHORT)
MIN_SHORT = 3
OWN_SHARE = 0.5  # ... and they are at least this share of the later turn's own terms
UNDONE_COVER = 0.5  # after a refusal, a decline or no action: the share of the request's terms that is enough
BACK = 4  # earlier person turns compared (the last BACK that got an answer)
MAX_TERMS = 40  # a request with more content terms than this is a document or a task text, not one request
ARGS_CHARS = 300  # of a refused call's argument values read for what it named
CONTEXT_CHARS = 400  # of each reply or tool result read for a refusal or a decline

# a tool call the person or the harness's permission prompt refused: each harness's own words
REFUSED = re.compile(
    r"^\W*(?:The user doesn't want to proceed with this tool use|\[Request interrupted by user for tool use\]|"
    r"patch rejected by user|\[Operation Cancelled\] Reason: User did not allow|Permission denied\s*$|"
    r"Commands? not executed\. The user rejected|user_rejected)",
    re.IGNORECASE,
)
# a decline the endings' DECLINE does not read: "I don't have a way to", "there is no way for me to"
DECLINED = re.compile(r"(?i)\bI (?:don['’]?t|do not) have (?:a|any) way to\b|\bno way for me to\b")
# the turn approves what was done before asking for more ("looks good but add ...", "great, now ...")
APPROVAL = re.compile(
    r"(?i)^\W*(?:looks? (?:good|great|fine)|lgtm|great|perfect|nice|awesome|excellent|thanks?|thank you|"
    r"好的|很好|不错|谢谢|отлично|спасибо|хорошо|いいね|ありがとう|parfait|super|genial|perfekt)\b"
)
ADDITION = re.compile("|".join(ADDITION_CUES), re.IGNORECASE)
# the whole turn asks for the last thing again, in so many words
AGAIN_ONLY = re.compile(
    r"(?i)^\W*(?:(?:try|do it|do that|run it|please)?\s*(?:again|once more|one more time)|retry|redo|"
    r"еще раз|ещё раз|снова|再来一次|再试一次|重试|もう一度|nochmal|noch einmal|encore|otra vez|de nuevo)\W*$"
)
# a reply that offers help as if no request had been made: a greeting's question, not an answer
OFFERED = re.compile(
    r"(?i)\bhow (?:can|may|could) I (?:help|assist)\b|\bwhat (?:would|do) you (?:like|want) (?:me )?to (?:work on|do)\b|"
    r"\bwhat can I (?:do for you|help (?:you )?with)\b|有什么(?:可以|能)?(?:帮|帮助)|何をお手伝い|무엇을 도와"
)
OFFER_CHARS = 200  # a longer reply answered something before offering more
QUESTION = re.compile(r"\?(?:\s|$)|？")
WORD = re.compile(r"[a-z]+")


@functools.lru_cache(maxsize=8192)
def _stem(word: str) -> str:
    """A Latin word folded to a rough stem: plural, past and gerund endings off (themes, created, creating)."""
    if not WORD.fullmatch(word) or len(word) <= 4:
        return word
    for end in ("ing", "ed", "es", "s"):
        if word.endswith(end) and len(word) - len(end) >= 4:
            return word[: -len(end)].rstrip("e") if end in ("ing", "ed") else word[: -len(end)]
    return word.rstrip("e")


@functools.lru_cache(maxsize=8192)
def terms(text: str) -> frozenset[str]:
    """The content terms of a person's own words: content tokens (stop words out, Han pairs), stemmed, and the
    identifiers and paths they name."""
    own = own_words(text)
    out = {_stem(t) for t in content_tokens(own, "bigram") if len(t) > 2 or not t.isascii()}
    out |= target_tokens(own, folders=False)
    return frozenset(out)


def _shown(text: str, shared: frozenset[str] | set[str], n: int = 5) -> str:
    """The words of ``text`` whose terms are ``shared``, as the person wrote them (the first ``n``, in order)."""
    own = own_words(text)
    words = [w for w in content_tokens(own, "bigram") if _stem(w) in shared] + [
        w for w in target_tokens(own, folders=False) if w in shared
    ]
    return ", ".join(list(dict.fromkeys(words))[:n])


Reply = tuple[int, str, str, list[str]]  # position, role, the first CONTEXT_CHARS characters, its calls (name, args)


def _is_question(text: str) -> bool:
    """The person's own words ask a question somewhere ("Why does X return nothing? The tests fail.")."""
    return bool(QUESTION.search(own_words(text)))


def restated(
    replies: list[Reply] | None, conv: list[Turn], prompts: dict[int, tuple[str, ...]] | None = None
) -> dict[int, tuple[str, str, int]]:
    """Per index of ``conv`` (one conversation's person turns), the rule, the norm naming the earlier request and
    what was done since, and the earlier turn's position. ``prompts``: the turns (by index) that open with a prompt
    template, with that opening: two turns that open with the same template share its words, not a request (a
    benchmark's step prompts), and are never compared. ``replies``: the conversation's replies (``replies``: what they
    did; None without a warehouse, ``asked_again_reworded`` alone, with no reply read)."""
    replies = replies or []
    prompts = prompts or {}
    out: dict[int, tuple[str, str, int]] = {}
    for k, t in enumerate(conv):
        if t.index == 0 or not t.replied:
            continue
        hit = _reworded(conv, k, prompts, replies) or (_undone(conv, k, prompts, replies) if replies else None)
        if hit:
            out[k] = hit
    return out


def between(replies: list[Reply], lo: int, hi: int) -> list[Reply]:
    """The replies strictly between two positions."""
    return [r for r in replies if lo < r[0] < hi]


def _reworded(
    conv: list[Turn], k: int, prompts: dict[int, tuple[str, ...]], replies: list[Reply]
) -> tuple[str, str, int] | None:
    """``asked_again_reworded``: the latest of the last ``BACK`` answered turns whose request ``conv[k]`` asks again:
    it is no addition (``cues.ADDITION_CUES``), holds ``COVER`` of that request's terms (at least ``MIN_SHARED``; all of a short one's, at least
    ``MIN_SHORT``), and they are ``OWN_SHARE`` of its own (a new request that reuses the old one's words says more
    besides); neither is a question (a question's words come back in the person's report of what its answer
    found: "I've checked: mobile data is enabled ... what next?"); and the reply to that request did not say it was done (``said.CLAIM``: a request done and then
    asked for again in a variant is a new request)."""
    t = conv[k]
    mine = terms(t.full or t.text)
    own = own_words(t.full or t.text)
    if not mine or len(mine) > MAX_TERMS or _is_question(t.full or t.text) or ADDITION.search(own[:200]):
        return None
    earlier = [
        j for j in range(k - 1, -1, -1) if conv[j].answered_next and (j not in prompts or prompts[j] != prompts.get(k))
    ][:BACK]
    for j in earlier:
        theirs = terms(conv[j].full or conv[j].text)
        if not theirs or len(theirs) > MAX_TERMS or _is_question(conv[j].full or conv[j].text):
            continue
        shared = mine & theirs
        answer = between(replies, conv[j].position, conv[j + 1].position)
        if j == k - 1 and _not_taken_up(theirs, mine, answer):
            return (
                "asked_again_reworded",
                f"the request at [{conv[j].position}], its reply neither acting on it nor naming it, spelled out "
                f"again: all of its {len(theirs)} content terms ({_shown(conv[j].full or conv[j].text, shared)})",
                conv[j].position,
            )
        need = MIN_SHARED if len(theirs) >= MIN_SHARED else max(len(theirs), MIN_SHORT)
        if len(shared) < need or len(shared) < COVER * len(theirs) or len(shared) < OWN_SHARE * len(mine):
            continue
        claimed = next((r[2] for r in answer if r[1] == "assistant" and CLAIM_RE.search(r[2])), None)
        if claimed is not None:
            continue
        return (
            "asked_again_reworded",
            f"the request at [{conv[j].position}], not said to be done, asked again: {len(shared)} of its "
            f"{len(theirs)} content terms ({_shown(conv[j].full or conv[j].text, shared)})",
            conv[j].position,
        )
    return None


def _not_taken_up(theirs: frozenset[str], mine: frozenset[str], answer: list[Reply]) -> bool:
    """A short request (fewer than ``MIN_SHORT`` content terms: "sleep") that the person's next turn spells out
    (it holds every one of them and says more: "dude sleep 5 seconds via bash"), after a reply that did not take it
    up: it made no call and its words (the first ``CONTEXT_CHARS`` of each) name none of the request's terms (a
    summary of the session instead of a sleep). A reply that names the request answered it, however briefly
    ("how to do X" answered about X, then "an example of how to do X" is a new request)."""
    said = [r for r in answer if r[1] == "assistant"]
    if not theirs or len(theirs) >= MIN_SHORT or not theirs < mine or not said or any(r[3] for r in answer):
        return False
    return not any(theirs & terms(r[2]) for r in said)


def _undone(
    conv: list[Turn], k: int, prompts: dict[int, tuple[str, ...]], replies: list[Reply]
) -> tuple[str, str, int] | None:
    """``asked_again_undone``: between the person's last turn and this one, a call was refused (``REFUSED``) or the
    last reply declined (``DECLINED``, ``said.DECLINE``); this turn is the person's answer to that, and it is
    neither a question nor an addition nor an approval, and names what the request or the refused call named
    (``UNDONE_COVER`` of the request's terms, or a term of the refused call or of what the agent said it would
    do with it), or only says "again". A declined request may come back one turn later (the person first says
    something else, then asks again): then ``UNDONE_COVER`` of its terms, the decline being the last reply to it."""
    t = conv[k]
    text = t.full or t.text
    own = own_words(text)
    if QUESTION.search(own) or APPROVAL.search(own) or ADDITION.search(own[:200]):
        return None
    for back in (1, 2):
        j = k - back
        if j < 0 or (back == 2 and conv[j + 1].index == 0):
            break
        e = conv[j]
        if not e.answered_next or (j in prompts and prompts[j] == prompts.get(k)):
            continue
        answer = between(replies, e.position, conv[j + 1].position)
        refused, refused_terms, declined = what_was_refused(answer)
        offered = offered_help(answer) if back == 1 and not (refused or declined) else ""
        if back == 2:
            refused, refused_terms = "", frozenset()
        if not refused and not declined and not offered:
            continue
        mine, theirs = terms(text), terms(e.full or e.text)
        shared = (mine & theirs) | (mine & refused_terms)
        named = bool(theirs) and len(mine & theirs) >= UNDONE_COVER * len(theirs) or bool(mine & refused_terms)
        if not ((back == 1 and AGAIN_ONLY.match(own)) or (shared and named)):
            continue
        why = (
            f"its call refused (“{refused[:50]}”)"
            if refused
            else f"the agent declined (“{declined[:50]}”)"
            if declined
            else f"the reply asked what the person wanted instead (“{offered[:50]}”)"
        )
        return (
            "asked_again_undone",
            f"the request at [{e.position}], {why}; asked again" + (f" ({_shown(text, shared)})" if shared else ""),
            e.position,
        )
    return None


def offered_help(answer: list[Reply]) -> str:
    """The last reply to a request, when it offers help as if nothing had been asked (``OFFERED``: "Sure thing! What
    would you like to work on in the project?"): a short reply (``OFFER_CHARS``) that ignored the request; "" else."""
    said = [r[2] for r in answer if r[1] == "assistant" and r[2].strip()]
    if not said or len(said[-1].strip()) > OFFER_CHARS or not OFFERED.search(said[-1]):
        return ""
    return " ".join(said[-1].split())


def what_was_refused(answer: list[Reply]) -> tuple[str, frozenset[str], str]:
    """Of the replies to a request: the first refusal of a call (its text), the content terms of what was refused
    (the calls' names and argument values, and what the agent said they would do), and the last reply's decline."""
    refused_terms: set[str] = set()
    refused = ""
    last_calls: list[str] = []
    last_said = ""
    for _pos, role, text, calls in answer:
        if role == "assistant":
            last_calls, last_said = calls, text
        elif REFUSED.search(text):
            refused = refused or text.strip()
            refused_terms |= terms(last_said)  # what the agent said the refused call would do
            for c in last_calls:
                name, _, arguments = c.partition("\n")
                refused_terms |= terms(name.replace("_", " ") + "\n" + values_text(arguments)[:ARGS_CHARS])
    said = [r[2] for r in answer if r[1] == "assistant" and r[2].strip()]
    declined = ""
    if said and (m := DECLINE_RE.search(said[-1]) or DECLINED.search(said[-1])):
        declined = said[-1][m.start() :].strip()
    return refused, frozenset(refused_terms), declined


def replies(con: duckdb.DuckDBPyConnection, cids: list[str]) -> dict[str, list[Reply]]:
    """Per conversation of ``cids`` (selected ones), its main-path messages that are not the person's: position, role,
    the first ``CONTEXT_CHARS`` characters, its calls (name, a newline, the arguments). One query for all of them."""
    if not cids:
        return {}
    rows = con.execute(
        f"""SELECT m.conversation_id, m.position, m.role, left(coalesce(m.content, ''), {CONTEXT_CHARS}),
                   (SELECT list(coalesce(t.name, '') || chr(10) || coalesce(t.arguments, '') ORDER BY t.call_index)
                    FROM tool_calls t WHERE t.conversation_id = m.conversation_id AND t.position = m.position)
            FROM messages m WHERE m.conversation_id IN (SELECT unnest(?::VARCHAR[])) AND m.on_main_path
              AND coalesce(m.origin, '') <> 'person' AND m.conversation_id IN (SELECT conversation_id FROM {SELECTED})
            ORDER BY m.conversation_id, m.position""",
        [cids],
    ).fetchall()
    out: dict[str, list[Reply]] = {}
    for cid, p, r, x, calls in rows:
        out.setdefault(str(cid), []).append((int(p), str(r), str(x), [str(c) for c in (calls or [])]))
    return out
