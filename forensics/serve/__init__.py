"""`forensics serve`: the read-only web explorer (``app.create_app``; pages read ``data``)."""
