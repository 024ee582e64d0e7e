// backend_test.mjs — the dashboard over three stores, and over failing ones
// (run_query_backend.sh). Headless Chromium via playwright-core.
//
// usage: node backend_test.mjs HASH OUTDIR NAME=URL... -- ERRNAME=URL=PATTERN...
//   HASH      the overview's hash (a fixed from/to, so every store is asked the same)
//   NAME=URL  dashboards that must render the same panels with the same series
//             (the first is the reference, e.g. local); the header must say which
//             store answers (data: local store / data: <backend url>)
// env IM_VALUES_HASH: also compare the values every panel plots over this range
//   (backfilled identical samples) with the first store's; IM_EXPECT_ENGINES: engine
//   names (vLLM,SGLang) whose series at least 3 panels must draw
//   ERRNAME=URL=PATTERN  dashboards over a failing backend: the page renders,
//             every panel that is not "absent" shows an error matching PATTERN
//             (a regular expression: the backend's URL and what went wrong)
// Prints one line per check and "ui: N checks passed"; exit 1 on failure.
import { createRequire } from "module";
import path from "path";
import fs from "fs";

const args = process.argv.slice(2);
const hash = args.shift(), outdir = args.shift();
const sep = args.indexOf("--");
const good = (sep < 0 ? args : args.slice(0, sep)).map((a) => a.split(/=(.*)/s).slice(0, 2));
const bad = (sep < 0 ? [] : args.slice(sep + 1)).map((a) => {
  const i = a.indexOf("="), j = a.indexOf("=", a.indexOf("://") + 3);
  return [a.slice(0, i), a.slice(i + 1, j), new RegExp(a.slice(j + 1))];
});
const require = createRequire(path.resolve(process.env.IM_SOURCE_DIR || ".", "web/package.json"));
const { chromium } = require("playwright-core");
fs.mkdirSync(outdir, { recursive: true });

let passed = 0;
function check(cond, what) {
  if (!cond) { console.log("FAIL " + what); throw new Error(what); }
  console.log("ok   " + what);
  passed++;
}

