// packsched report: draws the page model embedded in <script id="packsched-data"> (tables, SVG charts, pod
// details). Plain JavaScript, no library, nothing fetched: the page works offline, from a file.
// Data is always inserted as text (textContent, SVG attributes), never as markup.
(function () {
  "use strict";

  const SVGNS = "http://www.w3.org/2000/svg";
  // Okabe-Ito-like palette, readable by colour-blind readers; index 9 is the reference grey.
  const COLORS = ["#0072b2", "#d55e00", "#009e73", "#cc79a7", "#e69f00", "#56b4e9", "#8c564b", "#7f7f7f",
    "#332288", "#999999"];
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

  function svg(tag, attrs, children) {
    const node = document.createElementNS(SVGNS, tag);
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

  function color(i) {
    return COLORS[((i || 0) % COLORS.length + COLORS.length) % COLORS.length];
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

  function niceTicks(lo, hi, count) {
    if (!(hi > lo)) return [lo];
    const span = hi - lo;
    const raw = span / Math.max(1, count);
    const mag = Math.pow(10, Math.floor(Math.log10(raw)));
    const step = [1, 2, 2.5, 5, 10].map((f) => f * mag).find((s) => span / s <= count) || 10 * mag;
    const out = [];
    for (let t = Math.ceil(lo / step) * step; t <= hi + step * 1e-9; t += step) out.push(Math.round(t * 1e9) / 1e9);
    return out;
  }

  function niceTimeTicks(lo, hi, count) {
    const steps = [1, 2, 5, 10, 15, 30, 60, 120, 300, 600, 900, 1800, 3600, 7200, 14400, 21600, 43200, 86400];
    const span = hi - lo;
    const step = steps.find((s) => span / s <= count);
    if (!step) return niceTicks(lo, hi, count);
    const out = [];
    for (let t = Math.ceil(lo / step) * step; t <= hi + 1e-9; t += step) out.push(t);
    return out;
  }

  function scale(d0, d1, r0, r1) {
    const k = d1 === d0 ? 0 : (r1 - r0) / (d1 - d0);
    return (v) => r0 + (v - d0) * k;
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
    append(table, el("thead", null, el("tr", null, columns.map((c) => el("th", { text: c })))));
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

  // -- charts -------------------------------------------------------------------------------------------------

  const W = 640;
  const H = 320;
  // full-width charts (heat map, timeline) are drawn at the page's width, so that their text is not scaled up
  const FW = Math.max(W, Math.min(1500, (document.documentElement.clientWidth || 1200) - 90));
  const M = { l: 60, r: 14, t: 12, b: 46 };

  function figure(spec, body, legendItems) {
    const fig = el("figure", { cls: "chart chart-" + spec.kind });
    append(fig, el("figcaption", { cls: "chart-title", text: spec.title }));
    append(fig, body);
    if (legendItems && legendItems.length) append(fig, el("div", { cls: "legend" }, legendItems));
    if (spec.caption) append(fig, el("p", { cls: "caption", text: spec.caption }));
    return fig;
  }

  function swatch(label, col, dash, kind) {
    const s = svg("svg", { width: 26, height: 12, "aria-hidden": "true" });
    if (kind === "box") append(s, svg("rect", { x: 4, y: 1, width: 18, height: 10, fill: col }));
    else append(s, svg("line", { x1: 1, y1: 6, x2: 25, y2: 6, stroke: col, "stroke-width": 2.5,
      "stroke-dasharray": dash ? "5 3" : null }));
    return el("span", { cls: "legend-item" }, [s, label]);
  }

  function axes(g, x, y, xt, yt, xfmt, spec, height) {
    for (const t of yt) {
      append(g, svg("line", { x1: M.l, x2: W - M.r, y1: y(t), y2: y(t), cls: "grid" }));
      append(g, svg("text", { x: M.l - 6, y: y(t) + 4, "text-anchor": "end", cls: "tick", text: fmtNum(t) }));
    }
    for (const t of xt) {
      append(g, svg("line", { x1: x(t), x2: x(t), y1: M.t, y2: height - M.b, cls: "grid" }));
      append(g, svg("text", { x: x(t), y: height - M.b + 16, "text-anchor": "middle", cls: "tick", text: xfmt(t) }));
    }
    append(g, svg("text", { x: (M.l + W - M.r) / 2, y: height - 8, "text-anchor": "middle", cls: "axis-label",
      text: spec.x_label || "" }));
    append(g, svg("text", { x: 14, y: (M.t + height - M.b) / 2, "text-anchor": "middle", cls: "axis-label",
      transform: "rotate(-90 14 " + (M.t + height - M.b) / 2 + ")", text: spec.y_label || "" }));
  }

  function pathOf(xs, ys, x, y, step) {
    let d = "";
    let pen = false;
    let lastY = null;
    for (let i = 0; i < xs.length; i++) {
      if (ys[i] === null || ys[i] === undefined || xs[i] === null) { pen = false; continue; }
      const px = x(xs[i]).toFixed(1);
      const py = y(ys[i]).toFixed(1);
      if (!pen) d += "M" + px + "," + py;
      else if (step) d += "H" + px + "V" + py;
      else d += "L" + px + "," + py;
      pen = true;
      lastY = py;
    }
    return { d: d, lastY: lastY };
  }

  function bandOf(xs, lo, hi, x, y) {
    let d = "";
    let run = [];
    const flush = () => {
      if (run.length > 1) {
        d += "M" + run.map((i) => x(xs[i]).toFixed(1) + "," + y(hi[i]).toFixed(1)).join("L");
        d += "L" + run.slice().reverse().map((i) => x(xs[i]).toFixed(1) + "," + y(lo[i]).toFixed(1)).join("L") + "Z";
      }
      run = [];
    };
    for (let i = 0; i < xs.length; i++) {
      if (lo[i] === null || hi[i] === null || lo[i] === undefined || hi[i] === undefined) flush();
      else run.push(i);
    }
    flush();
    return d;
  }

  function extent(values) {
    let lo = Infinity;
    let hi = -Infinity;
    for (const v of values) {
      if (v === null || v === undefined || !isFinite(v)) continue;
      if (v < lo) lo = v;
      if (v > hi) hi = v;
    }
    return lo <= hi ? [lo, hi] : [0, 1];
  }

  function lineChart(spec) {
    const xfmt = spec.x_fmt === "time" ? fmtTime : fmtNum;
    const all = spec.series;
    const xd = spec.x_domain || extent(all.flatMap((s) => s.x));
    if (xd[1] === xd[0]) xd[1] = xd[0] + 1;
    const inX = (v) => v >= xd[0] - 1e-9 && v <= xd[1] + 1e-9;
    const ys = [];
    for (const s of all) {
      if (s.ref) continue;
      s.x.forEach((xv, i) => {
        if (!inX(xv)) return;
        ys.push(s.y[i]);
        if (s.lo) ys.push(s.lo[i], s.hi[i]);
      });
    }
    let yd = spec.y_domain || extent(spec.y_zero ? ys.concat([0]) : ys);
    if (!spec.y_domain) {
      const pad = (yd[1] - yd[0]) * 0.06 || Math.max(1, Math.abs(yd[1]) * 0.1);
      yd = [yd[0] >= 0 && yd[0] - pad < 0 ? 0 : yd[0] - pad, yd[1] + pad];
    }
    const x = scale(xd[0], xd[1], M.l, W - M.r);
    const y = scale(yd[0], yd[1], H - M.b, M.t);
    const root = svg("svg", { viewBox: "0 0 " + W + " " + H, cls: "plot", role: "img", "aria-label": spec.title });
    const clipId = "clip-" + Math.random().toString(36).slice(2);
    append(root, svg("defs", null, svg("clipPath", { id: clipId },
      svg("rect", { x: M.l, y: M.t, width: W - M.l - M.r, height: H - M.t - M.b }))));
    axes(root, x, y, spec.x_fmt === "time" ? niceTimeTicks(xd[0], xd[1], 7) : niceTicks(xd[0], xd[1], 7),
      niceTicks(yd[0], yd[1], 6), xfmt, spec, H);
    const plot = svg("g", { "clip-path": "url(#" + clipId + ")" });
    const ordered = all.filter((s) => !s.on_top).concat(all.filter((s) => s.on_top));
    for (const s of ordered) {
      if (s.lo) append(plot, svg("path", { d: bandOf(s.x, s.lo, s.hi, x, y), fill: color(s.color), "fill-opacity": 0.18,
        stroke: "none" }));
    }
    for (const s of ordered) {
      const p = pathOf(s.x, s.y, x, y, s.step);
      const col = color(s.color);
      if (s.on_top) append(plot, svg("path", { d: p.d, fill: "none", stroke: "#fff", "stroke-width": 4.5 }));
      append(plot, svg("path", { d: p.d, fill: "none", stroke: col, "stroke-width": s.on_top ? 2.2 : 1.8,
        "stroke-dasharray": s.dash ? (s.on_top ? "7 4" : "4 3") : null, cls: "series" }));
      const points = s.x.filter((v, i) => s.y[i] !== null && s.y[i] !== undefined).length;
      if (points <= 12 && !s.step && !(s.dash && !s.on_top)) {
        s.x.forEach((xv, i) => {
          if (s.y[i] === null || s.y[i] === undefined || !inX(xv)) return;
          append(plot, svg("circle", { cx: x(xv), cy: y(s.y[i]), r: 3, fill: col }));
        });
      }
    }
    append(root, plot);
    hover(root, spec, all, x, xd, xfmt);
    return figure(spec, el("div", { cls: "plot-box" }, root),
      all.map((s) => swatch(s.label, color(s.color), s.dash)));
  }

  function hover(root, spec, all, x, xd, xfmt) {
    const rule = svg("line", { y1: M.t, y2: H - M.b, cls: "rule", visibility: "hidden" });
    const overlay = svg("rect", { x: M.l, y: M.t, width: W - M.l - M.r, height: H - M.t - M.b, fill: "transparent" });
    append(root, [rule, overlay]);
    overlay.addEventListener("mousemove", (evt) => {
      const box = root.getBoundingClientRect();
      const px = (evt.clientX - box.left) * (W / box.width);
      const xv = xd[0] + (px - M.l) / (W - M.l - M.r) * (xd[1] - xd[0]);
      const lines = [spec.x_label + ": " + xfmt(Math.round(xv * 100) / 100)];
      for (const s of all) {
        let best = -1;
        for (let i = 0; i < s.x.length; i++) {
          if (s.y[i] === null || s.y[i] === undefined) continue;
          if (s.step ? s.x[i] <= xv : best < 0 || Math.abs(s.x[i] - xv) < Math.abs(s.x[best] - xv)) best = i;
        }
        if (best >= 0) lines.push(s.label + ": " + fmtNum(s.y[best]) + (s.lo && s.lo[best] !== null ?
          " (" + fmtNum(s.lo[best]) + "–" + fmtNum(s.hi[best]) + ")" : ""));
      }
      rule.setAttribute("x1", x(xv));
      rule.setAttribute("x2", x(xv));
      rule.setAttribute("visibility", "visible");
      showTip(evt, lines);
    });
    overlay.addEventListener("mouseleave", () => { rule.setAttribute("visibility", "hidden"); hideTip(); });
  }

  function barChart(spec) {
    const cats = spec.categories;
    const groups = spec.groups;
    const tops = [];
    for (const g of groups) {
      g.values.forEach((v, i) => tops.push(v === null ? null : v + ((g.errors && g.errors[i]) || 0)));
    }
    const ext = extent(tops.concat([0]));
    const yd = [Math.min(0, ext[0]), ext[1] > 0 ? ext[1] * 1.1 : 1];
    const longest = Math.max(0, ...cats.map((c) => String(c).length));
    const rotate = cats.length > 4 || longest > 12;
    const height = H + (rotate ? Math.min(80, longest * 4) : 0);
    const x0 = M.l;
    const band = (W - M.l - M.r) / Math.max(1, cats.length);
    const bw = Math.min(46, band * 0.8 / Math.max(1, groups.length));
    const y = scale(yd[0], yd[1], height - M.b - (rotate ? height - H : 0), M.t);
    const root = svg("svg", { viewBox: "0 0 " + W + " " + height, cls: "plot", role: "img", "aria-label": spec.title });
    const bottom = y(Math.max(0, yd[0]));
    for (const t of niceTicks(yd[0], yd[1], 6)) {
      append(root, svg("line", { x1: M.l, x2: W - M.r, y1: y(t), y2: y(t), cls: "grid" }));
      append(root, svg("text", { x: M.l - 6, y: y(t) + 4, "text-anchor": "end", cls: "tick", text: fmtNum(t) }));
    }
    append(root, svg("text", { x: 14, y: (M.t + bottom) / 2, "text-anchor": "middle", cls: "axis-label",
      transform: "rotate(-90 14 " + (M.t + bottom) / 2 + ")", text: spec.y_label || "" }));
    cats.forEach((cat, ci) => {
      const cx = x0 + band * (ci + 0.5);
      const lx = cx;
      const ly = bottom + 14;
      append(root, svg("text", { x: lx, y: ly, cls: "tick", "text-anchor": rotate ? "end" : "middle",
        transform: rotate ? "rotate(-35 " + lx + " " + ly + ")" : null, text: cat }));
      groups.forEach((g, gi) => {
        const bx = cx - (groups.length * bw) / 2 + gi * bw;
        const v = g.values[ci];
        if (v === null || v === undefined) {
          if (g.missing) {
            const tx = bx + bw / 2;
            append(root, svg("text", { x: tx, y: bottom - 4, cls: "missing", "text-anchor": "start",
              transform: "rotate(-90 " + tx + " " + (bottom - 4) + ")", text: g.missing }));
          }
          return;
        }
        const top = y(Math.max(v, 0));
        const rect = svg("rect", { x: bx + 1, y: Math.min(top, y(Math.min(v, 0))), width: Math.max(1, bw - 2),
          height: Math.max(1, Math.abs(y(v) - y(0))), fill: color(g.color === undefined ? gi : g.color), cls: "bar" });
        const err = g.errors ? g.errors[ci] : null;
        const label = g.label + ", " + cat + ": " + fmtNum(v) + (err ? " ± " + fmtNum(err) : "");
        append(rect, svg("title", { text: label }));
        append(root, rect);
        if (err) {
          const mx = bx + bw / 2;
          append(root, svg("path", { cls: "whisker", d: "M" + mx + "," + y(v - err) + "V" + y(v + err) +
            "M" + (mx - 4) + "," + y(v - err) + "H" + (mx + 4) + "M" + (mx - 4) + "," + y(v + err) + "H" + (mx + 4) }));
        }
      });
    });
    append(root, svg("line", { x1: M.l, x2: W - M.r, y1: bottom, y2: bottom, cls: "axis" }));
    return figure(spec, el("div", { cls: "plot-box" }, root),
      groups.map((g, gi) => swatch(g.label, color(g.color === undefined ? gi : g.color), false, "box")));
  }

  // ColorBrewer's YlGnBu: from pale yellow (idle) to deep blue (full); above 100% red, no value grey
  const HEAT = [[255, 255, 217], [199, 233, 180], [65, 182, 196], [34, 94, 168], [8, 29, 88]];

  function heatColor(v) {
    if (v === null || v === undefined) return "#e4e4e7";
    if (v > 100.05) return "#b2182b";
    const t = Math.max(0, Math.min(1, v / 100)) * (HEAT.length - 1);
    const i = Math.min(HEAT.length - 2, Math.floor(t));
    const f = t - i;
    return "rgb(" + HEAT[i].map((x, k) => Math.round(x + (HEAT[i + 1][k] - x) * f)).join(",") + ")";
  }

  function heatmap(spec) {
    const wrap = el("div", { cls: "heatmap" });
    const tabs = el("div", { cls: "tabs", role: "tablist" });
    const box = el("div", { cls: "plot-box" });
    let current = 0;

    function draw() {
      const layer = spec.layers[current];
      const rows = spec.rows;
      const cols = layer.cols;
      const labelW = Math.min(220, 14 + 6.2 * Math.max(4, ...rows.map((r) => r.length)));
      const cellH = rows.length > 60 ? 5 : rows.length > 30 ? 10 : 18;
      const colLabelH = 80;
      const cellW = Math.max(4, Math.min(56, (FW - labelW - 20) / Math.max(1, cols.length)));
      const width = labelW + cols.length * cellW + 20;
      const height = colLabelH + rows.length * cellH + 10;
      const root = svg("svg", { viewBox: "0 0 " + width + " " + height, width: width, height: height,
        cls: "plot heat", role: "img", "aria-label": spec.title + ": " + layer.name });
      const every = Math.max(1, Math.ceil(cols.length / 30));
      cols.forEach((c, j) => {
        if (j % every) return;
        const cx = labelW + j * cellW + cellW / 2;
        append(root, svg("text", { x: cx, y: colLabelH - 6, cls: "tick", "text-anchor": "start",
          transform: "rotate(-50 " + cx + " " + (colLabelH - 6) + ")", text: c }));
      });
      const frag = document.createDocumentFragment();
      rows.forEach((r, i) => {
        const y0 = colLabelH + i * cellH;
        if (cellH >= 9) {
          frag.appendChild(svg("text", { x: labelW - 6, y: y0 + cellH - 3, cls: "tick", "text-anchor": "end", text: r }));
        }
        layer.values[i].forEach((v, j) => {
          const rect = svg("rect", { x: labelW + j * cellW, y: y0, width: Math.max(1, cellW - 1),
            height: Math.max(1, cellH - 1), fill: heatColor(v), cls: "cell" });
          append(rect, svg("title", { text: r + " · " + c0(cols[j]) + ": " + (v === null ? "n/a" : fmtNum(v) + "%") }));
          frag.appendChild(rect);
          if (cellW >= 30 && cellH >= 14 && v !== null && v !== undefined) {
            frag.appendChild(svg("text", { x: labelW + j * cellW + cellW / 2, y: y0 + cellH / 2 + 3.5,
              "text-anchor": "middle", cls: "cell-value", fill: v > 55 && v <= 100.05 ? "#fff" : "#1f2328",
              text: Math.round(v) }));
          }
        });
      });
      root.appendChild(frag);
      box.textContent = "";
      append(box, root);
    }

    function c0(c) {
      return spec.col_label + " " + c;
    }

    spec.layers.forEach((layer, i) => {
      append(tabs, el("button", { type: "button", role: "tab", cls: "tab", text: layer.name,
        "aria-selected": i === current ? "true" : "false",
        onclick: (evt) => {
          current = i;
          tabs.querySelectorAll("button").forEach((b) => b.setAttribute("aria-selected", "false"));
          evt.currentTarget.setAttribute("aria-selected", "true");
          draw();
        } }));
    });
    if (spec.layers.length > 1) append(wrap, tabs);
    append(wrap, box);
    draw();
    const scaleBar = el("div", { cls: "heat-scale" }, [0, 25, 50, 75, 100].map((v) =>
      el("span", { style: "background:" + heatColor(v) + ";color:" + (v > 50 ? "#fff" : "#111"), text: v + "%" })));
    append(scaleBar, el("span", { style: "background:" + heatColor(null), text: "n/a" }));
    append(scaleBar, el("span", { style: "background:" + heatColor(101) + ";color:#fff", text: ">100%" }));
    return figure(spec, wrap, [scaleBar]);
  }

  function timeline(spec) {
    const lanes = spec.lanes.filter((l) => l.events.length);
    const laneH = 30;
    const labelW = Math.min(240, 20 + 6.4 * Math.max(8, ...lanes.map((l) => (l.label + l.events.length).length + 3)));
    const height = M.t + lanes.length * laneH + 40;
    const end = spec.end > 0 ? spec.end : 1;
    const x = scale(0, end, labelW + 14, FW - M.r - 14);
    const root = svg("svg", { viewBox: "0 0 " + FW + " " + height, cls: "plot timeline", role: "img",
      "aria-label": spec.title });
    const bottom = M.t + lanes.length * laneH;
    for (const t of niceTimeTicks(0, end, 8)) {
      append(root, svg("line", { x1: x(t), x2: x(t), y1: M.t, y2: bottom, cls: "grid" }));
      append(root, svg("text", { x: x(t), y: bottom + 16, "text-anchor": "middle", cls: "tick", text: fmtTime(t) }));
    }
    append(root, svg("text", { x: (labelW + FW) / 2, y: height - 6, "text-anchor": "middle", cls: "axis-label",
      text: "virtual time" }));
    lanes.forEach((lane, li) => {
      const cy = M.t + li * laneH + laneH / 2;
      append(root, svg("text", { x: labelW - 8, y: cy + 4, "text-anchor": "end", cls: "lane-label",
        text: lane.label + " (" + lane.events.length + ")" }));
      append(root, svg("line", { x1: labelW, x2: FW - M.r, y1: cy, y2: cy, cls: "lane" }));
      const bins = new Map();
      for (const e of lane.events) {
        const px = Math.round(x(e[0]) / 3) * 3;
        if (!bins.has(px)) bins.set(px, []);
        bins.get(px).push(e);
      }
      for (const [px, evs] of bins) {
        const r = Math.min(11, 3.5 + Math.sqrt(evs.length) * 1.3);
        const pod = evs[0][1] && pods && evs[0][1] in pods ? evs[0][1] : null;
        const mark = svg("circle", { cx: px, cy: cy, r: r, fill: color(lane.color), "fill-opacity": 0.8,
          cls: pod ? "mark" : "mark inert", tabindex: pod ? 0 : null, "data-pod": pod });
        const lines = evs.slice(0, 8).map((e) => fmtTime(e[0]) + "  " + (e[1] ? e[1] + ": " : "") + e[2]);
        if (evs.length > 8) lines.push("… and " + (evs.length - 8) + " more");
        mark.addEventListener("mousemove", (evt) => showTip(evt, [lane.label + " (" + evs.length + ")"].concat(lines)));
        mark.addEventListener("mouseleave", hideTip);
        if (pod) {
          mark.addEventListener("click", () => openPod(pod));
          mark.addEventListener("keydown", (evt) => { if (evt.key === "Enter") openPod(pod); });
        }
        append(root, mark);
      }
    });
    return figure(spec, el("div", { cls: "plot-box" }, root), null);
  }

  const CHARTS = { line: lineChart, bars: barChart, heatmap: heatmap, timeline: timeline };

  function renderChart(spec) {
    const draw = CHARTS[spec.kind];
    return draw ? draw(spec) : el("p", { cls: "note", text: "unknown chart kind " + spec.kind });
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
    document.body.setAttribute("data-ready", "true");
  }

  render();
})();
