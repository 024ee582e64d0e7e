// ui_test.mjs — drives the dashboard in headless Chromium (playwright-core with
// Debian's /usr/bin/chromium) against a running `infermon demo`.
//
// usage: node ui_test.mjs MODE URL OUTDIR
//   MODE healthy   every overview panel shows data (or says why it is absent, for
//                  families the simulator does not expose), timings measured,
//                  Explore shows a parse error in place, the Alerts and Targets
//                  pages render; screenshots.
//   MODE pressure  (kv-pressure fleet, a dead target, a fast-firing rule) the KV
//                  panel crosses 0.9, preemptions rise, Targets shows the down
//                  target with its error, Alerts lists a firing alert whose link
//                  leads to the panel that explains it.
//   MODE mixed     (a vLLM + SGLang fleet) the chain panels show both engines, each
//                  naming its metric; the model picker groups models by engine.
//   MODE backfill  (a demo with an hour backfilled at 15 s and live 2 s scrapes)
//                  over the hour every rate panel is a continuous line where
//                  data exists, and the rate window is at least 4x the spacing.
// In every mode, no y-axis label is wider than its axis (nothing clipped) and a
// second axis has more than one tick.
// Prints one line per check and "ui: N checks passed" at the end; exit 1 on failure.
import { createRequire } from "module";
import path from "path";
import fs from "fs";

