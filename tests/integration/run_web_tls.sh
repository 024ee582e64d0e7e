#!/usr/bin/env bash
# The web config (--web.config.file) against real clients: certificates made here
# with openssl, curl as the client. Mutual TLS under each client_auth_type,
# client_allowed_sans, min/max_version, cipher_suites (exact list), curve_preferences,
# headers, changes picked up on the next connection, a broken file keeping the old
# one, bad certificate files refused at start with the file named; basic auth: an
# unknown user costs the same bcrypt as a known one, a changed password takes
# effect at once, the bcrypt pool never runs more than its bound.
source "$IM_SOURCE_DIR/tests/lib/common.sh"
T=$IM_TMP
cd "$T"

# ---- Certificates: a CA, a server cert, two client certs, and another CA ----
ec() { openssl req -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes "$@" >/dev/null 2>&1; }
ec -x509 -keyout ca.key -out ca.pem -days 2 -subj /CN=test-ca
ec -x509 -keyout ca2.key -out ca2.pem -days 2 -subj /CN=other-ca
sign() { # name ca san eku
  ec -keyout "$1.key" -out "$1.csr" -subj "/CN=$1"
  printf 'subjectAltName=%s\nextendedKeyUsage=%s\n' "$3" "$4" >"$1.ext"
  openssl x509 -req -in "$1.csr" -CA "$2.pem" -CAkey "$2.key" -CAcreateserial -out "$1.pem" \
    -days 2 -extfile "$1.ext" >/dev/null 2>&1 || fail "cannot sign $1"
}
sign srv ca "IP:127.0.0.1" serverAuth
sign cli ca "DNS:client.example" clientAuth
sign cli2 ca "DNS:other.example,IP:10.1.2.3" clientAuth
sign evil ca2 "DNS:client.example" clientAuth
sign srvonly ca "DNS:client.example" serverAuth # a client cert without the client purpose
echo 'global: {scrape_interval: 1h}' >cfg.yml

web() { # writes web.yml atomically (a new inode, so the change is always seen)
  cat >web.tmp
  mv web.tmp web.yml
}
TLS_HDR="tls_server_config:
  cert_file: srv.pem
  key_file: srv.key"

port=$(free_port)
B="https://127.0.0.1:$port"
web <<<"$TLS_HDR"
"$IM_BINARY" run --config.file=cfg.yml --storage.memory-only --web.listen-address="127.0.0.1:$port" \
  --web.config.file="$T/web.yml" >im.log 2>&1 &
IM_PIDS+=($!)
for i in $(seq 100); do curl -fsS --cacert ca.pem -o /dev/null "$B/-/healthy" 2>/dev/null && break; sleep 0.1; done
curl -fsS --cacert ca.pem -o /dev/null "$B/-/healthy" || { cat im.log; fail "TLS daemon not up"; }

# get NAME [curl args]: prints the HTTP status (000 = refused in the handshake)
get() {
  local n=$1
  shift
  curl -s --cacert ca.pem -o /dev/null -w '%{http_code}' "$@" "$B/-/healthy" 2>/dev/null || true
}
GOOD=(--cert cli.pem --key cli.key)
GOOD2=(--cert cli2.pem --key cli2.key)
EVIL=(--cert evil.pem --key evil.key)
NOEKU=(--cert srvonly.pem --key srvonly.key)
expect() { # description expected actual
  [ "$2" = "$3" ] || { tail -5 im.log; fail "$1: expected $2, got $3"; }
  echo "ok: $1 ($3)"
}
pass=0
auth() { # type [extra yaml]
  web <<YML
$TLS_HDR
  client_auth_type: $1
  client_ca_file: ca.pem
${2:-}
YML
}

