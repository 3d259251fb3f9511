// testenv.mjs: what the Node tests share. Real things only: the real
// sessionlocks binary, the fake Copilot CLI (internal/fakecli, which takes
// real flocks), real files in a temporary state directory.

import { execFileSync, spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { key, npmCommand, npmVersion, pack, platforms } from './pack.mjs';

export const npmDir = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
export const repoRoot = path.dirname(npmDir);

// `make test-node` sets SESSIONLOCKS_BINARY to the binary it just built.
// Tests that exercise the package's own resolution delete it from the
// environment, so it is captured here first.
const givenBinary = process.env.SESSIONLOCKS_BINARY;

const temps = [];
process.on('exit', () => {
  if (process.env.SESSIONLOCKS_KEEP_TMP) return;
  for (const dir of temps) fs.rmSync(dir, { recursive: true, force: true });
});

/** A fresh temporary directory, removed when the test process exits. */
export function tmpdir(prefix = 'sessionlocks-test-') {
  const dir = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), prefix)));
  temps.push(dir);
  return dir;
}

function goBuild(pkg, out) {
  execFileSync('go', ['build', '-trimpath', '-o', out, pkg], { cwd: repoRoot, stdio: ['ignore', 'inherit', 'inherit'] });
  return out;
}

let builtBinary;
/** The sessionlocks binary under test: make's, or one built now when the tests run without make. */
export function hostBinary() {
  if (givenBinary) return path.resolve(givenBinary);
  builtBinary ??= goBuild('./cmd/sessionlocks', path.join(tmpdir(), exe('sessionlocks')));
  return builtBinary;
}

let builtFakeCLI;
/** The fake Copilot CLI, built under the CLI's own name so that its argv looks like the real one's. */
export function fakeCLI() {
  builtFakeCLI ??= goBuild('./internal/fakecli/copilot', path.join(tmpdir(), exe('copilot')));
  return builtFakeCLI;
}

const exe = (name) => (process.platform === 'win32' ? `${name}.exe` : name);

/** Writes a session directory with a workspace.yaml, as the CLI does. */
export function writeSession(stateDir, id, { name = id, updatedAt = new Date() } = {}) {
  const dir = path.join(stateDir, id);
  fs.mkdirSync(dir, { recursive: true });
  const iso = updatedAt.toISOString();
  fs.writeFileSync(
    path.join(dir, 'workspace.yaml'),
    // This system's kind of path: a POSIX one on Windows says WSL wrote it.
    `id: ${id}\ncwd: ${path.join('/home/dev', 'project')}\nname: ${name}\nclient_name: test\ncreated_at: ${iso}\nupdated_at: ${iso}\n`,
  );
  return dir;
}

/**
 * Writes the files a CLI killed with SIGKILL leaves behind: inuse.<pid>.lock
 * and an unlocked inuse.<pid>.hold naming a process that has exited.
 */
export function writeStaleLock(stateDir, id) {
  const gone = spawnSync(process.execPath, ['-e', '0']);
  const pid = gone.pid;
  const dir = path.join(stateDir, id);
  fs.writeFileSync(path.join(dir, `inuse.${pid}.lock`), `${pid}\n`);
  fs.writeFileSync(path.join(dir, `inuse.${pid}.hold`), '');
  // Left by a CLI that crashed a while ago: past the settle window, within
  // which a lock with a .hold counts as opening whatever its pid says.
  const crashed = new Date(Date.now() - 30_000);
  for (const ext of ['lock', 'hold']) fs.utimesSync(path.join(dir, `inuse.${pid}.${ext}`), crashed, crashed);
  return { pid, lockFile: path.join(dir, `inuse.${pid}.lock`), holdFile: path.join(dir, `inuse.${pid}.hold`) };
}

/**
 * Starts the fake CLI on a session; resolves once its .lock and flocked
 * .hold are in place. stop() closes its stdin, which makes it remove its
 * files and exit as a clean CLI exit does.
 *
 * With ignoreTerm it survives SIGTERM, as a hung CLI would (--ignore-term):
 * termIgnored resolves once it has ignored one, termsIgnored() counts them,
 * and stop() sends SIGINT, on which it removes its files and exits.
 */
