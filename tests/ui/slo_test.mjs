// slo_test.mjs — the SLO page (web/slo.js) in headless Chromium.
//
// usage: node slo_test.mjs MODE URL OUTDIR [SLO-NAME...]
//   MODE slos   the table has a row per SLO named (objective, attainment, budget
//               shown as numbers or "no data"), each named SLO's burn-rate chart
//               draws points, a firing alert is marked, goodput rows render.
//   MODE empty  no SLO configured: the empty state says so and shows how to add one.
//   MODE nodata every value null: the row says "no data", nothing breaks.
// Prints one line per check and "slo-ui: N checks passed"; exit 1 on failure.
import { createRequire } from "module";
import path from "path";
import fs from "fs";

const [, , mode, base, outdir, ...names] = process.argv;
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
  const page = await browser.newPage({ viewport: { width: 1400, height: 1000 } });
  const errors = [];
  page.on("pageerror", (e) => errors.push(String(e)));
  await page.goto(base + "/#/slo?range=5m", { waitUntil: "load" });
  check(await page.locator('#nav a[data-page="slo"]').count() === 1, "the navigation has an SLOs link");
  if (mode === "empty") {
    await page.waitForSelector("#slo-empty", { timeout: 20000 });
    const t = await page.textContent("#slo-empty");
    check(/No SLO is configured/.test(t) && /llm:\s*\n\s*slos:/.test(t), "empty state says no SLO is configured and how to add one");
    check(await page.locator(".slo-row").count() === 0, "no SLO rows");
  } else {
    await page.waitForFunction(() => window.__infermonSlo && window.__infermonSlo.rendered, null, { timeout: 30000 });
    const rows = await page.locator(".slo-row").count();
    const st = await page.evaluate(() => window.__infermonSlo);
    check(rows === st.rows && rows >= Math.max(1, names.length), `the table has a row per SLO (${rows})`);
    for (const n of names) {
      const row = page.locator(`.slo-row[data-slo="${n}"]`);
      check(await row.count() === 1, `row for ${n}`);
      const cells = await row.locator("td").allTextContents();
      if (mode === "nodata") {
        check(cells.filter((c) => c === "no data").length >= 3, `${n}: null values read "no data"`);
      } else {
        check(/^\d+(\.\d+)?%$/.test(cells[3]), `${n}: objective ${cells[3]}`);
        check(/^\d+(\.\d+)?%$|^no data$/.test(cells[5]) && /^-?\d+(\.\d+)?%$|^no data$/.test(cells[6]), `${n}: attainment ${cells[5]}, budget left ${cells[6]}`);
        const c = st.charts[n];
        check(c && c.points >= Number(process.env.SLO_MIN_POINTS || "1"), `${n}: the burn-rate chart draws ${c ? c.points : 0} points`);
        const panel = page.locator(`#slo-charts .panel[data-slo="${n}"]`);
        check(await panel.getAttribute("data-state") === "data" && await panel.locator("canvas").count() > 0, `${n}: a uPlot canvas`);
      }
    }
    if (mode === "slos") {
      const firing = await page.locator(".slo-alert.state-firing").count();
      const expectFiring = Number(process.env.SLO_FIRING || "0");
      check(firing >= expectFiring, `${firing} alert(s) marked as firing (want >= ${expectFiring})`);
      check(await page.locator(".goodput-row").count() >= 1, "goodput rows render");
    }
  }
  await page.screenshot({ path: path.join(outdir, "slo-" + mode + ".png"), fullPage: true });
  check(errors.length === 0, "no page errors " + errors.join("; "));
} catch (e) {
  console.log("FAIL " + e.message);
  rc = 1;
} finally {
  await browser.close();
}
console.log(`slo-ui: ${passed} checks passed`);
process.exit(rc);
