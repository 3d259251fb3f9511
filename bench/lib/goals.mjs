// The budgets and goals BENCHMARKS.md judges, each named for what it
// checks. The report's sections fill them from one run's results.

/**
 * BUDGETS are what the lean code promises, each measured through the binary
 * (and, for listings and pushes, the typed client); GOALS the rest of what the
 * product promises. Both in the order the report lists them.
 */
export const BUDGETS = [
  ['cold1k', 'cold listing of 1,000 sessions ≤ 50 ms (as the IDE spawns it, and with `--no-watch`)'],
  ['coldPeer', 'cold listing of 1,000 sessions ≥ 15x faster than the peer in the same run (both ways)'],
  ['cold10k', 'cold listing of 10,000 sessions ≤ 500 ms (both ways)'],
  ['warm1k', 'warm listing (the whole answer) of 1,000 sessions ≤ 8 ms'],
  ['warm10k', 'warm listing (the whole answer) of 10,000 sessions ≤ 60 ms'],
  ['pushFile', 'lock created / removed → `sessionsChanged` p50 ≤ 20 ms (notify)'],
  ['pushKill', 'holder SIGKILLed → stale pushed p50 ≤ 20 ms (notify)'],
  ['rss1k', 'RSS ≤ 24 MiB, idle after listing 1,000 sessions (notify and poll)'],
  ['unread', 'a client that never reads (10,000 pipelined `listSessions` over 3,000 sessions): peak RSS ≤ 64 MiB'],
];
export const GOALS = [
  ['truth', 'every session\'s state and name agree with what was planted, cold and warm, at every size'],
  ['youngKill', 'CLI SIGKILLed within its settle window (its lock young) → stale pushed ≤ 1 s, p50 and max (notify and poll)'],
  ['orphan', 'a live holder\'s launcher SIGKILLed → orphaned pushed p50 ≤ 1 s (notify and poll)'],
  ['missed', 'no event missed (push latency, every event and mode)'],
  ['poll', 'poll mode: lock created, lock removed, holder SIGKILLed, each pushed p50 ≤ 1.5 s'],
  ['spawn', 'spawn to first answer (`status`) ≤ 20 ms'],
  ['cpuNotify', 'idle CPU < 1% watching 10,000 sessions (notify: auto on Linux)'],
  ['cpuPoll', 'idle CPU < 1% watching 10,000 sessions (poll: auto on macOS and Windows)'],
  ['fdsPoll', 'poll mode: 10,000 sessions watched with fewer than 256 open descriptors'],
  ['probe', 'uncached probe of a live CLI (`.hold`) ≤ 25 µs and ≥ 250x faster than a `ps` spawn'],
  ['canResume-disk', '`canResume` of one session with 100,000 dead locks ≤ 200 ms, peak RSS ≤ 64 MiB (disk)'],
  ['reclaim-disk', '`reclaimStale` of those 100,000 dead locks ≤ 2 s, peak RSS ≤ 64 MiB (disk)'],
  ['canResume-tmpfs', '`canResume` of one session with 100,000 dead locks ≤ 200 ms, peak RSS ≤ 64 MiB (tmpfs)'],
  ['reclaim-tmpfs', '`reclaimStale` of those 100,000 dead locks ≤ 2 s, peak RSS ≤ 64 MiB (tmpfs)'],
];

/** Goals holds the rows of the two goal tables; set fills one: its value in this run and whether it is met. */
export class Goals {
  constructor() {
    this.rows = new Map([...BUDGETS, ...GOALS].map(([key, name]) => [key, { name, value: 'not measured in this run', ok: null }]));
  }

  set(key, value, ok) {
    const row = this.rows.get(key);
    if (!row) throw new Error(`no goal ${key}`);
    Object.assign(row, { value, ok: Boolean(ok) });
  }

  /** table is the rows of list (BUDGETS or GOALS): name, value, and a mark: met, missed, or – (not measured). */
  table(list) {
    return list.map(([key]) => this.rows.get(key)).map((r) => [r.name, r.value, r.ok === null ? '–' : r.ok ? '✅' : '❌']);
  }
}
