"""What a batch process sets for itself: the CLI's commands that read or write a warehouse, and every worker.

- The garbage collector looks for reference cycles less often. A report makes millions of small objects that
  reference counting frees on its own (tokens, term lists, rows) while it holds a few hundred thousand for its
  whole length (jieba's dictionary, the sections done). With Python's thresholds (700, 10, 10) the collector ran
  3,650 times in a first report of the bench's 1,000 conversations, 100 of them over every live object: 5.8 CPU s
  of the main process. With 10,000 new objects between two runs it ran 240 times, none over everything: 1.5 s.
  A cycle waits longer to be freed; 10,000 objects are a few MB at most.

Not done by the Python API: a notebook's collector and imports are the notebook's.
"""

from __future__ import annotations

import gc

GC_THRESHOLDS = (10_000, 50, 100)  # new objects before a young collection; young ones per middle; middle per full


def batch_process() -> None:
    """Set this process up for a batch run (see the module's docstring)."""
    gc.set_threshold(*GC_THRESHOLDS)
