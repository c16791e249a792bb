"""What a reader calls the agent behind a log format (``codex`` -> "Codex CLI"), for the sentences the report and the
explorer say about an agent ("Codex CLI: only 1 conversation (5 needed) to learn ..."). A format without a name
here is said by its identifier, as `forensics formats` lists it."""

from __future__ import annotations

NAMES = {
    "claude-code": "Claude Code",
    "claude-code-otel": "Claude Code (OpenTelemetry)",
    "codex": "Codex CLI",
    "gemini-cli": "Gemini CLI",
    "qwen-code": "Qwen Code",
    "aider": "aider",
    "openhands": "OpenHands",
    "swe-agent": "SWE-agent",
    "mini-swe-agent": "mini-swe-agent",
    "cline": "Cline / Roo Code",
    "chatgpt": "ChatGPT",
    "claude-ai": "Claude.ai",
    "open-webui": "Open WebUI",
    "decision-memory": "the decision-memory harness",
    "inspect": "Inspect AI",
    "otel": "OpenTelemetry traces",
    "continue": "Continue",
    "cursor": "Cursor",
    "copilot-cli": "GitHub Copilot CLI",
    "opencode": "OpenCode",
    "kimi-cli": "Kimi CLI",
    "atif": "ATIF trajectories",
    "goose": "Goose",
    "crush": "Crush",
    "openclaw": "OpenClaw",
    "pi": "pi",
    "letta": "Letta",
    "nanobot": "nanobot",
    "moatless": "Moatless Tools",
    "hermes": "Hermes Agent",
    "terminal-bench": "terminal-bench",
    "tau2": "tau2-bench",
    "mint": "MINT",
    "agentbench": "AgentBench",
    "openai": "OpenAI-style chat logs",
    "sharegpt": "ShareGPT logs",
    "sqlite": "the SQLite harness",
    "jsonl": "the JSONL harness",
    "dialogues": "labeled dialogues",
    "unknown": "an unknown agent",
}
SUB_AGENT = " sub-agent"


def agent_name(kind: str) -> str:
    """A kind of agent as a reader says it: its format's name, "sub-agents of" when it is a sub-agent's transcript,
    and the model after it when the kind is one model's (``"claude-code sub-agent"`` -> "Claude Code's sub-agents",
    ``"codex gpt-5"`` -> "Codex CLI with gpt-5")."""
    fmt, _, rest = kind.partition(" ")
    sub = rest == SUB_AGENT.strip() or rest.startswith(SUB_AGENT.strip() + " ")
    model = rest[len(SUB_AGENT.strip()) :].strip() if sub else rest.strip()
    name = NAMES.get(fmt, fmt)
    if sub:
        name = f"{name}'s sub-agents"
    return f"{name} with {model}" if model else name