const browser = await chromium.launch({
  executablePath: process.env.CHROMIUM || "/usr/bin/chromium",
  args: ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-background-networking",
    "--disable-component-update", "--disable-sync"],
});
let rc = 0;
try {
  const page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
  page.on("pageerror", (e) => { console.log("page error: " + e.message); });
  async function load(base) {
    const t0 = Date.now();
    await page.goto(base + "/" + hash, { waitUntil: "domcontentloaded" });
    await page.waitForFunction((t) => window.__infermonRendered && window.__infermonRendered.at >= t, t0 - 1000, { timeout: 30000 });
    await page.waitForFunction(() => document.querySelector("#backend") && document.querySelector("#backend").textContent !== "", null, { timeout: 10000 });
    return page.evaluate(() => ({
      r: window.__infermonRendered, panels: window.__infermonPanels || {},
      header: document.querySelector("#backend").textContent,
      states: Object.fromEntries([...document.querySelectorAll(".panel[data-panel]")].map((e) => [e.dataset.panel, e.dataset.state])),
      errors: Object.fromEntries([...document.querySelectorAll('.panel[data-state="error"]')].map((e) => [e.dataset.panel, e.querySelector(".err").textContent])),
    }));
  }
  // The values every panel plots over the backfilled past (identical samples in
  // every store, on whole seconds; the panels' start, end and step on whole
  // seconds too). Local and Prometheus evaluate PromQL alike: equal to 1e-9
  // (float summation order). VictoriaMetrics stores a value as a decimal
  // mantissa and exponent (lib/decimal: up to 12 significant digits for values
  // that are not integers) and answers with %g-like formatting: 1e-6 relative
  // (absolute below 1e-9). Its MetricsQL rate() does not extrapolate but takes
  // the sample before the window: on samples and evaluation times on whole
  // seconds, with a window a multiple of the interval, both give
  // (v(t) - v(t - w)) / w. VictoriaMetrics drops NaN points (histogram_quantile
  // of no requests) that Prometheus answers: a missing point must be NaN there.
  const valuesHash = process.env.IM_VALUES_HASH || "";
  const expectEngines = (process.env.IM_EXPECT_ENGINES || "").split(",").filter(Boolean);
  let refValues = null;
  async function loadValues(base) {
    await page.goto("about:blank"); // a new document: not a hash change of the last one
    const t0 = Date.now();
    await page.goto(base + "/" + valuesHash, { waitUntil: "domcontentloaded" });
    await page.waitForFunction((t) => window.__infermonRendered && window.__infermonRendered.at >= t, t0 - 1000, { timeout: 30000 });
    return page.evaluate(() => {
      const out = {};
      for (const e of document.querySelectorAll('.panel[data-panel][data-state="data"]')) out[e.dataset.panel] = window.__infermonPanels[e.dataset.panel].data;
      return out;
    });
  }
  function compareValues(name, got, want, wantName) {
    const tol = name.startsWith("victoria") ? { rel: 1e-6, abs: 1e-9 } : { rel: 1e-9, abs: 1e-12 };
    let points = 0, worst = 0, edge = 0;
    check(Object.keys(got).sort().join(" ") === Object.keys(want).sort().join(" "), `${name}: the same panels draw the past as over ${wantName}`);
    for (const id of Object.keys(want)) {
      const byName = (d) => { const m = new Map(); for (const [n, pts] of d) { if (!m.has(n)) m.set(n, []); m.get(n).push(new Map(pts)); } return m; };
      const a = byName(want[id]), b = byName(got[id]);
      const bad = [];
      for (const [n, as] of a) {
        const bs = b.get(n) || [];
        if (bs.length !== as.length) { bad.push(`${n}: ${bs.length} series, want ${as.length}`); continue; }
        as.forEach((am, i) => {
          const bm = bs[i];
          for (const t of new Set([...am.keys(), ...bm.keys()])) {
            const x = am.has(t) ? am.get(t) : NaN, y = bm.has(t) ? bm.get(t) : NaN;
            if (Number.isNaN(x) && Number.isNaN(y)) continue;
            points++;
            const d = Math.abs(x - y), lim = Math.max(tol.abs, tol.rel * Math.max(Math.abs(x), Math.abs(y)));
            if (Number.isFinite(d) && x !== 0 && y !== 0) worst = Math.max(worst, d / Math.max(Math.abs(x), Math.abs(y)));
            // VictoriaMetrics' histogram_quantile, when the rank falls exactly on a
            // bucket's cumulative count, may answer the next bucket's bound where
            // Prometheus answers that bucket's (seen: 0.02 vs 0.01 on a TTFT p50):
            // a quantile point where both answers are bucket bounds is counted, not failed
            const bound = (v) => Number.isFinite(v) && v > 0 && Math.abs(Number(v.toPrecision(3)) - v) <= 1e-9 * v;
            if (!(d <= lim) && !(x === y) && tol.rel === 1e-6 && / p\d\d\b/.test(n) && bound(x) && bound(y)) { edge++; continue; }
            if (!(d <= lim) && !(x === y)) bad.push(`${n} at ${t}: ${y} vs ${x}`);
          }
        });
      }
      for (const n of b.keys()) if (!a.has(n)) bad.push(`${n}: not over ${wantName}`);
      check(bad.length === 0, `${name}: panel ${id} plots the same values as over ${wantName}` + (bad.length ? ": " + bad.slice(0, 4).join("; ") : ""));
    }
    console.log(`metric ${name}_values_compared=${points} worst_relative_difference=${worst.toExponential(2)} quantiles_on_a_bucket_edge=${edge}`);
    check(points > 500, `${name}: ${points} points compared`);
  }
  // a first navigation (a cold browser: parsing the app, uPlot) is not measured
  await load(good[0][1]);
  let ref = null, refName = "";
  const drawn = (o) => Object.keys(o.states).filter((id) => o.states[id] === "data").length;
  for (const [name, base] of good) {
    // a store still filling its first rate windows (a loaded or sanitizer build) is
    // waited for: render again until the panels have data, 30 s at most
    let o = await load(base);
    // and, after the first store, until every panel drawn over the first has data here
    // too (a live TTFT histogram needs finished requests in its window)
    const behind = (o) => ref !== null && Object.keys(ref.states).some((id) => ref.states[id] === "data" && o.states[id] !== "data");
    for (let k = 0; k < 15 && (drawn(o) < 8 || behind(o)); k++) {
      await new Promise((r) => setTimeout(r, 2000));
      o = await load(base);
    }
    await page.screenshot({ path: path.join(outdir, `backend-${name}.png`), fullPage: true });
    console.log(`metric ${name}_first_render_ms=${Math.round(o.r.ms)} panels=${o.r.panels}`);
    check(ref ? /^data: http:\/\//.test(o.header) : o.header === "data: local store", `${name}: the header says which store answers: "${o.header}"`);
    const withData = Object.keys(o.states).filter((id) => o.states[id] === "data");
    check(withData.length >= 8, `${name}: ${withData.length} panels draw data`);
    check(Object.keys(o.errors).length === 0, `${name}: no panel shows an error ${JSON.stringify(o.errors).slice(0, 200)}`);
    // a mixed fleet (IM_EXPECT_ENGINES=vLLM,SGLang): the serving panels show each engine's series, with data
    const tagged = (eng) => Object.keys(o.states).filter((id) => o.states[id] === "data" && o.panels[id].names.some((n) => n.endsWith(" · " + eng)));
    for (const eng of expectEngines) check(tagged(eng).length >= 3, `${name}: ${tagged(eng).length} panels draw ${eng} series (${tagged(eng).join(" ")})`);
    if (valuesHash) {
      const v = await loadValues(base);
      if (!refValues) { refValues = v; check(Object.keys(v).length >= 8, `${name}: ${Object.keys(v).length} panels draw the backfilled past`); }
      else compareValues(name, v, refValues, refName);
    }
    if (!ref) { ref = o; refName = name; continue; }
    for (const id of Object.keys(ref.states)) {
      // the first store rendered earlier, on a live fleet: a panel not drawn there yet
      // (still filling its first rate windows, or a signal not yet scraped) may have
      // data by now — the values over the backfilled past are compared exactly above;
      // a panel drawn there must be drawn here, and no state may be an error
      const later = ref.states[id] !== "data" && ref.states[id] !== "error" && o.states[id] === "data";
      check(o.states[id] === ref.states[id] || later,
        `${name}: panel ${id} is ${o.states[id]} as over ${refName} (${ref.states[id]} there)`);
      if (ref.states[id] !== "data") continue;
      const a = ref.panels[id].names.join(" | "), b = o.panels[id].names.join(" | ");
      check(a === b, `${name}: panel ${id} renders the same ${o.panels[id].series} series as over ${refName}` + (a === b ? "" : `: ${b} vs ${a}`));
    }
  }
  for (const [name, base, re] of bad) {
    const t0 = Date.now();
    const o = await load(base);
    await page.screenshot({ path: path.join(outdir, `backend-${name}.png`), fullPage: true });
    const shown = Object.entries(o.states).filter(([, st]) => st !== "absent");
    check(shown.length > 0 && shown.every(([, st]) => st === "error"), `${name}: every panel shows an error (rendered in ${Date.now() - t0} ms)`);
    const msgs = [...new Set(Object.values(o.errors))];
    check(msgs.every((m) => re.test(m)), `${name}: the message names the backend and the failure: ${msgs.join(" / ").slice(0, 240)}`);
  }
  console.log(`ui: ${passed} checks passed`);
} catch (e) {
  console.log("error: " + e.message);
  rc = 1;
} finally {
  await browser.close();
}
process.exit(rc);
