#include "tools/graph/HtmlGraphPage.h"

#include "tools/explore/Html.h"

#include <nlohmann/json.hpp>

#include <cmath>
#include <cstdio>

namespace tpu::graph {
namespace {

using Json = nlohmann::ordered_json;
using explore::escapeXml;

Json number(double v) { return std::isfinite(v) ? Json(v) : Json(nullptr); }

const char *colorName(ColorBy c) { return c == ColorBy::Cosine ? "cosine" : c == ColorBy::Time ? "time" : "none"; }

Json pageData(const GraphModel &graph, ColorBy colorBy) {
  const std::vector<NodeColors> colors = nodeColors(graph);
  std::vector<std::vector<int>> inputs(graph.nodes.size()), users(graph.nodes.size());
  for (const GraphEdge &e : graph.edges) {
    inputs[size_t(e.to)].push_back(e.from);
    users[size_t(e.from)].push_back(e.to);
  }
  Json nodes = Json::array();
  bool haveCosine = false, haveTime = false;
  for (size_t i = 0; i < graph.nodes.size(); ++i) {
    const GraphNode &n = graph.nodes[i];
    Json o;
    o["name"] = n.name;
    o["op"] = n.opType;
    o["shape"] = n.shape;
    o["dtype"] = n.dtype;
    o["group"] = n.group;
    Json attrs = Json::array();
    for (const auto &[k, v] : n.attributes) attrs.push_back(Json::array({k, v}));
    o["attrs"] = std::move(attrs);
    if (n.threshold) o["threshold"] = number(*n.threshold);
    Json sims = Json::array();
    for (const StageSimilarity &s : n.similarities)
      sims.push_back(Json{{"stages", s.stages}, {"cosine", number(s.cosine)}, {"euclidean", number(s.euclidean)},
                          {"pass", s.pass}});
    haveCosine |= !n.similarities.empty();
    o["sims"] = std::move(sims);
    if (auto m = n.minCosine()) o["min_cosine"] = number(*m);
    if (n.time) {
      haveTime = true;
      o["cycles"] = number(n.time->cycles());
      o["tiu_busy"] = number(n.time->tiuBusyCycles);
      o["gdma_busy"] = number(n.time->gdmaBusyCycles);
    }
    if (n.tiuCommands) o["tiu_cmds"] = *n.tiuCommands;
    if (n.gdmaCommands) o["gdma_cmds"] = *n.gdmaCommands;
    o["inputs"] = inputs[i];
    o["users"] = users[i];
    o["colors"] = Json{{"cosine", colors[i].cosine}, {"time", colors[i].time}};
    nodes.push_back(std::move(o));
  }
  Json j;
  j["title"] = graph.title;
  j["chip"] = graph.chip;
  j["source"] = graph.source;
  j["tolerance"] = graph.tolerance;
  j["clock_mhz"] = graph.clockMhz;
  j["total_cycles"] = graph.totalCycles;
  j["color_by"] = colorName(colorBy);
  Json modes = Json::array();
  if (haveCosine) modes.push_back("cosine");
  if (haveTime) modes.push_back("time");
  modes.push_back("none");
  j["color_modes"] = std::move(modes);
  j["nodes"] = std::move(nodes);
  return j;
}

// The SVG element alone (no XML prolog or doctype), sized by the page.
std::string inlineSvg(const std::string &svg) {
  size_t start = svg.find("<svg");
  std::string body = start == std::string::npos ? svg : svg.substr(start);
  size_t tagEnd = body.find('>');
  if (tagEnd == std::string::npos) return body;
  std::string tag = body.substr(0, tagEnd);
  for (const char *attr : {" width=\"", " height=\""}) {
    size_t a = tag.find(attr);
    if (a == std::string::npos) continue;
    size_t close = tag.find('"', a + std::char_traits<char>::length(attr));
    if (close != std::string::npos) tag.erase(a, close + 1 - a);
  }
  return tag + " id=\"graph\"" + body.substr(tagEnd);
}

constexpr const char *kStyle = R"CSS(
html,body{margin:0;height:100%;font:13px Helvetica,Arial,sans-serif;color:#222}
body{display:flex;flex-direction:column}
header{display:flex;gap:10px;align-items:center;padding:6px 10px;background:#f4f4f6;border-bottom:1px solid #ccc;flex-wrap:wrap}
header h1{font-size:15px;margin:0 10px 0 0}
#main{flex:1;display:flex;min-height:0}
#canvas{flex:1;overflow:hidden;cursor:grab;background:#fff}
#canvas.dragging{cursor:grabbing}
#graph{width:100%;height:100%;display:block}
#panel{width:340px;overflow:auto;border-left:1px solid #ccc;padding:8px 10px;background:#fafafa}
#panel h2{font-size:14px;margin:4px 0;word-break:break-all}
#panel table{border-collapse:collapse;width:100%;margin:4px 0 10px}
#panel td,#panel th{border-bottom:1px solid #e4e4e4;padding:2px 4px;text-align:left;vertical-align:top;word-break:break-all}
#panel th{width:38%;word-break:normal}
#panel .fail{color:#b2182b;font-weight:bold}
#panel a{color:#2856a3;cursor:pointer}
g.node.selected path,g.node.selected polygon,g.node.selected ellipse{stroke:#1f4fd1;stroke-width:3}
g.node.match path,g.node.match polygon,g.node.match ellipse{stroke:#e08000;stroke-width:3}
#legend span{display:inline-block;width:12px;height:12px;border:1px solid #999;vertical-align:middle;margin:0 3px 0 8px}
#status{color:#555}
)CSS";

constexpr const char *kScript = R"JS(
(function () {
  'use strict';
  const data = JSON.parse(document.getElementById('graph-data').textContent);
  const svg = document.getElementById('graph');
  const canvas = document.getElementById('canvas');
  const panel = document.getElementById('panel');
  const status = document.getElementById('status');
  const groups = Array.from(svg.querySelectorAll('g.node'));
  const byIndex = new Map();
  groups.forEach(g => byIndex.set(Number(g.id.slice(1)), g));
  const full = svg.viewBox.baseVal;
  const home = {x: full.x, y: full.y, w: full.width, h: full.height};
  function aspect() { const r = canvas.getBoundingClientRect(); return r.width > 0 && r.height > 0 ? r.height / r.width : 0.75; }
  // The start view: the graph's full width from its top (a tall graph stays
  // readable), centred when the whole graph fits.
  function fitWidth() {
    const h = home.w * aspect();
    return {x: home.x, y: h >= home.h ? home.y - (h - home.h) / 2 : home.y, w: home.w, h: h};
  }
  let view = fitWidth();
  function apply() { svg.setAttribute('viewBox', view.x + ' ' + view.y + ' ' + view.w + ' ' + view.h); }
  function toSvg(cx, cy) {
    const p = svg.createSVGPoint();
    p.x = cx; p.y = cy;
    return p.matrixTransform(svg.getScreenCTM().inverse());
  }
  canvas.addEventListener('wheel', e => {
    e.preventDefault();
    const k = Math.exp(e.deltaY * 0.0015), p = toSvg(e.clientX, e.clientY);
    view = {x: p.x - (p.x - view.x) * k, y: p.y - (p.y - view.y) * k, w: view.w * k, h: view.h * k};
    apply();
  }, {passive: false});
  let drag = null;
  canvas.addEventListener('mousedown', e => { drag = {x: e.clientX, y: e.clientY, moved: false}; });
  window.addEventListener('mousemove', e => {
    if (!drag) return;
    const a = toSvg(drag.x, drag.y), b = toSvg(e.clientX, e.clientY);
    if (Math.abs(e.clientX - drag.x) + Math.abs(e.clientY - drag.y) > 2) { drag.moved = true; canvas.classList.add('dragging'); }
    view.x -= b.x - a.x; view.y -= b.y - a.y;
    drag.x = e.clientX; drag.y = e.clientY;
    apply();
  });
  window.addEventListener('mouseup', () => { canvas.classList.remove('dragging'); setTimeout(() => { drag = null; }, 0); });

  function fmt(v, d) { return v === null || v === undefined ? 'n/a' : Number(v).toFixed(d); }
  function esc(s) { return String(s).replace(/[&<>"']/g, c => ({'&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;'})[c]); }
  function row(k, v) { return '<tr><th>' + esc(k) + '</th><td>' + v + '</td></tr>'; }
  function links(list) {
    return list.length ? list.map(i => '<a data-node="' + i + '">' + esc(data.nodes[i].name) + '</a>').join(', ') : '-';
  }
  let selected = -1;
  function select(i) {
    if (selected >= 0 && byIndex.has(selected)) byIndex.get(selected).classList.remove('selected');
    selected = i;
    const n = data.nodes[i];
    if (byIndex.has(i)) byIndex.get(i).classList.add('selected');
    let h = '<h2 id="panel-name">' + esc(n.name) + '</h2><table id="panel-summary">';
    h += row('op', esc(n.op)) + row('output', esc(n.shape + ' ' + n.dtype));
    if (n.group >= 0) h += row('layer group', n.group);
    if ('threshold' in n) h += row('calibration threshold', fmt(n.threshold, 6));
    n.sims.forEach(s => {
      const cls = s.cosine < data.tolerance ? ' class="fail"' : '';
      h += row('cosine ' + s.stages, '<span' + cls + '>' + fmt(s.cosine, 6) + '</span> (euclid ' + fmt(s.euclidean, 4) + ')');
    });
    if ('cycles' in n) {
      const us = data.clock_mhz > 0 ? ' = ' + fmt(n.cycles / data.clock_mhz, 3) + ' us' : '';
      const share = data.total_cycles > 0 ? ' (' + fmt(100 * n.cycles / data.total_cycles, 1) + ' % of the run)' : '';
      h += row('cycles', fmt(n.cycles, 0) + us + share);
      h += row('TIU / GDMA busy', fmt(n.tiu_busy, 0) + ' / ' + fmt(n.gdma_busy, 0) + ' cycles');
    }
    if ('tiu_cmds' in n || 'gdma_cmds' in n) h += row('TIU / GDMA commands', (n.tiu_cmds || 0) + ' / ' + (n.gdma_cmds || 0));
    h += row('inputs', links(n.inputs)) + row('users', links(n.users)) + '</table>';
    if (n.attrs.length) {
      h += '<table id="panel-attrs"><tr><th colspan="2">attributes</th></tr>';
      n.attrs.forEach(a => { h += row(a[0], esc(a[1])); });
      h += '</table>';
    }
    panel.innerHTML = h;
    panel.querySelectorAll('a[data-node]').forEach(a => a.addEventListener('click', () => focus(Number(a.dataset.node))));
  }
  function focus(i) {
    const g = byIndex.get(i);
    if (g) {
      const b = g.getBBox(), p = svg.createSVGPoint();
      p.x = b.x + b.width / 2; p.y = b.y + b.height / 2;
      const s = p.matrixTransform(g.getScreenCTM()), c = toSvg(s.x, s.y), cx = c.x, cy = c.y;
      const w = Math.min(home.w, Math.max(b.width * 6, 300)), h = w * aspect();
      view = {x: cx - w / 2, y: cy - h / 2, w: w, h: h};
      apply();
    }
    select(i);
  }
  svg.addEventListener('click', e => {
    if (drag && drag.moved) return;
    const g = e.target.closest('g.node');
    if (g) select(Number(g.id.slice(1)));
  });

  const search = document.getElementById('search');
  function find(text) {
    const t = text.trim().toLowerCase();
    if (!t) return -1;
    let i = data.nodes.findIndex(n => n.name.toLowerCase() === t);
    if (i < 0) i = data.nodes.findIndex(n => n.name.toLowerCase().includes(t));
    return i;
  }
  function runSearch() {
    groups.forEach(g => g.classList.remove('match'));
    const i = find(search.value);
    if (i < 0) { status.textContent = 'no tensor matches "' + search.value + '"'; return; }
    status.textContent = '';
    if (byIndex.has(i)) byIndex.get(i).classList.add('match');
    focus(i);
  }
  search.addEventListener('keydown', e => { if (e.key === 'Enter') runSearch(); });
  document.getElementById('search-go').addEventListener('click', runSearch);

  const firstBtn = document.getElementById('first-below');
  function firstBelow() {
    const i = data.nodes.findIndex(n => 'min_cosine' in n && !(n.min_cosine >= data.tolerance));
    if (i < 0) { status.textContent = 'every measured tensor has cosine >= ' + data.tolerance; return -1; }
    status.textContent = 'first layer below ' + data.tolerance + ': ' + data.nodes[i].name;
    focus(i);
    return i;
  }
  firstBtn.disabled = !data.color_modes.includes('cosine');
  firstBtn.addEventListener('click', firstBelow);

  const colorSel = document.getElementById('color-by');
  const legend = document.getElementById('legend');
  const legends = {
    cosine: [['#a6dba0', 'cosine >= ' + data.tolerance], ['#fee08b', 'just below'], ['#d73027', '10x further'], ['#e4e4e4', 'not compared']],
    time: [['#fff7ec', 'fast'], ['#d94801', 'slowest layer'], ['#e4e4e4', 'no time']],
    none: []
  };
  data.color_modes.forEach(m => { const o = document.createElement('option'); o.value = o.textContent = m; colorSel.appendChild(o); });
  function recolor(mode) {
    groups.forEach(g => {
      const shape = g.querySelector('path, polygon, ellipse');
      const n = data.nodes[Number(g.id.slice(1))];
      if (shape && n) shape.setAttribute('fill', mode === 'none' ? '#ffffff' : n.colors[mode]);
    });
    legend.innerHTML = legends[mode].map(l => '<span style="background:' + l[0] + '"></span>' + esc(l[1])).join('');
  }
  colorSel.value = data.color_by;
  colorSel.addEventListener('change', () => recolor(colorSel.value));
  recolor(data.color_by);
  document.getElementById('reset').addEventListener('click', () => { view = fitWidth(); apply(); });
  document.getElementById('whole').addEventListener('click', () => { view = Object.assign({}, home); apply(); });
  apply();

  window.graphPage = {select: select, focus: focus, firstBelow: firstBelow, find: find, recolor: recolor,
                      nodeCount: () => groups.length};
  decodeURIComponent(location.hash.slice(1)).split('&').forEach(action => {
    if (action.startsWith('select=')) { const i = find(action.slice(7)); if (i >= 0) select(i); }
    if (action.startsWith('color=') && data.color_modes.includes(action.slice(6))) {
      colorSel.value = action.slice(6);
      recolor(colorSel.value);
    }
    if (action === 'first-below') firstBelow();
  });
  document.body.dataset.nodes = String(groups.length);
  document.body.dataset.ready = '1';
})();
)JS";

} // namespace

std::string renderGraphHtml(const GraphModel &graph, const std::string &svg, ColorBy colorBy) {
  std::string json = pageData(graph, colorBy).dump();
  // Keep "</script>" inside a string from closing the data block.
  for (size_t p = json.find("</"); p != std::string::npos; p = json.find("</", p + 3)) json.replace(p, 2, "<\\/");
  char toleranceText[32];
  std::snprintf(toleranceText, sizeof toleranceText, "%.6g", graph.tolerance);
  std::string html;
  html += "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>";
  html += escapeXml(graph.title) + " graph</title><style>" + kStyle + "</style></head>\n<body>\n<header><h1>";
  html += escapeXml(graph.title) + "</h1><span>" + std::to_string(graph.nodes.size()) + " nodes, " +
          std::to_string(graph.edges.size()) + " edges</span>";
  if (!graph.chip.empty()) {
    char clock[32];
    std::snprintf(clock, sizeof clock, "%.0f", graph.clockMhz > 0 ? graph.clockMhz : graph.chipClockMhz);
    html += "<span id=\"chip\">chip " + escapeXml(graph.chip) + ", " + clock + " MHz" +
            (graph.clockMhz > 0 ? " (the run's)" : " (its preset)") + "</span>";
  }
  if (!graph.note.empty()) html += "<span id=\"note\">" + escapeXml(graph.note) + "</span>";
  html += "<input id=\"search\" type=\"search\" placeholder=\"find a tensor\" list=\"names\">"
          "<button id=\"search-go\">find</button>"
          "<button id=\"first-below\">first layer below " + std::string(toleranceText) + "</button>"
          "<label>color by <select id=\"color-by\"></select></label><span id=\"legend\"></span>"
          "<button id=\"reset\">fit width</button><button id=\"whole\">whole graph</button><span id=\"status\"></span></header>\n<datalist id=\"names\">";
  for (const GraphNode &n : graph.nodes) html += "<option value=\"" + escapeXml(n.name) + "\">";
  html += "</datalist>\n<div id=\"main\"><div id=\"canvas\">" + inlineSvg(svg) +
          "</div><div id=\"panel\"><p>Click a node for its details; drag to pan, wheel to zoom.</p></div></div>\n";
  html += "<script type=\"application/json\" id=\"graph-data\">" + json + "</script>\n<script>";
  html += kScript;
  html += "</script>\n</body></html>\n";
  return html;
}

} // namespace tpu::graph
