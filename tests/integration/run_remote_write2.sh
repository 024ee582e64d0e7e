#!/usr/bin/env bash
# Remote-write 2.0 receiving (io.prometheus.write.v2.Request) next to 1.0 on
# /api/v1/write: requests built by tests/lib/remote_write.py (its own protobuf
# and snappy encoders). Checked through the query and metadata APIs: samples
# bit for bit, the created timestamp's zero sample, type/help/unit in
# /api/v1/metadata, the X-Prometheus-Remote-Write-*-Written headers; content
# negotiation (415s with Prometheus 3's messages; no or another media type is 1.0); partial writes (the good
# series stored, a 400 naming every refused one); a malformed message stores
# nothing; 1.0 with and without proto= still answers 204. Then a SIGKILL: what
# a 2.0 request wrote is in the WAL.
source "$IM_SOURCE_DIR/tests/lib/common.sh"
iport=$(free_port)
echo 'scrape_configs: []' >"$IM_TMP/im.yml"
start_im() { start_receiver "$iport"; }
start_im
I="http://127.0.0.1:$iport"
cat >"$IM_TMP/rw2.py" <<'PY'
import json, math, os, struct, sys, time, urllib.parse, urllib.request
sys.path.insert(0, os.environ["IM_SOURCE_DIR"] + "/tests/lib")
import remote_write as rw
I, step = sys.argv[1], sys.argv[2]
tfile = sys.argv[3]
def get(path, **params):
    with urllib.request.urlopen(I + path + "?" + urllib.parse.urlencode(params), timeout=30) as r:
        return json.loads(r.read())["data"]
def raw(sel, t):  # {labels json: [(t_ms, float bits)]}
    out = {}
    for x in get("/api/v1/query", query=sel + "[1h]", time="%.3f" % (t / 1000 + 1))["result"]:
        out[json.dumps(x["metric"], sort_keys=True)] = [(round(float(a) * 1000), float(b)) for a, b in x["values"]]
    return out
def hdr(h, what):
    return h.get("X-Prometheus-Remote-Write-%s-Written" % what)

