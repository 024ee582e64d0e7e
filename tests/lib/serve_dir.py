"""serve_dir.py — python3 -m http.server with a metrics Content-Type.

The same command line as http.server (PORT [--bind ADDR] [--directory DIR]),
but a file whose name has no known extension (a "metrics" file) is served as
text/plain; version=0.0.4, as an exporter answers. http.server would say
application/octet-stream, which Prometheus 3 (and infermon under
--promql.compat=3) refuses to scrape without fallback_scrape_protocol.
"""
import argparse
import functools
import http.server

ap = argparse.ArgumentParser()
ap.add_argument("port", type=int)
ap.add_argument("--bind", default="127.0.0.1")
ap.add_argument("--directory", default=".")
args = ap.parse_args()


class Handler(http.server.SimpleHTTPRequestHandler):
    def guess_type(self, path):
        t = super().guess_type(path)
        if t == "application/octet-stream":
            return "text/plain; version=0.0.4; charset=utf-8"
        return t

    def log_message(self, *a):
        pass


h = functools.partial(Handler, directory=args.directory)
http.server.ThreadingHTTPServer((args.bind, args.port), h).serve_forever()