export function startFakeSession(stateDir, id, { ignoreTerm = false } = {}) {
  const args = ['--state-dir', stateDir, '--session', id, ignoreTerm ? '--ignore-term' : '--exit-on-eof'];
  const child = spawn(fakeCLI(), args, { stdio: ['pipe', 'pipe', ignoreTerm ? 'pipe' : 'inherit'] });
  const exited = new Promise((resolve) => child.on('exit', (code, signal) => resolve({ code, signal })));
  let termIgnored;
  let err = '';
  if (ignoreTerm) {
    termIgnored = new Promise((resolve) => {
      child.stderr.setEncoding('utf8');
      child.stderr.on('data', (chunk) => {
        err += chunk;
        if (err.includes('SIGTERM ignored')) resolve();
      });
    });
  }
  return new Promise((resolve, reject) => {
    let out = '';
    child.stdout.setEncoding('utf8');
    child.stdout.on('data', (chunk) => {
      out += chunk;
      if (/^ready \d+/m.test(out)) {
        resolve({
          pid: child.pid,
          child,
          exited,
          termIgnored,
          /** How many SIGTERMs it has ignored so far (with ignoreTerm). */
          termsIgnored: () => err.split('SIGTERM ignored').length - 1,
          stop: () => {
            if (child.exitCode === null && child.signalCode === null) {
              if (ignoreTerm) child.kill('SIGINT');
              else child.stdin.end();
            }
            return exited;
          },
        });
      }
    });
    child.on('error', reject);
    child.on('exit', (code) => reject(new Error(`fake CLI exited with ${code} before it was ready: ${out}`)));
  });
}

/** Stops pid and waits until it is stopped: SIGSTOP takes effect asynchronously, and a child still running for an
 * instant could answer the call the test means to leave pending. */
export async function stopProcess(pid) {
  process.kill(pid, 'SIGSTOP');
  for (let i = 0; i < 200; i++) {
    if (execFileSync('ps', ['-o', 'stat=', '-p', String(pid)], { encoding: 'utf8' }).trim().startsWith('T')) return;
    await new Promise((r) => setTimeout(r, 10));
  }
  throw new Error(`pid ${pid} did not stop`);
}

/** Resolves with the first value of next() for which test() is true; rejects after ms with message. */
export function waitFor(subscribe, test, ms, message) {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      sub.dispose();
      reject(new Error(message));
    }, ms);
    const sub = subscribe((value) => {
      if (!test(value)) return;
      clearTimeout(timer);
      sub.dispose();
      resolve(value);
    });
  });
}

/**
 * The version `make npm` gives the packages it makes from binary: what the
 * binary's version command prints, as npm spells it. Packages packed at any
 * other version fail the client's version check at spawn.
 */
export function packageVersionOf(binary) {
  const out = execFileSync(binary, ['version'], { encoding: 'utf8' });
  const m = /^sessionlocks (\S+) /.exec(out);
  if (!m) throw new Error(`${binary} version printed ${JSON.stringify(out)}`);
  return npmVersion(m[1]);
}

/** An empty npm project in a fresh temporary directory, with these package.json fields. */
export function projectDir(name, manifest = {}) {
  const dir = path.join(tmpdir('sessionlocks-app-'), name);
  fs.mkdirSync(dir);
  fs.writeFileSync(path.join(dir, 'package.json'), JSON.stringify({ name, private: true, ...manifest }, null, 2));
  return dir;
}

/**
 * Packs the main package and this platform's (holding binary) at the
 * binary's own version into a temporary directory: {version, tarballs:
 * {name: file}, packed: npm pack's report}.
 */
export function packHost(binary) {
  const host = platforms.find((p) => p.platform === process.platform && p.arch === process.arch);
  if (!host) throw new Error(`no platform package for ${process.platform}-${process.arch}`);
  return pack({ version: packageVersionOf(binary), out: tmpdir('sessionlocks-npm-'), only: [key(host)], binary });
}

/**
 * Installs the main tarball into project as users get it: the platform
 * package as its optional dependency, chosen by os/cpu. The registry does not
 * have the platform package; an override points npm at its tarball. Without
 * one (platformTarball undefined) npm finds none and skips it silently.
 */
export function installMain(project, mainTarball, { platformTarball, args = [] } = {}) {
  if (platformTarball) {
    const manifest = JSON.parse(fs.readFileSync(path.join(project, 'package.json'), 'utf8'));
    manifest.overrides = { [`@copilot-ide/sessionlocks-${process.platform}-${process.arch}`]: `file:${platformTarball}` };
    fs.writeFileSync(path.join(project, 'package.json'), JSON.stringify(manifest, null, 2));
  }
  // vscode-jsonrpc comes from the npm cache when it is there (npm ci filled it).
  npm(['install', '--prefer-offline', ...args, mainTarball], project);
}

/** npm COMMAND ARGS..., run quietly (its flags go after the command, before any `--`), failing with its output. */
export function npm([command, ...args], cwd) {
  const [file, all, how] = npmCommand([command, '--no-audit', '--no-fund', '--loglevel=error', ...args]);
  const r = spawnSync(file, all, { ...how, cwd, encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`npm ${args.join(' ')} failed (${r.status}):\n${r.stdout}${r.stderr}`);
  return r.stdout;
}
