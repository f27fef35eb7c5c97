// The run page (HtmlReport): DATA.report is the JSON report (docs/report.md)
// with its ops as columns, DATA.timeline device 0's spans (times in ps).
const R = DATA.report;
const OPS = fromColumns(R.ops);
const BOUNDS = Object.keys(R.time_by_bound);
const BOUND_COLOURS = {mxu: '#2f6db5', vpu: '#3a9a4a', xlu: '#8e5ec4', memory: '#e08a1e',
                       ici: '#c0392b', host: '#7a5a3a', overhead: '#6b7280', free: '#b0b7c3'};
const boundColour = b => BOUND_COLOURS[b] || '#888';

function overview() {
  const s = section('Overview', 'overview');
  const chip = R.chip;
  const where = R.slice ? R.slice.name + ' (' + R.slice.chips + ' chips, ' + R.slice.topology +
                              ')' : chip.name;
  const cards = el('div', {class: 'cards'},
      card('chip', chip.name, chip.description),
      card(R.slice ? 'slice' : 'device', where),
      card('step time', fmtSeconds(R.total_seconds), R.ops.rows.length + ' ops'),
      card('MFU', fmtPct(R.mfu), fmtRate(R.achieved_flops_per_s, 'FLOP') + ' of ' +
           fmtRate(R.peak_flops_per_s, 'FLOP')),
      card('HBM bandwidth', fmtPct(R.hbm_bandwidth_utilization), fmtBytes(R.hbm_bytes) + ' moved'),
      card('exposed communication', fmtSeconds(R.exposed_communication_seconds),
           fmtPct(R.total_seconds > 0 ? R.exposed_communication_seconds / R.total_seconds : 0) +
               ' of the step'));
  if (R.slice) cards.append(card('MFU over the slice', fmtPct(R.slice.mfu),
                                 'slowest device ' + fmtSeconds(R.slice.seconds)));
  s.append(cards);
  const byUnit = Object.entries(R.time_by_unit);
  const byBound = Object.entries(R.time_by_bound).filter(e => e[1] > 0);
  s.append(el('div', {class: 'row'},
      el('div', {}, el('h3', {}, 'busy time by unit'), barChart(byUnit, fmtSeconds)),
      el('div', {}, el('h3', {}, 'time by bound'), barChart(byBound, fmtSeconds))));
  const notes = (R.notes || []).concat(R.unpriced_ops && R.unpriced_ops.length
      ? ['not priced: ' + R.unpriced_ops.join(', ')] : []);
  for (const n of notes) s.append(el('p', {class: 'note'}, n));
}

function opTable() {
  const s = section('Ops', 'ops');
  const fusions = new Map((R.fusions || []).map(f => [f.value, f]));
  const intensity = o => (o.hbm_bytes > 0 ? o.flops / o.hbm_bytes : 0);
  const columns = [
    {key: 'name', label: 'op'},
    {key: 'op', label: 'kind'},
    {key: 'seconds', label: 'time', num: true, fmt: fmtSeconds},
    {key: 'share', label: 'share', num: true, fmt: fmtPct,
     get: o => (R.total_seconds > 0 ? o.seconds / R.total_seconds : 0)},
    {key: 'bound', label: 'bound'},
    {key: 'count', label: 'runs', num: true},
    {key: 'flops', label: 'FLOPs', num: true, fmt: v => fmtAmount(v, 'FLOP')},
    {key: 'hbm_bytes', label: 'HBM bytes', num: true, fmt: fmtBytes},
    {key: 'intensity', label: 'FLOP/byte', num: true, get: intensity, fmt: v => v.toFixed(1)},
    {key: 'location', label: 'source'},
  ];
  const expand = o => {
    const f = fusions.get(o.name);
    if (!f) return null;
    return f.name + ' (' + f.kind + '): ' + f.ops.join(', ') +
           (f.spill_bytes > 0 ? '; ' + fmtBytes(f.spill_bytes) + ' spilled beyond VMEM' : '');
  };
  s.append(el('p', {class: 'note'}, 'Each op of the program, its runs summed; click a heading ' +
                                        'to sort, \u25b8 to see a fused kernel\u2019s ops.'));
  s.append(sortableTable(columns, OPS, {limit: 500, sortKey: 'seconds', expand: expand,
                                        id: 'op-table'}));
}

