"""Imported by the parse workers' fork server before it forks (``run._execute``): the secret rules are compiled once
there (detect-secrets imported, some 60 patterns: 0.13 CPU s) and every worker shares them, instead of each worker
compiling its own on its first task."""

from forensics.kernel import secret_rules

secret_rules.prefilter()
secret_rules.keyword_kept()
