// packsched report: draws the page model embedded in <script id="packsched-data">: tables, text, pod details,
// and the charts, which are Vega-Lite specifications (built in Python by packsched.sim.chartspec) drawn by the
// Vega-Embed bundle inlined before this script. Nothing is fetched: the page works offline, from a file.
// Data is always inserted as text (textContent), never as markup.
(function () {
  "use strict";

  const PAGE_ROWS = 500;
  const model = JSON.parse(document.getElementById("packsched-data").textContent);
  const pods = model.pods || null;

  // -- small helpers --------------------------------------------------------------------------------------------

  function el(tag, attrs, children) {
    const node = document.createElement(tag);
    setAttrs(node, attrs);
    append(node, children);
    return node;
  }

  function setAttrs(node, attrs) {
    if (!attrs) return;
    for (const [k, v] of Object.entries(attrs)) {
      if (v === null || v === undefined || v === false) continue;
      if (k === "text") node.textContent = String(v);
      else if (k === "cls") node.setAttribute("class", v);
      else if (k.startsWith("on")) node.addEventListener(k.slice(2), v);
      else node.setAttribute(k, String(v));
    }
  }

  function append(node, children) {
    if (children === null || children === undefined) return;
    for (const child of Array.isArray(children) ? children : [children]) {
      if (child === null || child === undefined || child === false) continue;
      node.appendChild(typeof child === "string" || typeof child === "number"
        ? document.createTextNode(String(child)) : child);
    }
  }

  function fmtTime(seconds) {
    if (seconds === null || seconds === undefined) return "";
    if (seconds === 0) return "0s";
    const sign = seconds < 0 ? "-" : "";
    let s = Math.abs(seconds);
    if (s < 1) return sign + trim(s * 1000) + "ms";
    const h = Math.floor(s / 3600);
    s -= h * 3600;
    const m = Math.floor(s / 60);
    s -= m * 60;
    const secs = trim(s) + "s";
    if (h) return sign + h + "h" + m + "m" + secs;
    if (m) return sign + m + "m" + secs;
    return sign + secs;
  }

  function trim(x) {
    return String(Math.round(x * 1000) / 1000);
  }

  function fmtNum(x) {
    if (x === null || x === undefined || x === "") return "";
    if (typeof x !== "number") return String(x);
    if (Number.isInteger(x)) return String(x);
    const a = Math.abs(x);
    return a >= 100 ? x.toFixed(1) : a >= 1 ? x.toFixed(2) : x.toPrecision(3);
  }

  function fmtCell(v, fmt) {
    if (v === null || v === undefined) return "";
    if (typeof v === "object" && v.time !== undefined) return fmtTime(v.time);
    if (fmt === "time") return fmtTime(v);
    if (fmt === "pct") return fmtNum(v) + "%";
    if (fmt === "num") return fmtNum(v);
    return String(v);
  }

  // -- the tooltip --------------------------------------------------------------------------------------------

  const tip = el("div", { cls: "tip", role: "tooltip" });
  tip.hidden = true;

  function showTip(evt, lines) {
    tip.textContent = "";
    for (const line of lines) append(tip, el("div", { text: line }));
    tip.hidden = false;
    const x = Math.min(evt.clientX + 14, window.innerWidth - tip.offsetWidth - 8);
    const y = Math.min(evt.clientY + 14, window.innerHeight - tip.offsetHeight - 8);
    tip.style.left = x + "px";
    tip.style.top = y + "px";
  }

  function hideTip() {
    tip.hidden = true;
  }

  // -- pods: links and the details panel ----------------------------------------------------------------------

  function podLink(key) {
    if (!pods || !(key in pods)) return document.createTextNode(key);
    return el("a", { href: "#pod=" + encodeURIComponent(key), cls: "pod-link", "data-pod": key, text: key });
  }

  function openPod(key) {
    location.hash = "pod=" + encodeURIComponent(key);
  }

  const panel = el("aside", { id: "pod-panel", cls: "panel", "aria-live": "polite" });
  panel.hidden = true;

  function closePanel() {
    if (location.hash.startsWith("#pod=")) history.replaceState(null, "", location.pathname + location.search);
    panel.hidden = true;
  }

  function routeHash() {
    const h = location.hash;
    if (!h.startsWith("#pod=")) {
      panel.hidden = true;
      return;
    }
    const key = decodeURIComponent(h.slice(5));
    if (pods && key in pods) renderPod(key);
  }

  function dl(pairs) {
    const list = el("dl", { cls: "fields" });
    for (const [k, v] of pairs) {
      if (v === null || v === undefined || v === "") continue;
      append(list, [el("dt", { text: k }), el("dd", null, v instanceof Node ? v : String(v))]);
    }
    return list;
  }

  function simpleTable(columns, rows, attrs) {
    const table = el("table", attrs);
    append(table, el("thead", null, el("tr", null, columns.map((c) => el("th", null, wordBreaks(c))))));
    const body = el("tbody");
    for (const r of rows) append(body, el("tr", r.cls ? { cls: r.cls } : null, r.cells.map((c) => el("td", null, c))));
    append(table, body);
    return table;
  }

  function explainBlock(ex) {
    const box = el("section", { cls: "explain" });
    append(box, el("h3", { text: "Explain: the last scheduling attempt" }));
    append(box, dl([
      ["selected node", ex.selected || "none"],
      ["reason", ex.reason],
      ["attempts", ex.attempts],
      ["profile", ex.profile],
      ["nominated node (preemption)", ex.nominated_node],
      ["took its nominated node", ex.used_nominated_node ? "yes, without scoring other nodes" : null],
      ["took the batch's hint", ex.used_batch_hint ? "yes, without scoring other nodes" : null],
    ]));
    const nodes = ex.nodes || [];
    if (!nodes.length) return box;
    const weights = ex.weights || {};
    const plugins = Object.keys(weights);
    const columns = ["node", "feasible"].concat(plugins.map((p) => p + " (x" + weights[p] + ")"),
      ["total", "reasons (rejected by)"]);
    const rows = nodes.map((n) => ({
      cls: n.node === ex.selected ? "selected" : n.feasible ? "" : "rejected",
      cells: [n.node, n.feasible ? (n.scored === false ? "yes (not sampled)" : "yes") : "no"]
        .concat(plugins.map((p) => (p in (n.scores || {}) ? String(n.scores[p]) : "")),
          [n.total === null || n.total === undefined ? "" : String(n.total),
            (n.reasons || []).join(", ") + (n.rejected_by ? " (" + n.rejected_by + ")" : "")]),
    }));
    append(box, el("div", { cls: "scroll" }, simpleTable(columns, rows, { id: "explain-table", cls: "data explain-table" })));
    if (ex.nodes_total > nodes.length) {
      append(box, el("p", { cls: "note", text: nodes.length + " of " + ex.nodes_total +
        " nodes shown: the chosen one, the best scored, then rejected ones" }));
    }
    const rejections = Object.entries(ex.rejections || {});
    if (rejections.length) {
      append(box, el("h4", { text: "Rejected nodes by reason" }));
      append(box, el("ul", { cls: "reasons" }, rejections.map(([r, n]) => el("li", { text: n + " × " + r }))));
    }
    return box;
  }

  function renderPod(key) {
    const pod = pods[key];
    panel.textContent = "";
    const close = el("button", { cls: "close", type: "button", "aria-label": "close", text: "×", onclick: closePanel });
    append(panel, el("header", null, [el("h2", { text: key }), close]));
    for (const p of pod.placements) {
      append(panel, dl([
        ["phase", p.phase], ["node", p.node], ["reason", p.reason], ["priority", p.priority], ["owner", p.owner],
        ["created", fmtTime(p.created)], ["started", fmtTime(p.started)], ["finished", fmtTime(p.finished)],
        ["attempts", p.attempts], ["replaces", p.replaces ? podLink(p.replaces) : null], ["GPUs", p.gpu_index],
      ]));
    }
    if (pod.requests && Object.keys(pod.requests).length) {
      append(panel, dl([["requests", Object.entries(pod.requests).map(([r, q]) => r + " " + q).join(", ")]]));
    }
    if (pod.events.length) {
      append(panel, el("h3", { text: "Events" }));
      append(panel, simpleTable(["time", "kind", "node", "detail"], pod.events.map((e) => ({
        cells: [fmtTime(e[0]), e[1], e[2] || "", e[3] || ""],
      })), { cls: "data" }));
    }
    if (pod.explain) append(panel, explainBlock(pod.explain));
    if (model.pods_note) append(panel, el("p", { cls: "note", text: model.pods_note }));
    panel.hidden = false;
    panel.scrollTop = 0;
  }

  // -- tables -------------------------------------------------------------------------------------------------

  function renderTable(sec) {
    const columns = sec.columns;
    const rows = sec.rows;
    const haystack = rows.map((r) => r.map((v, i) => fmtCell(v, columns[i].fmt)).join("\u0001").toLowerCase());
    let order = rows.map((_, i) => i);
    let shown = order;
    let limit = PAGE_ROWS;
    let sortCol = -1;
    let sortDir = 1;
    const wrap = el("div", { cls: "table-wrap" });
    const count = el("span", { cls: "count" });
    const input = el("input", {
      type: "search", cls: "filter", placeholder: "filter " + sec.title.toLowerCase() + "…",
      "aria-label": "filter " + sec.title, "data-table": sec.id,
    });
    const more = el("button", { type: "button", cls: "more", text: "show more" });
    const head = el("tr", null, columns.map((c, i) => el("th", {
      text: c.label, cls: c.fmt ? "num" : null, title: "sort by " + c.label, tabindex: 0,
      onclick: () => sortBy(i), onkeydown: (e) => { if (e.key === "Enter") sortBy(i); },
    })));
    const body = el("tbody");
    const table = el("table", { cls: "data", id: sec.id + "-table" }, [el("thead", null, head), body]);

    function cell(v, c) {
      if (c.pod && v) return el("td", null, podLink(String(v)));
      return el("td", { cls: c.fmt ? "num" : null, text: fmtCell(v, c.fmt) });
    }

    function draw() {
      body.textContent = "";
      const frag = document.createDocumentFragment();
      for (const i of shown.slice(0, limit)) {
        frag.appendChild(el("tr", null, rows[i].map((v, j) => cell(v, columns[j]))));
      }
      body.appendChild(frag);
      count.textContent = (shown.length === rows.length ? rows.length + " rows" : shown.length + " of " + rows.length +
        " rows") + (shown.length > limit ? ", first " + limit + " shown" : "");
      more.hidden = shown.length <= limit;
    }

    function filter() {
      const words = input.value.toLowerCase().split(/\s+/).filter(Boolean);
      shown = order.filter((i) => words.every((w) => haystack[i].includes(w)));
      limit = PAGE_ROWS;
      draw();
    }

    function key(v) {
      if (v && typeof v === "object" && v.time !== undefined) return v.time;
      return v;
    }

    function sortBy(col) {
      sortDir = sortCol === col ? -sortDir : 1;
      sortCol = col;
      order = rows.map((_, i) => i).sort((a, b) => {
        const x = key(rows[a][col]);
        const y = key(rows[b][col]);
        if (x === y) return a - b;
        if (x === null || x === undefined) return 1;
        if (y === null || y === undefined) return -1;
        if (typeof x === "number" && typeof y === "number") return (x - y) * sortDir;
        return String(x).localeCompare(String(y), undefined, { numeric: true }) * sortDir;
      });
      head.querySelectorAll("th").forEach((th, i) => th.setAttribute("aria-sort",
        i === col ? (sortDir > 0 ? "ascending" : "descending") : "none"));
      filter();
    }

    input.addEventListener("input", filter);
    more.addEventListener("click", () => { limit += PAGE_ROWS; draw(); });
    if (sec.filter !== false) append(wrap, el("div", { cls: "table-tools" }, [input, count]));
    else append(wrap, el("div", { cls: "table-tools" }, [count]));
    append(wrap, el("div", { cls: "scroll" }, table));
    append(wrap, more);
    draw();
    return wrap;
  }

  // -- charts: Vega-Lite specifications, drawn by Vega-Embed ---------------------------------------------------

  const pending = [];

  // The page's own tooltip for Vega's marks: an object as "key: value" lines, a text as its lines.
  function vegaTip(handler, evt, item, value) {
    if (value === null || value === undefined || value === "") {
      hideTip();
      return;
    }
    const lines = typeof value === "object" ? Object.entries(value).map(([k, v]) => k + ": " + v)
      : String(value).split("\n");
    showTip(evt, lines);
  }

  function renderChart(chart) {
    const fig = el("figure", { cls: "chart chart-" + chart.kind });
    const box = el("div", { cls: "plot-box" });
    append(fig, box);
    if (typeof window.vegaEmbed !== "function") {
      append(box, el("p", { cls: "note", text: "the chart library did not load" }));
      return fig;
    }
    pending.push(window.vegaEmbed(box, chart.spec, { renderer: "svg", actions: false, tooltip: vegaTip })
      .then((result) => {
        if (chart.kind !== "timeline") return;
        result.view.addEventListener("click", (evt, item) => {
          const pod = item && item.datum && item.datum.pod;
          if (pod && pods && pod in pods) openPod(pod);
        });
      }));
    return fig;
  }

  // Plugin names in a table header break between their words (NodeResources|Fit), never inside one.
  function wordBreaks(text) {
    const parts = String(text).split(/(?<=[a-z0-9])(?=[A-Z])|(?<=[/.])/);
    const out = [];
    parts.forEach((part, i) => {
      if (i) out.push(el("wbr"));
      out.push(document.createTextNode(part));
    });
    return out;
  }

  // -- sections and the page ----------------------------------------------------------------------------------

  function renderKpis(sec) {
    const box = el("div", { cls: "kpis" }, sec.items.map((it) => el("div", { cls: "kpi" }, [
      el("div", { cls: "kpi-value", text: fmtCell(it.value, typeof it.value === "number" ? "num" : "") }),
      el("div", { cls: "kpi-label", text: it.label }),
    ])));
    const out = [box];
    if (sec.notes && sec.notes.length) {
      out.push(el("ul", { cls: "warnings" }, sec.notes.map((n) => el("li", { text: n }))));
    }
    return out;
  }

  function renderSection(sec) {
    const node = el("section", { id: sec.id, cls: "section section-" + sec.type });
    append(node, el("h2", { text: sec.title }));
    if (sec.caption && sec.type !== "table") append(node, el("p", { cls: "caption", text: sec.caption }));
    if (sec.type === "kpis") append(node, renderKpis(sec));
    else if (sec.type === "table") {
      if (sec.caption) append(node, el("p", { cls: "caption", text: sec.caption }));
      append(node, renderTable(sec));
    } else if (sec.type === "charts") append(node, el("div", { cls: "charts" }, sec.charts.map(renderChart)));
    else if (sec.type === "text") append(node, sec.paragraphs.map((p) => el("p", { text: p })));
    else if (sec.type === "code") append(node, el("pre", { cls: "code", text: sec.text }));
    return node;
  }

  function render() {
    const app = document.getElementById("app");
    const header = el("header", { cls: "top" }, [
      el("h1", { text: model.title }),
      el("p", { cls: "meta", text: [model.schema, model.generator, model.generated].filter(Boolean).join(" · ") }),
      el("nav", null, model.sections.map((s) => el("a", { href: "#" + s.id, text: s.title.replace(/ \(.*\)$/, "") }))),
    ]);
    append(app, header);
    const main = el("main");
    for (const sec of model.sections) append(main, renderSection(sec));
    append(app, main);
    append(document.body, [panel, tip]);
    document.addEventListener("click", (evt) => {
      const link = evt.target.closest ? evt.target.closest("a.pod-link") : null;
      if (!link) return;
      evt.preventDefault();
      openPod(link.getAttribute("data-pod"));
    });
    document.addEventListener("keydown", (evt) => { if (evt.key === "Escape") closePanel(); });
    window.addEventListener("hashchange", routeHash);
    routeHash();
    // ready once every chart is drawn (a chart that fails says so in the console)
    Promise.all(pending.map((p) => p.catch((err) => console.error("chart:", err))))
      .then(() => document.body.setAttribute("data-ready", "true"));
  }

  render();
})();
