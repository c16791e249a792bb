"""What a format is written with: the declaration (``declare``: Format, Probe, Side), the model of a
conversation (``model``), the columnar records (``records``) and the shared parsers (``values``,
``stream``, ``fastpath``, ``duckparse``, ``grades``)."""
