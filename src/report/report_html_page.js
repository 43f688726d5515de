// report_html_page.js - the --html page's script (put into report_html_page.html at its script marker): draws the snapshots of the page's JSON, the heap over time, the flame graph, the tables and a stack's frames.
"use strict";
var DATA = expand(JSON.parse(document.getElementById("jt-data").textContent));
var SNAPS = DATA.snapshots;
var COLORS = ["#4e79a7", "#f28e2b", "#e15759", "#76b7b2", "#59a14f", "#edc948", "#b07aa1",
  "#ff9da7", "#9c755f", "#bab0ac"];
var SVGNS = "http://www.w3.org/2000/svg";
var TOPN = 10;
var state = { snap: SNAPS.length - 1, fgCost: "live", fgRoot: [], treeUp: false, open: {} };

/*
 * Format 2 (doc/formats.md) rebuilt as format 1, which the views read: a
 * snapshot lists the stacks that changed since the previous one of its
 * "heap", a stack's frames are in its first entry (by their numbers in the
 * frame table), its ages are the times its blocks were allocated, and
 * "growth" leaves its series to the snapshots. Only the snapshot shown is
 * rebuilt (whole()), when it is first shown: all of them at once would hold
 * every stack of every snapshot, which a long run could not afford.
 */
function expand(data) {
  if (!(data.format >= 2)) return data;
  var table = [];
  data.snapshots.forEach(function (s) {
    /* A stack's frames are numbers in the file's frame table, which each snapshot's "new_frames" extends. */
    (s.new_frames || []).forEach(function (f) { table.push(f); });
    s.changed = s.stacks;
    s.stacks = null;
  });
  data.table = table;
  return data;
}
/* Snapshot i whole: its heap's snapshots up to it replayed, each stack's latest entry with its first one's frames. */
function whole(i) {
  var s = DATA.snapshots[i];
  if (!s || s.stacks) return s;
  var cur = {}, first = {}, byTime = {}, table = DATA.table;
  var ids = (s.growth ? s.growth.stacks : []).map(function (row) { return row.id; });
  for (var j = 0; j <= i; j++) {
    var x = DATA.snapshots[j];
    if ((x.heap || 0) !== (s.heap || 0)) continue;
    x.changed.forEach(function (st) {
      if (st.frames) first[st.id] = st;
      cur[st.id] = st;
    });
    /* Growth keeps some of the snapshots (64 at most): each stack's live bytes at their times. */
    var at = byTime[x.time_ms] = {};
    ids.forEach(function (id) { at[id] = cur[id] ? cur[id].live_bytes : 0; });
  }
  var all = Object.keys(cur).map(function (id) {
    var o = {}, st = cur[id], f = first[id];
    for (var k in st) if (k !== "oldest_ms" && k !== "newest_ms") o[k] = st[k];
    o.frames = f ? f.frames.map(function (n) { return table[n]; }) : [];
    o.site = f ? f.site : 0;
    if (f && f.truncated) o.truncated = true;
    if (st.oldest_ms !== undefined) { o.oldest_age_ms = s.time_ms - st.oldest_ms; o.newest_age_ms = s.time_ms - st.newest_ms; }
    return o;
  });
  all.sort(function (a, b) {
    return (b.live_blocks > 0) - (a.live_blocks > 0) ||
      (a.live_blocks > 0 ? b.live_bytes - a.live_bytes || b.live_blocks - a.live_blocks : 0) || a.id - b.id;
  });
  s.stacks = all;
  if (s.growth) s.growth.stacks.forEach(function (row) {
    row.live_bytes = s.growth.times_ms.map(function (t) { return byTime[t] ? byTime[t][row.id] || 0 : 0; });
  });
  return s;
}
function $(id) { return document.getElementById(id); }
function num(n) { return String(n).replace(/\B(?=(\d{3})+(?!\d))/g, ","); }
function el(tag, attrs, text) {
  var e = document.createElement(tag);
  for (var k in attrs || {}) e.setAttribute(k, attrs[k]);
  if (text !== undefined) e.textContent = text;
  return e;
}
function sel(tag, attrs) {
  var e = document.createElementNS(SVGNS, tag);
  for (var k in attrs) e.setAttribute(k, attrs[k]);
  return e;
}
/* A frame's name, as the text report's label: the function, else module+offset, else the address. */
function label(fr) {
  if (fr.function) return fr.function;
  if (fr.module) return fr.module + "+" + fr.offset;
  return fr.address;
}
/* " file.c:12" (the basename) for a frame with a line, else "": what tells apart a legend's rows of one function. */
function short(fr) { return fr.file ? " " + fr.file.replace(/.*\//, "") + ":" + fr.line : ""; }
/* Where a frame is, as the text report says it in a row: file.c:12 by its basename (the stack panel has the path). */
function brief(fr) { return fr.file ? short(fr).slice(1) : fr.module ? "in " + fr.module : ""; }
function place(fr) {
  if (fr.file) return fr.file + ":" + fr.line;
  return fr.module ? "in " + fr.module : "";
}
/* The frame that names a stack's row: the first outside the allocator's wrappers (the JSON's "site"). */
function siteFrame(st) { return st.frames[st.site || 0]; }
function plural(n, one, many) { return num(n) + " " + (n === 1 ? one : many); }
/* A stack's key: its heap id (stable over the run) when the JSON has it, else its index. */
function sid(st, i) { return st.id !== undefined ? st.id : "#" + i; }
function snap() { return whole(state.snap); }
/* The charts take the width the page gives them. */
function width() { return Math.max(560, $("main").clientWidth - 30); }
function stackById(s, id) {
  for (var i = 0; i < s.stacks.length; i++) if (sid(s.stacks[i], i) === id) return s.stacks[i];
  return null;
}

/* ---- the details panel: one stack's figures and every frame ---- */
function showStack(st, note) {
  var d = $("frames");
  d.className = "";
  d.textContent = "";
  d.appendChild(el("div", { id: "frames-head" }, (st.id !== undefined ? "stack " + st.id + ": " : "") +
    num(st.live_bytes) + " bytes live in " + num(st.live_blocks) + " blocks, " +
    num(st.alloc_calls) + " allocation calls, " + num(st.alloc_bytes) + " bytes allocated, peak " +
    num(st.peak_bytes) + " bytes, " + num(st.temporary) + " temporary"));
  if (st.oldest_age_ms !== undefined)
    d.appendChild(el("div", {}, "live blocks aged " + num(st.newest_age_ms) + " to " + num(st.oldest_age_ms) + " ms"));
  if (note) d.appendChild(el("div", { "class": "muted" }, note));
  if (!st.frames.length) d.appendChild(el("div", { "class": "frame" }, "(no call stack was captured)"));
  st.frames.forEach(function (fr, k) {
    d.appendChild(el("div", { "class": k === (st.site || 0) ? "frame site" : "frame" }, (k ? "by " : "at ") + fr.address + ": " + label(fr) +
      (place(fr) ? " (" + place(fr) + ")" : "") + (fr.inlined ? " (inlined)" : "")));
  });
  if (st.truncated) d.appendChild(el("div", { "class": "frame" }, "... (stack cut at --depth)"));
  state.shown = st;
}

/* ---- the heap over time: the timeline of the chosen snapshot's process image (pid, execs), stacked by its top stacks ---- */
function samples(si) {
  var s = SNAPS[si], out = [];
  var norm = function (x) {
    return Array.isArray(x) ? { time_ms: x[0], live_bytes: x[1], live_blocks: x[2] } : x;
  };
  /* The old layout repeats the whole timeline in each snapshot; the new one has the samples since the last. */
  if (s.timeline.length && Array.isArray(s.timeline[0])) return s.timeline.map(norm);
  for (var j = 0; j <= si; j++)
    if (SNAPS[j].pid === s.pid && (SNAPS[j].execs || 0) === (s.execs || 0)) out = out.concat(SNAPS[j].timeline.map(norm));
  return out;
}
/*
 * Samples are 100 ms apart, so a peak between two is in none of them: it goes in as a point of
 * its own, before the first sample of its ms or later, with each stack's live bytes at the peak
 * (peak_bytes), so that the area reaches the peak's dot.
 */
function withPeak(s, tl) {
  var pk = s.peak, at = 0;
  if (!pk || !pk.live_bytes || pk.time_ms < tl[0].time_ms || pk.time_ms > tl[tl.length - 1].time_ms) return tl;
  while (at < tl.length && tl[at].time_ms < pk.time_ms) at++;
  var stacks = s.stacks.filter(function (st) { return st.id !== undefined; }).map(function (st) { return [st.id, st.peak_bytes]; });
  var x = { time_ms: pk.time_ms, live_bytes: pk.live_bytes, live_blocks: pk.live_blocks, peak: true };
  if (tl.some(function (y) { return y.stacks; })) x.stacks = stacks;
  return tl.slice(0, at).concat([x], tl.slice(at));
}
function series(s, tl) {
  var cur = {}, rows = [], max = {}, hasStacks = tl.some(function (x) { return x.stacks; });
  tl.forEach(function (x) {
    var r = {}, k;
    /* The peak's point sets every stack's figure for itself alone: the samples after it go on from theirs. */
    if (x.peak) for (k in cur) r[k] = 0;
    else (x.stacks || []).forEach(function (p) { cur[p[0]] = p[1]; });
    for (k in cur) if (!x.peak) r[k] = cur[k];
    if (x.peak) (x.stacks || []).forEach(function (p) { r[p[0]] = p[1]; });
    for (k in r) max[k] = Math.max(max[k] || 0, r[k]);
    rows.push(r);
  });
  var ids = Object.keys(max).filter(function (k) { return max[k] > 0; });
  ids.sort(function (a, b) { return max[b] - max[a] || a - b; });
  return { rows: rows, top: hasStacks ? ids.slice(0, COLORS.length - 1).map(Number) : [], rest: hasStacks ? "other" : "total" };
}
function drawChart() {
  var s = snap(), tl = samples(state.snap), svg = $("chart"), W = width(), H = 260, L = 70, B = 20, T = 14;
  svg.setAttribute("width", W);
  svg.textContent = "";
  $("legend").textContent = "";
  if (!tl.length) return;
  svg.setAttribute("data-samples", tl.length);
  tl = withPeak(s, tl);
  var se = series(s, tl), t0 = tl[0].time_ms, t1 = Math.max(tl[tl.length - 1].time_ms, t0 + 1);
  var ymax = Math.max.apply(null, tl.map(function (x) { return x.live_bytes; }).concat([s.peak.live_bytes, 1]));
  var X = function (t) { return L + (t - t0) * (W - L - 10) / (t1 - t0); };
  var Y = function (b) { return H - B - b * (H - B - T) / ymax; };
  var bands = se.top.map(String).concat([se.rest]);
  var low = tl.map(function () { return 0; });
  bands.forEach(function (key, bi) {
    var high = tl.map(function (x, i) {
      if (key !== se.rest) return low[i] + (se.rows[i][key] || 0);
      return Math.max(x.live_bytes, low[i]);
    });
    var d = "M" + tl.map(function (x, i) { return X(x.time_ms) + "," + Y(high[i]); }).join("L");
    for (var i = tl.length - 1; i >= 0; i--) d += "L" + X(tl[i].time_ms) + "," + Y(low[i]);
    var color = key === se.rest ? "#c9c9c9" : COLORS[bi % COLORS.length];
    var n = tl.length - 1, p = sel("path", { d: d + "Z", fill: color, "class": "band", "data-stack": key,
      "data-last": high[n] - low[n] });
    var st = key === se.rest ? null : stackById(s, Number(key));
    p.addEventListener("click", function () {
      Array.prototype.forEach.call(svg.querySelectorAll(".band"), function (b) { b.classList.remove("sel"); });
      p.classList.add("sel");
      if (st) showStack(st);
      else $("frames").textContent = key === "other" ? "every stack outside the top " + se.top.length :
        "the whole heap (this JSON has no per-stack samples)";
    });
    var title = sel("title", {});
    title.textContent = key === "other" ? "other stacks" : key === "total" ? "total" :
      (st && st.frames.length ? label(siteFrame(st)) + short(siteFrame(st)) + " (stack " + key + ")" : "stack " + key);
    p.appendChild(title);
    svg.appendChild(p);
    var lg = el("span", { "data-stack": key }), sw = el("i");
    sw.style.background = color;
    lg.appendChild(sw);
    lg.appendChild(document.createTextNode(title.textContent));
    lg.addEventListener("click", function () { p.dispatchEvent(new MouseEvent("click")); });
    $("legend").appendChild(lg);
    low = high;
  });
  /* Axes, and the peak marked where it was. */
  svg.appendChild(sel("line", { x1: L, y1: H - B, x2: W - 10, y2: H - B, stroke: "#444" }));
  svg.appendChild(sel("line", { x1: L, y1: T, x2: L, y2: H - B, stroke: "#444" }));
  var tx = function (x, y, str, anchor) {
    var t = sel("text", { x: x, y: y, "text-anchor": anchor || "start" });
    t.textContent = str;
    svg.appendChild(t);
    return t;
  };
  tx(L - 4, Y(ymax) + 4, num(ymax), "end");
  tx(L - 4, H - B + 4, "0", "end");
  tx(L, H - 4, num(t0) + " ms").id = "chart-start";
  tx(W - 10, H - 4, num(t1) + " ms", "end").id = "chart-end";
  var px = X(s.peak.time_ms);
  svg.appendChild(sel("line", { id: "peak-mark", x1: px, y1: T, x2: px, y2: H - B, stroke: "#d00",
    "stroke-dasharray": "4,3" }));
  svg.appendChild(sel("circle", { id: "peak-dot", cx: px, cy: Y(s.peak.live_bytes), r: 4, fill: "#d00" }));
  tx(Math.min(px + 3, W - 200), T - 3, "peak " + num(s.peak.live_bytes) + " bytes at " + num(s.peak.time_ms) + " ms").id = "peak-label";
}

/* ---- the flame graph: a trie of frames, outermost first, of live bytes or allocation calls ---- */
/* Left out as the text report's lists leave them out: the runtime's stacks, and the suppressed ones from live bytes. */
function listed(st, cost) { return !st.runtime && !(cost === "live" && st.suppressed); }
function trie(s, cost, up) {
  var root = { name: "all", v: 0, kids: {}, order: [], stacks: [] };
  s.stacks.forEach(function (st) {
    var v = cost === "calls" ? st.alloc_calls : st.live_bytes;
    if ((!v && cost !== "tree") || !listed(st, cost)) return;
    var frs = up ? st.frames : st.frames.slice().reverse(), n = root;
    root.v += v;
    root.stacks.push(st);
    frs.forEach(function (fr) {
      var k = label(fr);
      if (!n.kids[k]) { n.kids[k] = { name: k, fr: fr, v: 0, kids: {}, order: [], stacks: [] }; n.order.push(k); }
      n = n.kids[k];
      n.v += v;
      n.stacks.push(st);
    });
  });
  return root;
}
function heaviest(n) {
  return n.stacks.reduce(function (a, b) { return b.live_bytes > a.live_bytes || (b.live_bytes === a.live_bytes && b.alloc_calls > a.alloc_calls) ? b : a; });
}
function drawFlame() {
  var s = snap(), root = trie(s, state.fgCost, false), svg = $("flame"), W = width(), RH = 17;
  ["live", "calls"].forEach(function (c) { $("fg-" + c).classList.toggle("on", state.fgCost === c); });
  var top = root;
  for (var i = 0; i < state.fgRoot.length && top.kids[state.fgRoot[i]]; i++) top = top.kids[state.fgRoot[i]];
  var depth = function (n) { var d = 0; for (var k in n.kids) d = Math.max(d, depth(n.kids[k])); return d + 1; };
  var rows = depth(top) + state.fgRoot.length, H = rows * RH + 4;
  svg.setAttribute("height", H);
  svg.setAttribute("width", W);
  svg.textContent = "";
  var out = s.stacks.filter(function (st) { return !listed(st, state.fgCost); }).reduce(function (a, st) {
    return a + (state.fgCost === "calls" ? st.alloc_calls : st.live_bytes); }, 0);
  $("fg-what").textContent = (state.fgCost === "calls" ? num(root.v) + " allocation calls" : num(root.v) + " live bytes") +
    (out ? " (not shown: " + num(out) + (state.fgCost === "calls" ? " calls" : " bytes") + " of the runtime's" +
      (state.fgCost === "calls" ? "" : " and suppressed") + " stacks)" : "") +
    (state.fgRoot.length ? ", zoomed on " + state.fgRoot[state.fgRoot.length - 1] : "");
  var box = function (n, x, w, d, path) {
    if (w < 0.5) return;
    var y = H - (d + 1) * RH, g = sel("g", { "class": "fgnode", "data-name": n.name, "data-value": n.v });
    var hue = n === root ? 0 : 20 + (n.name.length * 37) % 40;
    g.appendChild(sel("rect", { x: x, y: y, width: Math.max(w - 1, 0.5), height: RH - 1,
      fill: n === root ? "#bbb" : "hsl(" + hue + ",85%," + (55 + (d % 3) * 5) + "%)" }));
    var t = sel("text", { x: x + 3, y: y + RH - 5 });
    var chars = Math.floor((w - 6) / 6.5);
    var str = n.name + " (" + num(n.v) + ")";
    t.textContent = chars < 3 ? "" : str.length > chars ? str.slice(0, chars - 2) + ".." : str;
    g.appendChild(t);
    var tt = sel("title", {});
    tt.textContent = n.name + ": " + num(n.v) + (state.fgCost === "calls" ? " allocation calls" : " bytes");
    g.appendChild(tt);
    g.addEventListener("click", function () {
      if (n !== root) state.fgRoot = path;
      else state.fgRoot = [];
      drawFlame();
      if (n.stacks.length) showStack(heaviest(n), n === root ? "" : n.stacks.length > 1 ?
        "the largest of the " + n.stacks.length + " stacks through " + n.name : "");
    });
    svg.appendChild(g);
    var cx = x;
    n.order.forEach(function (k) {
      var c = n.kids[k], cw = w * c.v / (n.v || 1);
      box(c, cx, cw, d + 1, path.concat([k]));
      cx += cw;
    });
  };
  /* The zoomed frame takes the whole width; its callers stay as full-width bars below it. */
  var anc = root, ap = [];
  for (i = 0; i < state.fgRoot.length && anc !== top; i++) {
    var gg = sel("g", { "class": "fgnode", "data-name": anc.name, "data-value": anc.v });
    gg.appendChild(sel("rect", { x: 0, y: H - (i + 1) * RH, width: W - 1, height: RH - 1, fill: "#ddd" }));
    var tt2 = sel("text", { x: 3, y: H - i * RH - 5 });
    tt2.textContent = anc.name + " (" + num(anc.v) + ")";
    gg.appendChild(tt2);
    (function (p) { gg.addEventListener("click", function () { state.fgRoot = p; drawFlame(); }); })(ap.slice());
    svg.appendChild(gg);
    ap.push(state.fgRoot[i]);
    anc = anc.kids[state.fgRoot[i]];
  }
  box(top, 0, W, state.fgRoot.length, state.fgRoot.slice());
}

/* ---- the call tree, top-down (from main) or bottom-up (from the allocating function) ---- */
function drawTree() {
  var s = snap(), root = trie(s, "tree", state.treeUp), body = $("tree").tBodies[0];
  $("tree-down").classList.toggle("on", !state.treeUp);
  $("tree-up").classList.toggle("on", state.treeUp);
  body.textContent = "";
  var sum = function (n, f) { return n.stacks.reduce(function (a, st) { return a + st[f]; }, 0); };
  var rows = function (n, d, path) {
    var kids = n.order.map(function (k) { return n.kids[k]; });
    kids.sort(function (a, b) { return sum(b, "live_bytes") - sum(a, "live_bytes") || sum(b, "alloc_calls") - sum(a, "alloc_calls"); });
    kids.forEach(function (c) {
      var key = path + "\u0001" + c.name, open = state.open[key], leaf = !c.order.length;
      var tr = el("tr", { "class": "trow", "data-name": c.name, "data-depth": d });
      var td = el("td", { "class": "name" });
      td.style.paddingLeft = (4 + d * 14) + "px";
      var tog = el("span", { "class": "tog" }, leaf ? "" : open ? "\u25bc" : "\u25b6");
      td.appendChild(tog);
      td.appendChild(document.createTextNode(c.name));
      td.appendChild(el("span", { "class": "muted" }, c.fr && brief(c.fr) ? "  " + brief(c.fr) : ""));
      tr.appendChild(td);
      ["live_bytes", "live_blocks", "alloc_calls", "alloc_bytes"].forEach(function (f) {
        tr.appendChild(el("td", { "data-field": f }, num(sum(c, f))));
      });
      tr.addEventListener("click", function () {
        if (!leaf) { state.open[key] = !open; drawTree(); }
        showStack(heaviest(c), c.stacks.length > 1 ? "the largest of the " + c.stacks.length + " stacks through " + c.name : "");
      });
      body.appendChild(tr);
      if (open) rows(c, d + 1, key);
    });
  };
  rows(root, 0, state.treeUp ? "up" : "down");
}

/* ---- the text report's sections as tables, the growth table, the leak records ---- */
function table(parent, id, title, cols, items, onrow) {
  parent.appendChild(el("h3", {}, title));
  var t = el("table", { id: id }), tr = el("tr");
  cols.forEach(function (c) { tr.appendChild(el("th", c[2] ? { "class": "name" } : {}, c[0])); });
  t.appendChild(tr);
  items.forEach(function (it) {
    var r = el("tr", { "class": "row" });
    cols.forEach(function (c) {
      var v = c[1](it);
      var td = el("td", c[2] ? { "class": "name" } : {}, v instanceof Node ? undefined : typeof v === "number" ? num(v) : v);
      if (v instanceof Node) td.appendChild(v);
      r.appendChild(td);
    });
    if (onrow) r.addEventListener("click", function () {
      Array.prototype.forEach.call(document.querySelectorAll("tr.sel"), function (x) { x.classList.remove("sel"); });
      r.classList.add("sel");
      onrow(it);
    });
    t.appendChild(r);
  });
  if (!items.length) t.appendChild(el("tr", {}, "")).appendChild(el("td", { "class": "name muted" }, "(none)"));
  parent.appendChild(t);
}
function where(st) {
  var fr = siteFrame(st);
  return fr ? label(fr) + (brief(fr) ? " (" + brief(fr) + ")" : "") : "(no call stack)";
}
var SECTIONS = [
  ["live", "LIVE (live bytes)", "live_bytes", [["live bytes", "live_bytes"], ["blocks", "live_blocks"]]],
  ["peak", "AT THE PEAK (live bytes at the peak)", "peak_bytes", [["peak bytes", "peak_bytes"], ["blocks", "peak_blocks"]]],
  ["calls", "MOST ALLOCATION CALLS", "alloc_calls", [["calls", "alloc_calls"], ["bytes", "alloc_bytes"]]],
  ["bytes", "MOST BYTES ALLOCATED", "alloc_bytes", [["bytes", "alloc_bytes"], ["calls", "alloc_calls"]]],
  ["temporary", "MOST TEMPORARY ALLOCATIONS", "temporary", [["temporary", "temporary"], ["calls", "alloc_calls"]]]
];
function drawTables() {
  var s = snap(), div = $("tables");
  div.textContent = "";
  div.appendChild(el("h2", {}, "Sections of the text report"));
  SECTIONS.forEach(function (sec) {
    /* As the text's lists: the runtime's stacks left out of every one, the suppressed ones out of the live one. */
    var items = s.stacks.filter(function (st) { return st[sec[2]] > 0 && listed(st, sec[0]); });
    items.sort(function (a, b) { return b[sec[2]] - a[sec[2]]; });
    var cols = [["stack", function (st) { return st.id !== undefined ? st.id : ""; }]];
    sec[3].forEach(function (c) { cols.push([c[0], function (st) { return st[c[1]]; }]); });
    if (sec[0] === "live" && s.stacks.some(function (st) { return st.oldest_age_ms !== undefined; }))
      cols.push(["oldest ms", function (st) { return st.oldest_age_ms !== undefined ? st.oldest_age_ms : ""; }]);
    cols.push(["allocated at", where, true]);
    table(div, "table-" + sec[0], sec[1] + ": top " + Math.min(TOPN, items.length) + " of " + items.length,
      cols, items.slice(0, TOPN), function (st) { showStack(st); });
  });
}
/* The snapshot k (from 1) after which a growth row grew most, or 0 when it never grew. */
function step(x) {
  var best = 0;
  for (var k = 1; k < x.live_bytes.length; k++)
    if (x.live_bytes[k] - x.live_bytes[k - 1] > (best ? x.live_bytes[best] - x.live_bytes[best - 1] : 0)) best = k;
  return best;
}
/* A growth row's live bytes at every snapshot as a small line, 0 at its foot; each figure in its title. */
function spark(x) {
  var W = 120, H = 18, v = x.live_bytes, top = Math.max.apply(null, v.concat([1]));
  var svg = sel("svg", { "class": "spark", width: W, height: H });
  var pts = v.map(function (b, k) {
    return (1 + k * (W - 2) / Math.max(v.length - 1, 1)).toFixed(1) + "," + (H - 1 - b * (H - 2) / top).toFixed(1);
  });
  svg.appendChild(sel("polyline", { points: pts.join(" "), fill: "none", stroke: "#4e79a7", "stroke-width": 1.5 }));
  var t = sel("title", {});
  t.textContent = v.map(num).join(" \u2192 ");
  svg.appendChild(t);
  return svg;
}
function drawGrowth() {
  var s = snap(), div = $("growth"), g = s.growth;
  div.textContent = "";
  if (!g) return;
  div.appendChild(el("h2", {}, "Growth over the snapshots"));
  /* However many snapshots: the first and the last figure, a sparkline of them all, the largest step. */
  var n = g.times_ms.length;
  var cols = [["stack", function (x) { return x.id; }]];
  cols.push([num(g.times_ms[0]) + " ms", function (x) { return x.live_bytes[0]; }]);
  cols.push([num(g.times_ms[n - 1]) + " ms", function (x) { return x.live_bytes[n - 1]; }]);
  cols.push([plural(n, "snapshot", "snapshots"), spark]);
  cols.push(["largest step", function (x) {
    var k = step(x);
    return k ? "+" + num(x.live_bytes[k] - x.live_bytes[k - 1]) + " by " + num(g.times_ms[k]) + " ms" : "";
  }]);
  cols.push(["bytes/s", function (x) { return Math.round(x.rate_bytes_per_s); }]);
  cols.push(["every interval", function (x) { return x.grew_every_interval ? "grew" : ""; }]);
  cols.push(["allocated at", function (x) { var st = stackById(s, x.id); return st ? where(st) : ""; }, true]);
  table(div, "table-growth", "live bytes at each snapshot, by growth", cols, g.stacks, function (x) {
    var st = stackById(s, x.id);
    if (st) showStack(st);
  });
}
/* The pages' live bytes over time, as a line: their timeline so far in this process's snapshots. */
function drawPagesLine(div) {
  var s = SNAPS[state.snap], tl = [], W = 760, H = 120, L = 90, B = 20;
  for (var j = 0; j <= state.snap; j++)
    if (SNAPS[j].pid === s.pid && (SNAPS[j].execs || 0) === (s.execs || 0) && SNAPS[j].pages) tl = tl.concat(SNAPS[j].pages.timeline);
  if (!tl.length) return;
  /* Samples are 100 ms apart: the recorded peak goes in as a point of its own, before a sample of its ms. */
  tl = tl.concat([{ time_ms: s.pages.peak.time_ms, live_bytes: s.pages.peak.live_bytes, peak: 1 }]);
  tl.sort(function (a, b) { return a.time_ms - b.time_ms || (b.peak || 0) - (a.peak || 0); });
  var t0 = tl[0].time_ms, t1 = Math.max(tl[tl.length - 1].time_ms, t0 + 1);
  var top = Math.max.apply(null, tl.map(function (x) { return x.live_bytes; }).concat([1]));
  var svg = sel("svg", { id: "pages-chart", width: W, height: H });
  var pts = tl.map(function (x) {
    return (L + (x.time_ms - t0) / (t1 - t0) * (W - L - 10)).toFixed(1) + "," +
      (H - B - x.live_bytes / top * (H - B - 10)).toFixed(1);
  });
  svg.appendChild(sel("polyline", { points: pts.join(" "), fill: "none", stroke: "#b5533c", "stroke-width": 2 }));
  [[num(top), 14], ["0", H - B]].forEach(function (y) {
    var t = sel("text", { x: L - 4, y: y[1], "text-anchor": "end", "font-size": 11 });
    t.textContent = y[0];
    svg.appendChild(t);
  });
  [[num(t0) + " ms", L, "start"], [num(t1) + " ms", W - 10, "end"]].forEach(function (x) {
    var t = sel("text", { x: x[1], y: H - 4, "text-anchor": x[2], "font-size": 11 });
    t.textContent = x[0];
    svg.appendChild(t);
  });
  div.appendChild(svg);
}
/* --pages: the program's own mappings, a view apart from the heap's, and the stacks that made them. */
function drawPages() {
  var s = snap(), div = $("pages"), pg = s.pages;
  div.textContent = "";
  if (!pg) return;
  div.appendChild(el("h2", {}, "Pages: mappings made outside malloc"));
  var regions = function (n) { return num(n) + (n === 1 ? " region" : " regions"); };
  div.appendChild(el("div", { id: "pages-summary" }, num(pg.live_bytes) + " bytes live in " + regions(pg.live_regions) +
    ", peak " + num(pg.peak_bytes) + " bytes in " + regions(pg.peak.live_regions) + " at " +
    num(pg.peak.time_ms) + " ms (not counted in the heap's figures)"));
  drawPagesLine(div);
  table(div, "table-pages", "stacks with live pages", [["bytes", function (x) { return x.bytes; }],
    ["regions", function (x) { return x.regions; }], ["peak bytes", function (x) { return x.peak_bytes; }],
    ["mappings", function (x) { return x.mappings; }], ["mapped at", where, true]], pg.stacks, function (x) {
    showStack({ live_bytes: x.bytes, live_blocks: x.regions, alloc_calls: x.mappings, alloc_bytes: 0,
      peak_bytes: x.peak_bytes, temporary: 0, frames: x.frames, truncated: x.truncated },
      "pages (--pages): " + num(x.bytes) + " bytes in " + num(x.regions) + " regions, " + num(x.mappings) + " mappings");
  });
}
function drawLeaks() {
  var s = snap(), div = $("leaks"), lc = s.leak_check;
  div.textContent = "";
  if (lc === undefined) return;
  div.appendChild(el("h2", {}, "Leak check"));
  if (lc === null) { div.appendChild(el("div", {}, "no check could run")); return; }
  var sm = lc.summary;
  div.appendChild(el("div", { id: "leak-summary" }, ["definitely_lost", "indirectly_lost", "possibly_lost", "still_reachable"].map(function (k) {
    return k.replace("_", " ") + ": " + num(sm[k].bytes) + " bytes in " + num(sm[k].blocks) + " blocks";
  }).join("; ")));
  table(div, "table-leaks", "loss records", [["record", function (r) { return r.record; }],
    ["kind", function (r) { return r.leak_kind.replace("_", " ") + (r.suppressed ? " (suppressed)" : ""); }],
    ["bytes", function (r) { return r.bytes; }], ["blocks", function (r) { return r.blocks; }],
    ["indirect bytes", function (r) { return r.indirect_bytes; }],
    ["allocated at", function (r) { return where(r); }, true]], lc.records.slice().sort(function (a, b) {
      /* Biggest first (memcheck numbers them smallest first), the suppressed ones last: direct and indirect bytes, then the later record. */
      return (a.suppressed ? 1 : 0) - (b.suppressed ? 1 : 0) || (b.bytes + b.indirect_bytes) - (a.bytes + a.indirect_bytes) ||
        b.record - a.record;
    }), function (r) {
    var st = r.stack !== null ? s.stacks[r.stack] : null;
    showStack(st || { live_bytes: r.bytes, live_blocks: r.blocks, alloc_calls: 0, alloc_bytes: 0, peak_bytes: 0,
      temporary: 0, frames: r.frames }, "loss record " + r.record);
  });
}

function drawAll() {
  var s = snap();
  $("title").textContent = "jmptrace: " + (s ? s.command : "no snapshot was taken");
  if (!s) return;
  var t = s.totals, sup = t.suppressed || { live_bytes: 0, live_blocks: 0 }, rt = { live_bytes: 0, live_blocks: 0 };
  /* As the text report's first lines: the program's live blocks, the runtime's and the suppressed ones apart. */
  s.stacks.forEach(function (st) {
    if (st.runtime) { rt.live_bytes += st.live_bytes; rt.live_blocks += st.live_blocks; }
  });
  var nlive = s.stacks.filter(function (st) { return st.live_blocks && !st.suppressed; }).length;
  var bb = function (x) { return num(x.live_bytes) + " bytes in " + plural(x.live_blocks, "block", "blocks"); };
  var other = { live_bytes: sup.live_bytes - rt.live_bytes, live_blocks: sup.live_blocks - rt.live_blocks };
  $("summary").textContent = "pid " + s.pid + ", " + s.reason + " at " + num(s.time_ms) + " ms: " +
    num(t.live_bytes - sup.live_bytes) + " bytes live in " + plural(t.live_blocks - sup.live_blocks, "block", "blocks") +
    " from " + plural(nlive, "stack", "stacks") + (rt.live_blocks ? ", runtime " + bb(rt) : "") +
    (other.live_blocks ? ", suppressed " + bb(other) : "") + "; peak " + num(t.peak_live_bytes) +
    " bytes; " + plural(t.alloc_calls, "allocation call", "allocation calls") + ", " + num(t.bytes_allocated) +
    " bytes allocated, " + plural(t.frees, "free", "frees") + (t.source ? "; source: " + t.source : "");
  /* Lost events make every figure a lower bound: said where the figures are, as the text's LOST line. */
  $("lost").hidden = !t.lost_events;
  $("lost").textContent = t.lost_events ? "LOST: " + plural(t.lost_events, "event", "events") +
    ": the kernel's ring buffers overflowed (--buffer-size), so the live, peak, call and growth figures, " +
    "the chart and the flame graph are short of them" : "";
  drawChart();
  drawFlame();
  drawTree();
  drawPages();
  drawGrowth();
  drawLeaks();
  drawTables();
}

function init() {
  var sp = $("snap");
  SNAPS.forEach(function (s, i) {
    sp.appendChild(el("option", { value: i }, "#" + s.seq + " pid " + s.pid + " " + s.reason + " at " + num(s.time_ms) + " ms"));
  });
  sp.value = state.snap;
  $("snapwrap").hidden = SNAPS.length < 2;
  /* A periodic snapshot does not rewrite the page every time: say what this one holds. */
  var last = SNAPS[SNAPS.length - 1];
  $("written").textContent = DATA.written ? "page written " + DATA.written + " with " +
    plural(SNAPS.length, "snapshot", "snapshots") + (last ? ", the last #" + last.seq + " (" + last.reason + ")" : "") : "";
  sp.addEventListener("change", function () {
    state.snap = Number(sp.value);
    state.fgRoot = [];
    drawAll();
    /* The stack shown stays shown, with this snapshot's figures (the id is the run's). */
    var st = state.shown && state.shown.id !== undefined ? stackById(snap(), state.shown.id) : null;
    if (st) showStack(st);
    else { $("frames").className = "muted"; $("frames").textContent = "Click a stack to see its frames."; state.shown = null; }
  });
  $("fg-live").addEventListener("click", function () { state.fgCost = "live"; state.fgRoot = []; drawFlame(); });
  $("fg-calls").addEventListener("click", function () { state.fgCost = "calls"; state.fgRoot = []; drawFlame(); });
  $("fg-reset").addEventListener("click", function () { state.fgRoot = []; drawFlame(); });
  $("tree-down").addEventListener("click", function () { state.treeUp = false; drawTree(); });
  $("tree-up").addEventListener("click", function () { state.treeUp = true; drawTree(); });
  drawAll();
}
init();