// Each op at its arithmetic intensity (FLOPs per HBM byte) and achieved
// FLOP/s, under the chip's compute roof and its HBM roof. Ops that do no
// FLOPs or move no HBM bytes sit on the chart's edge, faded.
function roofline() {
  const s = section('Roofline', 'roofline');
  const peak = R.chip.peak_bf16_flops_per_s, bw = R.chip.hbm_bytes_per_s;
  const W = 900, H = 460, L = 100, B = 40, T = 14, Rm = 20;
  const pts = OPS.map(o => ({o: o, x: o.hbm_bytes > 0 ? o.flops / o.hbm_bytes : 0,
                             y: o.seconds > 0 ? o.flops / o.seconds : 0}));
  const xs = pts.map(p => p.x).filter(v => v > 0), ys = pts.map(p => p.y).filter(v => v > 0);
  const ridge = peak / bw;
  const xlo = 10 ** Math.floor(Math.log10(xs.reduce((a, v) => Math.min(a, v), ridge / 100)));
  const xhi = 10 ** Math.ceil(Math.log10(xs.reduce((a, v) => Math.max(a, v), ridge * 100)));
  const yhi = 10 ** Math.ceil(Math.log10(ys.reduce((a, v) => Math.max(a, v), peak * 2)));
  const ylo = 10 ** Math.floor(Math.log10(ys.reduce((a, v) => Math.min(a, v), peak / 1e6)));
  const X = v => L + (W - L - Rm) * (Math.log10(v) - Math.log10(xlo)) / Math.log10(xhi / xlo);
  const Y = v => T + (H - T - B) * (1 - (Math.log10(v) - Math.log10(ylo)) / Math.log10(yhi / ylo));
  const c = svg('svg', {width: W, height: H, id: 'roofline-chart'});
  for (const d of decades(xlo, xhi)) {
    svg('line', {x1: X(d), x2: X(d), y1: T, y2: H - B, class: 'grid'}, c);
    svgText(c, X(d), H - B + 16, d >= 1 ? String(d) : d.toExponential(0), {'text-anchor': 'middle'});
  }
  for (const d of decades(ylo, yhi)) {
    svg('line', {x1: L, x2: W - Rm, y1: Y(d), y2: Y(d), class: 'grid'}, c);
    svgText(c, L - 6, Y(d) + 4, fmtRate(d, 'FLOP'), {'text-anchor': 'end'});
  }
  svgText(c, (L + W) / 2, H - 6, 'arithmetic intensity (FLOPs per HBM byte)',
          {'text-anchor': 'middle'});
  const xr = Math.max(xlo, ylo / bw);
  hover(svg('path', {class: 'roof', d: 'M' + X(xr) + ',' + Y(xr * bw) + ' L' + X(ridge) + ',' +
                     Y(peak) + ' L' + X(xhi) + ',' + Y(peak)}, c),
        'roofs: ' + fmtRate(peak, 'FLOP') + ' compute, ' + fmtRate(bw, 'B') + ' HBM');
  svgText(c, X(xhi) - 4, Y(peak) - 6, 'peak ' + fmtRate(peak, 'FLOP'), {'text-anchor': 'end'});
  svgText(c, X(ridge) - 8, Y(peak) + 16, 'HBM ' + fmtRate(bw, 'B'), {'text-anchor': 'end'});
  const g = svg('g', {id: 'roofline-points'}, c);
  for (const p of pts) {
    const edge = !(p.x > 0 && p.y > 0);
    const pt = svg('circle', {cx: X(p.x > 0 ? p.x : xlo), cy: Y(p.y > 0 ? p.y : ylo),
                              r: 4, class: 'point' + (edge ? ' edge' : ''),
                              fill: boundColour(p.o.bound), 'data-op': p.o.name}, g);
    hover(pt, p.o.name + ' ' + p.o.op + ' at ' + p.o.location + '\n' + fmtSeconds(p.o.seconds) +
                  ', ' + p.o.bound + ' bound\n' + fmtAmount(p.o.flops, 'FLOP') + ', ' +
                  fmtBytes(p.o.hbm_bytes) + ' of HBM\n' + p.x.toFixed(2) + ' FLOP/byte, ' +
                  fmtRate(p.y, 'FLOP'));
  }
  s.append(c, legend(BOUNDS.map(b => [b, boundColour(b)])),
           el('p', {class: 'note'}, OPS.length + ' ops; hover a point for its op. Ops with no ' +
                                        'FLOPs or no HBM traffic sit faded on the edges.'));
}

