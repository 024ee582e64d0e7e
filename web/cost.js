/* infermon dashboard — the Cost page (#/cost): GPU cost per team, model and
 * token over a period, from GET /api/v1/llm/cost (the JSON of
 * `infermon cost --output json`, docs/cost.md).
 *
 * Registers itself in window.infermonPages, which app.js renders like its own
 * pages. Its state is in the hash too: #/cost?period=7d&by=team (period 1d, 7d,
 * 30d or month; month=YYYY-MM with period=month). A figure the report cannot
 * give is null: shown as "—" with the reason (the report's problem sentence)
 * as its title. Every cell carries data-key / data-value (the JSON value) so
 * tests compare the page with the API. */
(function () {
  "use strict";
  const pages = (window.infermonPages = window.infermonPages || {});
  const css = document.createElement("style");
  css.textContent = ".cost-table td.num{text-align:right;font-variant-numeric:tabular-nums}" +
    ".cost-table .null,.cost-unattributed .null{color:#888;cursor:help}.cost-total th,.cost-total td{font-weight:bold}" +
    ".cost-controls{display:flex;gap:1em;align-items:center;margin:.5em 0}.cost-prices td.active{font-weight:bold}";
  document.head.append(css);

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
  const PERIODS = [["1d", "last 24 h"], ["7d", "last 7 d"], ["30d", "last 30 d"], ["month", "month"]];
  const BYS = ["team", "namespace", "model", "cluster_queue", "flavor"];

  function hashParams() {
    return new URLSearchParams(location.hash.split("?")[1] || "");
  }
  function thisMonth() {
    const d = new Date();
    return d.getUTCFullYear() + "-" + String(d.getUTCMonth() + 1).padStart(2, "0");
  }
  function setParam(k, v) {
    const p = hashParams();
    p.set(k, v);
    location.hash = "#/cost?" + p.toString(); // app.js re-renders on hashchange
  }

  function fmt(v, kind, cur) {
    if (kind === "hours") return v.toFixed(Math.abs(v) < 10 ? 2 : 1);
    if (kind === "money") return (cur === "USD" ? "$" : (cur || "") + " ") + v.toFixed(2);
    if (kind === "share") return (v * 100).toFixed(1) + "%";
    if (kind === "kwh") return v.toFixed(Math.abs(v) < 10 ? 3 : 1);
    if (kind === "per1m") return (cur === "USD" ? "$" : (cur || "") + " ") + v.toFixed(3);
    if (kind === "count") {
      const a = Math.abs(v);
      if (a >= 1e9) return (v / 1e9).toFixed(2) + "G";
      if (a >= 1e6) return (v / 1e6).toFixed(2) + "M";
      if (a >= 1e4) return (v / 1e3).toFixed(1) + "k";
      return v.toFixed(0);
    }
    return String(v);
  }

  // Why a figure is null: the report's problem sentences that speak of it.
  const TOPICS = {
    gpu_hours_reserved: /reserv|Kueue/i,
    gpu_hours_allocated: /allocat|dcgm|pod attribution|ClusterQueue/i,
    gpu_hours_busy: /busy|dcgm|ACTIVE|UTIL|ClusterQueue/i,
    idle_share: /busy|reserv|allocat|dcgm|Kueue|ClusterQueue/i,
    cost: /price/i,
    idle_cost: /price|busy|dcgm|ClusterQueue/i,
    energy_kwh: /energy|ENERGY|dcgm|ClusterQueue/i,
    input_tokens: /token/i,
    output_tokens: /token/i,
    tokens_per_gpu_hour: /token|reserv|allocat/i,
    cost_per_million_output_tokens: /token|price/i,
    gpu_hours_borrowed: /borrow|nominal|ClusterQueue/i,
    gpu_hours_lent: /borrow|nominal|ClusterQueue/i,
  };
  function reason(key, d, row) {
    const re = TOPICS[key];
    const said = (d.problems || []).filter((p) => re && re.test(p));
    if (said.length) return said.join(" ");
    if (key === "cost_per_million_output_tokens" && row && row.output_tokens === 0) return "no output tokens in the period";
    if ((key === "tokens_per_gpu_hour" || key === "idle_share") && row && row.cost_basis == null) return "no GPU-hours to divide by";
    if (key === "idle_share" || key === "idle_cost") return "needs the busy GPU-hours and a cost basis";
    return "the report has no source for this figure in the period";
  }
  function idleShare(row) {
    const basis = row.cost_basis === "reserved" ? row.gpu_hours_reserved : row.cost_basis === "allocated" ? row.gpu_hours_allocated : null;
    if (basis == null || !(basis > 0) || row.gpu_hours_idle == null) return null;
    return row.gpu_hours_idle / basis;
  }
  function cell(key, v, kind, d, row) {
    if (v == null) {
      const why = reason(key, d, row);
      return h("td", { class: "num null", "data-key": key, "data-value": "null", title: why }, "—");
    }
    const cur = d.prices && d.prices.currency;
    return h("td", { class: "num", "data-key": key, "data-value": String(v), title: String(v) }, fmt(v, kind, cur));
  }

  const COLS = [
    ["gpu_hours_reserved", "reserved GPU-h", "hours"],
    ["gpu_hours_allocated", "allocated GPU-h", "hours"],
    ["gpu_hours_busy", "busy GPU-h", "hours"],
    ["idle_share", "idle share", "share"],
    ["cost", "cost", "money"],
    ["idle_cost", "idle cost", "money"],
    ["energy_kwh", "kWh", "kwh"],
    ["input_tokens", "input tokens", "count"],
    ["output_tokens", "output tokens", "count"],
    ["tokens_per_gpu_hour", "tokens / GPU-h", "count"],
    ["cost_per_million_output_tokens", "cost / 1M output", "per1m"],
  ];
  const COHORT = [["gpu_hours_borrowed", "borrowed GPU-h", "hours"], ["gpu_hours_lent", "lent GPU-h", "hours"]];

  function rowEl(row, cols, d, cls) {
    return h("tr", { class: cls || "cost-row", "data-group": row.group },
      h("th", { class: "group", text: row.group }),
      ...cols.map(([k, , kind]) => cell(k, k === "idle_share" ? idleShare(row) : row[k], kind, d, row)),
      h("td", { class: "basis", text: row.cost_basis || "—" }));
  }

  function priceTable(d) {
    const p = d.prices || {};
    const rows = (p.table || []).map((e) => h("tr", {},
      h("td", { text: e.flavor || "—" }), h("td", { text: e.gpu_model || "—" }),
      ...["on_demand", "reserved", "spot"].map((k) => h("td", { class: "num" + (k === p.pricing ? " active" : ""), text: e[k] == null ? "—" : String(e[k]) }))));
    return h("div", { class: "cost-prices" },
      h("h3", { text: `Prices (${p.currency || "USD"} per GPU-hour, ${p.pricing || "on_demand"} column used)` }),
      rows.length ? h("table", { class: "list", id: "cost-prices" },
        h("tr", {}, ...["flavor", "GPU model", "on demand", "reserved", "spot"].map((t) => h("th", { text: t }))), ...rows)
        : h("div", { class: "empty", text: "no price table: costs are null (llm.cost.prices in the configuration)" }),
      h("div", { class: "mono", text: "energy: " + (p.energy_price_per_kwh == null ? "no price per kWh" : p.energy_price_per_kwh + " per kWh") }));
  }

  function unattributed(d) {
    const u = d.unattributed || {};
    const item = (k, label, kind) => h("li", { "data-key": k, "data-value": u[k] == null ? "null" : String(u[k]) },
      label + ": ", u[k] == null ? h("span", { class: "null", title: "no source for it in the period" }, "—") : fmt(u[k], kind, d.prices && d.prices.currency));
    const names = u.not_attributed || [];
    const shown = names.slice(0, 20).map((n) => h("li", { class: "mono", text: n }));
    if (names.length > 20) shown.push(h("li", { text: `+${names.length - 20} more` }));
    return h("div", { class: "cost-unattributed", id: "cost-unattributed" },
      h("h3", { text: "Not attributed" }),
      h("ul", {},
        item("gpu_hours_no_pod", "GPU-hours held by no pod", "hours"),
        item("gpu_hours_busy_no_pod", "of which busy", "hours"),
        item("energy_kwh_no_pod", "their energy, kWh", "kwh"),
        item("gpu_hours_reserved_no_group", "reserved GPU-hours with no group", "hours"),
        item("gpu_hours_allocated_no_group", "allocated GPU-hours with no group", "hours"),
        item("output_tokens_no_group", "output tokens with no group", "count")),
      names.length ? h("ul", { class: "names" }, ...shown) : null);
  }

  let gen = 0;
  pages.cost = async function (main) {
    const my = ++gen;
    const p = hashParams();
    const period = PERIODS.some(([k]) => k === p.get("period")) ? p.get("period") : "1d";
    const month = /^\d{4}-\d{2}$/.test(p.get("month") || "") ? p.get("month") : thisMonth();
    const by = BYS.includes(p.get("by")) ? p.get("by") : "team";
    const q = new URLSearchParams({ by });
    if (period === "month") q.set("month", month);
    else { q.set("range", period); q.set("to", String(Math.floor(Date.now() / 1000))); } // a reproducible link
    const url = "/api/v1/llm/cost?" + q.toString();

    const perSel = h("select", { id: "cost-period", onchange: (e) => setParam("period", e.target.value) },
      ...PERIODS.map(([k, t]) => h("option", { value: k, text: t })));
    perSel.value = period;
    const monthIn = h("input", { id: "cost-month", type: "month", value: month, class: period === "month" ? "" : "hidden",
      onchange: (e) => { if (e.target.value) setParam("month", e.target.value); } });
    const bySel = h("select", { id: "cost-by", onchange: (e) => setParam("by", e.target.value) },
      ...BYS.map((k) => h("option", { value: k, text: k.replace("_", " ") })));
    bySel.value = by;
    const controls = h("div", { class: "cost-controls" },
      h("label", { class: "ctl" }, "period ", perSel), monthIn, h("label", { class: "ctl" }, "group by ", bySel),
      h("a", { href: url, class: "mono", text: "JSON" }));
    main.replaceChildren(h("h2", { text: "GPU cost" }), controls, h("div", { class: "empty", text: "loading…" }));

    let d;
    try {
      const r = await fetch(url);
      const j = await r.json();
      if (j.status !== "success") throw new Error(j.error || "HTTP " + r.status);
      d = j.data;
    } catch (e) {
      if (my !== gen) return;
      main.replaceChildren(h("h2", { text: "GPU cost" }), controls, h("div", { class: "err", id: "cost-error", text: "no cost report: " + e.message }));
      window.__infermonCost = { url, error: e.message };
      return;
    }
    if (my !== gen) return;
    const cols = d.by === "cluster_queue" ? COLS.concat(COHORT) : COLS;
    const head = h("tr", {}, h("th", { text: d.by.replace("_", " ") }), ...cols.map(([, t]) => h("th", { text: t })), h("th", { text: "cost basis" }));
    const table = h("table", { class: "list cost-table", id: "cost-table" }, head,
      ...d.rows.map((r) => rowEl(r, cols, d)), rowEl(d.total, cols, d, "cost-total"));
    const per = d.period || {};
    main.replaceChildren(...[
      h("h2", { text: "GPU cost" }), controls,
      h("div", { class: "cost-period mono", id: "cost-periodtext",
        text: `period (${per.from}, ${per.to}] at a ${per.step_seconds} s step, by ${d.by}, from ${d.backend}; busy from ${d.busy_source || "—"}` }),
      d.rows.length ? table : h("div", { class: "empty", text: "no group in the period" }),
      priceTable(d),
      unattributed(d),
      (d.problems || []).length ? h("div", { class: "cost-notes", id: "cost-notes" }, h("h3", { text: "Notes" }),
        h("ul", {}, ...d.problems.map((t) => h("li", { text: t })))) : null].filter((e) => e));
    window.__infermonCost = { url, data: d };
    const st = document.getElementById("status");
    if (st) st.textContent = `${d.rows.length} ${d.by} rows over (${per.from}, ${per.to}]`;
  };
})();
