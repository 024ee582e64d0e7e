/* infermon dashboard — the LLM-serving causal chain on one time axis.
 *
 * A dependency-free single-page app over the Prometheus HTTP API that infermon
 * serves (/api/v1/*); charts with uPlot. State lives in the URL hash
 * (#/page?range=1h&model=x&refresh=30s&from=..&to=..) so a link reproduces the
 * view. Panels resolve metric names against what the targets expose (vLLM V1 or
 * the older V0 names) and say why when a family is absent. */
(function () {
  "use strict";

  // ---- small helpers ----------------------------------------------------
  const $ = (sel, el) => (el || document).querySelector(sel);
  const h = (tag, attrs, ...kids) => {
    const e = document.createElement(tag);
    for (const [k, v] of Object.entries(attrs || {})) {
      if (k === "class") e.className = v;
      else if (k === "text") e.textContent = v;
      else if (k.startsWith("on")) e.addEventListener(k.slice(2), v);
      else e.setAttribute(k, v);
    }
    for (const k of kids) if (k != null) e.append(k.nodeType ? k : document.createTextNode(String(k)));
    return e;
  };
  const DUR = { ms: 0.001, s: 1, m: 60, h: 3600, d: 86400, w: 604800, y: 31536000 };
  function parseDur(s) {
    if (!s) return 0;
    let total = 0, m;
    const re = /(\d+)(ms|s|m|h|d|w|y)/g;
    while ((m = re.exec(s))) total += Number(m[1]) * DUR[m[2]];
    return total;
  }
  function fmtDur(sec) {
    if (sec >= 86400 && sec % 86400 === 0) return sec / 86400 + "d";
    if (sec >= 3600 && sec % 3600 === 0) return sec / 3600 + "h";
    if (sec >= 60 && sec % 60 === 0) return sec / 60 + "m";
    return Math.max(1, Math.round(sec)) + "s";
  }
  function fmtNum(v, unit) {
    if (v == null || Number.isNaN(v)) return "–";
    if (unit === "percent01") return (v * 100).toFixed(v < 0.1 ? 1 : 0) + "%";
    if (unit === "percent") return v.toFixed(v < 10 ? 1 : 0) + "%";
    if (unit === "s") {
      // durations: µs, ms, s, min, h (a 2000 s TTFT reads "33.3 min", not "2000.0 s")
      const a = Math.abs(v);
      if (a === 0) return "0 s";
      if (a < 0.001) return (v * 1e6).toFixed(0) + " µs";
      if (a < 1) return (v * 1000).toFixed(a < 0.01 ? 1 : 0) + " ms";
      if (a < 60) return v.toFixed(a < 10 ? 2 : 1) + " s";
      if (a < 3600) return (v / 60).toFixed(a < 600 ? 1 : 0) + " min";
      return (v / 3600).toFixed(a < 36000 ? 1 : 0) + " h";
    }
    const a = Math.abs(v);
    if (v === 0) return "0";
    if (a >= 1e9) return (v / 1e9).toFixed(2) + "G";
    if (a >= 1e6) return (v / 1e6).toFixed(2) + "M";
    if (a >= 1e4) return (v / 1e3).toFixed(1) + "k";
    if (a >= 100) return v.toFixed(0);
    if (a >= 1) return v.toFixed(2);
    return v.toPrecision(2);
  }
  const esc = (s) => String(s).replace(/\\/g, "\\\\").replace(/"/g, '\\"');

  // ---- URL state --------------------------------------------------------
  // pages of other scripts (web/slo.js, web/cost.js): name -> page(main, ui)
  const EXT = Object.assign({}, window.INFERMON_PAGES || {}, window.infermonPages || {});
  const state = { page: "overview", range: "1h", from: null, to: null, model: "", refresh: "0", theme: "" };
  function readHash() {
    const [path, q] = location.hash.replace(/^#\/?/, "").split("?");
    state.page = ["overview", "alerts", "targets", "explore"].concat(Object.keys(EXT)).includes(path) ? path : "overview";
    const p = new URLSearchParams(q || "");
    state.range = p.get("range") || "1h";
    state.from = p.has("from") ? Number(p.get("from")) : null;
    state.to = p.has("to") ? Number(p.get("to")) : null;
    state.model = p.get("model") || "";
    state.refresh = p.get("refresh") || "0";
    state.expr = p.get("expr") || "";
    state.tab = p.get("tab") || "graph";
    state.panel = p.get("panel") || "";
  }
  function writeHash(replace) {
    const p = new URLSearchParams();
    if (state.from != null && state.to != null) { p.set("from", Math.round(state.from)); p.set("to", Math.round(state.to)); }
    else p.set("range", state.range);
    if (state.model) p.set("model", state.model);
    if (state.refresh !== "0") p.set("refresh", state.refresh);
    if (state.page === "explore" && state.expr) { p.set("expr", state.expr); p.set("tab", state.tab); }
    const url = "#/" + state.page + "?" + p.toString();
    if (replace) history.replaceState(null, "", url); else history.pushState(null, "", url);
  }
  function timeRange() {
    if (state.from != null && state.to != null) return [state.from, state.to];
    const now = Date.now() / 1000;
    return [now - parseDur(state.range), now];
  }

  // ---- API --------------------------------------------------------------
  let inflight = new Set();
  async function api(path, params) {
    const body = new URLSearchParams(params || {});
    const ctl = new AbortController();
    inflight.add(ctl);
    try {
      const r = await fetch("/api/v1/" + path, {
        method: params ? "POST" : "GET", body: params ? body : undefined, signal: ctl.signal,
        headers: params ? { "Content-Type": "application/x-www-form-urlencoded" } : {},
      });
      let j;
      try { j = await r.json(); } catch (e) { throw new Error("HTTP " + r.status + " from /api/v1/" + path); }
      if (j.status !== "success") {
        const err = new Error(j.error || "HTTP " + r.status);
        err.errorType = j.errorType;
        throw err;
      }
      return j.data;
    } finally { inflight.delete(ctl); }
  }
  function cancelAll() { for (const c of inflight) c.abort(); inflight.clear(); }

  // ---- discovery: which names do the targets expose? --------------------
  const env = { names: new Set(), scrapeInterval: 15, ttftTarget: 2, buckets: {}, loaded: false };
  async function discover() {
    env.error = null;
    try {
      const names = await api("label/__name__/values");
      env.names = new Set(names);
    } catch (e) {
      // the store did not answer (a query backend down, slow, failing): every
      // panel says so instead of calling its metrics "not exposed"
      env.names = new Set();
      if (e.name !== "AbortError") env.error = "cannot read the metric names: " + e.message;
    }
    try {
      const cfg = await api("status/config");
      const m = /scrape_interval:\s*(\S+)/.exec(cfg.yaml || "");
      if (m) env.scrapeInterval = parseDur(m[1]) || 15;
      const t = /ttft_p95_target(?:_seconds)?:\s*([0-9.]+)/.exec(cfg.yaml || "");
      if (t) env.ttftTarget = Number(t[1]);
    } catch (e) { /* keep defaults */ }
    env.loaded = !env.error; // retried on the next render
  }
  // Which store answers the queries (GET /api/v1/status/query_backend), in the header.
  async function showBackend() {
    const el = $("#backend");
    if (!el) return;
    try {
      // not api(): a page render cancels what api() has in flight
      const b = (await (await fetch("/api/v1/status/query_backend")).json()).data;
      el.textContent = b.type === "remote" ? "data: " + b.url + (b.tenant ? " (tenant " + b.tenant + ")" : "") : "data: local store";
      el.dataset.type = b.type;
    } catch (e) { el.textContent = ""; }
  }
  // Picks the first name of a list that the targets expose.
  const pick = (...cands) => cands.find((n) => env.names.has(n)) || null;
  const has = (n) => env.names.has(n);

  async function bucketBounds(bucketMetric) {
    if (env.buckets[bucketMetric]) return env.buckets[bucketMetric];
    try {
      const vals = await api("label/le/values?match[]=" + encodeURIComponent(bucketMetric));
      env.buckets[bucketMetric] = vals.map(Number).filter((v) => Number.isFinite(v)).sort((a, b) => a - b);
    } catch (e) { env.buckets[bucketMetric] = []; }
    return env.buckets[bucketMetric];
  }
  // The bucket gap (lo, hi) with hi/lo >= 2 that v falls strictly inside, or null.
  function gapFor(bounds, v) {
    for (let i = 0; i + 1 < bounds.length; i++) {
      const lo = bounds[i], hi = bounds[i + 1];
      if (v > lo && v < hi && lo > 0 && hi / lo >= 2) return [lo, hi];
    }
    return null;
  }

  // ---- panel catalogue (causal order of DOMAIN.md) ------------------------
  function modelSel(extra) {
    const parts = [];
    if (state.model) parts.push('model_name="' + esc(state.model) + '"');
    if (extra) parts.push(extra);
    return parts.length ? "{" + parts.join(", ") + "}" : "";
  }
  // Like Grafana's $__rate_interval, max(step + spacing, 4 x spacing), but with the
  // spacing of the samples actually stored in the range shown (live scrapes,
  // a backfill's step, imported blocks), not the configured scrape interval.
  function rateWin(step, spacing) {
    const sp = spacing || env.scrapeInterval;
    return fmtDur(Math.ceil(Math.max(step + sp, 4 * sp)));
  }
  // The sample spacing (seconds) of `metric` over [start, end]: one cheap range
  // query counting samples per series in windows of w seconds; per step the median
  // over series of w / count, then the 90th percentile over the steps, so the
  // sparsest part of the range decides (a series' first and last windows are few).
  const spacingCache = new Map();
  async function sampleSpacing(metric, start, end, step) {
    if (!metric) return null;
    const w = Math.max(300, 4 * step);
    const qstep = Math.max(step, Math.ceil((end - start) / 120));
    const key = [metric, Math.round(start / qstep), Math.round(end / qstep), qstep].join("|");
    if (spacingCache.has(key)) return spacingCache.get(key);
    let out = null;
    try {
      const r = await api("query_range", { query: `quantile(0.5, count_over_time(${metric}[${w}s]))`,
        start: String(start), end: String(end), step: String(qstep) });
      const sp = [];
      for (const s of r.result) for (const [, v] of s.values) if (Number(v) >= 2) sp.push(w / Number(v));
      sp.sort((a, b) => a - b);
      if (sp.length) out = sp[Math.min(sp.length - 1, Math.floor(sp.length * 0.9))];
    } catch (e) { if (e.name === "AbortError") throw e; }
    if (spacingCache.size > 64) spacingCache.clear();
    spacingCache.set(key, out);
    return out;
  }
  // The first metric name an expression selects (for Explore's $__rate_interval).
  function firstMetric(expr) {
    const kw = new Set(["sum", "avg", "min", "max", "count", "by", "without", "rate", "irate", "increase", "on", "ignoring",
      "group_left", "group_right", "bool", "and", "or", "unless", "offset", "topk", "bottomk", "quantile", "stddev", "stdvar",
      "histogram_quantile", "count_values", "group", "le", "inf", "nan"]);
    const re = /([a-zA-Z_:][a-zA-Z0-9_:]*)\s*(\(|\{|\[|$|\s|\))/g;
    let m;
    const noStr = expr.replace(/"(?:[^"\\]|\\.)*"/g, '""').replace(/\{[^}]*\}/g, "{}");
    while ((m = re.exec(noStr))) if (m[2] !== "(" && !kw.has(m[1].toLowerCase())) return m[1];
    return null;
  }
  const q = (name, sel) => name + sel;

  // ---- the serving model (catalog/serving-signals.tsv, as /static/serving-model.js) ----
  // Each serving panel shows one signal of the causal chain for every engine the
  // targets expose, with that engine's metric (newest name first), and says per
  // engine why a signal is absent.
  const SM = window.INFERMON_SERVING || { engines: [], maps: [] };
  const ENG = Object.fromEntries(SM.engines.map((e) => [e.id, e]));
  const SERVING = SM.engines.filter((e) => e.id !== "dcgm" && e.id !== "kueue").map((e) => e.id);
  const mapsFor = (eng, sig) => SM.maps.filter((m) => m.engine === eng && m.signal === sig);
  const present = (m) => has(m.name) || (m.type === "histogram" && (has(m.name + "_bucket") || has(m.name + "_count")));
  const pickSig = (eng, sig) => mapsFor(eng, sig).find(present) || null;
  // the serving engines the targets expose (any mapped name present), vLLM first
  function enginesPresent() {
    return SERVING.filter((e) => SM.maps.some((m) => m.engine === e && present(m)));
  }
  const mlabel = (e) => (ENG[e] && ENG[e].model_label) || "model_name";
  // selector for engine e: its model label (when a model is picked) and the mapping's matcher
  function selFor(e, m, extra) {
    const parts = [];
    if (state.model) parts.push(mlabel(e) + '="' + esc(state.model) + '"');
    if (m && m.selector) parts.push(m.selector);
    if (extra) parts.push(extra);
    return parts.length ? "{" + parts.join(", ") + "}" : "";
  }
  function withSel(name, sel) {
    // name may already carry no selector; merge
    return name + sel;
  }
  // A signal across the engines present: per engine the mapping or why it lacks it.
  function across(c, sig) {
    const out = [], lacks = [];
    for (const e of c.engines) {
      const m = pickSig(e, sig);
      if (m) out.push({ e, m, ml: mlabel(e), sel: selFor(e, m), tag: c.engines.length > 1 ? " · " + ENG[e].name : "" });
      else {
        const names = mapsFor(e, sig).map((x) => x.name);
        lacks.push(names.length ? `${ENG[e].name}: not exposed (${names.join(" or ")})` : `${ENG[e].name}: has no such metric`);
      }
    }
    return { out, lacks };
  }
  function srcNote(c, got, lacks) {
    const parts = got.map((g) => `${ENG[g.e].name}: ${g.m.name}${g.m.selector ? "{" + g.m.selector + "}" : ""}`);
    return parts.concat(lacks).join(" · ");
  }
  function absentText(c, vllmText, lacks) {
    if (!c.engines.length || (c.engines.length === 1 && c.engines[0] === "vllm")) return vllmText;
    return "not exposed by any target: " + lacks.join("; ");
  }
  const rateOf = (g, c) => g.m.type === "gauge" ? `${g.m.name}${g.sel}` : `rate(${g.m.name}${g.sel}[${c.rate}])`;
  const bucketOf = (g) => g.m.name + "_bucket";
  // panel builder for one signal: kind gauge (agg), rate, quantiles
  function signalPanel(sig, kind, vllmAbsent, opts) {
    return (c) => {
      const { out, lacks } = across(c, sig);
      c.src = srcNote(c, out, lacks);
      if (!out.length) return { absent: absentText(c, vllmAbsent, lacks) };
      const qs = [];
      for (const g of out) {
        if (kind === "quantile") {
          if (!c.panelGap) c.panelGap = bucketOf(g);
          for (const p of opts.q)
            qs.push({ expr: `histogram_quantile(${p}, sum by (le, ${g.ml}) (rate(${bucketOf(g)}${g.sel}[${c.rate}])))`, legend: `{{${g.ml}}} p${Math.round(p * 100)}${g.tag}` });
        } else if (kind === "rate") {
          qs.push({ expr: `sum by (${g.ml}) (${rateOf(g, c)})`, legend: `{{${g.ml}}}${opts && opts.suffix ? opts.suffix : ""}${g.m.type === "gauge" ? " (per interval)" : ""}${g.tag}` });
        } else {
          qs.push({ expr: `${opts.agg} by (${g.ml}) (${g.m.name}${g.sel})`, legend: `{{${g.ml}}}${opts.suffix || ""}${g.tag}` });
        }
      }
      return qs;
    };
  }

  // Each panel: id, title, unit, build(ctx) -> [{expr, legend}] or {absent: "why"}
  const PANELS = [
    { section: "Serving", engines: true },
    { id: "kv", title: "KV-cache use", unit: "percent01", threshold: 0.9, yMax: 1,
      build: signalPanel("kv_usage", "gauge", "not exposed by any target: vllm:kv_cache_usage_perc (vLLM ≥ 0.9.2) or vllm:gpu_cache_usage_perc (older)", { agg: "max" }) },
    { id: "preempt", title: "Preemptions /s", unit: "",
      build: signalPanel("preemptions", "rate", "not exposed by any target: vllm:num_preemptions_total") },
    { id: "waiting", title: "Waiting requests", unit: "",
      build: (c) => {
        // the reasons are parts of the total: stacked bands per model, the total an outline over them
        const qs = signalPanel("waiting", "gauge", "not exposed by any target: vllm:num_requests_waiting", { agg: "sum", suffix: " waiting (total)" })(c);
        if (!Array.isArray(qs)) return qs;
        for (const x of qs) x.outline = true;
        const r = c.engines.includes("vllm") && pickSig("vllm", "waiting_by_reason");
        if (r) qs.unshift({ expr: `sum by (model_name, reason) (${r.name}${selFor("vllm", r)})`, legend: "{{model_name}} {{reason}}" + (c.engines.length > 1 ? " · vLLM" : ""), stack: "model_name" });
        return qs;
      },
      note: (c) => c.engines.includes("vllm") && !has("vllm:num_requests_waiting_by_reason") ? "by reason: needs vLLM ≥ 0.20 (vllm:num_requests_waiting_by_reason)" : null },
    { id: "aborts", title: "Aborted and failed requests /s", unit: "",
      // clients giving up is part of the chain: a long queue ends in aborts
      build: (c) => has("vllm:request_success_total")
        ? [{ expr: `sum by (model_name, finished_reason) (rate(vllm:request_success_total{finished_reason=~"abort|error"${state.model ? ', model_name="' + esc(state.model) + '"' : ""}}[${c.rate}]))`, legend: "{{model_name}} {{finished_reason}}" }]
        : { absent: "not exposed by any target: vllm:request_success_total" } },
    { id: "running", title: "Running requests", unit: "",
      build: signalPanel("running", "gauge", "not exposed by any target: vllm:num_requests_running", { agg: "sum" }) },
    { id: "prefix", title: "Prefix-cache hit rate (tokens)", unit: "percent01", yMax: 1,
      build: (c) => {
        const qs = [], lacks = [], got = [];
        for (const e of c.engines) {
          const ml = mlabel(e), tag = c.engines.length > 1 ? " · " + ENG[e].name : "";
          const hits = pickSig(e, "prefix_hits"), qq = pickSig(e, "prefix_queries"), rate = pickSig(e, "prefix_hit_rate");
          if (hits && qq) {
            got.push({ e, m: hits });
            qs.push({ expr: `sum by (${ml}) (rate(${hits.name}${selFor(e, hits)}[${c.rate}])) / sum by (${ml}) (rate(${qq.name}${selFor(e, qq)}[${c.rate}]))`, legend: `{{${ml}}}${tag}` });
          } else if (rate) {
            got.push({ e, m: rate });
            qs.push({ expr: `avg by (${ml}) (${rate.name}${selFor(e, rate)})`, legend: `{{${ml}}}${tag}` });
          } else lacks.push(`${ENG[e].name}: ${mapsFor(e, "prefix_hits").length || mapsFor(e, "prefix_hit_rate").length ? "not exposed (prefix caching off?)" : "has no such metric"}`);
        }
        c.src = srcNote(c, got, lacks);
        return qs.length ? qs : { absent: absentText(c, "not exposed by any target: vllm:prefix_cache_hits_total / vllm:prefix_cache_queries_total (prefix caching off, or vLLM < 0.9.2)", lacks) };
      } },
    { id: "tokens", title: "Tokens /s", unit: "",
      build: (c) => {
        const gen = signalPanel("generation_tokens", "rate", "", { suffix: " generated" })(c);
        const s1 = c.src;
        const pr = signalPanel("prompt_tokens", "rate", "", { suffix: " prompt" })(c);
        c.src = s1 + (c.src ? " · " + c.src : "");
        const out = (Array.isArray(gen) ? gen : []).concat(Array.isArray(pr) ? pr : []);
        return out.length ? out : { absent: absentText(c, "not exposed by any target: vllm:generation_tokens_total, vllm:prompt_tokens_total", [gen.absent, pr.absent].filter(Boolean)) };
      } },
    { id: "ttft", title: "Time to first token", unit: "s", target: true,
      build: signalPanel("ttft", "quantile", "not exposed by any target: vllm:time_to_first_token_seconds", { q: [0.5, 0.95, 0.99] }) },
    { id: "itl", title: "Inter-token latency p99", unit: "s",
      build: signalPanel("itl", "quantile", "not exposed by any target: vllm:inter_token_latency_seconds (or the older vllm:time_per_output_token_seconds)", { q: [0.99] }) },
    { id: "e2e", title: "End-to-end latency", unit: "s",
      build: signalPanel("e2e", "quantile", "not exposed by any target: vllm:e2e_request_latency_seconds", { q: [0.5, 0.95] }) },
    { id: "queueshare", title: "Queue share of latency", unit: "percent01", yMax: 1,
      build: (c) => {
        const qs = [], lacks = [], got = [];
        for (const e of c.engines) {
          const ml = mlabel(e), tag = c.engines.length > 1 ? " · " + ENG[e].name : "";
          const qn = pickSig(e, "queue_time"), en = pickSig(e, "e2e");
          if (qn && en && qn.type === "histogram" && en.type === "histogram") {
            got.push({ e, m: qn });
            qs.push({ expr: `sum by (${ml}) (rate(${qn.name}_sum${selFor(e, qn)}[${c.rate}])) / sum by (${ml}) (rate(${en.name}_sum${selFor(e, en)}[${c.rate}]))`, legend: `{{${ml}}}${tag}` });
          } else lacks.push(`${ENG[e].name}: ${mapsFor(e, "queue_time").length ? "not exposed (" + mapsFor(e, "queue_time").map((m) => m.name).join(" or ") + ")" : "has no queue-time histogram"}`);
        }
        c.src = srcNote(c, got, lacks);
        return qs.length ? qs : { absent: absentText(c, "not exposed by any target: vllm:request_queue_time_seconds", lacks) };
      } },
    { section: "GPUs (dcgm-exporter)" },
    { id: "gpu_vs_wait", title: "GPU util vs waiting requests", unit: "percent", dual: true,
      build: (c) => {
        if (!has("DCGM_FI_DEV_GPU_UTIL")) return { absent: "not exposed by any target: DCGM_FI_DEV_GPU_UTIL (is dcgm-exporter scraped?)" };
        const out = [{ expr: `avg(DCGM_FI_DEV_GPU_UTIL${c.gpuSel})`, legend: "GPU util % (avg)" }];
        if (has("vllm:num_requests_waiting")) out.push({ expr: `sum(vllm:num_requests_waiting${c.sel})`, legend: "waiting", axis: 1 });
        for (const e of c.engines.filter((x) => x !== "vllm")) {
          const m = pickSig(e, "waiting");
          if (m) out.push({ expr: `sum(${m.name}${selFor(e, m)})`, legend: "waiting · " + ENG[e].name, axis: 1 });
        }
        return out;
      } },
    { id: "sm", title: "SM activity", unit: "percent01", yMax: 1,
      build: (c) => has("DCGM_FI_PROF_SM_ACTIVE")
        ? [{ expr: `avg(DCGM_FI_PROF_SM_ACTIVE${c.gpuSel})`, legend: "SM active (avg)" }]
        : { absent: "not exposed by any target: DCGM_FI_PROF_SM_ACTIVE is commented out in dcgm-exporter's default counters — enable it in its counters CSV" } },
    { id: "memcopy", title: "Memory-copy util", unit: "percent",
      build: (c) => has("DCGM_FI_DEV_MEM_COPY_UTIL")
        ? [{ expr: `avg(DCGM_FI_DEV_MEM_COPY_UTIL${c.gpuSel})`, legend: "mem-copy util % (avg)" }]
        : { absent: "not exposed by any target: DCGM_FI_DEV_MEM_COPY_UTIL" } },
    { id: "fb", title: "Framebuffer use", unit: "percent01", yMax: 1,
      build: (c) => has("DCGM_FI_DEV_FB_USED") && has("DCGM_FI_DEV_FB_FREE")
        ? [{ expr: `sum(DCGM_FI_DEV_FB_USED${c.gpuSel}) / (sum(DCGM_FI_DEV_FB_USED${c.gpuSel}) + sum(DCGM_FI_DEV_FB_FREE${c.gpuSel}))`, legend: "framebuffer used" }]
        : { absent: "not exposed by any target: DCGM_FI_DEV_FB_USED / DCGM_FI_DEV_FB_FREE" } },
    { id: "power", title: "Power", unit: "",
      build: (c) => has("DCGM_FI_DEV_POWER_USAGE")
        ? [{ expr: `sum(DCGM_FI_DEV_POWER_USAGE${c.gpuSel})`, legend: "W (sum)" }]
        : { absent: "not exposed by any target: DCGM_FI_DEV_POWER_USAGE" } },
  ];

  // ---- charts ------------------------------------------------------------
  const sync = window.uPlot ? uPlot.sync("infermon") : null;
  let charts = [];
  function cssVar(n) { return getComputedStyle(document.documentElement).getPropertyValue(n).trim(); }
  function color(i) { return cssVar("--c" + (i % 10)); }
  function legendName(tpl, metric) {
    return tpl.replace(/\{\{\s*(\w+)\s*\}\}/g, (_, k) => metric[k] != null ? metric[k] : "").trim() || JSON.stringify(metric);
  }
  function destroyCharts() { for (const c of charts) c.destroy(); charts = []; }

  function makeChart(el, series, opts) {
    // series: [{name, axis, points: [[t, v]...]}]; aligned on a shared time grid.
    // series with a `stack` key (the parts of a total, e.g. waiting by reason) are
    // drawn as filled bands stacked on each other; `raw` keeps their own values
    // for the legend. The total (`outline`) is a thicker line over them.
    const times = opts.times;
    const data = [times], raw = [];
    const tops = new Map(), below = new Map(), bands = [];
    series.forEach((s, i) => {
      if (s.stack == null) return;
      if (below.has(s.stack)) bands.push({ series: [i + 1, below.get(s.stack)], fill: color(i) + "55" });
      below.set(s.stack, i + 1);
    });
    const firstOfStack = new Set();
    { const seen = new Set(); series.forEach((s, i) => { if (s.stack != null && !seen.has(s.stack)) { seen.add(s.stack); firstOfStack.add(i); } }); }
    for (const s of series) {
      const m = new Map(s.points.map(([t, v]) => [t, v]));
      const own = times.map((t) => (m.has(t) ? m.get(t) : null));
      raw.push(own);
      if (s.stack == null) { data.push(own); continue; }
      const base = tops.get(s.stack) || times.map(() => 0);
      const top = own.map((v, i) => (v == null ? null : base[i] + v));
      tops.set(s.stack, top.map((v, i) => (v == null ? base[i] : v)));
      data.push(top);
    }
    const grid = { stroke: cssVar("--grid"), width: 1 };
    const axisStyle = { stroke: cssVar("--muted"), grid, ticks: grid };
    const yfmt = (u, vals) => vals.map((v) => fmtNum(v, opts.unit));
    // an axis as wide as its widest label (plus tick and gap), so no label is cut off
    const fitSize = (u, vals, i) => {
      const ax = u.axes[i];
      if (!vals || !vals.length) return 40;
      u.ctx.save(); u.ctx.font = ax.font[0];
      let w = 0;
      for (const v of vals) w = Math.max(w, u.ctx.measureText(String(v)).width);
      u.ctx.restore();
      return Math.ceil(w / (window.devicePixelRatio || 1)) + (ax.ticks.show ? ax.ticks.size : 0) + ax.gap + 6;
    };
    const axes = [{ ...axisStyle }, { ...axisStyle, values: yfmt, size: fitSize }];
    const scales = { x: { time: true, min: opts.start, max: opts.end }, y: opts.yMax ? { range: (u, mn, mx) => [0, Math.max(opts.yMax, mx || 0)] } : { range: (u, mn, mx) => [Math.min(0, mn || 0), (mx || 1) * 1.05] } };
    if (opts.dual) {
      // the second axis: a nice maximum split in four, so it always has five ticks
      const niceTop = (mx) => {
        const raw4 = Math.max(1, mx || 0) * 1.05 / 4;
        const mag = Math.pow(10, Math.floor(Math.log10(raw4)));
        const st = [1, 2, 2.5, 5, 10].map((k) => k * mag).find((k) => k >= raw4);
        return Math.max(1, Math.ceil(st)) * 4;
      };
      scales.y2 = { range: (u, mn, mx) => [0, niceTop(mx)] };
      axes.push({ ...axisStyle, scale: "y2", side: 1, grid: { show: false }, values: (u, vals) => vals.map((v) => fmtNum(v, "")), size: fitSize,
        splits: (u) => { const top = u.scales.y2.max; return [0, top / 4, top / 2, (3 * top) / 4, top]; } });
    }
    const plugins = [];
    if (opts.threshold != null || opts.target != null) {
      plugins.push({ hooks: { draw: (u) => {
        const lines = [];
        if (opts.threshold != null) lines.push([opts.threshold, cssVar("--bad")]);
        if (opts.target != null) lines.push([opts.target, cssVar("--warn")]);
        const ctx = u.ctx;
        for (const [v, col] of lines) {
          const y = u.valToPos(v, "y", true);
          if (y < u.bbox.top || y > u.bbox.top + u.bbox.height) continue;
          ctx.save(); ctx.strokeStyle = col; ctx.setLineDash([6, 4]); ctx.lineWidth = 1.5;
          ctx.beginPath(); ctx.moveTo(u.bbox.left, y); ctx.lineTo(u.bbox.left + u.bbox.width, y); ctx.stroke(); ctx.restore();
        }
      } } });
    }
    if (opts.gaps && opts.gaps.length) {
      // shade the bucket gaps the drawn quantiles fall into: interpolated, not measured
      plugins.push({ hooks: { drawClear: (u) => {
        const ctx = u.ctx;
        for (const [lo, hi] of opts.gaps) {
          const y1 = u.valToPos(hi, "y", true), y0 = u.valToPos(lo, "y", true);
          const top = Math.max(u.bbox.top, y1), bot = Math.min(u.bbox.top + u.bbox.height, y0);
          if (bot <= top) continue;
          ctx.save(); ctx.fillStyle = cssVar("--warn"); ctx.globalAlpha = 0.08;
          ctx.fillRect(u.bbox.left, top, u.bbox.width, bot - top); ctx.restore();
        }
      } } });
    }
    const width = Math.max(280, el.clientWidth || 600);
    const u = new uPlot({
      width, height: opts.height || 170, plugins,
      cursor: { sync: sync ? { key: sync.key, setSeries: false } : undefined, drag: { x: true, y: false } },
      select: { show: true },
      scales, axes, bands,
      legend: { live: true },
      series: [{}].concat(series.map((s, i) => ({
        label: s.name, stroke: color(i), width: s.outline ? 2.5 : 1.5, scale: s.axis ? "y2" : "y", spanGaps: false,
        fill: firstOfStack.has(i) ? color(i) + "55" : undefined,
        value: (u2, v, si, di) => fmtNum(di == null ? v : raw[i][di], s.axis ? "" : opts.unit),
      }))),
      hooks: {
        setSelect: [(u2) => {
          if (u2.select.width < 5) return;
          const a = u2.posToVal(u2.select.left, "x"), b = u2.posToVal(u2.select.left + u2.select.width, "x");
          u2.setSelect({ width: 0, height: 0 }, false);
          state.from = a; state.to = b; writeHash(); render();
        }],
      },
    }, data, el);
    if (sync) sync.sub(u);
    charts.push(u);
    window.__infermonCharts = charts;
    return u;
  }

  function timeGrid(start, end, step) {
    const t0 = Math.ceil(start / step) * step, out = [];
    for (let t = t0; t <= end + 1e-9; t += step) out.push(Math.round(t * 1000) / 1000);
    return out;
  }
  function chooseStep(start, end, widthPx) {
    const raw = (end - start) / Math.max(100, widthPx / 2);
    const nice = [1, 2, 5, 10, 15, 30, 60, 120, 300, 600, 900, 1800, 3600, 7200, 21600, 43200, 86400];
    return nice.find((n) => n >= raw) || 86400;
  }

  // ---- Overview page -----------------------------------------------------
  let gen = 0;
  async function overview(main) {
    const my = ++gen;
    const t0 = performance.now();
    if (!env.loaded) await discover();
    await fillModels();
    const [start0, end0] = timeRange();
    const width = main.clientWidth - 20;
    const step = chooseStep(start0, end0, width);
    // align to the step so the API's timestamps fall on the chart's grid
    const start = Math.floor(start0 / step) * step, end = Math.floor(end0 / step) * step;
    const engines = enginesPresent();
    const spacing = await sampleSpacing(pick("vllm:num_requests_running", "sglang:num_running_reqs", "vllm:generation_tokens_total", "DCGM_FI_DEV_GPU_UTIL", "up"), start, end, step);
    if (my !== gen) return;
    const ctx = { sel: modelSel(), rate: rateWin(step, spacing), step, spacing, gpuSel: "", engines };
    if (state.model && has("DCGM_FI_DEV_GPU_UTIL")) {
      try {
        // the pods serving the model, on whichever engine serves it
        const runs = engines.map((e) => pickSig(e, "running")).map((m, i) => m && `group by (pod) (${m.name}${selFor(engines[i], m)})`).filter(Boolean);
        const pods = await api("query", { query: runs.length ? runs.join(" or ") : `group by (pod) (vllm:num_requests_running${ctx.sel})` });
        const names = pods.result.map((r) => r.metric.pod).filter(Boolean);
        if (names.length) ctx.gpuSel = `{pod=~"${names.map((p) => p.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")).join("|")}"}`;
      } catch (e) { /* fleet-wide GPU panels */ }
    }
    const headline = h("div", { class: "headline", id: "headline" });
    const frag = document.createDocumentFragment();
    if (window.InfermonDoctor) frag.append(window.InfermonDoctor.strip({ start: start0, end: end0, model: state.model })); // web/doctor.js
    frag.append(headline);
    let grid = null;
    const jobs = [];
    for (const p of PANELS) {
      if (p.section) {
        const names = p.engines ? (engines.length ? engines : ["vllm"]).map((e) => ENG[e] ? ENG[e].name : e) : null;
        frag.append(h("div", { class: "section", text: names ? `${p.section} (${names.join(", ")})` : p.section, "data-engines": p.engines ? engines.join(",") : "" }));
        grid = h("div", { class: "panels" }); frag.append(grid); continue;
      }
      const el = h("div", { class: "panel", id: "panel-" + p.id, "data-panel": p.id });
      const title = h("h3", {}, p.title);
      const body = h("div", { class: "chart" });
      el.append(title, body);
      grid.append(el);
      jobs.push({ p, el, title, body });
    }
    main.replaceChildren(frag);
    destroyCharts();
    const times = timeGrid(start, end, step);
    headlineNumbers(headline, ctx, my);
    await Promise.all(jobs.map(async ({ p, el, title, body }) => {
      const c = Object.assign({}, ctx);
      const qs = p.build(c);
      const note = p.note && p.note(c);
      if (note) title.append(h("span", { class: "why", text: "(" + note + ")" }));
      // which engine's metric the panel shows (and what the others lack)
      if (c.src) { el.dataset.src = c.src; title.title = c.src; if (engines.length > 1) title.append(h("span", { class: "why src", text: c.src })); }
      if (env.error) { body.replaceChildren(h("div", { class: "err", text: env.error })); el.dataset.state = "error"; return; }
      if (!Array.isArray(qs)) { body.replaceChildren(h("div", { class: "empty", text: qs.absent })); el.dataset.state = "absent"; return; }
      try {
        const results = await Promise.all(qs.map((qq) => api("query_range", { query: qq.expr, start: start.toFixed(3), end: end.toFixed(3), step: String(step) })));
        if (my !== gen) return;
        const series = [];
        results.forEach((r, i) => r.result.forEach((s) => series.push({
          name: legendName(qs[i].legend, s.metric), axis: qs[i].axis, outline: qs[i].outline,
          stack: qs[i].stack ? String(s.metric[qs[i].stack] || "") : undefined,
          points: s.values.map(([t, v]) => [t, Number(v)]),
        })));
        if (!series.length) {
          body.replaceChildren(h("div", { class: "empty", text: "no data in this range (the series exist on the targets but have no samples here)" }));
          el.dataset.state = "empty";
          return;
        }
        let gaps = [];
        const gm = p.gapMetric || c.panelGap;
        if (gm) {
          const bounds = await bucketBounds(gm);
          // mark the gaps the current (latest) quantiles sit in
          const hit = new Map();
          for (const s of series) {
            let v = null;
            for (let i = s.points.length - 1; i >= 0; i--) if (Number.isFinite(s.points[i][1])) { v = s.points[i][1]; break; }
            const g = v == null ? null : gapFor(bounds, v);
            if (g) hit.set(g.join(","), g);
          }
          gaps = [...hit.values()];
          if (gaps.length) title.append(h("span", { class: "badge", title: "histogram_quantile interpolates linearly inside a bucket: values here are not measured",
            text: "interpolated: " + gaps.map(([lo, hi]) => `${lo} s–${hi} s bucket gap`).join(", ") }));
        }
        body.replaceChildren();
        // expose what each panel shows, for the browser test and for debugging
        let mx = -Infinity, last = null;
        for (const s2 of series) for (const [, v] of s2.points) if (Number.isFinite(v)) { mx = Math.max(mx, v); last = v; }
        (window.__infermonPanels = window.__infermonPanels || {})[p.id] = { max: mx, last, series: series.length, gaps, names: series.map((x) => x.name).sort(),
          data: series.map((x) => [x.name, x.points]) };
        const u = makeChart(body, series, { times, start, end, unit: p.unit, yMax: p.yMax, threshold: p.threshold,
          target: p.target ? env.ttftTarget : null, gaps, dual: p.dual });
        body.__uplot = u; // for the browser test: what is drawn
        // points that land on the chart's time grid (what is actually drawn)
        window.__infermonPanels[p.id].drawn = u.data.slice(1).reduce((n, col) => n + col.filter((v) => v != null).length, 0);
        el.dataset.state = "data";
      } catch (e) {
        if (e.name === "AbortError") return;
        body.replaceChildren(h("div", { class: "err", text: e.message }));
        el.dataset.state = "error";
      }
    }));
    if (my !== gen) return;
    window.__infermonRendered = { ms: performance.now() - t0, panels: jobs.length, at: Date.now(), rate: ctx.rate, spacing, step };
    status(`rendered ${jobs.length} panels in ${Math.round(performance.now() - t0)} ms · step ${fmtDur(step)} · rate window ${ctx.rate}`);
    if (state.panel) { const el = $("#panel-" + state.panel); if (el) { el.scrollIntoView(); el.classList.add("flash"); } }
  }

  async function headlineNumbers(el, ctx, my) {
    const w = ctx.rate;
    const stats = [
      { k: "TTFT p95", unit: "s", need: "vllm:time_to_first_token_seconds_bucket",
        expr: `histogram_quantile(0.95, sum by (le) (rate(vllm:time_to_first_token_seconds_bucket${ctx.sel}[${w}])))`,
        health: (v) => (v > env.ttftTarget ? "bad" : v > 0.8 * env.ttftTarget ? "warn" : "ok"), sub: () => "target " + fmtNum(env.ttftTarget, "s") },
      { k: "failure rate", unit: "percent01", need: "vllm:request_success_total",
        expr: `(sum(rate(vllm:request_success_total{finished_reason=~"abort|error"${state.model ? ', model_name="' + esc(state.model) + '"' : ""}}[${w}])) or vector(0)) / sum(rate(vllm:request_success_total${ctx.sel}[${w}]))`,
        health: (v) => (v > 0.05 ? "bad" : v > 0.01 ? "warn" : "ok") },
      { k: "KV-cache use (max)", unit: "percent01", need: pick("vllm:kv_cache_usage_perc", "vllm:gpu_cache_usage_perc"),
        expr: `max(${pick("vllm:kv_cache_usage_perc", "vllm:gpu_cache_usage_perc")}${ctx.sel})`,
        health: (v) => (v > 0.9 ? "bad" : v > 0.8 ? "warn" : "ok") },
      { k: "waiting", unit: "", need: "vllm:num_requests_waiting", expr: `sum(vllm:num_requests_waiting${ctx.sel})`,
        health: (v) => (v > 50 ? "bad" : v > 0 ? "warn" : "ok") },
      { k: "tokens/s generated", unit: "", need: "vllm:generation_tokens_total", expr: `sum(rate(vllm:generation_tokens_total${ctx.sel}[${w}]))`, health: () => "" },
      { k: "GPUs busy", unit: "", need: "DCGM_FI_DEV_GPU_UTIL",
        expr: `count(DCGM_FI_DEV_GPU_UTIL${ctx.gpuSel} > 10) or vector(0)`, sub2: `count(DCGM_FI_DEV_GPU_UTIL${ctx.gpuSel})`, health: () => "" },
    ];
    // Without vLLM the numbers come from the first engine present (same chain, its names).
    const e0 = ctx.engines && ctx.engines[0];
    if (e0 && e0 !== "vllm") {
      const g = (sig) => { const m = pickSig(e0, sig); return m ? { m, sel: selFor(e0, m), ml: mlabel(e0) } : null; };
      const tt = g("ttft"), fin = g("requests_finished"), fail = g("requests_failed"), kv = g("kv_usage"), wt = g("waiting"), gen = g("generation_tokens");
      const rate = (x) => x.m.type === "gauge" ? `${x.m.name}${x.sel}` : `rate(${x.m.name}${x.sel}[${w}])`;
      const tag = " · " + ENG[e0].name;
      stats[0] = { ...stats[0], k: "TTFT p95", need: tt && (tt.m.name + "_bucket"), expr: tt && `histogram_quantile(0.95, sum by (le) (rate(${tt.m.name}_bucket${tt.sel}[${w}])))`, sub: () => "target " + fmtNum(env.ttftTarget, "s") + tag };
      stats[1] = { ...stats[1], need: fin && fail && fin.m.name, expr: fin && fail && `(sum(${rate(fail)}) or vector(0)) / sum(${rate(fin)})` };
      stats[2] = { ...stats[2], need: kv && kv.m.name, expr: kv && `max(${kv.m.name}${kv.sel})` };
      stats[3] = { ...stats[3], need: wt && wt.m.name, expr: wt && `sum(${wt.m.name}${wt.sel})` };
      stats[4] = { ...stats[4], need: gen && (gen.m.type === "histogram" ? gen.m.name + "_count" : gen.m.name), expr: gen && `sum(${rate(gen)})` };
      for (const st of stats.slice(0, 5)) if (st.need && st.need.endsWith("_sum")) st.need = st.need.slice(0, -4) + "_count";
    }
    el.replaceChildren(...stats.map((s) => h("div", { class: "stat", id: "stat-" + s.k.replace(/\W+/g, "-") }, h("div", { class: "k", text: s.k }), h("div", { class: "v", text: "…" }), h("div", { class: "s", text: "" }))));
    await Promise.all(stats.map(async (s, i) => {
      const box = el.children[i];
      if (!s.need || !has(s.need)) { box.querySelector(".v").textContent = "n/a"; box.querySelector(".s").textContent = "not exposed"; return; }
      try {
        const r = await api("query", { query: s.expr });
        if (my !== gen) return;
        const v = r.result.length ? Number(r.result[0].value[1]) : NaN;
        let text = fmtNum(v, s.unit);
        if (s.sub2) { const r2 = await api("query", { query: s.sub2 }); text += " / " + (r2.result.length ? r2.result[0].value[1] : "0"); }
        box.querySelector(".v").textContent = text;
        if (s.sub) box.querySelector(".s").textContent = s.sub();
        const hcls = Number.isNaN(v) ? "" : s.health(v);
        if (hcls) box.classList.add(hcls);
      } catch (e) { box.querySelector(".v").textContent = "error"; box.title = e.message; }
    }));
  }

  async function fillModels() {
    // the model picker, grouped by the engine that serves each model
    const sel = $("#model");
    try {
      const groups = [];
      for (const e of enginesPresent()) {
        const m = pickSig(e, "running") || pickSig(e, "waiting");
        if (!m) continue;
        const metric = m.type === "histogram" ? m.name + "_count" : m.name;
        const models = await api(`label/${mlabel(e)}/values?match[]=` + encodeURIComponent(metric));
        if (models.length) groups.push(h("optgroup", { label: ENG[e].name, "data-engine": e }, ...models.map((x) => h("option", { value: x, text: x }))));
      }
      const cur = state.model;
      sel.replaceChildren(h("option", { value: "", text: "all" }), ...groups);
      sel.value = cur;
    } catch (e) { /* keep */ }
  }

  // ---- Alerts page ---------------------------------------------------------
  function labelChips(obj, skip) {
    return h("span", { class: "labels" }, ...Object.entries(obj || {}).filter(([k]) => !(skip || []).includes(k)).map(([k, v]) => h("span", { text: `${k}="${v}"` })));
  }
  function panelForExpr(expr) {
    // raw metric names and the built-in recording rules' names (model_name:vllm_…)
    const map = [["kv_cache_usage", "kv"], ["gpu_cache_usage", "kv"], ["token_usage", "kv"], ["preemption", "preempt"], ["retract", "preempt"], ["time_to_first_token", "ttft"],
      ["sglang_ttft", "ttft"], ["num_queue_reqs", "waiting"], ["sglang_requests_waiting", "waiting"], ["sglang_e2e", "e2e"],
      ["vllm_ttft", "ttft"], ["requests_waiting", "waiting"], ["num_requests_waiting", "waiting"], ["inter_token", "itl"],
      ["e2e_request", "e2e"], ["e2e_latency", "e2e"], ["queue_time", "queueshare"], ["DCGM_FI_DEV_GPU_UTIL", "gpu_vs_wait"],
      ["request_failure", "tokens"], ["request_success", "tokens"]];
    for (const [k, id] of map) if ((expr || "").includes(k)) return id;
    return null;
  }
  async function alerts(main) {
    const my = ++gen;
    let rules, al;
    try { [rules, al] = await Promise.all([api("rules"), api("alerts")]); }
    catch (e) { main.replaceChildren(h("div", { class: "err", text: "cannot load rules/alerts: " + e.message })); return; }
    if (my !== gen) return;
    const ruleByName = new Map();
    for (const g of rules.groups || []) for (const r of g.rules || []) ruleByName.set(r.name, r);
    const active = (al.alerts || []).slice().sort((a, b) => (a.state === b.state ? 0 : a.state === "firing" ? -1 : 1));
    const rows = active.map((a) => {
      const name = a.labels.alertname;
      const r = ruleByName.get(name);
      const pid = panelForExpr(r && r.query);
      return h("tr", { class: "alert-row", "data-state": a.state },
        h("td", {}, h("span", { class: "state-" + a.state, text: a.state })),
        h("td", {}, h("b", { text: name }), h("br"), labelChips(a.labels, ["alertname"])),
        h("td", {}, ...Object.entries(a.annotations || {}).map(([k, v]) => h("div", {}, h("span", { class: "mono", text: k + ": " }), v))),
        h("td", { class: "mono", text: a.activeAt ? new Date(a.activeAt).toLocaleString() : "" }),
        h("td", { class: "mono", text: a.value != null && a.value !== "" ? fmtNum(Number(a.value), "") : "" }),
        h("td", {}, pid ? h("a", { href: "#/overview?panel=" + pid + "&range=" + state.range, text: "explain →" }) : ""));
    });
    const ruleRows = [];
    for (const g of rules.groups || []) for (const r of g.rules || []) {
      ruleRows.push(h("tr", {},
        h("td", { class: "mono", text: g.name }),
        h("td", {}, h("b", { text: r.name }), h("div", { class: "mono", text: r.query })),
        h("td", { text: r.type }),
        h("td", {}, r.state ? h("span", { class: "state-" + r.state, text: r.state }) : r.health || ""),
        h("td", { class: "mono", text: r.lastEvaluation ? new Date(r.lastEvaluation).toLocaleTimeString() + " (" + fmtNum(r.evaluationTime, "s") + ")" : "" }),
        h("td", { class: "err", text: r.lastError || "" })));
    }
    main.replaceChildren(
      h("h2", { text: `Active alerts (${active.filter((a) => a.state === "firing").length} firing, ${active.filter((a) => a.state === "pending").length} pending)` }),
      active.length ? h("table", { class: "list", id: "alerts-table" }, h("tr", {}, ...["state", "alert", "annotations", "since", "value", ""].map((t) => h("th", { text: t }))), ...rows)
        : h("div", { class: "empty", text: "no alerts are pending or firing" }),
      h("h2", { text: "Rules" }),
      ruleRows.length ? h("table", { class: "list", id: "rules-table" }, h("tr", {}, ...["group", "rule", "type", "state", "last evaluation", "error"].map((t) => h("th", { text: t }))), ...ruleRows)
        : h("div", { class: "empty", text: "no rules loaded" }));
    status(`${active.length} active alerts, ${ruleRows.length} rules`);
  }

  // ---- Targets page --------------------------------------------------------
  async function targets(main) {
    const my = ++gen;
    let t, series = new Map();
    try { t = await api("targets"); } catch (e) { main.replaceChildren(h("div", { class: "err", text: e.message })); return; }
    try {
      const r = await api("query", { query: "scrape_samples_post_metric_relabeling" });
      for (const s of r.result) series.set(s.metric.job + "/" + s.metric.instance, s.value[1]);
    } catch (e) { /* optional */ }
    if (my !== gen) return;
    const byJob = new Map();
    for (const x of t.activeTargets || []) { const j = x.scrapePool || x.labels.job; if (!byJob.has(j)) byJob.set(j, []); byJob.get(j).push(x); }
    const out = [];
    for (const [job, list] of [...byJob.entries()].sort()) {
      const up = list.filter((x) => x.health === "up").length;
      out.push(h("h2", { text: `${job} (${up}/${list.length} up)` }));
      out.push(h("table", { class: "list targets" }, h("tr", {}, ...["endpoint", "health", "labels", "last scrape", "duration", "series", "error"].map((s) => h("th", { text: s }))),
        ...list.map((x) => h("tr", { class: "target-row", "data-health": x.health },
          h("td", { class: "mono", text: x.scrapeUrl }),
          h("td", {}, h("span", { class: "health-" + x.health, text: x.health })),
          h("td", {}, labelChips(x.labels, ["job"])),
          h("td", { class: "mono", text: x.lastScrape && !x.lastScrape.startsWith("0001") ? Math.max(0, Math.round((Date.now() - Date.parse(x.lastScrape)) / 1000)) + " s ago" : "never" }),
          h("td", { class: "mono", text: fmtNum(x.lastScrapeDuration, "s") }),
          h("td", { class: "mono", text: series.get(x.labels.job + "/" + x.labels.instance) || "" }),
          h("td", { class: "err", text: x.lastError || "" })))));
    }
    // Remote write: one row per queue (lag, backlog, errors), when any is configured.
    let rw = [];
    try { rw = await api("status/remote_write"); } catch (e) { /* optional */ }
    if (my !== gen) return;
    if (rw.length) {
      out.push(h("h2", { text: "Remote write" }));
      out.push(h("table", { class: "list remote-write" },
        h("tr", {}, ...["queue", "url", "shards", "lag", "pending", "sent", "retried", "failed", "dropped", "last error"].map((s) => h("th", { text: s }))),
        ...rw.map((q) => h("tr", { class: "rw-row", "data-healthy": String(q.lastSuccessMs >= q.lastErrorMs) },
          h("td", { class: "mono", text: q.name }),
          h("td", { class: "mono", text: q.url }),
          h("td", { class: "mono", text: `${q.shards} (wants ${q.desiredShards})` }),
          h("td", { class: "mono", text: fmtNum(q.lagSeconds, "s") }),
          h("td", { class: "mono", text: String(q.pendingSamples) }),
          h("td", { class: "mono", text: String(q.sentSamples) }),
          h("td", { class: "mono", text: String(q.retriedSamples) }),
          h("td", { class: "mono", text: String(q.failedSamples) }),
          h("td", { class: "mono", text: String(q.droppedSamples) }),
          h("td", { class: "err", text: q.lastErrorMs > q.lastSuccessMs ? q.lastError : "" })))));
    }
    main.replaceChildren(...(out.length ? out : [h("div", { class: "empty", text: "no targets configured" })]));
    status(`${(t.activeTargets || []).length} targets`);
  }

  // ---- Explore page --------------------------------------------------------
  async function explore(main) {
    ++gen;
    const box = h("textarea", { id: "expr", spellcheck: "false", placeholder: "PromQL, e.g. sum by (model_name) (rate(vllm:generation_tokens_total[5m]))" });
    box.value = state.expr;
    const errEl = h("div", { class: "parse-error hidden", id: "expr-error" });
    const out = h("div", { id: "explore-out" });
    const tabG = h("button", { id: "tab-graph", text: "graph" }), tabT = h("button", { id: "tab-table", text: "table" });
    const run = h("button", { id: "execute", text: "Execute" });
    const go = () => { state.expr = box.value.trim(); writeHash(); runExplore(box, errEl, out); };
    run.addEventListener("click", go);
    tabG.addEventListener("click", () => { state.tab = "graph"; go(); });
    tabT.addEventListener("click", () => { state.tab = "table"; go(); });
    box.addEventListener("keydown", (e) => { if (e.key === "Enter" && !e.shiftKey) { e.preventDefault(); go(); } });
    main.replaceChildren(h("div", { class: "explore" }, box, h("div", { class: "bar" }, run, tabG, tabT, h("span", { class: "ctl", text: "Enter runs, Shift+Enter adds a line" })), errEl, out));
    if (state.expr) runExplore(box, errEl, out);
  }
  function showParseError(errEl, expr, msg) {
    // "1:14: parse error: ..." -> point at line:column inside the expression
    const m = /(\d+):(\d+): parse error/.exec(msg) || /at char (\d+)/.exec(msg);
    let text = msg;
    if (m) {
      const lines = expr.split("\n");
      const line = m.length === 3 ? Number(m[1]) : 1, col = m.length === 3 ? Number(m[2]) : Number(m[1]);
      const src = lines[line - 1] || "";
      text = msg + "\n\n" + src + "\n" + " ".repeat(Math.max(0, col - 1)) + "^";
    }
    errEl.textContent = text;
    errEl.classList.remove("hidden");
  }
  // $__rate_interval in an Explore query follows the stored data like the overview's.
  async function expandRate(expr, start, end, step) {
    if (!/\$__rate_interval\b/.test(expr)) return expr;
    const sp = await sampleSpacing(firstMetric(expr), start, end, step);
    return expr.replace(/\$__rate_interval\b/g, rateWin(step, sp));
  }
  async function runExplore(box, errEl, out) {
    const raw = box.value.trim();
    let expr = raw;
    errEl.classList.add("hidden");
    destroyCharts();
    if (!expr) return;
    const [start0, end0] = timeRange();
    const t0 = performance.now();
    try {
      if (state.tab === "table") {
        expr = await expandRate(raw, start0, end0, chooseStep(start0, end0, out.clientWidth || 800));
        const r = await api("query", { query: expr, time: end0.toFixed(3) });
        let rows;
        if (r.resultType === "vector") rows = r.result.map((s) => h("tr", {}, h("td", { class: "mono", text: seriesName(s.metric) }), h("td", { class: "mono", text: s.value[1] })));
        else if (r.resultType === "matrix") rows = r.result.map((s) => h("tr", {}, h("td", { class: "mono", text: seriesName(s.metric) }), h("td", { class: "mono", text: s.values.map((v) => v[1] + " @" + v[0]).join("\n") })));
        else rows = [h("tr", {}, h("td", { class: "mono", text: r.resultType }), h("td", { class: "mono", text: String(r.result[1]) }))];
        out.replaceChildren(h("table", { class: "list", id: "result-table" }, h("tr", {}, h("th", { text: "series" }), h("th", { text: "value" })), ...rows));
        status(`${rows.length} results in ${Math.round(performance.now() - t0)} ms`);
      } else {
        const step = chooseStep(start0, end0, out.clientWidth || 800);
        const start = Math.floor(start0 / step) * step, end = Math.floor(end0 / step) * step;
        expr = await expandRate(raw, start, end, step);
        const r = await api("query_range", { query: expr, start: start.toFixed(3), end: end.toFixed(3), step: String(step) });
        const series = r.result.map((s) => ({ name: seriesName(s.metric), points: s.values.map(([t, v]) => [t, Number(v)]) }));
        out.replaceChildren();
        if (!series.length) { out.append(h("div", { class: "empty", text: "empty query result" })); return; }
        const el = h("div", { class: "panel" }, h("div", { class: "chart" }));
        out.append(el);
        makeChart(el.firstChild, series, { times: timeGrid(start, end, step), start, end, unit: "", height: 320 });
        status(`${series.length} series in ${Math.round(performance.now() - t0)} ms · step ${fmtDur(step)}`);
      }
    } catch (e) {
      if (e.name === "AbortError") return;
      showParseError(errEl, expr, e.message);
    }
  }
  function seriesName(m) {
    const name = m.__name__ || "";
    const rest = Object.entries(m).filter(([k]) => k !== "__name__").map(([k, v]) => `${k}="${v}"`).join(", ");
    return name + (rest || !name ? "{" + rest + "}" : "");
  }

  // ---- shell ----------------------------------------------------------------
  function status(t) { $("#status").textContent = t; }
  let timer = null;
  function render() {
    cancelAll();
    readHashSyncControls();
    const main = $("#main");
    const keep = new URLSearchParams(location.hash.split("?")[1] || "");
    keep.delete("expr"); keep.delete("tab"); keep.delete("panel");
    for (const a of document.querySelectorAll("#nav a")) {
      a.classList.toggle("active", a.dataset.page === state.page);
      a.setAttribute("href", "#/" + a.dataset.page + (keep.toString() ? "?" + keep.toString() : ""));
    }
    $("#model-ctl").classList.toggle("hidden", state.page !== "overview");
    const ui = { api, h, makeChart, destroyCharts, timeRange, chooseStep, timeGrid, fmtNum, fmtDur, status, nextGen: () => ++gen, isCurrent: (g) => g === gen };
    const pages = Object.assign({ overview, alerts, targets, explore }, ...Object.entries(EXT).map(([k, f]) => ({ [k]: (m) => f(m, ui) })));
    pages[state.page](main);
    clearInterval(timer);
    const every = parseDur(state.refresh);
    if (every > 0 && state.page !== "explore") timer = setInterval(() => { pages[state.page]($("#main")); }, every * 1000);
  }
  function readHashSyncControls() {
    $("#range").value = state.from != null ? "custom" : state.range;
    $("#custom-range").classList.toggle("hidden", state.from == null && $("#range").value !== "custom");
    if (state.from != null) {
      const f = (t) => new Date(t * 1000 - new Date().getTimezoneOffset() * 60000).toISOString().slice(0, 19);
      $("#from").value = f(state.from); $("#to").value = f(state.to);
    }
    $("#refresh").value = state.refresh;
    $("#model").value = state.model;
  }
  function setTheme(t) {
    document.documentElement.classList.toggle("dark", t === "dark");
    try { localStorage.setItem("infermon-theme", t); } catch (e) { /* private mode */ }
  }

  function init() {
    let theme = null;
    try { theme = localStorage.getItem("infermon-theme"); } catch (e) { /* ignore */ }
    if (!theme) theme = window.matchMedia && matchMedia("(prefers-color-scheme: dark)").matches ? "dark" : "light";
    const qp = new URLSearchParams(location.hash.split("?")[1] || "");
    if (qp.get("theme")) theme = qp.get("theme");
    setTheme(theme);
    $("#theme").addEventListener("click", () => { setTheme(document.documentElement.classList.contains("dark") ? "light" : "dark"); render(); });
    $("#range").addEventListener("change", (e) => {
      if (e.target.value === "custom") { $("#custom-range").classList.remove("hidden"); return; }
      state.range = e.target.value; state.from = state.to = null; writeHash(); render();
    });
    $("#apply-custom").addEventListener("click", () => {
      const a = Date.parse($("#from").value) / 1000, b = Date.parse($("#to").value) / 1000;
      if (a < b) { state.from = a; state.to = b; writeHash(); render(); }
    });
    $("#refresh").addEventListener("change", (e) => { state.refresh = e.target.value; writeHash(); render(); });
    $("#model").addEventListener("change", (e) => { state.model = e.target.value; writeHash(); render(); });
    document.addEventListener("dblclick", (e) => {
      if (e.target.closest(".chart") && state.from != null) { state.from = state.to = null; writeHash(); render(); }
    });
    let resizeT = null;
    window.addEventListener("resize", () => { clearTimeout(resizeT); resizeT = setTimeout(render, 250); });
    window.addEventListener("popstate", () => { readHash(); render(); });
    window.addEventListener("hashchange", () => { readHash(); render(); });
    readHash();
    if (!location.hash) writeHash(true);
    showBackend();
    render();
  }
  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", init);
  else init();
})();
