// Small statistics helpers. Every figure in BENCHMARKS.md is a median; tail
// latencies use the nearest-rank percentile, so p99 of fewer than 100 samples
// is simply the largest one (the report says n beside it).

/** quantile returns the nearest-rank q-quantile (0 < q <= 1) of xs. */
export function quantile(xs, q) {
  if (xs.length === 0) return NaN;
  const s = [...xs].sort((a, b) => a - b);
  const rank = Math.ceil(q * s.length);
  return s[Math.min(s.length, Math.max(1, rank)) - 1];
}

/** median is the middle value (mean of the two middle values for even n). */
export function median(xs) {
  if (xs.length === 0) return NaN;
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2;
}

/** ratios divides a[i] by b[i] pair by pair (same repetition, same run). */
export function ratios(a, b) {
  const n = Math.min(a.length, b.length);
  const out = [];
  for (let i = 0; i < n; i++) out.push(a[i] / b[i]);
  return out;
}

/** now is a monotonic clock in milliseconds with sub-microsecond resolution. */
export function now() {
  return performance.now();
}

/** fmtMs renders a duration in ms with a unit that keeps 2-3 significant digits. */
export function fmtMs(ms) {
  if (!Number.isFinite(ms)) return 'n/a';
  if (ms >= 1000) return `${(ms / 1000).toFixed(ms >= 10000 ? 1 : 2)} s`;
  if (ms >= 1) return `${ms.toFixed(ms >= 100 ? 0 : ms >= 10 ? 1 : 2)} ms`;
  const us = ms * 1000;
  if (us >= 1) return `${us.toFixed(us >= 100 ? 0 : us >= 10 ? 1 : 2)} µs`;
  return `${(us * 1000).toFixed(0)} ns`;
}

/** fmtRatio renders a speed-up such as 123x or 1.4x. */
export function fmtRatio(r) {
  if (!Number.isFinite(r)) return 'n/a';
  if (r >= 100) return `${Math.round(r)}x`;
  if (r >= 10) return `${r.toFixed(1)}x`;
  return `${r.toFixed(2)}x`;
}

/** fmtBytes renders a size in KiB or MiB. */
export function fmtBytes(n) {
  if (!Number.isFinite(n)) return 'n/a';
  if (n >= 1 << 20) return `${(n / (1 << 20)).toFixed(1)} MiB`;
  return `${(n / 1024).toFixed(0)} KiB`;
}

/** sleep waits ms milliseconds. */
export function sleep(ms) {
  return new Promise((r) => setTimeout(r, ms));
}
