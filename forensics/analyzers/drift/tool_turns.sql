-- Tool use per request (a person's message and everything up to their next one): calls, distinct targets a reader would count, rounds, widest round, and the kind of agent (format, model) whose norm it is held against
-- A request starts at a message whose origin is 'person' (docs/definitions.md#whose-turn-it-is): harness text and tool output on the user role
-- start none. A target is what a call names: a file or path, a URL, a query or pattern, a command (digit runs
-- made N, so paging through one file with sed -n 1,200p / 201,400p is one target), else the call's arguments with
-- id fields taken out (get_reservation_details for two reservations is one target). Not targets: writes (Write,
-- Edit, apply_patch, replace...: docs/definitions.md#drift-phenomena counts what a request *reads*; a heredoc's body is no target), build, test
-- and package runs naming no file (cargo, npm, make, pytest, ...: the work, not a read), state-keeping
-- tools (todo lists, plans: Claude Code's TodoWrite, Codex's update_plan, Gemini CLI's write_todos, Cursor's
-- todo_write), questions to the person and completion calls, polls of one running process (Codex's write_stdin,
-- Claude Code's BashOutput / KillShell), and a value that is only an id or a placeholder of text redacted at its
-- source ([REDACTED_ARGUMENTS ...]).
WITH m AS (
    SELECT conversation_id, position, role, tool_call_count,
           max(CASE WHEN role = 'user' AND origin = 'person' THEN position END)
               OVER (PARTITION BY conversation_id ORDER BY position ROWS UNBOUNDED PRECEDING) AS turn
    FROM messages
    WHERE on_main_path
),
raw AS (
    SELECT m.conversation_id, m.turn, t.position, t.call_index, t.name,
           regexp_matches(t.name, '(?i)^(?:mcp__\w+__)?(?:todo_?(?:write|read)|write_todos|update_plan|'
                          || '(?:enter|exit)_?plan_?mode|plan_mode_respond|task_?(?:create|update|list|get)|think|'
                          || 'sequential_?thinking|ask_?user(?:_?question)?|ask_followup_question|request_user_input|'
                          || 'attempt_completion|complete_task|submit|write_stdin|bash_?output|kill_?(?:shell|bash)|'
                          || 'task_?output)$')
           -- writes: the request's work, not what it read (docs/definitions.md#drift-phenomena: targets *read* for one request)
           OR regexp_matches(t.name, '(?i)^(?:mcp__\w+__)?(?:write|edit|multi_?edit|apply_patch|replace|'
                             || 'replace_in_file|write_(?:to_)?file|edit_file|create|insert|notebook_?edit|'
                             || 'search_replace|canmore\.\w+)$') AS uncounted,
           CASE WHEN json_type(t.arguments, '$.command') = 'ARRAY'
                THEN json_extract_string(t.arguments, '$.command[#-1]') END AS argv_command,
           -- a file read, else a search's query (its path is only the scope: one query over four files is one
           -- search), else a URL, else the path listed
           coalesce(json_extract_string(t.arguments, '$.file_path'), json_extract_string(t.arguments, '$.filepath'),
                    json_extract_string(t.arguments, '$.absolute_path'), json_extract_string(t.arguments, '$.target_file'),
                    json_extract_string(t.arguments, '$.notebook_path'), json_extract_string(t.arguments, '$.query'),
                    json_extract_string(t.arguments, '$.pattern'), json_extract_string(t.arguments, '$.url'),
                    json_extract_string(t.arguments, '$.path'), json_extract_string(t.arguments, '$.file_name'),
                    json_extract_string(t.arguments, '$.paths')) AS named,
           coalesce(json_extract_string(t.arguments, '$.cmd'), json_extract_string(t.arguments, '$.command'))
               AS command,
           t.arguments
    FROM tool_calls t
    JOIN m ON m.conversation_id = t.conversation_id AND m.position = t.position
    WHERE m.turn IS NOT NULL
),
cmds AS (
    SELECT *, coalesce(argv_command, command) AS cmd,
           -- the files a patch touches (Codex's apply_patch, as a tool or inside a shell command)
           regexp_extract_all(coalesce(argv_command, command, CASE WHEN json_type(arguments) = 'VARCHAR'
                                       THEN json_extract_string(arguments, '$') END, ''),
                              '\*\*\* (?:Update|Add|Delete) File: ([^\n]+)', 1) AS patched
    FROM raw
),
calls AS (
    SELECT conversation_id, turn, position, call_index, uncounted,
           CASE WHEN uncounted THEN []::VARCHAR[]
                WHEN len(patched) > 0 THEN []::VARCHAR[]  -- a patch writes: no target read
                WHEN named IS NOT NULL THEN [named]
                WHEN cmd IS NOT NULL THEN coalesce(nullif(list_filter(regexp_extract_all(split_part(cmd, '<<', 1),
                    '(?:^|[\s''"=<>])((?:~|\.{1,2})?/?(?:[\w.@+\-()\[\]]+/)+[\w.@+\-()\[\]]+|[\w\-]+\.(?:py|rs|ts|tsx|js'
                    || '|jsx|go|md|json|toml|ya?ml|sql|sh|txt|java|c|h|cpp|rb|php|css|html|vue|kt|swift|lock|cfg|ini|xml))',
                    1), lambda x: x <> '/dev/null'), []),
                    -- a build, test or package run reads nothing a reader would count: it runs the work
                    CASE WHEN regexp_matches(cmd, '^\s*(?:\w+=\S*\s+)*(?:cargo|npm|npx|pnpm|yarn|bun|make|just|nix|'
                                             || 'nix-shell|pytest|tox|go\s+(?:build|test|run)|mvn|gradle|\./gradlew|'
                                             || 'uv\s+run|pip|poetry|git\s+(?:add|commit|push|stash|checkout))\b')
                         THEN []::VARCHAR[]
                    -- a command naming no file is its own target; digit runs made N (sed -n 1,200p / 201,400p)
                         ELSE [regexp_replace(cmd, '\d+', 'N', 'g')] END)
                -- the rest: the arguments with id fields taken out; nothing left: the tool itself
                ELSE [name || coalesce(' ' || nullif(regexp_replace(regexp_replace(arguments,
                    '"(?:[\w\-]*(?:_id|Id|ID|_ids|Ids)|id|ids)"\s*:\s*(?:"[^"]*"|-?\d+|\[[^\]]*\])\s*,?', '', 'g'),
                    '^[\s{}\[\],"]*$', ''), ''), '')] END AS targets
    FROM cmds
),
targets AS (
    SELECT conversation_id, turn, position, call_index, uncounted, t AS target0
    FROM (SELECT *, unnest(CASE WHEN len(targets) = 0 THEN [NULL::VARCHAR] ELSE targets END) AS t0 FROM calls) u,
         LATERAL (SELECT nullif(trim(regexp_replace(t0, '\[(?i:redacted)\w*(?:[ :=][^\]\n]{0,200})?\]', '', 'g')), '')
                  AS t) l
),
counted AS (
    SELECT conversation_id, turn, position, call_index, uncounted,
           -- a value that is only an id (a session, a reservation, a hash) names nothing a reader would count
           CASE WHEN NOT (regexp_matches(target0, '^["'']?(?:-?\d+|[0-9a-fA-F\-]{8,})["'']?$')
                          OR regexp_matches(target0, '^[A-Z0-9]{5,10}$') AND regexp_matches(target0, '\d'))
                THEN target0 END AS target
    FROM targets
),
rounds AS (  -- per assistant message, the calls that read something (a round of ten edits reads nothing)
    SELECT conversation_id, position, count(DISTINCT call_index) FILTER (WHERE NOT uncounted) AS reads
    FROM counted GROUP BY ALL
)
SELECT c.native_id, k.conversation_id, k.turn AS user_position, s.format, c.model,
       (c.parent_conversation_id IS NOT NULL OR c.parent_native_id IS NOT NULL) AS sub_agent,
       count(DISTINCT (k.position, k.call_index)) AS calls,
       count(DISTINCT k.target) AS distinct_targets, count(DISTINCT k.position) AS rounds,
       max(r.reads) AS widest_round,
       -- the first of the widest rounds (a tie is not left to the scan order)
       arg_max(k.position, {'calls': r.reads, 'earlier': -k.position}) AS widest_round_position,
       array_to_string(list_sort(list(DISTINCT k.position)), ',')
           AS round_positions  -- a list: 9,22,27
FROM counted k
JOIN rounds r ON r.conversation_id = k.conversation_id AND r.position = k.position
JOIN conversations c ON c.conversation_id = k.conversation_id
JOIN sources s ON s.source_id = c.source_id
GROUP BY ALL
ORDER BY k.conversation_id, k.turn
