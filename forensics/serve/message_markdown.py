"""Message text as Markdown, rendered safely for the transcript (markdown-it-py, CommonMark with tables).

What a model or a person wrote is hostile input: raw HTML in it is shown as text (``html: False``), a link
keeps its text but becomes a link only for ``http``, ``https`` and ``mailto`` (no ``javascript:``, ``data:``,
``file:`` or relative URLs that would call the explorer), and carries ``rel="noopener noreferrer nofollow"``;
an image becomes a link to it, never a request the page makes on its own (the CSP would block it anyway).
The text is masked before it is parsed, so a secret split by Markdown syntax is still caught whole.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any
from urllib.parse import urlsplit

from markdown_it import MarkdownIt
from markdown_it.renderer import RendererHTML
from markdown_it.token import Token
from markdown_it.utils import EnvType, OptionsDict
from markupsafe import Markup, escape

from forensics.kernel.redact import redact

SCHEMES = ("http", "https", "mailto")


def _valid(url: str) -> bool:
    return urlsplit(url.strip()).scheme.lower() in SCHEMES


def _link_open(self: RendererHTML, tokens: Sequence[Token], idx: int, options: OptionsDict, env: EnvType) -> str:
    tokens[idx].attrSet("rel", "noopener noreferrer nofollow")
    return self.renderToken(tokens, idx, options, env)


def _image(self: RendererHTML, tokens: Sequence[Token], idx: int, options: OptionsDict, env: EnvType) -> str:
    token = tokens[idx]
    alt = self.renderInlineAsText(token.children or [], options, env) or "image"
    src = str(token.attrGet("src") or "")
    return (
        f'<a class="img" href="{escape(src)}" rel="noopener noreferrer nofollow">[image: {escape(alt)}]</a>'
        if _valid(src)
        else f"[image: {escape(alt)}]"
    )


def _parser() -> MarkdownIt:
    md = MarkdownIt("commonmark", {"html": False, "linkify": False, "typographer": False})
    md.enable(["table", "strikethrough"])
    md.validateLink = _valid  # type: ignore[method-assign]
    md.add_render_rule("link_open", _link_open)
    md.add_render_rule("image", _image)
    return md


_MD = _parser()


def render(text: Any) -> Markup:
    """HTML for ``text`` read as Markdown, secrets masked; the result is markup the templates keep as is."""
    return Markup(_MD.render(redact(str(text or ""))))
