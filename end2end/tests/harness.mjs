// Starts a real `cofre serve` on a fresh SQLite file with the demo company, and a
// headless Debian Chromium driven by playwright-core.
import { spawn, execFileSync } from 'node:child_process';
import { mkdtempSync, mkdirSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { chromium } from 'playwright-core';

export const root = resolve(import.meta.dirname, '..', '..');
const cofre = process.env.COFRE_BIN ?? join(root, 'target', 'debug', 'cofre');
export const screenshots = join(root, 'end2end', 'screenshots');

function freePort() {
  return new Promise((ok, fail) => {
    const srv = createServer();
    srv.on('error', fail);
    srv.listen(0, '127.0.0.1', () => {
      const { port } = srv.address();
      srv.close(() => ok(port));
    });
  });
}

export async function startCofre() {
  const dir = mkdtempSync(join(tmpdir(), 'cofre-e2e-'));
  const port = await freePort();
  const env = {
    ...process.env,
    DATABASE_URL: `sqlite://${join(dir, 'cofre.db')}`,
    COFRE__SERVER__BIND: `127.0.0.1:${port}`,
    COFRE__CONSOLE__SITE_ROOT: join(root, 'target', 'site'),
    COFRE__FILES__LOCAL_DIR: join(dir, 'files'),
  };
  const demo = JSON.parse(execFileSync(cofre, ['demo', '--json'], { env }).toString());
  const server = spawn(cofre, ['serve'], { env, stdio: ['ignore', 'ignore', 'inherit'] });
  const base = `http://127.0.0.1:${port}`;
  for (let i = 0; i < 100; i++) {
    try {
      if ((await fetch(`${base}/healthz`)).ok) return { base, demo, server };
    } catch { /* not listening yet */ }
    await new Promise((r) => setTimeout(r, 100));
  }
  server.kill();
  throw new Error('cofre did not start');
}

export async function launchBrowser() {
  mkdirSync(screenshots, { recursive: true });
  return chromium.launch({
    executablePath: process.env.CHROMIUM ?? '/usr/bin/chromium',
    args: [
      '--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
      '--disable-background-networking', '--disable-component-update', '--disable-sync',
    ],
    // Playwright gives every launch a fresh, empty profile directory of its own.
  });
}
