// One size of the listing phase: the peer and ours over the same state dir,
// cold and warm, repetition by repetition, each answer checked against what
// the generator planted.

import { listSessionLocks } from '../peer/sessionLocks.mjs';
import { Sidecar, WireSidecar } from './sidecar.mjs';
import { median, now } from './stats.mjs';

/**
 * measureListing times reps repetitions over the settled state dir sd (from
 * generate): the peer; ours cold as the IDE spawns it, then warm (warmup
 * unmeasured calls, then the median of warm); ours cold with --no-watch; and
 * the warm calls' server's share on a bare connection. It returns the row the
 * report reads. scratch receives the servers' logs.
 */
export async function measureListing(sd, { reps, warm, warmup, scratch, log }) {
  const calls = { warm, warmup };
  const row = { count: sd.sessions.length, mix: sd.mix, reps, warmCalls: warm, warmup, peer: [], cold: [], coldBare: [], warm: [], warmWire: [], coldCached: [], check: null };
  for (let i = 0; i < reps; i++) {
    // Alternate which tool goes first, so that neither always runs right after the other's work.
    let peer;
    const runPeer = async () => {
      const t0 = now();
      peer = await listSessionLocks(sd.stateDir);
      row.peer.push(now() - t0);
    };
    const runOurs = async () => {
      const side = await Sidecar.start({ stateDir: sd.stateDir, logDir: scratch });
      try {
        const cold = await side.request('listSessions', {});
        row.cold.push(cold.ms);
        const holders = cold.result.sessions.flatMap((s) => s.holders ?? []);
        row.coldCached.push(holders.length ? holders.filter((h) => h.cached).length / holders.length : 0);
        let last = cold.result;
        row.warm.push(await warmMedian(side, calls, (r) => (last = r.result)));
        return { cold: cold.result, last };
      } finally {
        await side.close();
      }
    };
    // The same first call on a server without the watcher, whose startup
    // scan would otherwise have filled the probe cache: a truly cold engine.
    const runOursBare = async () => {
      const side = await Sidecar.start({ stateDir: sd.stateDir, logDir: scratch, args: ['--no-watch'] });
      try {
        row.coldBare.push((await side.request('listSessions', {})).ms);
      } finally {
        await side.close();
      }
    };
    // Warm again, counting only the answer's bytes arriving: the
    // sidecar's share of the warm figure, without the client's parsing.
    const runOursWire = async () => {
      const side = await WireSidecar.start({ stateDir: sd.stateDir });
      try {
        await side.request('listSessions');
        row.warmWire.push(await warmMedian(side, calls));
      } finally {
        await side.close();
      }
    };
    let ours;
    if (i % 2 === 0) {
      await runPeer();
      ours = await runOurs();
      await runOursBare();
      await runOursWire();
    } else {
      await runOursWire();
      await runOursBare();
      ours = await runOurs();
      await runPeer();
    }
    if (i === 0) row.check = checkAnswers(sd, peer, ours.cold, ours.last, log);
    log(`   rep ${i + 1}/${reps}: peer ${row.peer.at(-1).toFixed(1)} ms, ours cold ${row.cold.at(-1).toFixed(2)} ms (no watcher ${row.coldBare.at(-1).toFixed(2)} ms), warm ${row.warm.at(-1).toFixed(2)} ms (server's share ${row.warmWire.at(-1).toFixed(2)} ms)`);
  }
  return row;
}

/**
 * warmMedian makes warmup unmeasured listSessions calls on side (a Sidecar or
 * WireSidecar that has answered its cold one), then warm measured ones, and
 * returns their median time; each answer goes to seen.
 */
async function warmMedian(side, { warm, warmup }, seen = () => {}) {
  const ms = [];
  for (let j = 0; j < warmup + warm; j++) {
    const r = await side.request('listSessions', {});
    if (j >= warmup) ms.push(r.ms);
    seen(r);
  }
  return median(ms);
}

/** checkAnswers compares both tools' answers with what the generator planted. */
function checkAnswers(sd, peer, coldResult, warmResult, log) {
  const check = { total: sd.sessions.length, oursCold: 0, oursWarm: 0, peer: 0, peerFooled: 0, oursWrong: [] };
  // A session is right when its state and its name (plain or quoted in workspace.yaml) are.
  const stateOf = (res) => new Map(res.sessions.map((s) => [s.id, `${s.state} ${s.name}`]));
  const cold = stateOf(coldResult);
  const warm = stateOf(warmResult);
  const peerInUse = new Map(peer.map((p) => [p.id, p.inUse]));
  for (const s of sd.sessions) {
    const want = `${s.expect} ${s.name}`;
    if (cold.get(s.id) === want) check.oursCold++;
    else if (check.oursWrong.length < 5) check.oursWrong.push(`${s.kind} ${s.id}: expected ${want}, got ${cold.get(s.id)}`);
    if (warm.get(s.id) === want) check.oursWarm++;
    if (peerInUse.get(s.id) === (s.expect === 'inUse')) check.peer++;
    else if (s.kind === 'reused') check.peerFooled++;
  }
  if (coldResult.total !== undefined && coldResult.total !== sd.sessions.length) check.oursWrong.push(`total ${coldResult.total}, expected ${sd.sessions.length}`);
  if (check.oursWrong.length) log(`   ours disagrees with the planted truth:\n     ${check.oursWrong.join('\n     ')}`);
  return check;
}
