"""What a reply says about the request (docs/definitions.md#problems-a-reviewer-flags): that it is done (``CLAIM``), or
that the agent will not do it (``DECLINE``). The claim rules (``endings``) hold these against the run's evidence; the
restatement rules (``restated``) read whether a request was said done or declined before the person asked again.
RE2 patterns (SQL preselects with them), read alike by Python."""

from __future__ import annotations

import re

# the assistant says the work is done or works (not a plan: "I will fix")
CLAIM = (
    r"(?im)\b(?:done|fixed|resolved|works now|now works|should now (?:work|be)|is now (?:fixed|working|"
    r"correct|in place|compliant|implemented)|now (?:opens|shows|displays|loads|starts|runs|passes)|"
    r"(?:has|have|are|is) been (?:fixed|resolved|updated|implemented|added|applied)|successfully|"
    r"(?:tests?|checks?)\b[^.\n]{0,40}\b(?:pass(?:ed|es)?|green)|looks correct|no changes are needed|"
    r"fully (?:\w+-)?compliant|(?:is|are|was|were|now|all|fully|been|task|step|work|changes?|implementation|migration|"
    r"refactor(?:ing)?)\s+(?:\*\*)?complete[d]?\b|I(?:['’]ve| have)? completed\b|completed (?:the|all|your|this|it|"
    r"each|every)\b)|^\W*complete[d]?\b|^\W*(?:added|implemented|fixed|updated|created|scaffolded)\b|"
    r"✅|j['’]ai (?:mis à jour|ajouté|corrigé|appliqué|modifié)|appliqué les correctifs|已完成|已经(?:修复|完成|实现)|(?:已|已经)?成功(?:地)?(?:修复|完成|运行|通过|实现|添加|更新|解决)|"
    # the same claims in the other languages agents answer in (they reply in the person's language)
    r"\bhe (?:añadido|actualizado|corregido|implementado|creado|aplicado)\b|\bcon éxito\b|"
    r"\bich habe\b[^.\n]{0,60}\b(?:hinzugefügt|aktualisiert|behoben|implementiert|geändert|erstellt)\b|\berfolgreich\b|"
    r"\b(?:adicionei|atualizei|corrigi|implementei)\b|\bcom sucesso\b|"
    r"\bho (?:aggiunto|aggiornato|corretto|implementato|creato)\b|\bcon successo\b|"
    r"(?:исправил|добавил|обновил|реализовал|исправлено|готово|успешно)|"
    r"(?:修正|追加|更新|実装|完了)しました|"
    r"(?:수정|추가|변경|구현|완료)(?:했습니다|하였습니다|했어요)|성공적으로"
)
# the assistant declines or hands back a task (its tools could do it: only read where the run has tool calls)
DECLINE = (
    r"(?i)\bI(?: cannot| can['’]t| can ?not| am unable to|['’]m unable to) (?:fulfill|complete|do|help with|"
    r"perform|run|execute|use|access|edit|modify|make)\b|\bI don['’]t have (?:access|the ability)\b"
)
# an edit's body in a reply, the file's words and not the agent's to the person: aider's SEARCH/REPLACE blocks (to
# their ``>>>>>>> REPLACE``, or the reply's end when it was cut), an apply_patch body (``*** Begin Patch`` to ``*** End
# Patch``), a fenced diff or patch. The claim rules read a reply without them: an aider reply whose SEARCH block quoted
# the notes file ("Created `.pylintrc` to ... resolve the pylint error") was read as a claim of work done
EDITS = (
    r"(?ms)^[ \t]*<{7} SEARCH[^\n]*$.*?(?:^[ \t]*>{7} REPLACE[^\n]*$|(?-m:$))|"
    r"^[ \t]*\*\*\* Begin Patch[^\n]*$.*?(?:^[ \t]*\*\*\* End Patch[^\n]*$|(?-m:$))|"
    r"^[ \t]*```[ \t]*(?:diff|patch|udiff)[ \t]*$.*?(?:^[ \t]*```[ \t]*$|(?-m:$))"
)
EDIT_MARKS = ("<<<<<<< SEARCH", "*** Begin Patch", "```diff", "```patch", "```udiff")  # a reply without these has none
# a claim word said of work still to do is no claim: "the code that needs to be fixed", "it will be done" (Python
# only: RE2 has no look-behind, so SQL preselects with ``CLAIM`` and every rule confirms with ``CLAIM_RE``)
CLAIM_RE = re.compile(r"(?im)(?<!\bbe\s)(?:" + CLAIM.removeprefix("(?im)") + ")")
DECLINE_RE = re.compile(DECLINE)
# any fenced block of code in a reply, an unclosed one to the reply's end: the words of a script it writes
# (``print("Model loaded successfully!")``, a heredoc's ``done < "$LOG"``) are the program's, not the agent's claim
FENCED = re.compile(r"```.*?(?:```|\Z)", re.S)
CODE_RE = re.compile(f"{EDITS}|{FENCED.pattern}", re.S | re.M)


def prose(text: str) -> str:
    """A reply's own words: its edits' bodies (``EDITS``) and every fenced block blanked, same length and lines (a
    match's place in the prose is its place in the text)."""
    if "```" not in text and not any(k in text for k in EDIT_MARKS):
        return text
    return CODE_RE.sub(lambda f: re.sub(r"[^\n]", " ", f.group()), text)
