"""Named, ordered schema migrations recorded in the warehouse file itself.

A migration is a function ``mNNN_name(con)``; its name is stored in ``schema_migrations`` once it has run,
and ``meta.schema_version`` is the number of migrations applied. A file whose version is higher than
this toolkit knows is refused instead of being read with the wrong assumptions.
Column comments are the documentation: ``docs/warehouse.md`` is generated from them.
"""

from __future__ import annotations

from collections.abc import Callable

import duckdb

from forensics.warehouse import tool_errors
from forensics.warehouse.origin import origin_sql
from forensics.warehouse.own_words import own_words_sql

Migration = Callable[[duckdb.DuckDBPyConnection], None]
MIGRATIONS: list[Migration] = []


def migration(fn: Migration) -> Migration:
    MIGRATIONS.append(fn)
    return fn


def _table(con: duckdb.DuckDBPyConnection, name: str, doc: str, columns: list[tuple[str, str, str]]) -> None:
    con.execute(f"CREATE TABLE {name} ({', '.join(f'{c} {t}' for c, t, _ in columns)})")
    con.execute(f"COMMENT ON TABLE {name} IS '{_sql_str(doc)}'")
    for c, _, cdoc in columns:
        con.execute(f"COMMENT ON COLUMN {name}.{c} IS '{_sql_str(cdoc)}'")


def _sql_str(s: str) -> str:
    return s.replace("'", "''")


