"""The config sections and keys of the skills analyzer (``forensics.analyzers.skills``), declared apart from its
code: its declaration holds these, and the config schema (``forensics.analyzers.schema``) reads them without
importing the analyzer."""

from __future__ import annotations

from forensics.config import Key

SECTIONS: dict[str, str] = {
    "skills": "Skill routing (docs/metrics.md#skills): the harness's trigger table and how the model loads skills."
}
KEYS: tuple[Key, ...] = (
    Key(
        "skills",
        "triggers",
        "",
        "the trigger table the harness routes skills with (skill_triggers.json: "
        '{"schema": 1, "skills": {"<skill id>": ["phrase", ...]}}); relative to this file; empty: none',
        "path",
    ),
    Key(
        "skills",
        "tools",
        ["Skill", "meta.loadSkill", "meta_loadSkill"],
        "tool calls that load a skill (Claude Code's Skill tool, the seed harness's meta.loadSkill)",
        "tool names",
    ),
    Key(
        "skills",
        "argument_keys",
        ["skill", "command", "name"],
        "the first of these arguments that holds text names the skill a load call loads",
        "argument names",
    ),
)
