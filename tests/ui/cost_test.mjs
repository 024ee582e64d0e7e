// cost_test.mjs — the dashboard's Cost page (web/cost.js) in headless Chromium
// against `infermon run` over a simulated history: for each grouping the
// table's rows are the API's (GET /api/v1/llm/cost) figure for figure (every
// cell's data-value is the JSON value, a null shows "—" with its reason as the
// title), with the total, the price table, the period and the unattributed
// figures; the period picker asks for the month.
// usage: node cost_test.mjs URL OUTDIR
import { createRequire } from "module";
import path from "path";
import fs from "fs";

const [, , base, outdir] = process.argv;
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
  args: ["--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-background-networking", "--disable-sync"],
});
let rc = 0;
try {
  const page = await browser.newPage({ viewport: { width: 1500, height: 1000 } });
  const errors = [];
  page.on("pageerror", (e) => errors.push(e.message));
  async function rendered(hash) {
    await page.evaluate(() => { window.__infermonCost = null; }).catch(() => {});
    if (hash) await page.goto(base + "/" + hash, { waitUntil: "domcontentloaded" });
    await page.waitForFunction(() => window.__infermonCost && (window.__infermonCost.data || window.__infermonCost.error), null, { timeout: 60000 });
    return page.evaluate(() => window.__infermonCost);
  }
  async function same(by, got) {
    check(!got.error, `${by}: the page has a report (${got.error || got.url})`);
    const api = await (await fetch(base + got.url)).json();
    check(api.status === "success", `${by}: GET ${got.url} answers`);
    const d = api.data;
    const cells = await page.evaluate(() => [...document.querySelectorAll("#cost-table tr[data-group]")].map((tr) => ({
      group: tr.dataset.group, total: tr.classList.contains("cost-total"),
      cells: [...tr.querySelectorAll("td[data-key]")].map((td) => ({ key: td.dataset.key, value: td.dataset.value, text: td.textContent, title: td.title })),
    })));
    const rows = cells.filter((r) => !r.total);
    check(rows.length === d.rows.length && rows.every((r, i) => r.group === d.rows[i].group),
      `${by}: the table has the API's ${d.rows.length} rows (${rows.map((r) => r.group).join(", ")})`);
    let n = 0, nulls = 0;
    const all = rows.map((r, i) => [r, d.rows[i]]).concat([[cells.find((r) => r.total), d.total]]);
    for (const [r, j] of all) {
      for (const c of r.cells) {
        let want = j[c.key];
        if (c.key === "idle_share") {
          const basis = j.cost_basis === "reserved" ? j.gpu_hours_reserved : j.cost_basis === "allocated" ? j.gpu_hours_allocated : null;
          want = basis > 0 && j.gpu_hours_idle != null ? j.gpu_hours_idle / basis : null;
        }
        if (want === null || want === undefined) {
          if (c.value !== "null" || c.text !== "—" || !c.title) { check(false, `${by} ${r.group} ${c.key}: null shown as "${c.text}" title "${c.title}"`); }
          nulls++;
        } else if (Number(c.value) !== want) {
          check(false, `${by} ${r.group} ${c.key}: page ${c.value}, API ${want}`);
        }
        n++;
      }
    }
    check(n >= 12 * d.rows.length, `${by}: ${n} cells equal the API's figures (${nulls} nulls shown as — with a reason)`);
    const period = await page.textContent("#cost-periodtext");
    check(period.includes(d.period.from) && period.includes(d.period.to), `${by}: the period is printed: ${period.slice(0, 90)}`);
    const prices = await page.evaluate(() => [...document.querySelectorAll("#cost-prices tr")].slice(1).map((tr) => [...tr.children].map((td) => td.textContent)));
    check(prices.length === d.prices.table.length && prices.every((p, i) => p[0] === (d.prices.table[i].flavor || "—") && Number(p[2]) === d.prices.table[i].on_demand),
      `${by}: the price table is printed (${JSON.stringify(prices)})`);
    const un = await page.evaluate(() => Object.fromEntries([...document.querySelectorAll("#cost-unattributed li[data-key]")].map((li) => [li.dataset.key, li.dataset.value])));
    for (const [k, v] of Object.entries(un)) {
      const want = d.unattributed[k];
      check(want == null ? v === "null" : Number(v) === want, `${by}: unattributed ${k} ${v}`);
    }
    return d;
  }
  const d1 = await same("team", await rendered("#/cost?period=1d&by=team"));
  check(d1.unattributed.not_attributed.some((s) => /sandbox/.test(s)), "team: the namespace with no team is listed");
  const names = await page.textContent("#cost-unattributed");
  check(/sandbox/.test(names), "team: the page lists it");
  await page.screenshot({ path: path.join(outdir, "cost-team.png"), fullPage: true });
  // the group-by picker
  await page.evaluate(() => { window.__infermonCost = null; });
  await page.selectOption("#cost-by", "cluster_queue");
  const d2 = await same("cluster_queue", await rendered(null));
  const cq = await page.evaluate(() => [...document.querySelectorAll("#cost-table th")].map((t) => t.textContent));
  check(cq.includes("borrowed GPU-h") && cq.includes("lent GPU-h"), "cluster_queue: borrowed and lent columns");
  const why = await page.getAttribute("#cost-table tr[data-group] td[data-key=gpu_hours_allocated]", "title");
  check(/ClusterQueue/.test(why || ""), "cluster_queue: a null allocated says why: " + (why || "").slice(0, 80));
  check(d2.rows.some((r) => r.gpu_hours_borrowed > 0) && d2.rows.some((r) => r.gpu_hours_lent > 0), "cluster_queue: someone borrowed, someone lent");
  await page.screenshot({ path: path.join(outdir, "cost-cluster-queue.png"), fullPage: true });
  for (const by of ["flavor", "model", "namespace"]) await same(by, await rendered(`#/cost?period=7d&by=${by}`));
  // the period picker: the month
  await page.evaluate(() => { window.__infermonCost = null; });
  await page.selectOption("#cost-period", "month");
  const m = await rendered(null);
  check(/month=\d{4}-\d{2}/.test(m.url), "period picker: month asks for month= (" + m.url + ")");
  await same("month", m);
  await page.evaluate(() => { window.__infermonCost = null; });
  await page.selectOption("#cost-period", "30d");
  const r30 = await rendered(null);
  check(/range=30d/.test(r30.url), "period picker: last 30 d (" + r30.url + ")");
  // the nav link
  const nav = await page.getAttribute("#nav a[data-page=cost]", "class");
  check(/active/.test(nav || ""), "the Cost link in the navigation is active");
  check(errors.length === 0, "no page errors (" + errors.join("; ") + ")");
} catch (e) {
  console.log("error: " + e.message);
  rc = 1;
} finally {
  await browser.close();
}
console.log(`ui cost: ${passed} checks passed`);
process.exit(rc);
