// backend_test.mjs — the dashboard over three stores, and over failing ones
// (run_query_backend.sh). Headless Chromium via playwright-core.
//
// usage: node backend_test.mjs HASH OUTDIR NAME=URL... -- ERRNAME=URL=PATTERN...
//   HASH      the overview's hash (a fixed from/to, so every store is asked the same)
//   NAME=URL  dashboards that must render the same panels with the same series
//             (the first is the reference, e.g. local); the header must say which
//             store answers (data: local store / data: <backend url>)
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
  // a first navigation (a cold browser: parsing the app, uPlot) is not measured
  await load(good[0][1]);
  let ref = null, refName = "";
  const drawn = (o) => Object.keys(o.states).filter((id) => o.states[id] === "data").length;
  for (const [name, base] of good) {
    // a store still filling its first rate windows (a loaded or sanitizer build) is
    // waited for: render again until the panels have data, 30 s at most
    let o = await load(base);
    for (let k = 0; k < 15 && drawn(o) < 8; k++) {
      await new Promise((r) => setTimeout(r, 2000));
      o = await load(base);
    }
    await page.screenshot({ path: path.join(outdir, `backend-${name}.png`), fullPage: true });
    console.log(`metric ${name}_first_render_ms=${Math.round(o.r.ms)} panels=${o.r.panels}`);
    check(ref ? /^data: http:\/\//.test(o.header) : o.header === "data: local store", `${name}: the header says which store answers: "${o.header}"`);
    const withData = Object.keys(o.states).filter((id) => o.states[id] === "data");
    check(withData.length >= 8, `${name}: ${withData.length} panels draw data`);
    check(Object.keys(o.errors).length === 0, `${name}: no panel shows an error ${JSON.stringify(o.errors).slice(0, 200)}`);
    if (!ref) { ref = o; refName = name; continue; }
    for (const id of Object.keys(ref.states)) {
      check(o.states[id] === ref.states[id], `${name}: panel ${id} is ${o.states[id]} as over ${refName}`);
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
