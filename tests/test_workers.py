"""The worker pool's preload: a pool of segmenting workers finds jieba loaded by its fork server, not by itself."""
from __future__ import annotations

import subprocess
import sys
import textwrap

from tests.conftest import ROOT


def seen(_: int) -> tuple[bool, bool, bool]:
    """Worker: what it found loaded before it imported anything."""
    loaded = "jieba" in sys.modules
    import jieba

    from forensics.text.tokenize import SEGMENTER

    return SEGMENTER in sys.modules, jieba.dt.initialized, loaded


def test_workers_of_a_preloading_pool_find_jieba_loaded_before_their_first_task() -> None:
    script = textwrap.dedent("""
        import sys
        from forensics.text.tokenize import SEGMENTER
        from forensics.workers import run_ordered
        from tests.test_workers import seen

        out = [e or r for _, r, e in run_ordered(((seen, (i,), None) for i in range(4)), 2, True, preload=(SEGMENTER,))]
        print(out, "jieba" in sys.modules)
    """)
    done = subprocess.run([sys.executable, "-c", script], cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    # every worker: the segmenter module imported and jieba's dictionary loaded before the task; the calling
    # process never loaded jieba
    assert done.stdout.strip() == f"{[(True, True, True)] * 4} False"
