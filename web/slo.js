/* slo.js — the SLO page of the infermon dashboard (#/slo).
 *
 * Reads GET /api/v1/llm/slos (docs/slo.md): per SLO its objective, attainment
 * over the window, error budget left, burn rates at the standard windows and
 * the burn-rate alerts that would fire; and goodput per model (requests that
 * met every latency objective, per second). Draws the burn rate over the
 * page's time range from the recorded burn-rate series (query_range). Values
 * the server cannot compute yet are null: shown as "no data".
 *
 * Registers itself in window.INFERMON_PAGES; app.js calls page(main, ui) with
 * its helpers (ui.api, ui.h, ui.makeChart, ...). Loaded before app.js. */
(function () {
  "use strict";
  const WINDOWS = ["5m", "30m", "1h", "2h", "6h", "1d", "3d"];
  const NO = "no data";
  const pct = (v, digits) => (v == null || !Number.isFinite(Number(v)) ? NO : (Number(v) * 100).toFixed(digits == null ? 2 : digits) + "%");
  const num = (v, ui) => (v == null || !Number.isFinite(Number(v)) ? NO : ui.fmtNum(Number(v), ""));
  const esc = (s) => String(s).replace(/\\/g, "\\\\").replace(/"/g, '\\"');

  // The burn rate of an SLO at window w from the recorded SLI error ratio
  // (docs/slo.md: infermon_slo:sli_error:ratio_rate<w>{slo=...}): the ratio
  // over the error budget 1 - objective.
  function burnExpr(s, w) {
    const budget = 1 - Number(s.objective);
    const sel = `infermon_slo:sli_error:ratio_rate${w}{slo="${esc(s.name)}"}`;
    return Number.isFinite(budget) && budget > 0 ? `${sel} / ${budget.toPrecision(6).replace(/\.?0+$/, "")}` : sel;
  }

  function sliText(s, ui) {
    if (s.sli === "latency") {
      const thr = s.threshold_seconds == null ? "?" : ui.fmtNum(Number(s.threshold_seconds), "s");
      return `${s.signal || "latency"} ≤ ${thr}`;
    }
    if (s.sli === "availability") return "requests finished without error or abort";
    return s.sli || "";
  }

  function budgetClass(v) {
    if (v == null || !Number.isFinite(Number(v))) return "";
    return v <= 0 ? "bad" : v < 0.25 ? "warn" : "ok";
  }

  function emptyState(ui) {
    const h = ui.h;
    return h("div", { class: "empty slo-empty", id: "slo-empty" },
      h("p", { text: "No SLO is configured." }),
      h("p", { text: "Add objectives under llm.slos in the configuration (docs/slo.md), for example:" }),
      h("pre", { class: "mono", text: "llm:\n  slos:\n    - name: chat-ttft\n      model: meta-llama/Llama-3.1-8B-Instruct\n      sli: latency\n      signal: ttft\n      threshold: 2.5s\n      objective: 99\n      window: 30d" }));
  }

  async function page(main, ui) {
    const h = ui.h;
    const my = ui.nextGen();
    let data;
    try {
      data = await ui.api("llm/slos");
    } catch (e) {
      if (e.name === "AbortError") return;
      main.replaceChildren(h("div", { class: "err", id: "slo-error", text: "cannot load /api/v1/llm/slos: " + e.message }));
      ui.status("SLOs: " + e.message);
      return;
    }
    if (!ui.isCurrent(my)) return;
    const slos = (data && data.slos) || [];
    const goodput = (data && data.goodput) || [];
    window.__infermonSlo = { rows: slos.length, empty: !slos.length, charts: {}, goodput: goodput.length };
    ui.destroyCharts();
    if (!slos.length) {
      main.replaceChildren(h("h2", { text: "Service-level objectives" }), emptyState(ui));
      ui.status("no SLO configured");
      return;
    }
    const head = ["SLO", "model", "SLI", "objective", "window", "attainment", "budget left"]
      .concat(WINDOWS.map((w) => "burn " + w), ["alerts"]);
    const rows = slos.map((s) => {
      const br = s.burn_rates || {};
      const firing = (s.alerts || []).filter((a) => a.firing);
      return h("tr", { class: "slo-row", "data-slo": s.name, "data-firing": String(firing.length) },
        h("td", {}, h("b", { text: s.name })),
        h("td", { class: "mono", text: s.model || "all" }),
        h("td", { text: sliText(s, ui) }),
        h("td", { class: "num", text: pct(s.objective, 2) }),
        h("td", { class: "mono", text: s.window || "" }),
        h("td", { class: "num slo-attainment", text: pct(s.attainment, 3) }),
        h("td", { class: "num slo-budget " + budgetClass(s.error_budget_remaining), text: pct(s.error_budget_remaining, 1) }),
        ...WINDOWS.map((w) => h("td", { class: "num" + (br[w] != null && Number(br[w]) >= 1 ? " warn" : ""), text: num(br[w], ui) })),
        h("td", {}, ...(s.alerts || []).map((a) => h("span", {
          class: "chip slo-alert " + (a.firing ? "state-firing" : "state-inactive"),
          title: a.firing ? "would fire now" : "not firing",
          text: `${a.name} (${a.severity || "?"})${a.firing ? " firing" : ""}`,
        }))));
    });
    const table = h("table", { class: "list", id: "slo-table" }, h("tr", {}, ...head.map((t) => h("th", { text: t }))), ...rows);
    const gp = goodput.length
      ? h("table", { class: "list", id: "goodput-table" }, h("tr", {}, h("th", { text: "model" }), h("th", { text: "goodput (requests/s meeting every latency objective)" })),
        ...goodput.map((g) => h("tr", { class: "goodput-row" }, h("td", { class: "mono", text: g.model || "all" }), h("td", { class: "num", text: g.requests_per_second == null ? NO : ui.fmtNum(Number(g.requests_per_second), "") + " /s" }))))
      : h("div", { class: "empty", text: "no latency objective: goodput needs one" });
    const charts = h("div", { class: "panels", id: "slo-charts" });
    main.replaceChildren(h("h2", { text: `Service-level objectives (${slos.length})` }), table,
      h("h2", { text: "Goodput" }), gp, h("h2", { text: "Burn rate over time" }), charts);

    const [start0, end0] = ui.timeRange();
    const step = ui.chooseStep(start0, end0, Math.max(300, (main.clientWidth || 900) / 2 - 20));
    const start = Math.floor(start0 / step) * step, end = Math.floor(end0 / step) * step;
    const times = ui.timeGrid(start, end, step);
    const shown = ["5m", "1h", "6h"];
    await Promise.all(slos.map(async (s) => {
      const el = h("div", { class: "panel", "data-slo": s.name });
      const body = h("div", { class: "chart" });
      el.append(h("h3", { text: `${s.name}: burn rate (1 = the budget lasts the window)` }), body);
      charts.append(el);
      try {
        const res = await Promise.all(shown.map((w) => ui.api("query_range", { query: burnExpr(s, w), start: start.toFixed(3), end: end.toFixed(3), step: String(step) })));
        if (!ui.isCurrent(my)) return;
        const series = [];
        res.forEach((r, i) => r.result.forEach((x) => series.push({ name: `${shown[i]}${x.metric.model ? " " + x.metric.model : ""}`, points: x.values.map(([t, v]) => [t, Number(v)]) })));
        const npts = series.reduce((n, x) => n + x.points.filter(([, v]) => Number.isFinite(v)).length, 0);
        window.__infermonSlo.charts[s.name] = { series: series.length, points: npts };
        if (!npts) {
          body.replaceChildren(h("div", { class: "empty", text: NO + ": no recorded burn rate in this range yet (" + burnExpr(s, "1h") + ")" }));
          el.dataset.state = "empty";
          return;
        }
        // the page threshold (14.4x) and the budget-neutral rate (1x)
        const u = ui.makeChart(body, series, { times, start, end, unit: "", threshold: 14.4, target: 1 });
        body.__uplot = u;
        el.dataset.state = "data";
      } catch (e) {
        if (e.name === "AbortError") return;
        body.replaceChildren(h("div", { class: "err", text: e.message }));
        el.dataset.state = "error";
      }
    }));
    if (!ui.isCurrent(my)) return;
    const nf = slos.reduce((n, s) => n + (s.alerts || []).filter((a) => a.firing).length, 0);
    window.__infermonSlo.rendered = Date.now();
    ui.status(`${slos.length} SLOs, ${nf} burn-rate alert${nf === 1 ? "" : "s"} would fire`);
  }

  window.INFERMON_PAGES = window.INFERMON_PAGES || {};
  window.INFERMON_PAGES.slo = page;
})();
