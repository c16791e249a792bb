"""The importer names `forensics ingest --format` accepts, apart from the importers so that the CLI can offer
them without loading any importer (pyarrow and friends cost a third of a second at every start)."""

FORMATS = ("auto", "sqlite", "jsonl", "claude-code", "openai", "sharegpt", "dialogues", "decision-memory")
