// Running and reading the engine's Go benchmarks. The output format is the
// standard one benchstat reads (https://go.dev/design/14313-benchmark-format):
//   BenchmarkName/sub-8   	  123456	      9876 ns/op	   512 B/op	  4 allocs/op
// With -count N each benchmark appears N times; we keep every sample and
// report medians.

import { spawnTracked } from './procs.mjs';
import { median } from './stats.mjs';

const LINE = /^(Benchmark\S+?)(?:-(\d+))?\s+(\d+)\s+(.*)$/;

/**
 * parseGoBench returns Map name -> {samples: [{iterations, metrics: {unit: value}}]}
 * where name has the "Benchmark" prefix and the -GOMAXPROCS suffix removed.
 */
export function parseGoBench(text) {
  const out = new Map();
  for (const raw of text.split('\n')) {
    const m = LINE.exec(raw.trim());
    if (!m) continue;
    const name = m[1].replace(/^Benchmark/, '');
    const fields = m[4].trim().split(/\s+/);
    const metrics = {};
    for (let i = 0; i + 1 < fields.length; i += 2) {
      const v = Number(fields[i]);
      if (Number.isFinite(v)) metrics[fields[i + 1]] = v;
    }
    if (!out.has(name)) out.set(name, { samples: [] });
    out.get(name).samples.push({ iterations: Number(m[3]), metrics });
  }
  return out;
}

/** metricMedian is the median of one unit (ns/op, B/op, ...) over a benchmark's samples. */
export function metricMedian(bench, unit) {
  if (!bench) return NaN;
  return median(bench.samples.map((s) => s.metrics[unit]).filter((v) => v !== undefined));
}

/**
 * runGoBench runs `go test -run ^$ -bench pattern` in pkg, echoing the output
 * as it arrives (so that `make bench` shows the raw benchmarks too), and
 * resolves with the text. A failed run rejects with its output.
 */
export function runGoBench({ cwd, pkg = './sessionlocks/', pattern = '.', count = 5, extra = [], env = process.env, echo = process.stdout }) {
  const args = ['test', '-run', '^$', '-bench', pattern, '-benchmem', '-count', String(count), ...extra, pkg];
  echo.write(`$ go ${args.join(' ')}\n`);
  return new Promise((resolve, reject) => {
    const c = spawnTracked('go', args, { cwd, env, stdio: ['ignore', 'pipe', 'pipe'], group: true });
    let text = '';
    const take = (d) => {
      text += d;
      echo.write(d);
    };
    c.stdout.on('data', take);
    c.stderr.on('data', take);
    c.on('error', reject);
    c.on('exit', (code) => (code === 0 ? resolve(text) : reject(new Error(`go test -bench failed (exit ${code})`))));
  });
}
