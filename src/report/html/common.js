// What both pages share: DOM and SVG builders, units, charts and tables.
// Text goes in as text nodes only (never as markup): names come from users'
// files.
'use strict';
const DATA = JSON.parse(document.getElementById('data').textContent);
const SVG_NS = document.getElementById('svg-ns').namespaceURI;
const PAGE = document.getElementById('page');

function el(tag, attrs, ...children) {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) e.setAttribute(k, v);
  for (const c of children) e.append(c instanceof Node ? c : String(c));
  return e;
}

function svg(tag, attrs, parent) {
  const e = document.createElementNS(SVG_NS, tag);
  for (const [k, v] of Object.entries(attrs || {})) e.setAttribute(k, v);
  if (parent) parent.appendChild(e);
  return e;
}

// An SVG <title>: the browser shows it on hover.
function hover(node, text) {
  svg('title', {}, node).textContent = text;
  return node;
}

function svgText(parent, x, y, text, attrs) {
  const t = svg('text', Object.assign({x: x, y: y}, attrs || {}), parent);
  t.textContent = text;
  return t;
}

// The units of src/report/summary.cc's Format* functions, alike.
function fmtSeconds(s) {
  if (!isFinite(s)) return '-';
  if (s === 0) return '0 s';
  if (s < 1e-6) return (s * 1e9).toFixed(0) + ' ns';
  if (s < 1e-3) return (s * 1e6).toFixed(2) + ' us';
  if (s < 1) return (s * 1e3).toFixed(2) + ' ms';
  return s.toFixed(3) + ' s';
}
function scaled(v, unit) {
  if (!isFinite(v)) return '-';
  const prefix = ['', 'K', 'M', 'G', 'T', 'P', 'E'];
  let p = 0;
  while (Math.abs(v) >= 1000 && p < 6) { v /= 1000; ++p; }
  return v.toFixed(p === 0 ? 0 : 2) + ' ' + prefix[p] + unit;
}
function fmtBytes(b) { return scaled(b, 'B'); }
// As FormatBinaryBytes (base/bytes.h): what the memory section prints.
function fmtBinary(b) {
  const units = ['B', 'KiB', 'MiB', 'GiB', 'TiB', 'PiB', 'EiB'];
  let u = 0;
  while (Math.abs(b) >= 1024 && u < 6) { b /= 1024; ++u; }
  const mag = Math.abs(b);
  let s = b.toFixed(u === 0 || mag >= 100 ? 0 : mag >= 10 ? 1 : 2);
  if (s.includes('.')) s = s.replace(/0+$/, '').replace(/\.$/, '');
  return s + ' ' + units[u];
}
function fmtRate(v, unit) { return scaled(v, unit + '/s'); }
function fmtAmount(v, unit) { return scaled(v, unit); }
function fmtPct(f) { return isFinite(f) ? (100 * f).toFixed(1) + '%' : '-'; }

// Rows of an html::Columns table as objects.
function fromColumns(t) {
  if (!t || !t.columns) return [];
  return t.rows.map(r => Object.fromEntries(t.columns.map((c, i) => [c, r[i]])));
}

function section(title, id) {
  const s = el('section', {id: id});
  s.append(el('h2', {}, title));
  PAGE.append(s);
  return s;
}

function card(label, value, note) {
  return el('div', {class: 'card'}, el('div', {class: 'label'}, label),
            el('div', {class: 'value'}, value), note ? el('div', {class: 'note'}, note) : '');
}

const PALETTE = ['#2f6db5', '#e08a1e', '#3a9a4a', '#c0392b', '#8e5ec4', '#7a5a3a', '#d16ba5',
                 '#6b7280', '#17a2b8', '#b5a92f'];
function colour(i) { return PALETTE[i % PALETTE.length]; }

function legend(entries) {
  const l = el('div', {class: 'legend'});
  for (const [name, c] of entries) {
    const i = el('i');
    i.style.background = c;
    l.append(el('span', {}, i, name));
  }
  return l;
}

