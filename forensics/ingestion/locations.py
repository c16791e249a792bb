"""Where each agent keeps its logs on Linux and macOS: `forensics ingest --from AGENT`.

The agent's own variable for its home is honoured (``CODEX_HOME``, ``GEMINI_CLI_HOME``, ``CLAUDE_CONFIG_DIR``,
``CONTINUE_GLOBAL_DIR``, ``AIDER_CHAT_HISTORY_FILE``, ``XDG_DATA_HOME`` for OpenCode, ``PI_CODING_AGENT_DIR`` for pi, ``HERMES_HOME`` for Hermes Agent); ``FORENSICS_<AGENT>_PATH`` (``FORENSICS_CLAUDE_CODE_PATH``...)
or ``--path`` overrides everything. Editors' extension folders are looked up for VS Code and the editors
built on it (Cursor, Windsurf, VSCodium, Insiders).
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable
from pathlib import Path

from forensics.kernel.errors import ForensicsError

EDITORS = ("Code", "Code - Insiders", "Cursor", "Windsurf", "VSCodium")
CLINE_EXTENSIONS = ("saoudrizwan.claude-dev", "rooveterinaryinc.roo-cline")


def _home() -> Path:
    return Path.home()


def _app_support() -> Path:
    """Where desktop apps keep user data: ~/Library/Application Support (macOS), $XDG_CONFIG_HOME or ~/.config."""
    if sys.platform == "darwin":
        return _home() / "Library" / "Application Support"
    return Path(os.environ.get("XDG_CONFIG_HOME") or _home() / ".config")


def _env(name: str) -> Path | None:
    v = os.environ.get(name)
    return Path(v).expanduser() if v else None


def _codex() -> list[Path]:
    return [(_env("CODEX_HOME") or _home() / ".codex") / "sessions"]


def _gemini() -> list[Path]:
    return [(_env("GEMINI_CLI_HOME") or _home()) / ".gemini" / "tmp"]


def _claude_code() -> list[Path]:
    if _env("CLAUDE_CONFIG_DIR"):
        return [p / "projects" for p in map(Path, os.environ["CLAUDE_CONFIG_DIR"].split(","))]
    return [_home() / ".claude" / "projects", _app_support() / "claude" / "projects"]


def _cursor() -> list[Path]:
    user = _app_support() / "Cursor" / "User"
    return [user / "globalStorage" / "state.vscdb", *sorted((user / "workspaceStorage").glob("*/state.vscdb"))]


def _continue() -> list[Path]:
    return [(_env("CONTINUE_GLOBAL_DIR") or _home() / ".continue") / "sessions"]


def _cline() -> list[Path]:
    return [
        _app_support() / editor / "User" / "globalStorage" / ext / "tasks"
        for editor in EDITORS
        for ext in CLINE_EXTENSIONS
    ] + [_home() / ".cline" / "data" / "tasks"]


def _aider() -> list[Path]:
    """aider writes the history in the folder it runs in, the repository's root by default."""
    forced = _env("AIDER_CHAT_HISTORY_FILE")
    if forced:
        return [forced]
    here = Path.cwd()
    root = next((d for d in (here, *here.parents) if (d / ".git").exists()), None)
    return list(dict.fromkeys(d / ".aider.chat.history.md" for d in (here, root) if d is not None))


def _xdg_data() -> Path:
    return Path(os.environ.get("XDG_DATA_HOME") or _home() / ".local" / "share")


def _copilot() -> list[Path]:
    return [_home() / ".copilot" / "session-state"]


def _qwen() -> list[Path]:
    return [_home() / ".qwen" / "projects"]


def _opencode() -> list[Path]:
    return [_xdg_data() / "opencode" / "opencode.db"]


def _kimi() -> list[Path]:
    return [_home() / ".kimi" / "sessions"]


def _pi() -> list[Path]:
    return [(_env("PI_CODING_AGENT_DIR") or _home() / ".pi" / "agent") / "sessions"]


def _hermes() -> list[Path]:
    return [(_env("HERMES_HOME") or _home() / ".hermes") / "sessions"]


def _nanobot() -> list[Path]:
    return [_home() / ".nanobot" / "workspace" / "sessions"]  # the default workspace (config.json may move it)


AGENTS: dict[str, tuple[str, Callable[[], list[Path]], str]] = {
    "codex": ("Codex CLI", _codex, "CODEX_HOME"),
    "gemini": ("Gemini CLI", _gemini, "GEMINI_CLI_HOME"),
    "claude-code": ("Claude Code", _claude_code, "CLAUDE_CONFIG_DIR"),
    "cursor": ("Cursor", _cursor, ""),
    "continue": ("Continue", _continue, "CONTINUE_GLOBAL_DIR"),
    "cline": ("Cline / Roo Code", _cline, ""),
    "aider": ("aider", _aider, "AIDER_CHAT_HISTORY_FILE"),
    "copilot-cli": ("GitHub Copilot CLI", _copilot, ""),
    "qwen-code": ("Qwen Code", _qwen, ""),
    "opencode": ("OpenCode", _opencode, "XDG_DATA_HOME"),
    "kimi-cli": ("Kimi CLI", _kimi, ""),
    "pi": ("pi coding agent", _pi, "PI_CODING_AGENT_DIR"),
    "hermes": ("Hermes Agent", _hermes, "HERMES_HOME"),
    "nanobot": ("nanobot", _nanobot, ""),
}


def override_variable(agent: str) -> str:
    return "FORENSICS_" + agent.upper().replace("-", "_") + "_PATH"


def locate(agent: str, path: str | None = None) -> list[Path]:
    """The existing places that hold ``agent``'s logs; a one-line error naming where it looked when none does."""
    if agent not in AGENTS:
        raise ForensicsError(f"unknown agent {agent!r} for --from; choose one of {', '.join(AGENTS)}")
    name, candidates, own = AGENTS[agent]
    forced = Path(path).expanduser() if path else _env(override_variable(agent))
    looked = [forced] if forced else candidates()
    found = [p for p in looked if p.exists()]
    if not found:
        how = ", ".join(filter(None, [own and f"set {own}", f"set {override_variable(agent)}", "pass --path"]))
        raise ForensicsError(
            f"no {name} logs at {', '.join(map(str, looked[:3]))}{' ...' if len(looked) > 3 else ''} ({how})"
        )
    return found
