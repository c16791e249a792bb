"""Serving the explorer with uvicorn, bound to 127.0.0.1 only (the warehouse is the user's own data)."""

from __future__ import annotations

import socket
import threading
import webbrowser
from collections.abc import Callable

from forensics.kernel.errors import ForensicsError

HOST = "127.0.0.1"


def serve(
    db: str, port: int, open_browser: bool = False, announce: Callable[[str], None] = print, personal: bool = True
) -> None:
    import uvicorn

    from forensics.serve.app import create_app

    app = create_app(db, personal)
    with socket.socket() as s:  # uvicorn would log a traceback-like error and exit 1
        try:
            s.bind((HOST, port))
        except OSError:
            raise ForensicsError(f"port {port} on {HOST} is in use; pass --port") from None
    url = f"http://{HOST}:{port}/"
    announce(url)
    if open_browser:
        threading.Timer(0.8, webbrowser.open, [url]).start()
    uvicorn.run(app, host=HOST, port=port, log_level="warning")