if step == "write":
    t0 = int(time.time() * 1000) - 60000
    open(tfile, "w").write(str(t0))
    vals = [0.1, 1e-300, -2.5, 1.7976931348623157e308, 3.0]
    q = rw.V2()
    q.add([("__name__", "rw2_requests_total"), ("job", "a"), ("code", "200")],
          [(t0 + 1000 * k, v) for k, v in enumerate(vals)], metric_type="counter",
          help="Requests served.", unit="requests", created=t0 - 5000,
          exemplars=[([("trace_id", "abc")], 1.0, t0)])
    # labels out of order in the request, no metadata, a created timestamp not before the first sample
    q.add([("job", "b"), ("__name__", "rw2_temp"), ("room", "x")], [(t0, 21.5), (t0 + 1000, 22.0)],
          created=t0)
    st, body, h = rw.post(I, q.encode(), rw.CT_V2)
    assert st == 204, (st, body)
    assert (hdr(h, "Samples"), hdr(h, "Histograms"), hdr(h, "Exemplars")) == ("7", "0", "0"), h
    got = raw('{__name__=~"rw2_.*"}', t0 + 5000)
    want = {
        json.dumps({"__name__": "rw2_requests_total", "code": "200", "job": "a"}, sort_keys=True):
            [(t0 - 5000, 0.0)] + [(t0 + 1000 * k, v) for k, v in enumerate(vals)],
        json.dumps({"__name__": "rw2_temp", "job": "b", "room": "x"}, sort_keys=True):
            [(t0, 21.5), (t0 + 1000, 22.0)],
    }
    bits = lambda d: {k: [(t, struct.pack("<d", v)) for t, v in s] for k, s in d.items()}
    assert bits(got) == bits(want), (got, want)
    md = get("/api/v1/metadata")
    assert md.get("rw2_requests_total") == [{"type": "counter", "help": "Requests served.", "unit": "requests"}], md
    assert "rw2_temp" not in md, md
    assert get("/api/v1/metadata", metric="rw2_requests_total") == {"rw2_requests_total": md["rw2_requests_total"]}
    # metadata changes: the latest wins
    q = rw.V2().add([("__name__", "rw2_requests_total"), ("job", "a"), ("code", "200")],
                    [(t0 + 5000, 4.0)], metric_type="counter", help="Requests served, all codes.")
    st, body, h = rw.post(I, q.encode(), rw.CT_V2)
    assert st == 204 and hdr(h, "Samples") == "1", (st, body, h)
    md = get("/api/v1/metadata", metric="rw2_requests_total")
    assert md == {"rw2_requests_total": [{"type": "counter", "help": "Requests served, all codes.", "unit": ""}]}, md

    # content negotiation
    cases = [
        ("application/x-protobuf;proto=io.prometheus.write.v3.Request", "snappy", 415,
         "got application/x-protobuf;proto=io.prometheus.write.v3.Request content type; unknown remote "
         "write protobuf message io.prometheus.write.v3.Request, supported: prometheus.WriteRequest, "
         "io.prometheus.write.v2.Request"),
        ("application/x-protobuf;proto", "snappy", 415, "expected parameters to be key-values, got proto in"),
        (rw.CT_V2, "gzip", 415, "gzip encoding (compression) is not accepted by this server; only snappy is acceptable"),
    ]
    for ct, enc, code, msg in cases:
        st, body, h = rw.post(I, q.encode(), ct, enc)
        assert st == code and msg in body, (ct, enc, st, body)
    # a v2 body sent as 1.0 is not read as 2.0 (its fields are unknown there): nothing stored
    q = rw.V2().add([("__name__", "rw2_as_v1")], [(t0, 1)])
    # (no Content-Type or another media type, urllib's default form type here: 1.0 as before)
    for ct in ("application/x-protobuf", "application/x-protobuf;proto=prometheus.WriteRequest", None,
               "application/json"):
        st, body, h = rw.post(I, q.encode(), ct)
        assert st == 204 and hdr(h, "Samples") is None, (ct, st, body)
    assert get("/api/v1/series", **{"match[]": "rw2_as_v1"}) == []
    # 1.0 still works, with or without proto= and headers
    for k, ct in enumerate(["application/x-protobuf", "application/x-protobuf;proto=prometheus.WriteRequest", None]):
        st, body, h = rw.post(I, rw.v1_request([([("__name__", "rw1_still"), ("k", str(k))], [(t0, k)])]), ct,
                              None if ct is None else "snappy")
        assert st == 204 and hdr(h, "Samples") is None, (ct, st, body, h)

    # partial write: the good series are stored, the 400 lists the others
    q = rw.V2()
    q.add([("__name__", "rw2_good"), ("i", "1")], [(t0, 1.0)])
    q.add(None, [(t0, 2.0)], refs=[q.sym("__name__"), 999])                          # outside the table
    q.add(None, [(t0, 2.0)], refs=[q.sym("__name__"), q.sym("rw2_odd"), q.sym("x")])  # odd count
    q.add([("__name__", "rw2_dup"), ("a", "1"), ("a", "2")], [(t0, 3.0)])
    q.add([("__name__", "rw2_badname"), ("0a", "1")], [(t0, 4.0)])
    q.add([("job", "noname")], [(t0, 5.0)])
    q.add([("__name__", "rw2_hist")], [(t0, 6.0)], histograms=2)
    q.add([("__name__", "rw2_good"), ("i", "2")], [(t0, 7.0)], exemplars=[([("0bad", "x")], 1, t0)])
    q.add([("__name__", "rw2_good"), ("i", "3")], [(t0, 8.0)], help="x", unit="y", raw=rw.field(5, rw.vfield(3, 5000)))
    q.add([("__name__", "rw2_requests_total"), ("job", "a"), ("code", "200")], [(t0, 1.0)])  # out of order
    st, body, h = rw.post(I, q.encode(), rw.CT_V2)
    assert st == 400, (st, body)
    for msg in ["labels_refs 1 (name) = 999 (value) outside of symbols table (size",
                "invalid labels_refs length 3",
                'invalid labels for series, labels rw2_dup{a="2"}, duplicated label a',
                'invalid metric name or labels, got rw2_badname{0a="1"}',
                'invalid metric name or labels, got {job="noname"}',
                "native histograms are disabled for series rw2_hist",
                "invalid exemplar for series rw2_good{i=\"2\"}",
                "metadata help_ref 5000 outside of symbols table",
                'out of order sample for series rw2_requests_total{code="200", job="a"}']:
        assert msg in body, (msg, body)
    assert (hdr(h, "Samples"), hdr(h, "Histograms"), hdr(h, "Exemplars")) == ("3", "0", "0"), (h, body)
    got = raw('{__name__=~"rw2_good|rw2_hist"}', t0)
    assert got == {json.dumps(m, sort_keys=True): [(t0, v)] for m, v in
                   [({"__name__": "rw2_good", "i": "1"}, 1.0), ({"__name__": "rw2_good", "i": "2"}, 7.0),
                    ({"__name__": "rw2_hist"}, 6.0)]}, got
    names = sorted(x["__name__"] + x.get("i", "") for x in get("/api/v1/series", **{"match[]": '{__name__=~"rw2_good|rw2_hist|rw2_dup|rw2_badname|rw2_odd"}'}))
    assert names == ["rw2_good1", "rw2_good2", "rw2_hist"], names

    # a malformed message stores nothing: every series is in one request with a truncated tail
    q = rw.V2().add([("__name__", "rw2_never")], [(t0, 1.0)])
    for body_bytes in [q.encode() + rw.key(5, 2) + rw.varint(100) + b"\x01",   # length past the end
                       q.encode() + rw.key(4, 0) + rw.varint(1),                # symbols as a varint
                       q.encode() + b"\x80"]:                                   # truncated key
        st, body, h = rw.post(I, body_bytes, rw.CT_V2)
        assert st == 400 and hdr(h, "Samples") == "0", (st, body, h)
    st, body, h = rw.post(I, b"\xff\xff\xff\xff\xff\xff", rw.CT_V2, compress=False)
    assert st == 400 and "snappy" in body, (st, body)
    assert get("/api/v1/series", **{"match[]": "rw2_never"}) == []
    # a big request: 2000 series of 10 samples, one symbol table
    q = rw.V2()
    for i in range(2000):
        q.add([("__name__", "rw2_many"), ("i", str(i))], [(t0 + k * 1000, i + k) for k in range(10)],
              metric_type="gauge", help="Many series.")
    st, body, h = rw.post(I, q.encode(), rw.CT_V2)
    assert st == 204 and hdr(h, "Samples") == "20000", (st, body, h)
    n = get("/api/v1/query", query="sum(count_over_time(rw2_many[1h]))", time="%.3f" % (t0 / 1000 + 20))["result"]
    assert n[0]["value"][1] == "20000", n
    print("remote write 2.0: writes, negotiation, partial writes and refusals as expected")