auth RequireAndVerifyClientCert
expect "RequireAndVerify: no cert" 000 "$(get x)"
expect "RequireAndVerify: cert of another CA" 000 "$(get x "${EVIL[@]}")"
expect "RequireAndVerify: cert without client purpose" 000 "$(get x "${NOEKU[@]}")"
expect "RequireAndVerify: good cert" 200 "$(get x "${GOOD[@]}")"
auth RequireAnyClientCert
expect "RequireAny: no cert" 000 "$(get x)"
expect "RequireAny: cert of another CA" 200 "$(get x "${EVIL[@]}")"
auth VerifyClientCertIfGiven
expect "VerifyIfGiven: no cert" 200 "$(get x)"
expect "VerifyIfGiven: cert of another CA" 000 "$(get x "${EVIL[@]}")"
expect "VerifyIfGiven: good cert" 200 "$(get x "${GOOD[@]}")"
auth RequestClientCert
expect "RequestClientCert: no cert" 200 "$(get x)"
expect "RequestClientCert: cert of another CA" 200 "$(get x "${EVIL[@]}")"
web <<<"$TLS_HDR
  client_auth_type: NoClientCert"
expect "NoClientCert: no cert" 200 "$(get x)"
auth RequireAndVerifyClientCert "  client_allowed_sans: [client.example]"
expect "allowed SANs: matching SAN" 200 "$(get x "${GOOD[@]}")"
expect "allowed SANs: other SANs" 000 "$(get x "${GOOD2[@]}")"
expect "allowed SANs: matching SAN, other CA" 000 "$(get x "${EVIL[@]}")"
auth RequireAndVerifyClientCert "  client_allowed_sans: ['10.1.2.3']"
expect "allowed SANs: IP SAN" 200 "$(get x "${GOOD2[@]}")"

# ---- Versions, suites, curves ----
web <<<"$TLS_HDR
  min_version: TLS13"
expect "min_version TLS13: TLS 1.2 client" 000 "$(get x --tls-max 1.2)"
expect "min_version TLS13: TLS 1.3 client" 200 "$(get x --tlsv1.3)"
web <<<"$TLS_HDR
  max_version: TLS12"
expect "max_version TLS12: TLS 1.3-only client" 000 "$(get x --tlsv1.3)"
expect "max_version TLS12: TLS 1.2 client" 200 "$(get x --tls-max 1.2)"
web <<<"$TLS_HDR
  max_version: TLS12
  cipher_suites: [TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256, TLS_RSA_WITH_AES_256_GCM_SHA384]"
expect "cipher_suites: listed suite" 200 "$(get x --ciphers ECDHE-ECDSA-AES128-GCM-SHA256)"
# ECDHE-ECDSA x AES-256-GCM is in GnuTLS' product of the two suites, not in the list
expect "cipher_suites: unlisted suite" 000 "$(get x --ciphers ECDHE-ECDSA-AES256-GCM-SHA384)"
expect "cipher_suites: unlisted CBC suite" 000 "$(get x --ciphers ECDHE-ECDSA-AES128-SHA)"
web <<<"$TLS_HDR
  curve_preferences: [CurveP384]"
expect "curve_preferences P384: X25519-only client" 000 "$(get x --curves X25519)"
expect "curve_preferences P384: P-384 client" 200 "$(get x --curves P-384)"

# ---- inline cert and key; a changed certificate file is used from the next handshake ----
web <<YML
tls_server_config:
  cert: |
$(sed 's/^/    /' srv.pem)
  key: |
$(sed 's/^/    /' srv.key)
YML
expect "inline cert and key" 200 "$(get x)"
sign srv2 ca2 "IP:127.0.0.1" serverAuth
cp srv.pem srv1.pem
cp srv.key srv1.key
web <<<"$TLS_HDR"
expect "cert_file, first certificate" 200 "$(get x)"
cp srv2.key k.tmp && mv k.tmp srv.key
cp srv2.pem c.tmp && mv c.tmp srv.pem
expect "cert_file replaced: old CA no longer matches" 000 "$(get x)"
expect "cert_file replaced: new CA" 200 "$(get x --cacert ca2.pem)"
cp srv1.key k.tmp && mv k.tmp srv.key
cp srv1.pem c.tmp && mv c.tmp srv.pem
expect "cert_file restored" 200 "$(get x)"

# ---- headers ----
web <<<"$TLS_HDR
http_server_config:
  headers:
    X-Frame-Options: deny
    Strict-Transport-Security: max-age=31536000"
