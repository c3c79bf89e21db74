"""A static file server for the corpus tests, run as a separate process.

Serving thousands of feeds from a thread of the test process would compete with the code under test
for the interpreter lock; a process of its own does not. Usage::

    python tests/sources/corpus_server.py MANIFEST.json

The manifest maps each URL path to ``[file path, {header: value}]``; headers are sent verbatim, even
malformed ones (the corpus declares some on purpose). The server prints its port on the first line of
standard output and serves until it is terminated.
"""

from __future__ import annotations

import json
import sys
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path


def main() -> None:
    manifest = json.loads(Path(sys.argv[1]).read_text())
    files = {path: (Path(name).read_bytes(), headers) for path, (name, headers) in manifest.items()}

    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"  # keep-alive, as real feed servers do

        def do_GET(self) -> None:  # noqa: N802 - the name http.server dispatches to
            found = files.get(self.path.split("?", 1)[0])
            if found is None:
                self.send_response(404)
                self.send_header("Content-Length", "0")
                self.end_headers()
                return
            body, headers = found
            self.send_response(200)
            for name, value in headers.items():
                self.send_header(name, value)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, format: str, *args: object) -> None:  # noqa: A002
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    print(server.server_address[1], flush=True)
    server.serve_forever()


if __name__ == "__main__":
    main()