@migration
def m001_initial(con: duckdb.DuckDBPyConnection) -> None:
    _table(
        con,
        "meta",
        "Key/value facts about the warehouse file itself.",
        [
            ("key", "VARCHAR NOT NULL", "fact name, e.g. schema_version"),
            ("value", "VARCHAR", "its value, as text"),
        ],
    )
    _table(
        con,
        "sources",
        "One row per imported file (a SQLite database or a JSONL session file).",
        [
            ("source_id", "VARCHAR NOT NULL", "stable id: hash of the resolved path (and table/column for SQLite)"),
            ("path", "VARCHAR NOT NULL", "resolved absolute path of the source"),
            ("format", "VARCHAR NOT NULL", "importer used: sqlite or jsonl"),
            ("sha256", "VARCHAR", "SHA-256 of the file's bytes when last imported"),
            ("size", "BIGINT", "file size in bytes when last imported"),
            (
                "mtime_ns",
                "BIGINT",
                "file modification time (ns) when last imported; with size, the fast unchanged check",
            ),
            ("options", "VARCHAR", "importer options as JSON (SQLite table and column)"),
            ("imported_at", "TIMESTAMP", "UTC time of the last import that changed anything"),
        ],
    )
    _table(
        con,
        "import_runs",
        "One row per source per `forensics ingest` run: what was read and where it went.",
        [
            ("run_id", "VARCHAR NOT NULL", "id of the ingest run (shared by the sources of one command)"),
            ("source_id", "VARCHAR", "the source (NULL when it failed before it was identified)"),
            ("path", "VARCHAR NOT NULL", "the source path as given"),
            ("format", "VARCHAR", "importer used"),
            ("status", "VARCHAR NOT NULL", "imported, unchanged or failed"),
            ("started_at", "TIMESTAMP", "UTC start"),
            ("finished_at", "TIMESTAMP", "UTC end"),
            ("rows_read", "BIGINT", "SQLite rows or JSONL lines read (header line included)"),
            ("messages_read", "BIGINT", "message records read: array elements (SQLite) or entry lines (JSONL)"),
            ("messages_imported", "BIGINT", "messages new to the warehouse"),
            ("messages_unchanged", "BIGINT", "messages already in the warehouse, identical"),
            ("quarantined", "BIGINT", "records sent to quarantine this run; read = imported + unchanged + quarantined"),
            ("conversations_new", "BIGINT", "conversations seen for the first time"),
            ("conversations_updated", "BIGINT", "conversations whose messages changed or grew"),
            ("conversations_unchanged", "BIGINT", "conversations identical to the stored ones"),
            ("note", "VARCHAR", "what the user should know (missing header, error message)"),
        ],
    )
    _table(
        con,
        "conversations",
        "One row per conversation (SQLite row or JSONL session).",
        [
            ("conversation_id", "VARCHAR NOT NULL", "stable id: hash of the source and the native id"),
            ("source_id", "VARCHAR NOT NULL", "the source it came from"),
            ("native_id", "VARCHAR", "the id in the source: the row's id column (else rowid) or the session id"),
            ("title", "VARCHAR", "title column, or the first user message's first line"),
            ("provider", "VARCHAR", "provider as logged (openai, anthropic, ...)"),
            ("model", "VARCHAR", "model as logged"),
            ("created_at", "TIMESTAMP", "UTC creation time"),
            ("updated_at", "TIMESTAMP", "UTC last update (else the newest message time)"),
            ("message_count", "INTEGER", "messages stored, branches included"),
            ("fingerprint", "VARCHAR", "change detector: source row length and updated_at (SQLite), file size (JSONL)"),
        ],
    )
    _table(
        con,
        "messages",
        "Every message; `position` is the 0-based index on the main path.",
        [
            ("conversation_id", "VARCHAR NOT NULL", "the conversation"),
            ("seq", "INTEGER NOT NULL", "order in the source: JSON array index (SQLite) or entry order (JSONL)"),
            ("position", "INTEGER", "0-based index on the main path, system messages included; NULL off the main path"),
            ("native_id", "VARCHAR", "the message id in the source (JSONL entry id, or the array index)"),
            ("parent_native_id", "VARCHAR", "the parent entry's id (JSONL trees), else the previous message"),
            ("on_main_path", "BOOLEAN NOT NULL", "false for messages on an abandoned branch"),
            (
                "role",
                "VARCHAR NOT NULL",
                "system, user, assistant or tool (an Anthropic user message of only tool_result blocks is tool)",
            ),
            (
                "content",
                "VARCHAR NOT NULL",
                "text content; content blocks joined by newlines; tool calls live in tool_calls",
            ),
            ("content_chars", "INTEGER NOT NULL", "length of content in Unicode code points"),
            ("content_bytes", "INTEGER NOT NULL", "length of content in UTF-8 bytes"),
            ("tool_call_count", "INTEGER NOT NULL", "tool calls carried by this message"),
            ("created_at", "TIMESTAMP", "UTC timestamp when the source records one"),
            ("tool_call_id", "VARCHAR", "for tool messages: the call it answers (first one when several)"),
        ],
    )
    _table(
        con,
        "tool_calls",
        "Every tool call, linked to the tool message that answers it.",
        [
            ("conversation_id", "VARCHAR NOT NULL", "the conversation"),
            ("seq", "INTEGER NOT NULL", "seq of the calling assistant message"),
            ("position", "INTEGER", "main-path position of the calling message (NULL off the main path)"),
            ("call_index", "INTEGER NOT NULL", "0-based index of the call within its message"),
            ("call_id", "VARCHAR", "the call id in the source (tool_calls[].id or tool_use.id)"),
            ("name", "VARCHAR", "tool name"),
            ("arguments", "VARCHAR", "arguments as a JSON string"),
            ("result_seq", "INTEGER", "seq of the message holding the result; NULL when unanswered"),
            (
                "result_position",
                "INTEGER",
                "main-path position of the result message; NULL when unanswered or off path",
            ),
            ("result_bytes", "INTEGER", "UTF-8 bytes of this call's result text"),
            (
                "is_error",
                "BOOLEAN",
                "the result is an error: flagged by the source, or its text starts like one (Error:, error:, 错误, 失败)",
            ),
        ],
    )
    _table(
        con,
        "quarantine",
        "Records that could not be imported, with their raw bytes; nothing is dropped silently.",
        [
            ("source_id", "VARCHAR NOT NULL", "the source"),
            ("run_id", "VARCHAR NOT NULL", "the ingest run that found it"),
            ("location", "VARCHAR NOT NULL", "file:line (JSONL) or table:rowid[index] (SQLite)"),
            ("reason", "VARCHAR NOT NULL", "why it was not imported"),
            ("raw", "BLOB", "the raw bytes (cut at 1 MiB; `raw_bytes` has the full size)"),
            ("raw_bytes", "BIGINT", "size of the raw record in bytes"),
        ],
    )