// Horizontal bars of [label, value] pairs, each labelled fmt(value) and its
// share of the sum.
function barChart(entries, fmt, width) {
  const total = entries.reduce((a, e) => a + e[1], 0);
  const max = Math.max(...entries.map(e => e[1]), 1e-300);
  const w = width || 520, rowH = 22, labelW = 90, barW = w - labelW - 150;
  const s = svg('svg', {width: w, height: entries.length * rowH + 6, class: 'bars'});
  entries.forEach(([label, v], i) => {
    const y = i * rowH + 3;
    svgText(s, 0, y + 14, label);
    const r = svg('rect', {x: labelW, y: y + 3, height: rowH - 8, fill: colour(i),
                           width: Math.max(v > 0 ? 1 : 0, barW * v / max)}, s);
    hover(r, label + ': ' + fmt(v));
    svgText(s, labelW + barW * v / max + 6, y + 14,
            fmt(v) + (total > 0 ? '  ' + fmtPct(v / total) : ''));
  });
  return s;
}

// Log axis ticks: the powers of ten in [lo, hi].
function decades(lo, hi) {
  const out = [];
  for (let e = Math.ceil(Math.log10(lo)); e <= Math.floor(Math.log10(hi)); ++e) out.push(10 ** e);
  return out;
}

// A sortable table: columns are {key, label, num, fmt, get}; `expand(row)`
// gives a row's hidden detail lines, or null. Shows `limit` rows at first.
function sortableTable(columns, rows, opts) {
  const o = opts || {};
  let shown = o.limit || rows.length, sortKey = o.sortKey, desc = true;
  const value = (c, r) => (c.get ? c.get(r) : r[c.key]);
  const table = el('table', {class: 'sortable', id: o.id || ''});
  const head = el('tr');
  const body = el('tbody');
  const more = el('p', {class: 'note'});
  for (const c of columns) {
    const th = el('th', {class: 'sortable' + (c.num ? ' num' : '')}, c.label);
    th.addEventListener('click', () => {
      desc = sortKey === c.key ? !desc : !!c.num;
      sortKey = c.key;
      draw();
    });
    head.append(th);
  }
  table.append(el('thead', {}, head), body);
  function draw() {
    const col = columns.find(c => c.key === sortKey);
    const sorted = rows.slice();
    if (col) {
      sorted.sort((a, b) => {
        const x = value(col, a), y = value(col, b);
        const r = typeof x === 'number' && typeof y === 'number' ? x - y
                                                                   : String(x).localeCompare(String(y));
        return desc ? -r : r;
      });
    }
    body.replaceChildren();
    for (const r of sorted.slice(0, shown)) {
      const tr = el('tr', {class: 'data'});
      const detail = o.expand ? o.expand(r) : null;
      columns.forEach((c, i) => {
        const v = value(c, r);
        const td = el('td', {class: c.num ? 'num' : ''});
        if (i === 0 && detail) {
          const b = el('button', {class: 'expand', title: 'the ops inside'}, '\u25b8');
          b.addEventListener('click', () => {
            const open = b.textContent === '\u25be';
            b.textContent = open ? '\u25b8' : '\u25be';
            if (open) {
              tr.nextSibling.remove();
            } else {
              tr.after(el('tr', {class: 'sub'}, el('td', {colspan: columns.length}, detail)));
            }
          });
          td.append(b);
        }
        td.append(c.fmt ? c.fmt(v, r) : String(v));
        tr.append(td);
      });
      body.append(tr);
    }
    more.replaceChildren();
    if (shown < rows.length) {
      const b = el('button', {}, 'show all ' + rows.length);
      b.addEventListener('click', () => { shown = rows.length; draw(); });
      more.append('the first ' + shown + ' of ' + rows.length + ' rows in this order ', b);
    }
  }
  draw();
  return el('div', {}, el('div', {class: 'scroll'}, table), more);
}