h=$(curl -sS --cacert ca.pem -D - -o /dev/null "$B/-/healthy" | tr -d '\r')
grep -qx 'X-Frame-Options: deny' <<<"$h" || fail "X-Frame-Options missing: $h"
grep -qx 'Strict-Transport-Security: max-age=31536000' <<<"$h" || fail "HSTS missing: $h"
h=$(curl -sS --cacert ca.pem -D - -o /dev/null "$B/nonexistent" | tr -d '\r')
grep -qx 'X-Frame-Options: deny' <<<"$h" || fail "X-Frame-Options missing on 404: $h"
echo "ok: headers"

# ---- a broken or TLS-less new file keeps the old one ----
auth RequireAndVerifyClientCert
expect "before broken file" 000 "$(get x)"
web <<<"$TLS_HDR
  client_auth_type: RequireAndVerifyClientCert
  client_ca_file: ca.pem
  bogus_key: 1"
expect "broken file: old config still enforced" 000 "$(get x)"
expect "broken file: good cert served" 200 "$(get x "${GOOD[@]}")"
grep -q 'Web config reload failed.*bogus_key' im.log || fail "reload error not logged: $(tail -3 im.log)"
web <<<"basic_auth_users: {}"
expect "TLS-less file: refused, old config kept" 000 "$(get x)"
grep -q 'switching between TLS and plain HTTP needs a restart' im.log || fail "TLS switch not logged"
m=$(curl -fsS --cacert ca.pem "${GOOD[@]}" "$B/metrics")
grep -q '^infermon_web_config_last_reload_successful 0' <<<"$m" || fail "reload gauge: $m"
grep -Eq '^infermon_web_tls_client_refused_total [1-9]' <<<"$m" || fail "refused counter"

# ---- bad files at start: the error names the file and the reason ----
start_err() { # web.yml content -> prints the daemon's error output
  printf '%s\n' "$1" >bad.yml
  local p
  p=$(free_port)
  "$IM_BINARY" run --config.file=cfg.yml --storage.memory-only --web.listen-address="127.0.0.1:$p" \
    --web.config.file="$T/bad.yml" 2>&1 && fail "daemon started with: $1"
  true
}
o=$(start_err "$(printf 'tls_server_config:\n  cert_file: missing.pem\n  key_file: srv.key')")
grep -q 'cert_file .*missing.pem.*No such file' <<<"$o" || fail "missing cert: $o"
echo garbage >notpem.pem
o=$(start_err "$(printf 'tls_server_config:\n  cert_file: notpem.pem\n  key_file: srv.key')")
grep -q 'notpem.pem.*not PEM' <<<"$o" || fail "not PEM: $o"
o=$(start_err "$(printf 'tls_server_config:\n  cert_file: srv.pem\n  key_file: cli.key')")
grep -q 'cli.key.*does not match.*srv.pem' <<<"$o" || fail "mismatch: $o"
o=$(start_err "$(printf 'tls_server_config:\n  cert_file: srv.pem\n  key_file: srv.key\n  client_auth_type: RequireAndVerifyClientCert')")
grep -q 'needs client_ca_file' <<<"$o" || fail "verify without CA: $o"
o=$(start_err "$(printf 'tls_server_config:\n  cert_file: srv.pem\n  key_file: srv.key\n  client_ca_file: notpem.pem\n  client_auth_type: RequireAndVerifyClientCert')")
grep -q 'client_ca_file.*notpem.pem' <<<"$o" || fail "bad CA: $o"
o=$(start_err "$(printf 'tls_server_config:\n  cert_file: srv.pem\n  key_file: srv.key\n  min_verison: TLS13')")
grep -q 'bad.yml:4:3.*min_verison' <<<"$o" || fail "unknown key position: $o"
o=$(start_err "$(printf 'http_server_config:\n  http2: true')")
grep -q 'http2: true is not supported' <<<"$o" || fail "http2: $o"
echo "ok: start errors"