@migration
def m002_events_usage_lineage(con: duckdb.DuckDBPyConnection) -> None:
    _table(
        con,
        "events",
        "Things that happened to a conversation's context, as logged (compaction, summaries).",
        [
            ("conversation_id", "VARCHAR NOT NULL", "the conversation"),
            ("seq", "INTEGER", "seq of the message the event is attached to (or the first message after it)"),
            ("position", "INTEGER", "main-path position of that message; NULL off the main path"),
            (
                "kind",
                "VARCHAR NOT NULL",
                "compaction (the harness summarised old context) or summary (a summary entry)",
            ),
            ("trigger", "VARCHAR", "what caused it, as logged (auto, manual, ...)"),
            ("pre_tokens", "BIGINT", "context tokens before, when logged"),
            ("post_tokens", "BIGINT", "context tokens after, when logged"),
            ("detail", "VARCHAR", "the rest of the logged event, as JSON"),
        ],
    )
    _table(
        con,
        "message_usage",
        "Token usage per assistant message, counted once per API response.",
        [
            ("conversation_id", "VARCHAR NOT NULL", "the conversation"),
            ("seq", "INTEGER NOT NULL", "seq of the assistant message"),
            ("position", "INTEGER", "its main-path position"),
            ("message_id", "VARCHAR", "the provider's response id (Claude Code message.id)"),
            ("request_id", "VARCHAR", "the request id, when logged"),
            ("model", "VARCHAR", "model that produced the response"),
            ("input_tokens", "BIGINT", "input tokens"),
            ("output_tokens", "BIGINT", "output tokens"),
            ("cache_creation_input_tokens", "BIGINT", "input tokens written to the prompt cache"),
            ("cache_read_input_tokens", "BIGINT", "input tokens read from the prompt cache"),
        ],
    )
    con.execute("ALTER TABLE conversations ADD COLUMN parent_conversation_id VARCHAR")
    con.execute(
        "COMMENT ON COLUMN conversations.parent_conversation_id IS "
        "'for a sub-agent or sidechain transcript: the conversation that spawned it'"
    )


@migration
def m003_skipped_counts(con: duckdb.DuckDBPyConnection) -> None:
    """Importers of drifting formats (Claude Code) skip records that hold no message, and count them."""
    con.execute("ALTER TABLE import_runs ADD COLUMN skipped BIGINT DEFAULT 0")
    for column, doc in (
        (
            "import_runs.skipped",
            "records that hold no message: events (stored in `events`) and line types without "
            "a message (progress, snapshots, unknown types), counted by type in `note`",
        ),
        (
            "import_runs.quarantined",
            "records sent to quarantine this run; messages_read = imported + unchanged + quarantined + skipped",
        ),
        (
            "import_runs.rows_read",
            "SQLite rows, lines (JSONL, Claude Code, OpenAI JSONL; a header included) or "
            "records of a JSON document read",
        ),
        (
            "import_runs.messages_read",
            "records read: array elements (SQLite), entry lines (JSONL), lines with a split "
            "response's lines counted once (Claude Code), messages and bad records (OpenAI)",
        ),
        (
            "messages.native_id",
            "the message id in the source: JSONL entry id, Claude Code line uuid (the first line "
            "of a split response), else the array index",
        ),
        (
            "messages.parent_native_id",
            "the parent's native_id (JSONL and Claude Code trees; Claude Code steps over "
            "lines that are not messages), else the previous message",
        ),
        ("sources.format", "importer used: sqlite, jsonl, claude-code, openai or sharegpt"),
        ("sources.options", "importer options as JSON (SQLite table and column; OpenAI messages key)"),
        (
            "conversations.native_id",
            "the id in the source: the row's id column (else rowid), the session id or "
            "file stem, the record's id (else its line or index)",
        ),
        (
            "conversations.fingerprint",
            "change detector: source row length and updated_at (SQLite), file size and "
            "mtime (session files), a hash of the record (OpenAI)",
        ),
    ):
        con.execute(f"COMMENT ON COLUMN {column} IS '{_sql_str(doc)}'")