const [, , mode, base, outdir] = process.argv;
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
try {
  const page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
  page.on("pageerror", (e) => { console.log("page error: " + e.message); });
  async function overviewReady(hash) {
    await page.waitForTimeout(400); // let pending resize/theme re-renders start first
    const since = await page.evaluate(() => Date.now()).catch(() => 0);
    await page.goto(base + "/" + hash, { waitUntil: "domcontentloaded" });
    await page.waitForFunction((t) => window.__infermonRendered && window.__infermonRendered.at >= t, since, { timeout: 60000 });
    await page.waitForSelector(".panel[data-panel=kv] .u-over, .panel[data-panel=kv] .empty", { timeout: 60000 });
    return page.evaluate(() => ({ r: window.__infermonRendered, panels: window.__infermonPanels || {},
      states: Object.fromEntries([...document.querySelectorAll(".panel[data-panel]")].map((e) => [e.dataset.panel, e.dataset.state])) }));
  }

  // Every chart's y axes: the labels uPlot drew fit inside the axis, measured
  // with the axis' own font; a right-hand axis has more than one tick.
  async function checkAxes(what) {
    const res = await page.evaluate(() => {
      const ctx = document.createElement("canvas").getContext("2d");
      const out = [];
      for (const el of document.querySelectorAll(".panel[data-panel] .chart")) {
        const u = el.__uplot;
        if (!u) continue;
        u.axes.forEach((ax, i) => {
          if (i === 0 || !ax.show || !ax._values) return;
          ctx.font = ax.font[0];
          const w = Math.max(0, ...ax._values.map((v) => ctx.measureText(String(v)).width)) / (window.devicePixelRatio || 1);
          const need = w + (ax.ticks.show ? ax.ticks.size : 0) + ax.gap;
          out.push({ panel: el.closest(".panel").dataset.panel, axis: i, side: ax.side, need, size: ax._size,
            ticks: ax._values.filter((v) => v != null && v !== "").length, labels: ax._values.slice(0, 8) });
        });
      }
      return out;
    });
    check(res.length > 0, `${what}: y axes found (${res.length})`);
    for (const a of res) {
      check(a.need <= a.size + 0.5, `${what}: ${a.panel} axis ${a.axis} labels fit (${a.need.toFixed(1)} <= ${a.size} px; ${a.labels.join(" | ")})`);
      if (a.side === 1) check(a.ticks >= 2, `${what}: ${a.panel} second axis has ${a.ticks} ticks`);
    }
    return res;
  }

  if (mode === "backfill") {
    const o = await overviewReady("#/overview?range=1h");
    const r = o.r;
    check(r.spacing >= 10, `backfill: measured sample spacing ${r.spacing} s (15 s backfill, 2 s live)`);
    check(/^\d+[smh]/.test(r.rate) && r.rate !== "20s", `backfill: rate window ${r.rate} (step ${r.step} s)`);
    const holes = await page.evaluate(() => {
      const out = {};
      for (const id of ["preempt", "aborts", "prefix", "tokens", "ttft", "itl", "e2e", "queueshare"]) {
        const el = document.querySelector(`.panel[data-panel=${id}] .chart`);
        if (!el || !el.__uplot) { out[id] = null; continue; }
        const d = el.__uplot.data;
        let gaps = 0, pts = 0;
        for (let s = 1; s < d.length; s++) {
          const col = d[s];
          let a = col.findIndex((v) => v != null), b = col.length - 1;
          while (b >= 0 && col[b] == null) b--;
          if (a < 0) continue;
          for (let i = a; i <= b; i++) { if (col[i] == null) gaps++; else pts++; }
        }
        out[id] = { gaps, pts, n: d[0].length };
      }
      return out;
    });
    for (const id of ["preempt", "aborts", "prefix", "tokens", "queueshare"]) {
      const x = holes[id];
      check(x && x.pts > x.n / 2, `backfill: ${id} draws over the hour (${x && x.pts} points on a ${x && x.n}-step grid)`);
      check(x && x.gaps === 0, `backfill: ${id} has no gaps where data exists (${x && x.gaps} missing)`);
    }
    await checkAxes("backfill");
    await page.screenshot({ path: path.join(outdir, "overview-backfill.png"), fullPage: true });
  } else if (mode === "healthy") {
    const t0 = Date.now();
    const o = await overviewReady("#/overview?range=5m&theme=light");
    const must = ["kv", "preempt", "waiting", "running", "prefix", "tokens", "ttft", "itl", "e2e", "queueshare", "gpu_vs_wait", "memcopy", "fb", "power"];
    for (const id of must) check(o.states[id] === "data" && o.panels[id].drawn > 0,
      `overview panel ${id} draws data (state ${o.states[id]}, ${o.panels[id] && o.panels[id].drawn} points)`);
    for (const [id, st] of Object.entries(o.states))
      check(st === "data" || st === "absent", `panel ${id} is data or says why it is absent (${st})`);
    const absentText = await page.$$eval('.panel[data-state="absent"] .empty', (els) => els.map((e) => e.textContent));
    for (const t of absentText) check(/not exposed/.test(t), "absent panel explains itself: " + t.slice(0, 60));
    console.log(`metric first_render_ms=${Math.round(o.r.ms)} wall_ms=${Date.now() - t0} panels=${o.r.panels}`);
    // frame time while the shared crosshair moves across the charts
    const chart = await page.$(".panel[data-panel=kv] .u-over");
    const box = await chart.boundingBox();
    await page.evaluate(() => { window.__frames = []; let last = performance.now();
      const f = (t) => { window.__frames.push(t - last); last = t; if (window.__frames.length < 120) requestAnimationFrame(f); }; requestAnimationFrame(f); });
    for (let i = 0; i < 60; i++) await page.mouse.move(box.x + (box.width * i) / 60, box.y + box.height / 2);
    const frames = await page.evaluate(() => window.__frames.slice(5).sort((a, b) => a - b));
    const p50 = frames[Math.floor(frames.length / 2)], p95 = frames[Math.floor(frames.length * 0.95)];
    console.log(`metric frame_ms_p50=${p50.toFixed(1)} frame_ms_p95=${p95.toFixed(1)}`);
    const legends = await page.$$eval(".u-legend .u-value", (els) => els.filter((e) => e.textContent.trim() && e.textContent.trim() !== "–").length);
    check(legends > 5, "crosshair shared: hover values shown in many panels (" + legends + ")");
    await checkAxes("healthy");
    // waiting: the reasons are stacked parts of the total, whose outline is drawn over them
    const stack = await page.evaluate(() => {
      const u = document.querySelector(".panel[data-panel=waiting] .chart").__uplot;
      const labels = u.series.map((s) => s.label || "");
      const total = labels.findIndex((l) => / waiting \(total\)$/.test(l));
      const model = total > 0 ? labels[total].replace(/ waiting \(total\)$/, "") : "";
      const parts = labels.map((l, i) => i).filter((i) => i > 0 && i !== total && labels[i].startsWith(model + " ") && !/\(total\)$/.test(labels[i]));
      let worst = 0, n = 0;
      if (total > 0 && parts.length) {
        const top = parts[parts.length - 1]; // the last band's top is the sum of the parts
        u.data[0].forEach((_, k) => {
          const t = u.data[total][k], s = u.data[top][k];
          if (t != null && s != null) { worst = Math.max(worst, Math.abs(t - s)); n++; }
        });
      }
      return { total, parts: parts.length, worst, n, width: total > 0 ? u.series[total].width : 0 };
    });
    check(stack.total > 0 && stack.parts >= 2 && stack.n > 0 && stack.worst < 1e-9 && stack.width > 2,
      `waiting: ${stack.parts} reasons stacked up to the total outline at ${stack.n} points (worst difference ${stack.worst})`);
    await page.screenshot({ path: path.join(outdir, "overview.png"), fullPage: true });
    // dark theme and phone width
    await page.click("#theme");
    await page.waitForFunction(() => document.documentElement.classList.contains("dark"));
    check(true, "dark theme toggles");
    await page.setViewportSize({ width: 390, height: 844 });
    await page.waitForTimeout(600);
    await page.waitForFunction(() => window.__infermonRendered, null, { timeout: 60000 });
    const overflow = await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
    check(overflow <= 2, "phone width: no horizontal overflow (" + overflow + " px)");
    await page.screenshot({ path: path.join(outdir, "overview-phone-dark.png"), fullPage: false });
    await page.setViewportSize({ width: 1280, height: 900 });
    await page.click("#theme");
    // zoom by drag applies to all panels and lands in the URL
    await overviewReady("#/overview?range=5m");
    const over = await page.$(".panel[data-panel=kv] .u-over");
    await over.scrollIntoViewIfNeeded();
    const c2 = await over.boundingBox();
    await page.mouse.move(c2.x + c2.width * 0.3, c2.y + 20);
    await page.mouse.down();
    await page.mouse.move(c2.x + c2.width * 0.7, c2.y + 20, { steps: 5 });
    await page.mouse.up();
    await page.waitForFunction(() => /from=\d+&to=\d+/.test(location.hash), null, { timeout: 10000 });
    check(true, "drag-zoom sets an absolute range in the URL: " + (await page.evaluate(() => location.hash)));
    // Explore: a bad query shows the parser's error in place
    await page.goto(base + "/#/explore?range=15m", { waitUntil: "domcontentloaded" });
    await page.fill("#expr", 'sum(rate(vllm:num_requests_running{model_name="x"[5m]))');
    await page.click("#execute");
    await page.waitForSelector("#expr-error:not(.hidden)", { timeout: 15000 });
    const perr = await page.textContent("#expr-error");
    check(/parse error/.test(perr) && /\^/.test(perr), "explore shows the parse error with a caret: " + perr.split("\n")[0]);
    await page.fill("#expr", "sum by (model_name) (vllm:num_requests_running)");
    await page.click("#execute");
    await page.waitForSelector("#explore-out .u-over", { timeout: 15000 });
    check(true, "explore graphs a good query");
    await page.click("#tab-table");
    await page.waitForSelector("#result-table tr:nth-child(2)", { timeout: 15000 });
    check(true, "explore table view lists results");
    await page.screenshot({ path: path.join(outdir, "explore.png") });
    // Targets: health per job, a down target shown with its error
    await page.goto(base + "/#/targets", { waitUntil: "domcontentloaded" });
    await page.waitForSelector(".target-row", { timeout: 15000 });
    const up = await page.$$eval('.target-row[data-health="up"]', (els) => els.length);
    check(up > 0, `targets page lists up targets (${up})`);
    await page.screenshot({ path: path.join(outdir, "targets.png"), fullPage: true });
    await page.goto(base + "/#/alerts", { waitUntil: "domcontentloaded" });
    await page.waitForSelector("h2", { timeout: 15000 });
    check(true, "alerts page renders");
    await page.screenshot({ path: path.join(outdir, "alerts.png"), fullPage: true });
  } else if (mode === "pressure") {
    // a daemon scraping a kv-pressure fleet, a dead target, and a rule that fires fast
    const o = await overviewReady("#/overview?range=5m");
    check(o.panels.kv && o.panels.kv.max >= 0.9, "kv-pressure: KV panel crosses 0.9 (max " + (o.panels.kv && o.panels.kv.max) + ")");
    check(o.panels.preempt && o.panels.preempt.max > 0, "kv-pressure: preemption panel rises (max " + (o.panels.preempt && o.panels.preempt.max) + ")");
    await checkAxes("kv-pressure");
    await page.screenshot({ path: path.join(outdir, "overview-kv-pressure.png"), fullPage: true });
    await page.goto(base + "/#/targets", { waitUntil: "domcontentloaded" });
    await page.waitForSelector('.target-row[data-health="down"]', { timeout: 30000 });
    const err = await page.textContent('.target-row[data-health="down"] .err');
    check(err.length > 0, "targets page shows a down target with its error: " + err.slice(0, 80));
    await page.screenshot({ path: path.join(outdir, "targets-down.png"), fullPage: true });
    await page.goto(base + "/#/alerts", { waitUntil: "domcontentloaded" });
    await page.waitForSelector('.alert-row[data-state="firing"]', { timeout: 90000 });
    const link = await page.$('.alert-row[data-state="firing"] a[href*="panel="]');
    check(link != null, "alerts page lists a firing alert with a link to the panel that explains it");
    await page.screenshot({ path: path.join(outdir, "alerts-firing.png"), fullPage: true });
    await link.click();
    await page.waitForSelector(".panel.flash", { timeout: 30000 });
    check(true, "the alert's link opens the overview at its panel");
  } else if (mode === "mixed") {
    // a vLLM + SGLang fleet: every chain panel shows both engines, each with its own metric
    const o = await overviewReady("#/overview?range=5m");
    const sect = await page.$eval(".section[data-engines]", (e) => e.dataset.engines);
    check(/vllm/.test(sect) && /sglang/.test(sect), "serving section lists both engines (" + sect + ")");
    for (const id of ["kv", "preempt", "waiting", "running", "tokens", "ttft", "itl", "e2e", "queueshare", "prefix"]) {
      const src = await page.$eval(`.panel[data-panel=${id}]`, (e) => e.dataset.src || "");
      check(o.states[id] === "data" && /vLLM: vllm:/.test(src) && /SGLang: sglang:/.test(src),
        `panel ${id} draws both engines' metrics (${o.states[id]}; ${src.slice(0, 90)})`);
    }
    const kvLegend = await page.$$eval(".panel[data-panel=kv] .u-legend .u-series th", (els) => els.map((e) => e.textContent));
    check(kvLegend.some((t) => /SGLang/.test(t)) && kvLegend.some((t) => /vLLM/.test(t)), "KV legend names the engine of each series");
    const groups = await page.$$eval("#model optgroup", (els) => els.map((e) => e.label));
    check(groups.includes("vLLM") && groups.includes("SGLang"), "model picker groups by engine: " + groups.join(", "));
    await page.screenshot({ path: path.join(outdir, "overview-mixed.png"), fullPage: true });
  }
  console.log(`ui: ${passed} checks passed`);
} finally {
  await browser.close();
}
