// The minik8s dashboard: renders the dashboards of /dashboards/*.json (the ConfigMap `dashboards`)
// from Prometheus' query API (/api/v1, proxied by this pod's nginx) and a few read-only Kubernetes
// lists (/k8s/...). A dashboard file:
//   {"title": "...", "description": "...", "panels": [
//     {"type": "line",  "title": "...", "query": "PromQL", "legend": "{{pod}}", "unit": "bytes"},
//     {"type": "stat",  "title": "...", "query": "PromQL", "unit": "percent"},
//     {"type": "table", "title": "...", "source": "nodes|deployments|events|alerts|query", "query": "..."}]}
// #<name> shows dashboard NN-<name>.json; #query=<PromQL> charts one ad-hoc query.
// Every panel ends in data-state="ok" (data-points = samples drawn) or data-state="error" with the
// error shown in the panel: a failing query never blanks the page.
"use strict";

const state = { dashboards: [], current: null, charts: [], timer: null };

const units = {
  bytes: (v) => {
    const k = ["B", "KiB", "MiB", "GiB", "TiB"];
    let i = 0;
    while (Math.abs(v) >= 1024 && i < k.length - 1) { v /= 1024; i++; }
    return v.toFixed(v >= 100 || i === 0 ? 0 : 1) + " " + k[i];
  },
  percent: (v) => v.toFixed(1) + " %",
  seconds: (v) => (v < 1 ? (v * 1000).toFixed(v < 0.01 ? 2 : 0) + " ms" : v.toFixed(2) + " s"),
  ops: (v) => v.toFixed(v < 10 ? 2 : 0) + " /s",
  cores: (v) => v.toFixed(3),
  bps: (v) => units.bytes(v) + "/s",
  none: (v) => (Number.isInteger(v) || Math.abs(v) >= 100 ? v.toFixed(0) : v.toFixed(2)),
};
const fmt = (unit) => units[unit] || units.none;

const sleep = (ms) => new Promise((done) => setTimeout(done, ms));

// A gateway's 502/503/504 or a dropped connection is retried once, half a second later: one
// transient failure of the path through the NodePort, nginx and the service should not turn a
// panel red until the next refresh.
async function fetchRetrying(url, retries = 1) {
  let r;
  try {
    r = await fetch(url, { cache: "no-store" });
  } catch (e) {
    if (retries <= 0) throw e;
    await sleep(500);
    return fetchRetrying(url, retries - 1);
  }
  if (retries > 0 && [502, 503, 504].includes(r.status)) {
    await sleep(500);
    return fetchRetrying(url, retries - 1);
  }
  return r;
}

async function getJson(url) {
  const r = await fetchRetrying(url);
  const text = await r.text();
  let body;
  try { body = JSON.parse(text); } catch (e) { throw new Error(r.status + " " + text.slice(0, 200)); }
  if (!r.ok || body.status === "error" || body.kind === "Status") {
    throw new Error(body.error || body.message || r.status + " " + r.statusText);
  }
  return body;
}

const prom = {
  range: (query, seconds) => {
    const end = Date.now() / 1000, start = end - seconds;
    const step = Math.max(5, Math.round(seconds / 150));
    const q = new URLSearchParams({ query, start, end, step });
    return getJson("/api/v1/query_range?" + q).then((b) => b.data.result);
  },
  instant: (query) => getJson("/api/v1/query?" + new URLSearchParams({ query })).then((b) => b.data.result),
};

function legendOf(template, metric) {
  if (!template) {
    const parts = Object.entries(metric).filter(([k]) => k !== "__name__").map(([k, v]) => k + "=" + v);
    return parts.length ? parts.join(", ") : metric.__name__ || "value";
  }
  return template.replace(/\{\{\s*(\w+)\s*\}\}/g, (_, k) => metric[k] || "");
}

const palette = ["#5b9bd5", "#ed7d31", "#70ad47", "#ffc000", "#7f5fbf", "#e15759", "#4bb6b1", "#a5a5a5"];

// Tick labels: hh:mm, with seconds when the range is an hour or less.
function clock(ms) {
  const d = new Date(ms);
  return d.toTimeString().slice(0, Number(document.getElementById("range").value) <= 3600 ? 8 : 5);
}

function setOk(el, points) {
  el.dataset.state = "ok";
  el.dataset.points = String(points);
  const err = el.querySelector(".error");
  if (err) err.remove();
}

