#!/usr/bin/env bash
# File names in the configuration are resolved against the configuration file's
# directory (as Prometheus does), and tls_config.server_name is the TLS SNI and
# the name the target's certificate is verified against.
#
# The configuration lives in conf/ and names everything relatively: rule_files,
# a file_sd file, the CA (tls_config.ca_file) and a bearer token
# (authorization.credentials_file). infermon runs from another directory. The
# target is a python TLS server on 127.0.0.1 whose certificate (made here with
# openssl, signed by a CA made here) is for "target.test" only; it answers with
# the SNI and Host it saw. Jobs: server_name target.test (scraped: SNI
# target.test, Host 127.0.0.1:PORT), server_name other.test and no server_name
# (both refused: the certificate is not for that name). promtool check config
# (2.42) gives the same verdict on the same file from the same directory, and the
# same message once the token file is gone.
source "$IM_SOURCE_DIR/tests/lib/common.sh"
command -v promtool >/dev/null || fail "promtool (Debian package) is not installed"
C=$IM_TMP/conf
mkdir -p "$C/tls" "$C/rules" "$C/sd" "$IM_TMP/srv" "$IM_TMP/elsewhere"
S=$IM_TMP/srv
openssl req -x509 -newkey rsa:2048 -nodes -keyout "$S/ca.key" -out "$C/tls/ca.pem" -days 1 \
  -subj "/CN=test CA" >/dev/null 2>&1 || fail "openssl: CA"
openssl req -newkey rsa:2048 -nodes -keyout "$S/key.pem" -out "$S/req.csr" \
  -subj "/CN=target.test" >/dev/null 2>&1 || fail "openssl: request"
printf 'subjectAltName=DNS:target.test\n' >"$S/ext.cnf"
openssl x509 -req -in "$S/req.csr" -CA "$C/tls/ca.pem" -CAkey "$S/ca.key" -CAcreateserial \
  -out "$S/cert.pem" -days 1 -extfile "$S/ext.cnf" >/dev/null 2>&1 || fail "openssl: sign"
printf 's3cret\n' >"$C/tok"
tport=$(free_port); iport=$(free_port)
$PY - "$S" "$tport" >"$IM_TMP/target.log" 2>&1 <<'PY' &
import http.server, ssl, sys
d, port = sys.argv[1], int(sys.argv[2])
ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
ctx.load_cert_chain(d + "/cert.pem", d + "/key.pem")
def sni(sock, name, _ctx):
    sock.sni = name or ""
ctx.sni_callback = sni
class H(http.server.BaseHTTPRequestHandler):
    def do_GET(self):
        if self.headers.get("Authorization") != "Bearer s3cret":
            self.send_response(401); self.end_headers(); return
        body = ('probe{sni="%s",host="%s"} 1\n' % (getattr(self.connection, "sni", ""),
                                                    self.headers.get("Host"))).encode()
        self.send_response(200)
        self.send_header("Content-Type", "text/plain; version=0.0.4")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)
    def log_message(self, *a):
        pass
srv = http.server.ThreadingHTTPServer(("127.0.0.1", port), H)
srv.socket = ctx.wrap_socket(srv.socket, server_side=True)
srv.serve_forever()
PY
IM_PIDS+=($!)
printf '[{"targets": ["127.0.0.1:%s"]}]\n' "$tport" >"$C/sd/targets.json"
cat >"$C/rules/r.yml" <<'EOF'
groups:
  - name: g
    interval: 1s
    rules:
      - record: rule_file_found
        expr: vector(7)
EOF
job() { # name, extra tls_config keys
  cat <<EOF
  - job_name: $1
    scheme: https
    authorization: {credentials_file: tok}
    tls_config: {ca_file: tls/ca.pem$2}
    static_configs: [{targets: ['127.0.0.1:$tport']}]
EOF
}
{
  printf 'global: {scrape_interval: 1s, evaluation_interval: 1s}\nrule_files: [rules/*.yml]\n'
  printf 'scrape_configs:\n'
  printf '  - job_name: good\n    scheme: https\n    authorization: {credentials_file: tok}\n'
  printf '    tls_config: {ca_file: tls/ca.pem, server_name: target.test}\n'
  printf '    file_sd_configs: [{files: [sd/*.json], refresh_interval: 1s}]\n'
  job wrong ", server_name: other.test"
  job none ""
} >"$C/p.yml"

