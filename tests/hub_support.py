"""A Hugging Face hub on 127.0.0.1 for the tests: it answers GET/HEAD /{repo}/resolve/{revision}/{file} with
the headers huggingface_hub reads (ETag: the git blob id, X-Repo-Commit, Content-Length; X-Error-Code on a
refusal). ``files``: {(repo, filename): bytes}; ``gated``: {repo: token} answers 401 without that token;
anything else 404. Every request is recorded in ``server.asked`` as (method, path, Authorization)."""
import contextlib
import hashlib
import http.server
import threading

COMMIT = "0123456789abcdef0123456789abcdef01234567"


class _Hub(http.server.BaseHTTPRequestHandler):
    def do_GET(self):  # noqa: N802
        self._answer(send_body=True)

    def do_HEAD(self):  # noqa: N802
        self._answer(send_body=False)

    def _answer(self, send_body):
        self.server.asked.append((self.command, self.path, self.headers.get("Authorization")))
        repo, _, rest = self.path.lstrip("/").partition("/resolve/")
        revision, _, filename = rest.partition("/")
        headers = {"Content-Type": "application/json"}
        token = self.server.gated.get(repo)
        body = self.server.files.get((repo, filename))
        if token and self.headers.get("Authorization") != "Bearer " + token:
            status, body = 401, b'{"error": "Access to model %s is restricted."}' % repo.encode()
            headers["X-Error-Code"] = "GatedRepo"
        elif body is not None and revision == "main":
            status = 200
            headers["ETag"] = '"%s"' % hashlib.sha1(b"blob %d\0" % len(body) + body).hexdigest()
            headers["X-Repo-Commit"] = COMMIT
        else:
            status, body = 404, b'{"error": "Repository not found"}'
            headers["X-Error-Code"] = "RepoNotFound"
        self.send_response(status)
        for key, value in dict(headers, **{"Content-Length": str(len(body))}).items():
            self.send_header(key, value)
        self.end_headers()
        if send_body:
            self.wfile.write(body)

    def log_message(self, *args):
        pass


@contextlib.contextmanager
def loopback_hub(files, gated=None):
    """A running hub (the server: ``.url``, ``.asked``); shut down on exit."""
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Hub)
    server.asked, server.files, server.gated = [], dict(files), dict(gated or {})
    server.url = "http://127.0.0.1:%d" % server.server_port
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield server
    finally:
        server.shutdown()
        server.server_close()