// Live HBM bytes over the entry's program order (the memory section), the
// peak and its largest buffers, and the chip's capacity.
function hbmTimeline() {
  const s = section('HBM over the program', 'hbm');
  const m = R.memory;
  if (!m || !m.live_bytes || m.live_bytes.length === 0) {
    s.append(el('p', {class: 'note'}, 'No memory plan: buffer assignment did not run.'));
    return;
  }
  const W = 900, H = 320, L = 100, B = 34, T = 20, Rm = 20, n = m.live_bytes.length;
  const onScale = m.capacity_bytes <= 4 * m.peak_bytes;
  const top = Math.max(1, onScale ? Math.max(m.capacity_bytes, m.peak_bytes) : m.peak_bytes) * 1.1;
  const X = i => L + (W - L - Rm) * (n > 1 ? i / (n - 1) : 0.5);
  const Y = v => T + (H - T - B) * (1 - v / top);
  const c = svg('svg', {width: W, height: H, id: 'hbm-chart'});
  for (let k = 0; k <= 4; ++k) {
    const v = top * k / 4;
    svg('line', {x1: L, x2: W - Rm, y1: Y(v), y2: Y(v), class: 'grid'}, c);
    svgText(c, L - 6, Y(v) + 4, fmtBinary(v), {'text-anchor': 'end'});
  }
  let d = 'M' + X(0) + ',' + Y(0);
  m.live_bytes.forEach((v, i) => { d += ' L' + X(i) + ',' + Y(v); });
  d += ' L' + X(n - 1) + ',' + Y(0) + ' Z';
  hover(svg('path', {class: 'live', d: d}, c), 'bytes live over the program');
  const capY = onScale ? Y(m.capacity_bytes) : T - 8;
  svg('line', {x1: L, x2: W - Rm, y1: capY, y2: capY, class: 'capacity'}, c);
  svgText(c, W - Rm, capY - 4, 'capacity ' + fmtBinary(m.capacity_bytes) +
                                   (onScale ? '' : ' (above the chart)'), {'text-anchor': 'end'});
  const px = X(m.peak_index), py = Y(m.peak_bytes);
  svg('line', {x1: px, x2: px, y1: py, y2: H - B, class: 'capacity'}, c);
  const marker = svg('circle', {cx: px, cy: py, r: 5, class: 'peak', id: 'hbm-peak',
                                'data-bytes': m.peak_bytes}, c);
  hover(marker, 'peak ' + fmtBinary(m.peak_bytes) + ' at ' + m.peak_at);
  svgText(c, px + 8, py - 6, 'peak ' + fmtBinary(m.peak_bytes), {id: 'hbm-peak-label'});
  svgText(c, (L + W) / 2, H - 8, 'program order (ops of @' + m.function + ')',
          {'text-anchor': 'middle'});
  const rows = m.live_at_peak.map(b => el('tr', {}, el('td', {class: 'num'}, fmtBinary(b.bytes)),
      el('td', {}, b.value), el('td', {}, b.type), el('td', {}, b.kind), el('td', {}, b.op)));
  s.append(c, el('p', {}, 'Peak ' + fmtBinary(m.peak_bytes) + ' of ' +
                             fmtBinary(m.capacity_bytes) + ' (holes included; ' +
                             fmtBinary(m.max_live_bytes) + ' live at most) at ' + m.peak_at +
                             '. Largest buffers live there:'),
           el('table', {id: 'peak-buffers'}, ...rows));
}