function setError(el, error) {
  el.dataset.state = "error";
  el.dataset.points = "0";
  let err = el.querySelector(".error");
  if (!err) {
    err = document.createElement("div");
    err.className = "error";
    el.appendChild(err);
  }
  err.textContent = String(error.message || error);
}

async function renderLine(panel, el, seconds) {
  const result = await prom.range(panel.query, seconds);
  let points = 0;
  const datasets = result.map((series, i) => {
    points += series.values.length;
    return {
      label: legendOf(panel.legend, series.metric),
      data: series.values.map(([t, v]) => ({ x: t * 1000, y: Number(v) })),
      borderColor: palette[i % palette.length],
      backgroundColor: palette[i % palette.length],
      borderWidth: 1.5, pointRadius: 0, tension: 0.2,
    };
  });
  let chart = el._chart;
  if (!chart) {
    const canvas = document.createElement("canvas");
    const box = document.createElement("div");
    box.className = "chart";
    box.appendChild(canvas);
    el.appendChild(box);
    chart = el._chart = new Chart(canvas, {
      type: "line",
      data: { datasets },
      options: {
        animation: false, maintainAspectRatio: false, parsing: false,
        interaction: { mode: "nearest", intersect: false },
        scales: {
          x: { type: "linear", ticks: { callback: clock, maxTicksLimit: 8 } },
          y: { ticks: { callback: (v) => fmt(panel.unit)(v) }, beginAtZero: true },
        },
        plugins: {
          legend: { position: "bottom", labels: { boxWidth: 10 } },
          tooltip: { callbacks: { label: (c) => c.dataset.label + ": " + fmt(panel.unit)(c.parsed.y) } },
        },
      },
    });
    state.charts.push(chart);
  } else {
    chart.data.datasets = datasets;
    chart.update("none");
  }
  if (!result.length) throw new Error("no data for " + panel.query);
  setOk(el, points);
}

async function renderStat(panel, el) {
  const result = await prom.instant(panel.query);
  let box = el.querySelector(".stat");
  if (!box) {
    box = document.createElement("div");
    box.className = "stat";
    el.appendChild(box);
  }
  if (!result.length) throw new Error("no data for " + panel.query);
  const v = result.reduce((s, r) => s + Number(r.value[1]), 0);
  box.textContent = fmt(panel.unit)(v);
  setOk(el, result.length);
}

function table(el, head, rows) {
  let t = el.querySelector("table");
  if (!t) {
    t = document.createElement("table");
    el.appendChild(t);
  }
  t.innerHTML = "";
  const tr = t.insertRow();
  for (const h of head) {
    const th = document.createElement("th");
    th.textContent = h;
    tr.appendChild(th);
  }
  for (const row of rows) {
    const r = t.insertRow();
    for (const cell of row) {
      const td = r.insertCell();
      td.textContent = cell;
      if (cell === "firing" || cell === "Warning") td.className = cell;
    }
  }
  setOk(el, rows.length);
}

function age(ts) {
  if (!ts) return "";
  const s = Math.max(0, (Date.now() - Date.parse(ts)) / 1000);
  if (s < 120) return Math.round(s) + "s";
  if (s < 7200) return Math.round(s / 60) + "m";
  return Math.round(s / 3600) + "h";
}

// A server-side Table (/k8s/... answers with printed columns only) -> the cells of `columns`.
async function tableRows(path, columns) {
  const t = await getJson(path);
  const names = t.columnDefinitions.map((c) => c.name.toLowerCase());
  const index = columns.map((c) => names.indexOf(c.toLowerCase()));
  return t.rows.map((r) => index.map((i) => (i < 0 ? "" : String(r.cells[i]))));
}

const sources = {
  async nodes() {
    const [rows, pods] = await Promise.all([
      tableRows("/k8s/api/v1/nodes", ["Name", "Status", "Internal-IP", "Age"]),
      prom.instant("sum by (node) (kubelet_running_pods)")]);
    const perNode = {};
    for (const s of pods) perNode[s.metric.node] = s.value[1];
    return [["node", "status", "address", "running pods", "age"],
      rows.map(([name, status, ip, age]) => [name, status, ip, perNode[name] || "0", age])];
  },
  async deployments() {
    return [["deployment", "ready", "up-to-date", "available", "age"],
      await tableRows("/k8s/apis/apps/v1/deployments", ["Name", "Ready", "Up-to-date", "Available", "Age"])];
  },
  async events() {
    const rows = await tableRows("/k8s/api/v1/events", ["Last Seen", "Type", "Reason", "Object", "Message"]);
    return [["last seen", "type", "reason", "object", "message"],
      rows.slice(-15).reverse().map((r) => [r[0], r[1], r[2], r[3], r[4].slice(0, 120)])];
  },
  async alerts() {
    const a = await getJson("/api/v1/alerts");
    return [["alert", "state", "labels", "since"], a.data.alerts.map((x) => [
      x.labels.alertname, x.state,
      Object.entries(x.labels).filter(([k]) => k !== "alertname").map(([k, v]) => k + "=" + v).join(" "),
      age(x.activeAt)])];
  },
  async query(panel) {
    const r = await prom.instant(panel.query);
    return [[panel.legend ? "series" : "labels", "value"],
      r.map((s) => [legendOf(panel.legend, s.metric), fmt(panel.unit)(Number(s.value[1]))])];
  },
};