# Python's str.strip() whitespace (Unicode), for the baseline metrics (docs/definitions.md#baseline-metrics) computed once at import (see m004)
WHITESPACE = r"[\s\p{Z}\x{0B}\x{1C}-\x{1F}\x{85}]"
TRIMMED_TEXT_MAX = 64  # characters: longer trimmed user messages are no continue-word nag, whatever the config


def derived_text_columns(text: str, role: str) -> dict[str, str]:
    """SQL for m004's columns (blank, trimmed_chars, trimmed_text) from a text and a role expression."""
    trimmed = f"regexp_replace({text}, '^{WHITESPACE}+|{WHITESPACE}+$', '', 'g')"
    user = f"{role} = 'user'"
    return {
        "blank": f"regexp_full_match({text}, '{WHITESPACE}*')",
        "trimmed_chars": f"CASE WHEN {user} THEN length({trimmed}) END",
        "trimmed_text": f"CASE WHEN {user} AND length({trimmed}) <= {TRIMMED_TEXT_MAX} THEN {trimmed} END",
    }


@migration
def m004_trimmed_text(con: duckdb.DuckDBPyConnection) -> None:
    """The baseline (docs/definitions.md#baseline-metrics) needs each user message stripped and each reply tested for blankness: a regex over
    every message per report (2 s on a million) becomes three columns filled once, at import."""
    for column, typ, doc in (
        (
            "blank",
            "BOOLEAN",
            "content is empty or only whitespace (Python str.strip semantics; an assistant "
            "message like this with tool calls is a pure tool echo)",
        ),
        (
            "trimmed_chars",
            "INTEGER",
            "user messages: characters without leading and trailing whitespace "
            "(short_user counts these); NULL for other roles",
        ),
        (
            "trimmed_text",
            "VARCHAR",
            f"user messages of at most {TRIMMED_TEXT_MAX} characters once trimmed: that "
            "text (continue_nags matches it against baseline.continue_words); else NULL",
        ),
    ):
        con.execute(f"ALTER TABLE messages ADD COLUMN {column} {typ}")
        con.execute(f"COMMENT ON COLUMN messages.{column} IS '{_sql_str(doc)}'")
    sets = ", ".join(f"{c} = {e}" for c, e in derived_text_columns("content", "role").items())
    con.execute(f"UPDATE messages SET {sets}")


@migration
def m005_format_registry(con: duckdb.DuckDBPyConnection) -> None:
    """Formats beyond Claude Code link sub-agents to a parent in another file by its id (issue 15)."""
    con.execute("ALTER TABLE conversations ADD COLUMN parent_native_id VARCHAR")
    for column, doc in (
        (
            "conversations.parent_native_id",
            "for a sub-agent transcript: the native id of the conversation that "
            "spawned it, as its log names it (parent_conversation_id is filled "
            "when that conversation is imported too)",
        ),
        (
            "sources.format",
            "importer used: one of the formats of docs/formats.md (sqlite, jsonl, claude-code, "
            "codex, gemini-cli, ...) or a plug-in's name",
        ),
        (
            "events.kind",
            "compaction (the harness summarised old context), summary (a summary entry), or what a "
            "format documents (docs/formats.md)",
        ),
        (
            "message_usage.input_tokens",
            "input tokens not read from the prompt cache (a format logging the "
            "cache inside its input count has it subtracted)",
        ),
        (
            "conversations.fingerprint",
            "change detector: source row length and updated_at (SQLite), file size and "
            "mtime (session files), a hash of the record (OpenAI) or of the "
            "conversation's messages (the agent formats of docs/formats.md)",
        ),
        (
            "tool_calls.arguments",
            "arguments as a JSON string (a tool whose input is plain text, or a model's "
            "malformed JSON, is stored as a JSON string value)",
        ),
    ):
        con.execute(f"COMMENT ON COLUMN {column} IS '{_sql_str(doc)}'")


