"""The shared kernel: what every layer may import (errors, redaction and secret rules, the batch
process settings and worker processes, the selection). It imports nothing else of forensics."""