async function renderTable(panel, el) {
  const src = sources[panel.source];
  if (!src) throw new Error("unknown table source " + panel.source);
  const [head, rows] = await src(panel);
  table(el, head, rows);
}

async function refresh() {
  const d = state.current;
  if (!d) return;
  const seconds = Number(document.getElementById("range").value);
  const jobs = d.panels.map((panel, i) => {
    const el = document.getElementById("panel-" + i);
    const render = panel.type === "stat" ? renderStat : panel.type === "table" ? renderTable : renderLine;
    return render(panel, el, seconds).catch((e) => setError(el, e));
  });
  await Promise.all(jobs);
  document.getElementById("updated").textContent = "updated " + new Date().toTimeString().slice(0, 8);
  document.body.dataset.rendered = String(Number(document.body.dataset.rendered || 0) + 1);
}

function schedule() {
  clearInterval(state.timer);
  const every = Number(document.getElementById("refresh").value);
  if (every > 0) state.timer = setInterval(refresh, every * 1000);
}

// #query=<PromQL>: one chart of an ad-hoc query (the explore view).
function adHoc(hash) {
  const q = decodeURIComponent(hash.slice("query=".length));
  return { name: hash, title: "Query", description: q, panels: [{ type: "line", title: q, query: q, wide: true }] };
}

async function show(name) {
  const entry = name.startsWith("query=") ? { name, inline: adHoc(name) }
    : state.dashboards.find((x) => x.name === name) || state.dashboards[0];
  if (!entry) return;
  for (const a of document.querySelectorAll("#dashboards a")) a.classList.toggle("active", a.dataset.name === entry.name);
  for (const c of state.charts) c.destroy();
  state.charts = [];
  const panels = document.getElementById("panels");
  panels.innerHTML = "";
  document.body.dataset.rendered = "0";
  let d = entry.inline;
  try {
    if (!d) d = await getJson("/dashboards/" + entry.file);
  } catch (e) {
    d = { title: entry.name, panels: [] };
    const el = document.createElement("section");
    el.className = "panel wide";
    panels.appendChild(el);
    setError(el, new Error("cannot load dashboard " + entry.file + ": " + e.message));
  }
  state.current = d;
  document.getElementById("title").textContent = d.title || entry.name;
  document.getElementById("description").textContent = d.description || "";
  document.title = (d.title || entry.name) + " - minik8s";
  (d.panels || []).forEach((panel, i) => {
    const el = document.createElement("section");
    el.className = "panel" + (panel.wide ? " wide" : "");
    el.id = "panel-" + i;
    el.dataset.state = "loading";
    const h = document.createElement("h3");
    h.textContent = panel.title || panel.query || panel.source;
    el.appendChild(h);
    panels.appendChild(el);
  });
  await refresh();
  schedule();
}

async function main() {
  let files = [];
  try {
    files = (await getJson("/dashboards/")).filter((f) => f.type === "file" && f.name.endsWith(".json"));
  } catch (e) {
    setError(document.getElementById("panels"), new Error("cannot list /dashboards/: " + e.message));
    return;
  }
  state.dashboards = files.map((f) => ({ file: f.name, name: f.name.replace(/\.json$/, "").replace(/^\d+-/, "") }))
    .sort((a, b) => a.file.localeCompare(b.file));
  const nav = document.getElementById("dashboards");
  for (const d of state.dashboards) {
    const a = document.createElement("a");
    a.href = "#" + d.name;
    a.textContent = d.name;
    a.dataset.name = d.name;
    nav.appendChild(a);
  }
  document.getElementById("range").addEventListener("change", refresh);
  document.getElementById("refresh").addEventListener("change", schedule);
  window.addEventListener("hashchange", () => show(location.hash.slice(1)));
  await show(location.hash.slice(1));
}

main();