@migration
def m006_decision_memory(con: duckdb.DuckDBPyConnection) -> None:
    """Decision-memory harness databases (docs/formats.md#decision-memory-harness-databases-decision-memory): conversations keep their project; decisions and their
    rejected options get tables of their own."""
    con.execute("ALTER TABLE conversations ADD COLUMN project VARCHAR")
    con.execute(
        "COMMENT ON COLUMN conversations.project IS 'the project (tenant) a decision-memory harness keys "
        "the conversation by (its project_id); NULL for other formats'"
    )
    _table(
        con,
        "decisions",
        "Decisions a decision-memory harness recorded (its decision_events), one row each.",
        [
            ("source_id", "VARCHAR NOT NULL", "the source"),
            (
                "decision_id",
                "VARCHAR NOT NULL",
                "the harness's id (decision_events.id, as text; question files name it)",
            ),
            ("project", "VARCHAR", "project_id: decisions apply to every conversation of their project"),
            ("conversation_id", "VARCHAR", "the conversation it was made in (stable id; NULL when none was imported)"),
            ("native_conversation_id", "VARCHAR", "decision_events.conversation_id as in the source"),
            ("source_message_id", "VARCHAR", "decision_events.source_message_id: the message it was extracted from"),
            ("source_position", "INTEGER", "that message's position in `conversation_id`; NULL when it is not there"),
            ("decision_type", "VARCHAR", "architecture, budget, schedule, tool_selection, ... as recorded"),
            ("title", "VARCHAR", "one-line summary"),
            ("decision_content", "VARCHAR", "the conclusion"),
            ("reason", "VARCHAR", "why"),
            ("alternative_rejected", "VARCHAR", "the rejected options as recorded (split into decision_alternatives)"),
            ("importance_score", "DOUBLE", "importance (the harness's default 1.0 when not recorded)"),
            ("created_at", "TIMESTAMP", "UTC time the decision was recorded"),
            ("updated_at", "TIMESTAMP", "UTC time of its last update"),
            ("embedding", "FLOAT[]", "its vector (decision_embeddings or an embedding column), when stored"),
            ("embedding_model", "VARCHAR", "the model that made the vector"),
        ],
    )
    _table(
        con,
        "decision_alternatives",
        "Each rejected option of a decision: alternative_rejected split on , ，、;；/| and trimmed.",
        [
            ("source_id", "VARCHAR NOT NULL", "the source"),
            ("decision_id", "VARCHAR NOT NULL", "the decision (decisions.decision_id)"),
            ("alternative", "VARCHAR NOT NULL", "one rejected option"),
        ],
    )


@migration
def m007_origin(con: duckdb.DuckDBPyConnection) -> None:
    """Whose turn it is (docs/definitions.md#whose-turn-it-is): the harness's and the tools' text on the user role is not the person's."""
    con.execute("ALTER TABLE messages ADD COLUMN origin VARCHAR")
    con.execute(
        "COMMENT ON COLUMN messages.origin IS 'who wrote it: person, harness (text the tool wrote on the "
        "user or system role), tool_result (a tool output on the user role), assistant or tool; set by the "
        "importer where the format says, else by the one classifier of forensics.warehouse.origin'"
    )
    con.execute(f"UPDATE messages SET origin = {origin_sql('content', 'role')}")


@migration
def m008_outcomes(con: duckdb.DuckDBPyConnection) -> None:
    """Which runs failed (docs/outcomes.md#where-outcomes-come-from): a benchmark's reward, an eval's score, a harness's resolved list, read
    from the log or from a labels file, so that findings can be compared with outcomes."""
    _table(
        con,
        "conversation_outcomes",
        "One row per conversation whose outcome is known: read from the log "
        "(a benchmark's reward or status) or imported from a labels file (`forensics outcomes FILE`).",
        [
            ("conversation_id", "VARCHAR NOT NULL", "the conversation (run)"),
            (
                "success",
                "BOOLEAN",
                "the run succeeded (reward >= 1, resolved, correct, pass); NULL when only a score is known",
            ),
            ("score", "DOUBLE", "the score as recorded (reward, numeric grade), when there is one"),
            ("source", "VARCHAR NOT NULL", "log (read from the log itself) or the path of the labels file"),
            (
                "detail",
                "VARCHAR",
                "JSON: the field read (`by`), its raw value (`value`) and the task key "
                "(`task`: tau task_id, instance id, sample id) when the log names one",
            ),
        ],
    )


