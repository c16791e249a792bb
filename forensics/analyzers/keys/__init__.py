"""Each built-in analyzer's config sections and keys (``SECTIONS``, ``KEYS``; ``DETECTOR_SECTIONS`` when it has
any), in a light module of its own named after it: the analyzer's declaration (``Analyzer.sections``, ``.keys``,
``.detector_sections``) holds them, and ``analyzers.configs()`` reads them from here for the config schema
(``forensics.analyzers.schema``) and *What to change*, so loading a config or reading a kept report back imports no
analyzer. A built-in analyzer with config keys declares them here and lists its name in ``NAMES``, one without any
in ``NONE`` (a registry line listed in neither is read from its declaration, which imports it);
tests/test_check_config.py holds these equal to the declarations and every built-in listed.
"""

from __future__ import annotations

NAMES = frozenset(
    ("baseline", "keywords", "compression", "topics", "compaction", "drift", "sentinel", "skills", "memory")
)
NONE = frozenset(("usage", "rules", "problems", "outcomes", "failures", "secrets", "exposure"))  # no config keys
