// The plan page (planner::PlanHtml): DATA.plan is `tpusim plan --json`'s
// document (docs/planner.md), DATA.best the index of the best candidate or
// null, DATA.objective "time" or "cost".
const P = DATA.plan;
const CANDIDATES = P.candidates;
const SLICES = [...new Set(CANDIDATES.map(c => c.slice))];
const sliceColour = s => colour(SLICES.indexOf(s));
const meshOf = c => c.mesh + ' ' + c.remat + ' remat, ' + c.microbatches + ' microbatch' +
                    (c.microbatches === 1 ? '' : 'es');

function header() {
  const fits = CANDIDATES.filter(c => c.fits).length;
  const s = section('Request', 'request');
  s.append(el('p', {}, P.model + ', global batch ' + P.global_batch + ' x ' + P.seq + ' tokens, ' +
                           P.dtype + ' activations, ' + P.param_dtype + ' weights' +
                           (P.fp8 ? ', fp8 matmuls' : '') + (P.int8 ? ', int8 matmuls' : '') +
                           '; ' + P.pricing + ' prices' + (P.region ? ' in ' + P.region : '')));
  const best = DATA.best === null ? null : CANDIDATES[DATA.best];
  s.append(el('div', {class: 'cards'},
      card('candidates', String(CANDIDATES.length), fits + ' fit, ' +
           (CANDIDATES.length - fits) + ' rejected'),
      card('slices', SLICES.join(', ')),
      best ? card(DATA.objective === 'cost' ? 'cheapest' : 'best',
                  fmtSeconds(best.step_seconds) + ' a step', best.slice + ' ' + meshOf(best))
           : card('best', 'none', 'no mesh fits HBM')));
  for (const p of P.prices) s.append(el('p', {class: 'note'}, 'price ' + p.note));
}

// Every candidate at its HBM per device and step time; the rejected ones,
// which did not run, in a strip above the chart at their HBM.
function scatter() {
  const s = section('Candidates', 'candidates');
  const W = 900, H = 480, L = 80, B = 40, T = 50, Rm = 20;
  const ran = CANDIDATES.filter(c => c.fits);
  const hbm = c => c.hbm_peak_bytes || 0;
  // Up to half again the largest capacity: a rejected candidate needing far
  // more sits on the right edge.
  const caps = [...new Set(CANDIDATES.map(c => c.hbm_capacity_bytes))];
  const xmax = Math.max(1, ...caps.map(v => v * 1.5),
                        ...CANDIDATES.filter(c => c.fits).map(c => hbm(c) * 1.05));
  const steps = ran.map(c => c.step_seconds).filter(v => v > 0);
  const ylo = steps.length ? Math.min(...steps) / 1.3 : 1e-3;
  const yhi = steps.length ? Math.max(...steps) * 1.3 : 1;
  const X = v => L + (W - L - Rm) * v / xmax;
  const Y = v => T + (H - T - B) * (1 - Math.log(v / ylo) / Math.log(yhi / ylo));
  const c = svg('svg', {width: W, height: H, id: 'plan-chart'});
  for (let k = 0; k <= 5; ++k) {
    const v = xmax * k / 5;
    svg('line', {x1: X(v), x2: X(v), y1: T, y2: H - B, class: 'grid'}, c);
    svgText(c, X(v), H - B + 16, fmtBinary(v), {'text-anchor': 'middle'});
  }
  for (let k = 0; k <= 4; ++k) {
    const v = ylo * (yhi / ylo) ** (k / 4);
    svg('line', {x1: L, x2: W - Rm, y1: Y(v), y2: Y(v), class: 'grid'}, c);
    svgText(c, L - 6, Y(v) + 4, fmtSeconds(v), {'text-anchor': 'end'});
  }
  svgText(c, (L + W) / 2, H - 6, 'HBM per device (peak)', {'text-anchor': 'middle'});
  svgText(c, L, 14, 'rejected (do not fit HBM):');
  caps.forEach((cap, i) => {
    svg('line', {x1: X(cap), x2: X(cap), y1: T - 30, y2: H - B, class: 'capacity'}, c);
    svgText(c, X(cap) + 4, T + 12 + 14 * i, 'capacity ' + fmtBinary(cap) + ' (' +
            CANDIDATES.filter(d => d.hbm_capacity_bytes === cap).map(d => d.slice)
                .filter((v, j, a) => a.indexOf(v) === j).join(', ') + ')');
  });
  const g = svg('g', {id: 'plan-points'}, c);
  CANDIDATES.forEach((cand, i) => {
    const x = X(Math.min(hbm(cand), xmax)), y = cand.fits ? Y(cand.step_seconds) : T - 22;
    const p = svg('circle', {cx: x, cy: y, r: cand.fits ? 6 : 4, fill: sliceColour(cand.slice),
                             class: 'point' + (cand.fits ? '' : ' edge'), 'data-index': i}, g);
    let text = cand.slice + ' ' + meshOf(cand) + '\nHBM ' + fmtBinary(hbm(cand)) + ' of ' +
               fmtBinary(cand.hbm_capacity_bytes);
    if (cand.fits) {
      text += '\nstep ' + fmtSeconds(cand.step_seconds) + ', MFU ' + fmtPct(cand.mfu) +
              '\n' + (cand.usd_per_million_tokens
                          ? '$' + cand.usd_per_million_tokens.toFixed(2) + ' per million tokens'
                          : 'no price recorded');
    } else {
      text += '\nrejected: ' + cand.rejected;
    }
    hover(p, text);
    if (i === DATA.best) {
      svg('circle', {cx: x, cy: y, r: 11, class: 'best', id: 'plan-best'}, c);
      svgText(c, x + 14, y + 4, DATA.objective === 'cost' ? 'cheapest' : 'best');
    }
  });
  s.append(c, legend(SLICES.map(sl => [sl, sliceColour(sl)])),
           el('p', {class: 'note'}, CANDIDATES.length + ' candidates; hover a point for its ' +
                                        'mesh, step time and cost per million tokens.'));
}

