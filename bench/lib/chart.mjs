// chart renders listing time against session count as a log-log line chart,
// as plain SVG text: no plotting dependency for three lines.

const W = 720;
const H = 420;
const M = { left: 86, right: 90, top: 40, bottom: 56 };

function esc(s) {
  return String(s).replace(/[&<>"]/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;' })[c]);
}

function fmtAxisMs(ms) {
  if (ms >= 1000) return `${ms / 1000} s`;
  if (ms >= 1) return `${ms} ms`;
  return `${Math.round(ms * 1000)} µs`;
}

/**
 * lineChart draws series [{name, color, dash?, points: [[x, yMs], ...]}] on
 * log axes and returns the SVG document.
 */
export function lineChart({ title, series, xLabel = 'sessions in the state dir', yLabel = 'listSessions time (median)' }) {
  const xs = series.flatMap((s) => s.points.map((p) => p[0])).filter((v) => v > 0);
  const ys = series.flatMap((s) => s.points.map((p) => p[1])).filter((v) => v > 0 && Number.isFinite(v));
  // Whole decades, at least one of them even when every value is equal.
  const xmin = 10 ** Math.floor(Math.log10(Math.min(...xs)));
  const xmax = Math.max(10 ** Math.ceil(Math.log10(Math.max(...xs))), xmin * 10);
  const ymin = 10 ** Math.floor(Math.log10(Math.min(...ys)));
  const ymax = Math.max(10 ** Math.ceil(Math.log10(Math.max(...ys))), ymin * 10);
  const pw = W - M.left - M.right;
  const ph = H - M.top - M.bottom;
  const X = (x) => M.left + ((Math.log10(x) - Math.log10(xmin)) / (Math.log10(xmax) - Math.log10(xmin))) * pw;
  const Y = (y) => M.top + ph - ((Math.log10(y) - Math.log10(ymin)) / (Math.log10(ymax) - Math.log10(ymin))) * ph;

  const out = [];
  out.push(`<svg xmlns="http://www.w3.org/2000/svg" width="${W}" height="${H}" viewBox="0 0 ${W} ${H}" font-family="system-ui, -apple-system, Segoe UI, sans-serif" font-size="12">`);
  out.push(`<rect width="${W}" height="${H}" fill="#ffffff"/>`);
  out.push(`<text x="${M.left}" y="24" font-size="15" font-weight="600" fill="#222">${esc(title)}</text>`);
  // Grid: one line per decade, with the 2x and 5x minors faint.
  for (let d = ymin; d <= ymax * 1.0001; d *= 10) {
    for (const k of [1, 2, 5]) {
      const v = d * k;
      if (v > ymax * 1.0001) break;
      const y = Y(v).toFixed(1);
      out.push(`<line x1="${M.left}" x2="${M.left + pw}" y1="${y}" y2="${y}" stroke="${k === 1 ? '#ccc' : '#eee'}"/>`);
      if (k === 1) out.push(`<text x="${M.left - 8}" y="${y}" text-anchor="end" dominant-baseline="middle" fill="#555">${fmtAxisMs(v)}</text>`);
    }
  }
  for (let d = xmin; d <= xmax * 1.0001; d *= 10) {
    const x = X(d).toFixed(1);
    out.push(`<line x1="${x}" x2="${x}" y1="${M.top}" y2="${M.top + ph}" stroke="#ccc"/>`);
    out.push(`<text x="${x}" y="${M.top + ph + 18}" text-anchor="middle" fill="#555">${d.toLocaleString('en-US')}</text>`);
  }
  out.push(`<rect x="${M.left}" y="${M.top}" width="${pw}" height="${ph}" fill="none" stroke="#888"/>`);
  out.push(`<text x="${M.left + pw / 2}" y="${H - 14}" text-anchor="middle" fill="#333">${esc(xLabel)} (log)</text>`);
  out.push(`<text transform="translate(18 ${M.top + ph / 2}) rotate(-90)" text-anchor="middle" fill="#333">${esc(yLabel)} (log)</text>`);

  // Legend in the plot's top-left corner, where rising lines leave room.
  out.push(`<rect x="${M.left + 8}" y="${M.top + 6}" width="190" height="${series.length * 20 + 4}" fill="#fff" fill-opacity="0.85" stroke="#ddd"/>`);
  const ends = [];
  series.forEach((s, i) => {
    const pts = s.points.filter((p) => p[1] > 0 && Number.isFinite(p[1]));
    if (!pts.length) return;
    const d = pts.map((p, j) => `${j ? 'L' : 'M'}${X(p[0]).toFixed(1)} ${Y(p[1]).toFixed(1)}`).join(' ');
    out.push(`<path d="${d}" fill="none" stroke="${s.color}" stroke-width="2.5"${s.dash ? ` stroke-dasharray="${s.dash}"` : ''}/>`);
    for (const p of pts) {
      out.push(`<circle cx="${X(p[0]).toFixed(1)}" cy="${Y(p[1]).toFixed(1)}" r="4" fill="${s.color}"><title>${esc(`${s.name}: ${p[0]} sessions, ${fmtAxisMs(+p[1].toPrecision(3))}`)}</title></circle>`);
    }
    const last = pts[pts.length - 1];
    ends.push({ x: X(last[0]) + 8, y: Y(last[1]), color: s.color, text: fmtAxisMs(+last[1].toPrecision(3)) });
    const ly = M.top + 16 + i * 20;
    const lx = M.left + 16;
    out.push(`<line x1="${lx}" x2="${lx + 22}" y1="${ly}" y2="${ly}" stroke="${s.color}" stroke-width="2.5"${s.dash ? ` stroke-dasharray="${s.dash}"` : ''}/>`);
    out.push(`<text x="${lx + 28}" y="${ly}" dominant-baseline="middle" fill="#222">${esc(s.name)}</text>`);
  });
  // Value labels at the line ends, pushed apart where lines end close together.
  ends.sort((a, b) => a.y - b.y);
  for (let i = 1; i < ends.length; i++) ends[i].y = Math.max(ends[i].y, ends[i - 1].y + 14);
  for (const e of ends) out.push(`<text x="${e.x.toFixed(1)}" y="${e.y.toFixed(1)}" dominant-baseline="middle" fill="${e.color}">${esc(e.text)}</text>`);
  out.push('</svg>');
  return out.join('\n') + '\n';
}
