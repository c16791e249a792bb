"""Imported by the fork server of a pool whose workers segment Chinese (``workers.run_ordered``'s ``preload``).

jieba's dictionary, its prefix table and its tagger's tables take about 200 MB once loaded (rjieba's far less). Loaded here, in the
fork server, before any worker is forked, they are shared by every worker's pages instead of loaded by each; the
objects are frozen (``gc.freeze``) so that a collection in a worker does not write to their pages and copy them.
"""

from __future__ import annotations

import gc

from forensics.text import engine

engine.preload()  # jieba: its dictionary and the tagger's tables; rjieba: its compiled ones

gc.freeze()