# ---- Basic auth (plain HTTP daemon) ----
hash() { $PY -W ignore -c 'import crypt,sys; print(crypt.crypt(sys.argv[1], "$2b$08$" + sys.argv[2]))' "$1" "$2"; }
H1=$(hash pw1 abcdefghijklmnopqrstuu)
H2=$(hash pw2 bbcdefghijklmnopqrstuu)
HM=$(hash mpw cbcdefghijklmnopqrstuu)
printf "basic_auth_users:\n  alice: '%s'\n  mon: '%s'\n" "$H1" "$HM" >auth.tmp && mv auth.tmp auth.yml
aport=$(free_port)
A="http://127.0.0.1:$aport"
"$IM_BINARY" run --config.file=cfg.yml --storage.memory-only --web.listen-address="127.0.0.1:$aport" \
  --web.config.file="$T/auth.yml" --web.basic-auth.bcrypt-concurrency=1 --web.basic-auth.bcrypt-wait=5s \
  >auth.log 2>&1 &
IM_PIDS+=($!)
wait_http "http://mon:mpw@127.0.0.1:$aport/-/healthy" 30
code() { curl -s -o /dev/null -w '%{http_code}' "$@"; }
metric() { curl -fsS -u mon:mpw "$A/metrics" | awk -v m="$1" '$1 == m {print $2}'; }
expect "no credentials" 401 "$(code "$A/-/healthy")"
expect "alice" 200 "$(code -u alice:pw1 "$A/-/healthy")"
b0=$(metric infermon_web_basic_auth_bcrypt_total)
expect "unknown user" 401 "$(code -u nobody:pw1 "$A/-/healthy")"
b1=$(metric infermon_web_basic_auth_bcrypt_total)
expect "known user, wrong password" 401 "$(code -u alice:nope "$A/-/healthy")"
b2=$(metric infermon_web_basic_auth_bcrypt_total)
[ $((b1 - b0)) = 1 ] && [ $((b2 - b1)) = 1 ] ||
  fail "unknown and known users must each cost one bcrypt: $b0 $b1 $b2"
expect "alice again (cached)" 200 "$(code -u alice:pw1 "$A/-/healthy")"
[ "$(metric infermon_web_basic_auth_bcrypt_total)" = "$b2" ] || fail "cached success ran bcrypt"
# timing: medians over 15 tries each, within a factor 2; the tries alternate (unknown,
# known, unknown, …) so a load that comes and goes on a busy machine hits both alike
t_one() { curl -s -o /dev/null -w "%{time_total}" -u "$1" "$A/-/healthy"; }
: >tu.txt; : >tk.txt
for i in $(seq 15); do t_one nobody:x >>tu.txt; echo >>tu.txt; t_one alice:x >>tk.txt; echo >>tk.txt; done
tu=$(sort -n tu.txt | sed -n 8p)
tk=$(sort -n tk.txt | sed -n 8p)
$PY -c "import sys; u,k=$tu,$tk; print('unknown %.4fs known %.4fs' % (u, k)); sys.exit(0 if 0.5 < u/k < 2 else 1)" ||
  fail "unknown-user timing differs: $tu vs $tk"

# a changed password is used from the next request on
printf "basic_auth_users:\n  alice: '%s'\n  mon: '%s'\n" "$H2" "$HM" >auth.tmp && mv auth.tmp auth.yml
expect "old password after change" 401 "$(code -u alice:pw1 "$A/-/healthy")"
expect "new password after change" 200 "$(code -u alice:pw2 "$A/-/healthy")"
# a broken file keeps the last good one
printf "basic_auth_users:\n  alice: 'not-a-bcrypt-hash'\n" >auth.tmp && mv auth.tmp auth.yml
expect "broken file: new password still valid" 200 "$(code -u alice:pw2 "$A/-/healthy")"
grep -q 'Web config reload failed.*not a bcrypt hash' auth.log || fail "reload error not logged"
printf "basic_auth_users:\n  alice: '%s'\n  mon: '%s'\n" "$H2" "$HM" >auth.tmp && mv auth.tmp auth.yml

# the pool: 8 parallel guessers, never more than 1 bcrypt at once
gp=()
for i in $(seq 8); do
  code -u alice:guess$i "$A/-/healthy" >"g$i.out" &
  gp+=($!)
done
wait "${gp[@]}"
for i in $(seq 8); do expect "guesser $i" 401 "$(cat g$i.out)"; done
expect "bcrypt pool peak" 1 "$(metric infermon_web_basic_auth_bcrypt_inflight_max)"
echo "web TLS/auth: all checks passed"
