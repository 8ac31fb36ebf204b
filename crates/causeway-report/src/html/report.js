// The interactive wait-for graph of the causeway HTML report. The data is a JSON
// document in <script id="graph-data">: vertex labels and edges (from, to,
// weight_ns, share, in_knot, wait_stack, waker_stack). Vertices are placed on a
// circle; an edge's width grows with its weight. Hover an edge for its weight and
// stacks; click a vertex to highlight the waits in and out of it (click again to clear).
(function () {
  "use strict";
  var NS = "http://www.w3.org/2000/svg";
  var holder = document.getElementById("graph-data");
  var svg = document.getElementById("graph");
  var tip = document.getElementById("tip");
  if (!holder || !svg) { return; }
  var g = JSON.parse(holder.textContent);
  var used = {};
  g.edges.forEach(function (e) { used[e.from] = true; used[e.to] = true; });
  var ids = Object.keys(used).map(Number).sort(function (a, b) { return a - b; });
  var W = 900, H = 560, R = Math.min(W, H) / 2 - 90, cx = W / 2, cy = H / 2;
  svg.setAttribute("viewBox", "0 0 " + W + " " + H);
  var pos = {};
  ids.forEach(function (id, i) {
    var a = 2 * Math.PI * i / Math.max(ids.length, 1) - Math.PI / 2;
    pos[id] = { x: cx + R * Math.cos(a), y: cy + R * Math.sin(a) };
  });
  var defs = document.createElementNS(NS, "defs");
  defs.innerHTML = '<marker id="arrow" viewBox="0 0 10 10" refX="10" refY="5" markerWidth="6" ' +
    'markerHeight="6" orient="auto-start-reverse"><path d="M0,0L10,5L0,10z" fill="#666"/></marker>';
  svg.appendChild(defs);
  var maxW = Math.max.apply(null, g.edges.map(function (e) { return e.weight_ns; }).concat([1]));
  var edgeEls = [];
  function secs(ns) { return (ns / 1e9).toFixed(3) + " s"; }
  function stack(title, frames) {
    return frames.length ? "\n" + title + ":\n  " + frames.slice(0, 16).join("\n  ") : "";
  }
  g.edges.forEach(function (e) {
    if (e.from === e.to) { return; }
    var a = pos[e.from], b = pos[e.to];
    // Bend each edge a little so the two directions of a pair do not overlap.
    var mx = (a.x + b.x) / 2 + (b.y - a.y) * 0.12, my = (a.y + b.y) / 2 - (b.x - a.x) * 0.12;
    var dx = b.x - mx, dy = b.y - my, d = Math.sqrt(dx * dx + dy * dy) || 1;
    var ex = b.x - dx / d * 22, ey = b.y - dy / d * 22;
    var p = document.createElementNS(NS, "path");
    p.setAttribute("d", "M" + a.x + "," + a.y + " Q" + mx + "," + my + " " + ex + "," + ey);
    p.setAttribute("class", "edge" + (e.in_knot ? " knot" : ""));
    p.setAttribute("stroke-width", (1 + 7 * e.weight_ns / maxW).toFixed(2));
    p.setAttribute("marker-end", "url(#arrow)");
    p.addEventListener("mousemove", function (ev) {
      tip.textContent = g.vertices[e.from] + " waits for " + g.vertices[e.to] + ": " +
        secs(e.weight_ns) + " (" + (100 * e.share).toFixed(1) + "% of the recording)" +
        (e.in_knot ? ", in the knot" : "") +
        stack("wait stack", e.wait_stack) + stack("waker stack", e.waker_stack);
      tip.style.display = "block";
      tip.style.left = (ev.clientX + 14) + "px";
      tip.style.top = (ev.clientY + 14) + "px";
    });
    p.addEventListener("mouseleave", function () { tip.style.display = "none"; });
    svg.appendChild(p);
    edgeEls.push({ el: p, e: e });
  });
  var selected = null, vertexEls = [];
  function highlight(id) {
    selected = (selected === id) ? null : id;
    edgeEls.forEach(function (x) {
      var on = selected !== null && (x.e.from === selected || x.e.to === selected);
      x.el.classList.toggle("hl", on);
      x.el.classList.toggle("dim", selected !== null && !on);
    });
    vertexEls.forEach(function (v) {
      var near = selected === null || v.id === selected || edgeEls.some(function (x) {
        return (x.e.from === selected && x.e.to === v.id) || (x.e.to === selected && x.e.from === v.id);
      });
      v.el.classList.toggle("hl", v.id === selected);
      v.el.classList.toggle("dim", !near);
    });
  }
  ids.forEach(function (id) {
    var gr = document.createElementNS(NS, "g");
    gr.setAttribute("class", "vertex");
    gr.setAttribute("data-id", String(id));
    var c = document.createElementNS(NS, "circle");
    c.setAttribute("cx", pos[id].x); c.setAttribute("cy", pos[id].y); c.setAttribute("r", 20);
    var t = document.createElementNS(NS, "text");
    var right = pos[id].x >= cx;
    t.setAttribute("x", pos[id].x + (right ? 24 : -24)); t.setAttribute("y", pos[id].y + 4);
    t.setAttribute("text-anchor", right ? "start" : "end");
    t.textContent = g.vertices[id];
    gr.appendChild(c); gr.appendChild(t);
    gr.addEventListener("click", function () { highlight(id); });
    svg.appendChild(gr);
    vertexEls.push({ id: id, el: gr });
  });
  svg.setAttribute("data-ready", "1");
})();

// The Perfetto export: gzip-compressed, base64 in <script id="perfetto-data">. It is
// inflated only when asked for (a click), so that opening the page stays fast; the
// link then holds a blob of the trace. Without DecompressionStream the .gz file is
// offered as is (Perfetto opens it too). The link's data-ready says which: "trace" or
// "gz".
(function () {
  "use strict";
  var data = document.getElementById("perfetto-data");
  var link = document.getElementById("perfetto-link");
  if (!data || !link) { return; }
  function gzBlob() {
    var bin = atob(data.textContent.trim());
    var bytes = new Uint8Array(bin.length);
    for (var i = 0; i < bin.length; i++) { bytes[i] = bin.charCodeAt(i); }
    return new Blob([bytes]);
  }
  function prepare() {
    if (link.dataset.ready) { return Promise.resolve(link.dataset.ready); }
    var gz = gzBlob();
    if (typeof DecompressionStream === "undefined") {
      link.href = URL.createObjectURL(gz);
      link.download = link.download + ".gz";
      link.dataset.ready = "gz";
      return Promise.resolve("gz");
    }
    var out = gz.stream().pipeThrough(new DecompressionStream("gzip"));
    return new Response(out).blob().then(function (b) {
      link.href = URL.createObjectURL(b);
      link.dataset.size = String(b.size);
      link.dataset.ready = "trace";
      return "trace";
    });
  }
  link.addEventListener("click", function (ev) {
    if (link.dataset.ready) { return; }
    ev.preventDefault();
    prepare().then(function () { link.click(); });
  });
  window.causewayPreparePerfetto = prepare;
})();
