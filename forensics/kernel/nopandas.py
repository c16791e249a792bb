"""pyarrow told that pandas is absent, in a process that never hands it a pandas object.

pyarrow's first conversion of Python values (``pa.array([...])``, ``pa.table({...})``) probes for pandas and
imports it when it is installed (the dev and spark extras install it): 43 MB of every process that converts, and
0.3 s. The CLI's ingest and report commands and the worker processes never give pyarrow a pandas object, so they
make that one probe fail (``skip_pandas_probe``): pyarrow then takes pandas as absent when it looks for pandas
objects among its inputs, and still imports it if a pandas frame is asked of it (``to_pandas``). Not done in a
process that imported pandas already, nor by the Python API: a notebook may hand pyarrow a DataFrame later.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from importlib.abc import MetaPathFinder
from importlib.machinery import ModuleSpec
from types import ModuleType


class _NoPandas(MetaPathFinder):
    """Finds no module named pandas: `import pandas` raises ImportError while it is on ``sys.meta_path``."""

    def find_spec(self, name: str, path: Sequence[str] | None, target: ModuleType | None = None) -> ModuleSpec | None:
        if name == "pandas":
            raise ModuleNotFoundError("pandas is not probed here (forensics.kernel.nopandas)", name=name)
        return None


def skip_pandas_probe() -> None:
    """Make pyarrow's probe for pandas fail once (see the module's docstring); nothing when pandas is loaded."""
    if "pandas" in sys.modules:
        return
    import pyarrow as pa

    blocker = _NoPandas()
    sys.meta_path.insert(0, blocker)
    try:
        pa.array([0])  # the probe: pyarrow records that pandas could not be imported
    finally:
        sys.meta_path.remove(blocker)
