// index.d.ts and the generated protocol.d.ts type-check, and type an IDE's
// use of the package (typecheck/consumer.ts) strictly: its @ts-expect-error
// lines fail the check when the types get looser than they should be.
//
// skipLibCheck keeps tsc from checking all of @types/node on every run, but it
// skips every .d.ts, ours included; so ours are checked as copies named .ts.

import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import { npmDir, tmpdir } from '../scripts/testenv.mjs';

test('typecheck/consumer.ts compiles against the package types (tsc --strict)', () => {
  const dir = tmpdir();
  for (const name of ['index', 'protocol']) {
    fs.copyFileSync(path.join(npmDir, 'sessionlocks', `${name}.d.ts`), path.join(dir, `${name}.ts`));
  }
  fs.copyFileSync(path.join(npmDir, 'typecheck', 'consumer.ts'), path.join(dir, 'consumer.ts'));
  const base = JSON.parse(fs.readFileSync(path.join(npmDir, 'typecheck', 'tsconfig.json'), 'utf8'));
  const tsconfig = {
    compilerOptions: {
      ...base.compilerOptions,
      skipLibCheck: true,
      typeRoots: [path.join(npmDir, 'node_modules', '@types')],
      paths: { '@copilot-ide/sessionlocks': [path.join(dir, 'index.ts')] },
    },
    files: ['consumer.ts', 'index.ts', 'protocol.ts'],
  };
  fs.writeFileSync(path.join(dir, 'tsconfig.json'), JSON.stringify(tsconfig));
  const tsc = path.join(npmDir, 'node_modules', 'typescript', 'bin', 'tsc');
  const r = spawnSync(process.execPath, [tsc, '-p', dir], { encoding: 'utf8' });
  assert.equal(r.status, 0, `tsc failed:\n${r.stdout}${r.stderr}`);
});
