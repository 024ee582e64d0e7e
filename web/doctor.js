// doctor.js — the diagnosis strip above the serving overview: the findings of
// GET /api/v1/llm/doctor (docs/doctor.md) over the range shown, most important
// first. Each finding shows severity, cause, model, since when and one line of
// evidence, and links to its panel over its time range (the link the API gives:
// #/overview?panel=..&from=..&to=..&model=.., which app.js scrolls to and
// highlights). Only info findings: one quiet "healthy" line. An error of the
// endpoint is shown in the strip, never a blank strip.
//
// app.js calls window.InfermonDoctor.strip({start, end, model}) (seconds) and
// puts the element it returns above the overview's headline.
(function () {
  "use strict";
  const css = `
.doctor { margin-bottom: 12px; border: 1px solid var(--grid); border-radius: 6px; padding: 6px 10px; font-size: 13px; }
.doctor .drow { display: flex; gap: 10px; align-items: baseline; padding: 3px 0; flex-wrap: wrap; }
.doctor .sev { font-weight: 700; text-transform: uppercase; font-size: 11px; min-width: 62px; }
.doctor .sev-critical { color: var(--bad); } .doctor .sev-warning { color: var(--warn); }
.doctor .sev-info { color: var(--ok); }
.doctor .cause { font-weight: 600; font-family: ui-monospace, monospace; }
.doctor .model, .doctor .since { opacity: 0.75; }
.doctor .ev { flex: 1 1 300px; }
.doctor.healthy { color: var(--ok); }
.doctor.error { color: var(--bad); border-color: var(--bad); white-space: pre-wrap; }
.doctor.loading { opacity: 0.6; }`;
  function addStyle() {
    if (document.getElementById("doctor-style")) return;
    const st = document.createElement("style");
    st.id = "doctor-style";
    st.textContent = css;
    document.head.append(st);
  }
  function el(tag, attrs, ...kids) {
    const e = document.createElement(tag);
    for (const [k, v] of Object.entries(attrs || {})) {
      if (k === "text") e.textContent = v; else e.setAttribute(k, v);
    }
    for (const k of kids) if (k != null) e.append(k);
    return e;
  }
  function ago(iso, end) {
    if (!iso) return "";
    const s = Math.max(0, end - Date.parse(iso) / 1000);
    if (s < 90) return `since ${Math.round(s)} s before the end`;
    if (s < 5400) return `since ${Math.round(s / 60)} min before the end`;
    return `since ${(s / 3600).toFixed(1)} h before the end`;
  }
  // one line of evidence: the first signal's sentence, else the summary
  function evidence(f) {
    const e = (f.evidence || []).find((x) => x.text);
    return e ? e.text : (f.summary || "");
  }
  function durArg(sec) { return Math.max(60, Math.round(sec)) + "s"; }

  let seq = 0;
  function strip(o) {
    addStyle();
    const box = el("div", { class: "doctor loading", id: "doctor", "data-state": "loading", text: "doctor: diagnosing the range shown…" });
    const my = ++seq;
    const p = new URLSearchParams({ at: String(Math.floor(o.end)), window: durArg(o.end - o.start) });
    if (o.model) p.set("model", o.model);
    fetch("/api/v1/llm/doctor?" + p.toString())
      .then(async (r) => {
        let j;
        try { j = await r.json(); } catch (e) { throw new Error("HTTP " + r.status + " from /api/v1/llm/doctor"); }
        if (j.status !== "success") throw new Error((j.errorType ? j.errorType + ": " : "") + (j.error || "HTTP " + r.status));
        return j.data;
      })
      .then((d) => { if (my === seq) show(box, d, o); })
      .catch((e) => {
        if (my !== seq) return;
        box.className = "doctor error";
        box.dataset.state = "error";
        box.textContent = "doctor: " + e.message;
      });
    return box;
  }
  function show(box, d, o) {
    const fs = d.findings || [];
    const serious = fs.filter((f) => f.severity !== "info");
    window.__infermonDoctor = { findings: fs.map((f) => ({ cause: f.cause, severity: f.severity, model: f.model, link: f.link, panel: f.panel })) };
    box.classList.remove("loading");
    if (!serious.length) {
      box.className = "doctor healthy";
      box.dataset.state = "healthy";
      const notes = fs.length ? ` (${fs.length} note${fs.length > 1 ? "s" : ""}: ${[...new Set(fs.map((f) => f.cause))].join(", ")})` : "";
      box.replaceChildren(el("span", { text: `✓ healthy: doctor finds nothing above info in the range shown${notes}` }));
      return;
    }
    box.dataset.state = "findings";
    box.replaceChildren(...serious.map((f, i) => {
      const row = el("div", { class: "drow", "data-cause": f.cause, "data-rank": String(i) },
        el("span", { class: "sev sev-" + f.severity, text: f.severity }),
        f.link ? el("a", { class: "cause", href: f.link, title: "show the " + (f.panel || "") + " panel over this time range", text: f.cause })
          : el("span", { class: "cause", text: f.cause }),
        f.model ? el("span", { class: "model", text: f.model }) : null,
        f.since ? el("span", { class: "since", title: f.since, text: ago(f.since, o.end) }) : null,
        el("span", { class: "ev", text: evidence(f) }));
      row.title = f.summary || "";
      return row;
    }));
  }
  window.InfermonDoctor = { strip };
})();