# promtool and infermon agree on the file, read from another directory
cd "$IM_TMP/elsewhere"
checks() {
  promtool check config ../conf/p.yml >"$IM_TMP/pt.out" 2>&1 && prc=0 || prc=$?
  "$IM_BINARY" check config ../conf/p.yml >"$IM_TMP/im.out" 2>&1 && irc=0 || irc=$?
  [ "$prc" = "$1" ] || fail "promtool check config: rc $prc, expected $1: $(cat "$IM_TMP/pt.out")"
  [ "$irc" = "$1" ] || fail "infermon check config: rc $irc, expected $1: $(cat "$IM_TMP/im.out")"
}
checks 0
mv "$C/tok" "$C/tok.away"
checks 1
want='FAILED: error checking authorization credentials or bearer token file "../conf/tok": stat ../conf/tok: no such file or directory'
grep -qF "$want" "$IM_TMP/pt.out" || fail "promtool says: $(cat "$IM_TMP/pt.out")"
grep -qF "$want" "$IM_TMP/im.out" || fail "infermon says: $(cat "$IM_TMP/im.out")"
mv "$C/tok.away" "$C/tok"
mv "$C/tls/ca.pem" "$C/tls/ca.away" # promtool checks cert_file and key_file, not ca_file
checks 0
mv "$C/tls/ca.away" "$C/tls/ca.pem"
echo "PASS: check config from another directory: same verdicts and message as promtool 2.42"

"$IM_BINARY" run --config.file=../conf/p.yml --storage.tsdb.path=data \
  --web.listen-address="127.0.0.1:$iport" --storage.tsdb.wal-fsync=never >"$IM_TMP/im.log" 2>&1 &
IM_PIDS+=($!)
wait_http "http://127.0.0.1:$iport/-/ready" 30 || fail "infermon not ready: $(cat "$IM_TMP/im.log")"
q() {
  curl -fsS --data-urlencode "query=$1" "http://127.0.0.1:$iport/api/v1/query" | $PY -c '
import json, sys
r = json.load(sys.stdin)["data"]["result"]
print(" ".join(sorted("%s=%s" % (",".join("%s:%s" % kv for kv in sorted(x["metric"].items())
                                            if kv[0] not in ("__name__", "instance")),
                                   x["value"][1]) for x in r)))'
}
wait_q() { # query expected
  for _ in $(seq 1 200); do [ "$(q "$1")" = "$2" ] && return 0; sleep 0.1; done
  fail "query $1: expected '$2', got '$(q "$1")'; log: $(tail -5 "$IM_TMP/im.log")"
}
wait_q 'rule_file_found' "=7"
wait_q 'up' "job:good=1 job:none=0 job:wrong=0"
wait_q 'probe' "host:127.0.0.1:$tport,job:good,sni:target.test=1"
curl -fsS "http://127.0.0.1:$iport/api/v1/targets" >"$IM_TMP/targets.json"
$PY - "$IM_TMP/targets.json" <<'PY' || fail "scrape errors of the refused jobs"
import json, sys
t = {x["labels"]["job"]: x["lastError"] for x in json.load(open(sys.argv[1]))["data"]["activeTargets"]}
for j in ("wrong", "none"):
    e = t[j].lower()
    if "certificate" not in e and "ssl" not in e:
        sys.exit("job %s: %r" % (j, t[j]))
if t["good"]:
    sys.exit("job good: %r" % t["good"])
print("refused:", t["wrong"], "|", t["none"])
PY
echo "PASS: relative rule_files, file_sd, ca_file and credentials_file from another directory;" \
  "server_name is the SNI and the verified name (right name scraped, wrong or none refused)"