// The units' busy spans on a time axis: drag to pan, the wheel or the
// buttons to zoom.
function unitTimeline() {
  const s = section('Timeline of the units', 'timeline');
  const tl = DATA.timeline, spans = tl.spans.map(([k, a, d, op]) => [k, a * 1e-12, d * 1e-12, op]);
  const used = [...new Set(spans.map(sp => sp[0]))].sort((a, b) => a - b);
  const end = spans.reduce((a, sp) => Math.max(a, sp[1] + sp[2]), Math.max(R.total_seconds, 1e-12));
  const W = 1200, L = 110, rowH = 24, H = used.length * rowH + 30;
  let t0 = 0, t1 = end;
  const c = svg('svg', {width: W, height: H, id: 'timeline-chart'});
  const g = svg('g', {}, c);
  function draw() {
    g.replaceChildren();
    const X = t => L + (W - L - 10) * (t - t0) / (t1 - t0);
    used.forEach((track, row) => {
      svgText(g, 0, row * rowH + 16, tl.tracks[track]);
    });
    for (const [track, start, dur, op] of spans) {
      if (start > t1 || start + dur < t0) continue;
      const row = used.indexOf(track);
      const x = Math.max(L, X(start)), w = Math.max(0.5, Math.min(W - 10, X(start + dur)) - x);
      const o = OPS[op];
      const r = svg('rect', {x: x, y: row * rowH + 3, width: w, height: rowH - 6,
                             fill: o ? boundColour(o.bound) : '#888'}, g);
      if (w > 2 && o) hover(r, o.name + ' ' + o.op + ': ' + fmtSeconds(dur) + ' from ' +
                                 fmtSeconds(start));
    }
    for (let k = 0; k <= 6; ++k) {
      const t = t0 + (t1 - t0) * k / 6;
      svgText(g, X(t), H - 8, fmtSeconds(t), {'text-anchor': 'middle'});
    }
  }
  function zoom(f, at) {
    const mid = at === undefined ? (t0 + t1) / 2 : at;
    const span = Math.min(end, Math.max(end * 1e-6, (t1 - t0) * f));
    t0 = Math.max(0, mid - (mid - t0) * span / (t1 - t0));
    t1 = Math.min(end, t0 + span);
    draw();
  }
  c.addEventListener('wheel', e => {
    e.preventDefault();
    const x = e.offsetX;
    zoom(e.deltaY < 0 ? 0.8 : 1.25, t0 + (t1 - t0) * Math.max(0, x - L) / (W - L - 10));
  });
  let dragX = null;
  c.addEventListener('mousedown', e => { dragX = e.offsetX; });
  window.addEventListener('mouseup', () => { dragX = null; });
  c.addEventListener('mousemove', e => {
    if (dragX === null) return;
    const dt = (dragX - e.offsetX) * (t1 - t0) / (W - L - 10);
    dragX = e.offsetX;
    const span = t1 - t0;
    t0 = Math.min(Math.max(0, t0 + dt), end - span);
    t1 = t0 + span;
    draw();
  });
  const button = (label, f) => {
    const b = el('button', {}, label);
    b.addEventListener('click', f);
    return b;
  };
  s.append(el('div', {class: 'toolbar'}, button('zoom in', () => zoom(0.5)),
                 button('zoom out', () => zoom(2)),
                 button('reset', () => { t0 = 0; t1 = end; draw(); })), c);
  if (tl.total_spans > spans.length) {
    s.append(el('p', {class: 'note'}, 'The first ' + spans.length + ' of ' + tl.total_spans +
                                          ' spans are drawn.'));
  }
  draw();
}

// The slice's links: one cell per chip and direction of each torus axis,
// coloured by its busy share of the step.
function sliceLinks() {
  if (!R.slice) return;
  const sl = R.slice;
  const s = section('Slice links', 'links');
  s.append(el('p', {}, sl.name + ': ' + sl.chips + ' chips (' + sl.topology + '), ' +
                           sl.ici_links + ' ICI links; collectives moved ' +
                           fmtBytes(sl.ici_bytes) + ' over them (' +
                           fmtPct(sl.ici_link_utilization) + ' busy)' +
                           (sl.dcn_bytes > 0 ? ' and ' + fmtBytes(sl.dcn_bytes) + ' over DCN' : '')));
  if (sl.links.length === 0) {
    s.append(el('p', {class: 'note'}, 'No link carried bytes.'));
    return;
  }
  const chipKey = l => l.slice + ':' + l.chip.join(',');
  const chips = new Map(), rows = [...new Set(sl.links.map(l => l.axis + l.direction))].sort();
  for (const l of sl.links) if (!chips.has(chipKey(l))) chips.set(chipKey(l), chips.size);
  const most = sl.links.reduce((a, l) => Math.max(a, l.utilization), 1e-12);
  const cell = Math.max(3, Math.min(16, Math.floor(1100 / chips.size)));
  const L = 50, c = svg('svg', {width: Math.max(700, L + chips.size * cell + 10),
                                height: rows.length * (cell + 4) + 30, id: 'link-heatmap'});
  rows.forEach((r, i) => svgText(c, 0, i * (cell + 4) + cell - 2, 'ici ' + r));
  for (const l of sl.links) {
    const x = L + chips.get(chipKey(l)) * cell, y = rows.indexOf(l.axis + l.direction) * (cell + 4);
    const a = 0.15 + 0.85 * l.utilization / most;
    hover(svg('rect', {x: x, y: y, width: cell - 1, height: cell, fill: '#c0392b',
                       'fill-opacity': a.toFixed(3), class: 'link'}, c),
          'chip ' + l.chip.join(',') + (l.slice ? ' of slice ' + l.slice : '') + ', ' + l.axis +
              l.direction + ': ' + fmtBytes(l.bytes) + ', ' + fmtPct(l.utilization) + ' busy');
  }
  svgText(c, L, rows.length * (cell + 4) + 18, 'chips with traffic, in slice order; darker: ' +
                                                 'busier (most ' +
                                                 fmtPct(most) + ')');
  s.append(c);
}

PAGE.append(el('p', {class: 'note'}, 'tpusim report (schema ' + R.schema + '): the numbers of ' +
                                         '--report-json, drawn.'));
overview();
opTable();
roofline();
hbmTimeline();
unitTimeline();
sliceLinks();
