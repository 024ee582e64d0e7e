#!/usr/bin/env bash
# tls_config.server_name in the clients other than scraping and alerting: remote
# write and the query backend (--query.backend-config) reach a TLS server on
# 127.0.0.1 whose certificate (made here with openssl, signed by a CA made here)
# is for "rw.test" only. The server (python) records the SNI and Host it saw.
# Remote write: the queue with server_name rw.test delivers (SNI rw.test, Host
# 127.0.0.1:PORT); the queue without server_name is refused in the handshake
# (nothing arrives, its samples are retried). Query backend: with server_name
# the query is answered by the server (SNI rw.test); without, the API answers an
# error naming the certificate.
source "$IM_SOURCE_DIR/tests/lib/common.sh"
S=$IM_TMP
openssl req -x509 -newkey rsa:2048 -nodes -keyout "$S/ca.key" -out "$S/ca.pem" -days 1 \
  -subj "/CN=test CA" >/dev/null 2>&1 || fail "openssl: CA"
openssl req -newkey rsa:2048 -nodes -keyout "$S/key.pem" -out "$S/req.csr" \
  -subj "/CN=rw.test" >/dev/null 2>&1 || fail "openssl: request"
printf 'subjectAltName=DNS:rw.test\n' >"$S/ext.cnf"
openssl x509 -req -in "$S/req.csr" -CA "$S/ca.pem" -CAkey "$S/ca.key" -CAcreateserial \
  -out "$S/cert.pem" -days 1 -extfile "$S/ext.cnf" >/dev/null 2>&1 || fail "openssl: sign"
tport=$(free_port); iport=$(free_port); bport=$(free_port); nport=$(free_port)
$PY - "$S" "$tport" >"$S/server.log" 2>&1 <<'PY' &
import http.server, json, ssl, sys
d, port = sys.argv[1], int(sys.argv[2])
ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
ctx.load_cert_chain(d + "/cert.pem", d + "/key.pem")
def sni(sock, name, _ctx):
    sock.sni = name or ""
ctx.sni_callback = sni
class H(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    def seen(self):
        return {"path": self.path.split("?")[0], "sni": getattr(self.connection, "sni", ""),
                "host": self.headers.get("Host")}
    def answer(self, code, body=b"", ctype="application/json"):
        self.send_response(code)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)
    def do_POST(self):
        n = int(self.headers.get("Content-Length", "0"))
        self.rfile.read(n)
        if self.path.endswith("/api/v1/write"):
            with open(d + "/writes.jsonl", "a") as f:
                f.write(json.dumps(self.seen()) + "\n")
            return self.answer(204)
        self.do_GET()
    def do_GET(self):
        s = self.seen()
        if s["path"] != "/api/v1/query":
            return self.answer(404, b'{"status":"error","errorType":"not_found","error":"no"}')
        res = {"status": "success", "data": {"resultType": "vector", "result": [
            {"metric": {"__name__": "probe", "sni": s["sni"], "host": s["host"]},
             "value": [1000, "1"]}]}}
        self.answer(200, json.dumps(res).encode())
    def log_message(self, *a):
        pass
srv = http.server.ThreadingHTTPServer(("127.0.0.1", port), H)
srv.socket = ctx.wrap_socket(srv.socket, server_side=True)
srv.serve_forever()
PY
IM_PIDS+=($!)

# ---- remote write ----
cat >"$S/im.yml" <<YML
global: {scrape_interval: 1s, scrape_timeout: 1s}
scrape_configs:
  - job_name: self
    static_configs: [{targets: ['127.0.0.1:$iport']}]
remote_write:
  - url: https://127.0.0.1:$tport/good/api/v1/write
    name: good
    tls_config: {ca_file: $S/ca.pem, server_name: rw.test}
    queue_config: {batch_send_deadline: 200ms, min_backoff: 50ms, max_backoff: 200ms}
  - url: https://127.0.0.1:$tport/none/api/v1/write
    name: none
    tls_config: {ca_file: $S/ca.pem}
    queue_config: {batch_send_deadline: 200ms, min_backoff: 50ms, max_backoff: 200ms}
YML
"$IM_BINARY" run --config.file="$S/im.yml" --storage.tsdb.path="$S/data" \
  --web.listen-address="127.0.0.1:$iport" --storage.tsdb.wal-fsync=never >"$S/im.log" 2>&1 &
IM_PIDS+=($!)
wait_http "http://127.0.0.1:$iport/-/ready" 30 || fail "infermon not ready: $(tail -5 "$S/im.log")"
retried() { # the "none" queue's retried samples
  curl -fsS "http://127.0.0.1:$iport/metrics" |
    awk '/^prometheus_remote_storage_samples_retried_total\{.*remote_name="none"/ {print $2}'
}
for _ in $(seq 1 300); do
  grep -q '"/good/' "$S/writes.jsonl" 2>/dev/null && [ "$(retried)" != "" ] &&
    [ "$(retried)" != "0" ] && break
  sleep 0.1
done
grep -q '"/good/' "$S/writes.jsonl" 2>/dev/null ||
  fail "no remote write with server_name arrived: $(tail -5 "$S/im.log")"
r=$(retried)
[ -n "$r" ] && [ "$r" != "0" ] || fail "queue without server_name: no retried samples ($r)"
$PY - "$S/writes.jsonl" "$tport" <<'PY' || fail "remote write requests: $(cat "$S/writes.jsonl")"
import json, sys
rows = [json.loads(l) for l in open(sys.argv[1])]
want = {"path": "/good/api/v1/write", "sni": "rw.test", "host": "127.0.0.1:" + sys.argv[2]}
bad = [r for r in rows if r != want]
if bad:
    sys.exit("unexpected: %r" % bad)
print("remote write: %d requests, all %r" % (len(rows), want))
PY
echo "PASS: remote write: server_name is the SNI and the verified name (Host kept)," \
  "the queue without it refused in the handshake (retried $r samples)"

# ---- query backend ----
backend() { # port, config file
  "$IM_BINARY" run --query.backend-url="https://127.0.0.1:$tport" --query.backend-config="$2" \
    --web.listen-address="127.0.0.1:$1" >>"$S/backend.log" 2>&1 &
  IM_PIDS+=($!)
  wait_http "http://127.0.0.1:$1/-/ready" 30 || fail "backend mode not ready: $(tail -5 "$S/backend.log")"
}
printf 'tls_config: {ca_file: %s, server_name: rw.test}\n' "$S/ca.pem" >"$S/b.yml"
printf 'tls_config: {ca_file: %s}\n' "$S/ca.pem" >"$S/n.yml"
backend "$bport" "$S/b.yml"
backend "$nport" "$S/n.yml"
got=$(curl -fsS --data-urlencode 'query=probe' "http://127.0.0.1:$bport/api/v1/query")
$PY - "$got" "$tport" <<'PY' || fail "query backend with server_name: $got"
import json, sys
m = json.loads(sys.argv[1])["data"]["result"][0]["metric"]
if m["sni"] != "rw.test" or m["host"] != "127.0.0.1:" + sys.argv[2]:
    sys.exit("saw %r" % m)
PY
got=$(curl -sS --data-urlencode 'query=probe' "http://127.0.0.1:$nport/api/v1/query")
$PY - "$got" <<'PY' || fail "query backend without server_name: $got"
import json, sys
a = json.loads(sys.argv[1])
e = a.get("error", "").lower()
if a["status"] != "error" or ("certificate" not in e and "ssl" not in e):
    sys.exit("answer %r" % a)
print("without server_name:", a["error"])
PY
echo "PASS: query backend: server_name is the SNI and the verified name, none refused"