@migration
def m009_secrets_found(con: duckdb.DuckDBPyConnection) -> None:
    """Secrets are masked at ingest (issue 27): where each was found is kept, the value never."""
    _table(
        con,
        "secrets_found",
        "One row per secret masked at ingest (`forensics secrets` reports them): where "
        "it was and of what kind, never its value. Text is stored with `[REDACTED]` in its place.",
        [
            ("source_id", "VARCHAR NOT NULL", "the source it was read from"),
            ("conversation_id", "VARCHAR", "the conversation, when the field belongs to one"),
            ("seq", "INTEGER", "the message's order in the source (messages, tool calls, events, usage)"),
            ("position", "INTEGER", "the message's position on the main path; NULL off it"),
            (
                "field",
                "VARCHAR NOT NULL",
                "table.column it was in: messages.content, tool_calls.arguments, "
                "conversations.title, conversations.model, quarantine.raw, sources.path, ...",
            ),
            ("location", "VARCHAR", "the quarantine entry's location, for a secret in quarantined bytes"),
            (
                "kind",
                "VARCHAR NOT NULL",
                "the rule that found it: aws-access-key, aws-secret-key, private-key, "
                "json-web-token, basic-auth-credentials, password, secret-keyword, ... "
                "(docs/secrets.md)",
            ),
            (
                "fingerprint",
                "VARCHAR NOT NULL",
                "12 hex digits of a salted PBKDF2 hash of the value: the same "
                "secret has the same fingerprint everywhere",
            ),
        ],
    )


@migration
def m010_speaker_name(con: duckdb.DuckDBPyConnection) -> None:
    """Who spoke in a multi-agent run (docs/definitions.md#failure-analysis): the decisive step's agent is a message's author."""
    con.execute("ALTER TABLE messages ADD COLUMN name VARCHAR")
    con.execute(
        "COMMENT ON COLUMN messages.name IS 'the author''s name as the format gives it: OpenAI chat `name` "
        "(the agent of a multi-agent group chat, e.g. AG2/autogen exported as OpenAI messages; for a tool "
        "message the tool''s name); NULL where the format names no author'"
    )


@migration
def m011_error_source(con: duckdb.DuckDBPyConnection) -> None:
    """Errors read right (docs/definitions.md#tool-errors): a result is an error when the format flags it or by one documented set of
    content rules (``forensics.warehouse.tool_errors``); the column says which. A search that matched nothing
    is not an error. Existing rows are read again the way ingest reads new ones."""
    rules = "; ".join(f"{n}: {d}" for n, d in tool_errors.documented())
    con.execute("ALTER TABLE tool_calls ADD COLUMN error_source VARCHAR")
    con.execute(
        f"COMMENT ON COLUMN tool_calls.error_source IS '{_sql_str('why the result is an error: ' + rules + '; NULL when it is not (a search that matched nothing is not)')}'"
    )
    con.execute(
        "COMMENT ON COLUMN tool_calls.is_error IS 'the result is an error (error_source says by what): "
        "flagged by the format, or by a content rule of forensics.warehouse.tool_errors'"
    )
    rule, empty = tool_errors.result_sql("m.content", "m.role")
    source = tool_errors.error_source_sql("t.is_error", "r.rule", "r.empty", "t.name", "t.arguments")
    con.execute(f"""
        UPDATE tool_calls SET error_source = u.error_source,
            is_error = CASE WHEN u.error_source IS NOT NULL THEN true WHEN tool_calls.is_error IS NOT NULL THEN false END
        FROM (SELECT t.conversation_id, t.seq, t.call_index, {source} AS error_source
              FROM tool_calls t JOIN (SELECT conversation_id, seq, {rule} AS rule, {empty} AS empty
                                      FROM messages m) r
                ON r.conversation_id = t.conversation_id AND r.seq = t.result_seq) u
        WHERE u.conversation_id = tool_calls.conversation_id AND u.seq = tool_calls.seq
          AND u.call_index = tool_calls.call_index""")


