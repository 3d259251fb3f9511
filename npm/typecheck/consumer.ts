// How copilot-ide uses the package. It is never run, only type-checked: each
// line pins part of the typed API, and each @ts-expect-error a mistake the
// types must catch.

import {
  binaryPath,
  BinaryNotFoundError,
  ErrorCodes,
  SessionLocks,
  SessionChangedError,
  SessionLocksError,
  type ActOptions,
  type CanResumeResult,
  type ChildExitedData,
  type ForceResumeRequest,
  type ClientState,
  type ExitInfo,
  type Frozen,
  type Holder,
  type Result,
  type Session,
  type SessionsChangedParams,
  type StateChange,
} from '@copilot-ide/sessionlocks';

// The IDE's start-up: a client that survives crashes and is disposed at the
// end of the scope.
export async function ide(): Promise<void> {
  await using locks = await SessionLocks.spawn({ restart: { maxRestarts: 5, backoffMs: 200, maxBackoffMs: 5000 }, versionCheck: 'warn' });
  const sub = locks.onStateChange((change: StateChange) => {
    const state: ClientState = change.state;
    if (change.state === 'exited' && !change.willRestart) void change.exit?.signal;
    const wait: number | undefined = change.restartInMs;
    void state, wait, change.pid, change.restarts, change.error?.message;
  });
  const now: 'starting' | 'running' | 'exited' = locks.state;
  const restarts: number = locks.restarts;
  const version: string | undefined = locks.version;
  await SessionLocks.spawn({ restart: true });
  // @ts-expect-error no such state
  const bad: ClientState = 'crashed';
  // @ts-expect-error versionCheck is 'error' | 'warn' | 'off'
  await SessionLocks.spawn({ versionCheck: true });
  // @ts-expect-error backoffMs is a number
  await SessionLocks.spawn({ restart: { backoffMs: '1s' } });
  const code: -32095 = ErrorCodes.VersionMismatch;
  try {
    binaryPath();
  } catch (err) {
    if (err instanceof BinaryNotFoundError && err.reason === 'bundled') void err.bundler;
  }
  sub.dispose();
  void now, restarts, version, bad, code;
}

