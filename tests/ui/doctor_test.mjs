// doctor_test.mjs — the diagnosis strip (web/doctor.js) in headless Chromium.
//
// usage: node doctor_test.mjs cause URL OUTDIR FROM TO CAUSE PANEL API.json
//          the strip's first finding is CAUSE (as the endpoint's first finding
//          above info in API.json), with severity, model, since and evidence;
//          clicking it moves to the overview over the finding's range with
//          PANEL scrolled into view and highlighted; an endpoint error (503)
//          is shown in the strip, not a blank strip.
//        node doctor_test.mjs healthy URL OUTDIR FROM TO
//          a quiet "healthy" line and no finding above info.
import { createRequire } from "module";
import path from "path";
import fs from "fs";

const [, , mode, base, outdir, from, to, cause, panel, apiFile] = process.argv;
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
  args: ["--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-background-networking", "--disable-component-update", "--disable-sync"],
});
let rc = 0;
const page = await browser.newPage({ viewport: { width: 1400, height: 900 } });
const errors = [];
page.on("pageerror", (e) => errors.push(String(e)));
const settled = () => page.waitForFunction(() => {
  const d = document.getElementById("doctor");
  return d && d.dataset.state && d.dataset.state !== "loading";
}, null, { timeout: 60000 });
try {
  await page.goto(`${base}/#/overview?from=${from}&to=${to}`);
  await settled();
  const state = await page.$eval("#doctor", (d) => d.dataset.state);
  if (mode === "healthy") {
    check(state === "healthy", `healthy fleet: the strip says healthy (state ${state})`);
    const rows = await page.$$eval("#doctor .drow", (r) => r.length);
    check(rows === 0, `healthy fleet: no finding above info in the strip (${rows})`);
    const text = await page.$eval("#doctor", (d) => d.textContent);
    check(/healthy/.test(text), `the quiet line reads "${text.slice(0, 80)}"`);
    const w = await page.evaluate(() => window.__infermonDoctor.findings.filter((f) => f.severity !== "info").length);
    check(w === 0, "the endpoint gave nothing above info");
    await page.screenshot({ path: path.join(outdir, "doctor-healthy.png") });
  } else {
    const api = JSON.parse(fs.readFileSync(apiFile, "utf8")).data.findings.filter((f) => f.severity !== "info");
    check(api.length > 0 && api[0].cause === cause, `the endpoint's first finding is ${cause} (${api.map((f) => f.cause)})`);
    check(state === "findings", `the strip shows findings (state ${state})`);
    const rows = await page.$$eval("#doctor .drow", (rs) => rs.map((r) => ({
      cause: r.dataset.cause, sev: r.querySelector(".sev").textContent, model: (r.querySelector(".model") || {}).textContent || "",
      since: (r.querySelector(".since") || {}).textContent || "", ev: r.querySelector(".ev").textContent,
      href: (r.querySelector("a.cause") || {}).getAttribute ? r.querySelector("a.cause").getAttribute("href") : "" })));
    check(rows[0].cause === cause, `the strip's first finding is ${cause} (${rows.map((r) => r.cause)})`);
    check(rows.map((r) => r.cause).join() === api.map((f) => f.cause).join(), "the strip lists the endpoint's findings in its order");
    check(/warning|critical/.test(rows[0].sev), `severity shown (${rows[0].sev})`);
    check(rows[0].model === api[0].model && rows[0].model !== "", `model shown (${rows[0].model})`);
    check(/since/.test(rows[0].since), `since shown (${rows[0].since})`);
    check(rows[0].ev.length > 10, `one line of evidence (${rows[0].ev.slice(0, 90)})`);
    check(rows[0].href && rows[0].href.includes("panel=" + panel), `its link goes to panel ${panel} (${rows[0].href})`);
    const before = await page.evaluate(() => (window.__infermonRendered || {}).at || 0);
    await page.click(`#doctor .drow[data-rank="0"] a.cause`);
    await page.waitForFunction((b) => (window.__infermonRendered || {}).at > b, before, { timeout: 60000 });
    const hash = await page.evaluate(() => location.hash);
    const hp = new URLSearchParams(hash.split("?")[1]);
    const lp = new URLSearchParams(rows[0].href.split("?")[1]);
    check(hp.get("from") === lp.get("from") && hp.get("to") === lp.get("to") && Number(lp.get("from")) >= Number(from),
      `the chart range is the finding's (${hp.get("from")}..${hp.get("to")})`);
    const sel = await page.$eval("#range", (s) => s.value);
    check(sel === "custom", `the range control shows the custom range (${sel})`);
    const box = await page.$eval("#panel-" + panel, (e) => ({ flash: e.classList.contains("flash"), top: e.getBoundingClientRect().top, h: window.innerHeight, state: e.dataset.state }));
    check(box.flash, `panel ${panel} is highlighted`);
    check(box.top >= -5 && box.top < box.h, `panel ${panel} is scrolled into view (top ${Math.round(box.top)} of ${box.h})`);
    check(box.state === "data", `panel ${panel} shows data over the range (${box.state})`);
    await page.screenshot({ path: path.join(outdir, "doctor-cause.png") });
    // an endpoint that fails: its error is in the strip
    await page.route("**/api/v1/llm/doctor*", (r) => r.fulfill({ status: 503, contentType: "application/json",
      body: JSON.stringify({ status: "error", errorType: "unavailable", error: "doctor query up: connection refused" }) }));
    await page.goto(`${base}/#/overview?from=${from}&to=${to}`);
    await page.reload();
    await settled();
    const err = await page.$eval("#doctor", (d) => ({ state: d.dataset.state, text: d.textContent }));
    check(err.state === "error" && /connection refused/.test(err.text), `an endpoint error is shown in the strip (${err.text})`);
  }
  check(errors.length === 0, "no page errors " + errors.join("; "));
} catch (e) {
  console.log(String(e && e.stack || e));
  await page.screenshot({ path: path.join(outdir, `doctor-${mode}-fail.png`) }).catch(() => {});
  rc = 1;
}
await browser.close();
console.log(`doctor ui (${mode}): ${passed} checks passed`);
process.exit(rc);