@migration
def m012_cache_write_duration(con: duckdb.DuckDBPyConnection) -> None:
    """Anthropic prices a cache write by how long it is kept (5 minutes: 1.25 x input; 1 hour: 2 x input): the
    part kept an hour is counted apart (issue 42), so that a cost prices each at its own rate."""
    con.execute("ALTER TABLE message_usage ADD COLUMN cache_creation_1h_input_tokens BIGINT")
    con.execute(
        "COMMENT ON COLUMN message_usage.cache_creation_1h_input_tokens IS '"
        + _sql_str(
            "of cache_creation_input_tokens, those written to the 1-hour cache (Claude Code usage.cache_creation."
            "ephemeral_1h_input_tokens), priced at cache_write_1h; NULL when the log does not split the writes by "
            "duration (all priced as 5-minute writes)"
        )
        + "'"
    )


@migration
def m013_person_text(con: duckdb.DuckDBPyConnection) -> None:
    """The person's own words apart from the templates they invoked (issue 42): titles, keywords, topic cues and
    findings read them, never a command's expansion or a template's body."""
    con.execute("ALTER TABLE messages ADD COLUMN person_text VARCHAR")
    con.execute(
        "COMMENT ON COLUMN messages.person_text IS 'the words the person typed, on a person''s message "
        "(origin person): its text less what the tool wrapped around them (a slash command is /name and "
        "its arguments, a prompt template the text typed after it, IDE context and reminder blocks are "
        "taken off: forensics.warehouse.own_words); empty when no word of the person is left (a bare "
        "command, a template invoked with nothing after it); NULL on every other message'"
    )
    con.execute(f"UPDATE messages SET person_text = {own_words_sql('content')} WHERE origin = 'person'")


@migration
def m014_working_dir_branch(con: duckdb.DuckDBPyConnection) -> None:
    """Cost by project and branch (issue 47): the working folder a coding agent's session ran in and the git
    branch its log names, kept on the conversation."""
    con.execute("ALTER TABLE conversations ADD COLUMN working_dir VARCHAR")
    con.execute(
        "COMMENT ON COLUMN conversations.working_dir IS 'the working folder the session ran in, as logged "
        "(Claude Code: the first cwd of its lines; Codex: session_meta.cwd): its project for usage by "
        "project; NULL when the log names none'"
    )
    con.execute("ALTER TABLE conversations ADD COLUMN git_branch VARCHAR")
    con.execute(
        "COMMENT ON COLUMN conversations.git_branch IS 'the git branch the log names (Claude Code "
        "gitBranch, the one most of the session''s lines name; Codex session_meta.git.branch); NULL when "
        "it names none'"
    )


@migration
def m015_secret_call(con: duckdb.DuckDBPyConnection) -> None:
    """The secret exposure ledger (docs/secrets.md#the-exposure-ledger-which-secret-where-seen-by-whom) names the tool whose arguments carried a secret: a message with
    several calls needs the call's index beside its seq."""
    con.execute("ALTER TABLE secrets_found ADD COLUMN call_index INTEGER")
    con.execute(
        "COMMENT ON COLUMN secrets_found.call_index IS 'for a secret in tool_calls: the call''s index "
        "within its message (tool_calls.call_index); NULL elsewhere and in finds recorded before it was kept'"
    )


@migration
def m016_report_cache(con: duckdb.DuckDBPyConnection) -> None:
    """The whole-report cache is called a cache (issue 40): ``report_kept`` is now ``report_cache``
    (``forensics.report.cache``). Its rows are only a cache, so the old table goes: the next report computes."""
    con.execute("DROP TABLE IF EXISTS report_kept")