export async function main(sessionId: string): Promise<void> {
  const path: string = binaryPath();
  const locks = await SessionLocks.spawn({ stateDir: '/tmp/state', args: ['--log-level', 'debug'], env: { COPILOT_HOME: '/tmp' }, onStderr: (s: string) => void s });

  const list = await locks.listSessions({ includeFree: false, limit: 10 });
  const sessions: readonly Frozen<Session>[] = list.sessions;
  const state: 'free' | 'inUse' | 'unknown' | 'stale' = sessions[0].state;
  const holder: Frozen<Holder> | undefined = sessions[0].holders[0];
  const reason: string | undefined = holder?.reason;
  await locks.listSessions({}, { signal: AbortSignal.timeout(1000) });
  // @ts-expect-error answers are frozen
  list.sessions[0].state = 'free';
  // @ts-expect-error frozen all the way down
  list.sessions[0].holders.push(holder!);
  // @ts-expect-error the array too: copy it to sort
  list.sessions.sort((a, b) => a.id.localeCompare(b.id));
  const sorted = [...list.sessions].sort((a, b) => a.id.localeCompare(b.id));
  const pinned = { ...sorted[0], pinned: true }; // decorate a copy
  // @ts-expect-error a frozen session is not a mutable Session
  const mutable: Session = list.sessions[0];

  const verdict: Frozen<CanResumeResult> = await locks.canResume({ sessionId });
  const ok: boolean = verdict.canResume;
  const message: string = verdict.message;

  const reclaimed = await locks.reclaimStale({ sessionIds: [sessionId], dryRun: true });
  const pids: number[] = reclaimed.reclaimed.map((h) => h.pid);
  const failures: string[] = reclaimed.failed.map((f) => f.error);

  const forced = await locks.forceResume({ sessionId, terminate: true, graceMs: 3000 });
  const exited: readonly number[] = forced.exited;
  // A live holder that could not be stopped keeps its lock: "close it where it runs".
  const open: readonly number[] = forced.kept.map((h) => h.pid);
  const dry = await locks.reclaimStale({ dryRun: true });
  void dry.reclaimed;
  const token: string = verdict.token;

  // The IDE's decision: force what the user was shown, and no more.
  const acting: ActOptions = { signal: AbortSignal.timeout(10_000) };
  try {
    const taken = await locks.forceResume({ expect: verdict, terminate: true, kill: true, graceMs: 2000 }, acting);
    const still: readonly number[] = taken.stillRunning;
    const outcome: [readonly number[], readonly number[], readonly number[] | undefined] = [taken.signalled, taken.exited, taken.killed];
    const why: string[] = taken.notSignalled.map((n) => `${n.pid}: ${n.why}`);
    void still, outcome, why;
  } catch (err) {
    if (err instanceof SessionChangedError) {
      const fresh: Frozen<CanResumeResult> = err.data;
      const changed: -32005 = err.code;
      await locks.forceResume({ sessionId, expect: fresh });
      void changed;
    }
    if (err instanceof SessionLocksError && err.code === ErrorCodes.RequestCancelled) void err.method;
    if (err instanceof SessionLocksError && err.code === ErrorCodes.ChildExited) {
      const acted: boolean | undefined = (err.data as ChildExitedData).mayHaveActed;
      void acted;
    }
  }
  await locks.forceResume({ sessionId, expect: undefined });
  await locks.forceResume({ sessionId, expect: token });
  const asked: ForceResumeRequest = { sessionId, expect: verdict };
  await locks.forceResume(asked);
  const swept = await locks.reclaimStale({}, { signal: AbortSignal.timeout(1000) });
  const cut: boolean | undefined = swept.cancelled;
  // @ts-expect-error answers are frozen
  swept.reclaimed.length = 0;
  // @ts-expect-error forceResume needs a sessionId, or a canResume answer as expect
  await locks.forceResume({ terminate: true });
  // @ts-expect-error expect is a canResume answer or its token
  await locks.forceResume({ sessionId, expect: 42 });
  // @ts-expect-error expect is a canResume answer, not a listed session
  await locks.forceResume({ expect: list.sessions[0] });

  const status: Result<'status'> = await locks.status();
  const os: string = status.platform.os;
  const doc = await locks.discover();
  const openrpc: string = doc.openrpc;

  const ac = new AbortController();
  await locks.listSessions({}, { signal: ac.signal });
  const any: unknown = await locks.request('someFutureMethod', { x: 1 });

  const sub = locks.onSessionsChanged((change: Frozen<SessionsChangedParams>) => {
    const ids: string[] = change.changed.map((s) => s.id);
    const gone: readonly string[] = change.removed;
    // @ts-expect-error notifications are frozen
    change.removed.pop();
    void ids, gone;
  });
  sub.dispose();

  const exit: ExitInfo = await locks.exited;
  const signal: NodeJS.Signals | null = exit.signal;
  locks.onExit((info) => void info.expected);

  try {
    await locks.canResume({ sessionId });
  } catch (err) {
    if (err instanceof SessionLocksError && err.code === ErrorCodes.SessionNotFound) void err.data;
    if (err instanceof BinaryNotFoundError) void err.packageName;
  }
  await locks.dispose();

  // @ts-expect-error canResume needs a sessionId
  await locks.canResume({});
  // @ts-expect-error sessionIds is an array
  await locks.reclaimStale({ sessionIds: sessionId });
  // @ts-expect-error no such parameter
  await locks.listSessions({ include: true });
  // @ts-expect-error a state that does not exist
  const bad: Session['state'] = 'busy';
  // @ts-expect-error a typed method's params are checked through request() too
  await locks.request('canResume', { sessionId: 42 });

  void path, state, reason, ok, message, pids, failures, exited, open, cut, os, openrpc, any, signal, bad, pinned, mutable;
}