function fitting() {
  const ran = CANDIDATES.filter(c => c.fits);
  if (ran.length === 0) return;
  const s = section('Candidates that fit', 'fitting');
  s.append(sortableTable([
    {key: 'slice', label: 'slice'},
    {key: 'mesh', label: 'mesh'},
    {key: 'remat', label: 'remat'},
    {key: 'microbatches', label: 'mb', num: true},
    {key: 'step_seconds', label: 'step', num: true, fmt: fmtSeconds},
    {key: 'mfu', label: 'MFU', num: true, fmt: fmtPct},
    {key: 'tokens_per_s_per_chip', label: 'tokens/s/chip', num: true, fmt: v => v.toFixed(0)},
    {key: 'hbm_peak_bytes', label: 'HBM/device', num: true, fmt: fmtBinary},
    {key: 'exposed_communication_seconds', label: 'exposed', num: true, fmt: fmtSeconds},
    {key: 'usd_per_million_tokens', label: '$/1M tok', num: true,
     get: c => c.usd_per_million_tokens || 0, fmt: v => (v > 0 ? v.toFixed(2) : '-')},
  ], ran, {id: 'fitting-table', limit: 50}));
}

function rejected() {
  const out = CANDIDATES.filter(c => !c.fits);
  if (out.length === 0) return;
  const s = section('Rejected candidates', 'rejected');
  s.append(el('p', {class: 'note'}, 'Each with the memory breakdown of its program, as buffer ' +
                                        'assignment found it.'));
  const rows = out.map(c => el('tr', {},
      el('td', {}, c.slice), el('td', {}, meshOf(c)),
      el('td', {class: 'num'}, c.hbm_peak_bytes ? fmtBinary(c.hbm_peak_bytes) : '-'),
      el('td', {class: 'num'}, fmtBinary(c.hbm_capacity_bytes)),
      el('td', {style: 'white-space: normal'}, c.rejected)));
  s.append(el('div', {class: 'scroll'}, el('table', {id: 'rejected-table'},
      el('tr', {}, el('th', {}, 'slice'), el('th', {}, 'mesh'), el('th', {class: 'num'}, 'HBM'),
         el('th', {class: 'num'}, 'capacity'), el('th', {}, 'why')), ...rows)));
}

header();
scatter();
fitting();
rejected();
