-- Ingest history: per source and run, what was read and where it went
SELECT run_id, path, format, status, finished_at, rows_read, messages_read, messages_imported, messages_unchanged,
       quarantined, conversations_new, conversations_updated, conversations_unchanged, note
FROM import_runs
ORDER BY finished_at, path