elif step == "check":
    t0 = int(open(tfile).read())
    n = get("/api/v1/query", query="sum(count_over_time(rw2_many[1h])) + sum(count_over_time(rw2_requests_total[1h]))",
            time="%.3f" % (t0 / 1000 + 20))["result"]
    assert n[0]["value"][1] == "20007", n
    # the metadata too (kept in DATA/remote-write-metadata, appended before the 2xx)
    md = get("/api/v1/metadata")
    assert md.get("rw2_requests_total") == [{"type": "counter", "help": "Requests served, all codes.", "unit": ""}], md
    assert md.get("rw2_many") == [{"type": "gauge", "help": "Many series.", "unit": ""}], md
    print("after SIGKILL: the 2.0 writes and their metadata are there")
PY
$PY "$IM_TMP/rw2.py" "$I" write "$IM_TMP/t0" || { tail -20 "$IM_TMP/im.log"; fail "remote write 2.0"; }
curl -fsS "$I/metrics" >"$IM_TMP/metrics.txt" || fail "/metrics"
awk '$1 == "infermon_remote_write_v2_histograms_refused_total" && $2 == 2 { ok = 1 } END { exit !ok }' \
  "$IM_TMP/metrics.txt" || fail "histograms not counted: $(grep v2_ "$IM_TMP/metrics.txt")"
awk '$1 == "infermon_remote_write_v2_exemplars_dropped_total" && $2 == 1 { ok = 1 } END { exit !ok }' \
  "$IM_TMP/metrics.txt" || fail "exemplars not counted: $(grep v2_ "$IM_TMP/metrics.txt")"
kill -9 "$IPID"; wait "$IPID" 2>/dev/null || true
start_im
$PY "$IM_TMP/rw2.py" "$I" check "$IM_TMP/t0" || fail "after SIGKILL"
kill "$IPID"; wait "$IPID" || fail "clean shutdown"
echo "run_remote_write2: all passed"
