// The console's landing page: sign in as the demo admin, then prove hydration with a
// click that changes the page (the toggle has no server-side behaviour at all).
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { startCofre, launchBrowser, screenshots } from './harness.mjs';

let cofre;
let browser;

before(async () => {
  cofre = await startCofre();
  browser = await launchBrowser();
});

after(async () => {
  await browser?.close();
  cofre?.server.kill();
});

test('an admin signs in and the hydrated landing page reacts to a click', async () => {
  const page = await browser.newPage();
  const errors = [];
  page.on('pageerror', (e) => errors.push(e.message));
  await page.goto(`${cofre.base}/login`);
  await page.getByLabel('Email').fill(cofre.demo.adminEmail);
  await page.getByLabel('Senha').fill(cofre.demo.adminPassword);
  await page.getByRole('button', { name: 'Entrar' }).click();
  await page.waitForURL(`${cofre.base}/`);
  await page.getByRole('heading', { name: 'Cofre Demo' }).waitFor();

  const toggle = page.getByRole('button', { name: /detalhes/ });
  const taxId = page.getByText('11.222.333/0001-81');
  // Until the WebAssembly has hydrated the page a click does nothing; retry for a while.
  for (let i = 0; i < 50 && !(await taxId.isVisible()); i++) {
    await toggle.click();
    await page.waitForTimeout(200);
  }
  assert.ok(await taxId.isVisible(), 'the click revealed the company details');
  assert.equal(await toggle.textContent(), 'Ocultar detalhes');
  assert.equal(await toggle.getAttribute('aria-expanded'), 'true');
  await page.screenshot({ path: join(screenshots, 'console-landing.png'), fullPage: true });
  assert.deepEqual(errors, []);
});

test('a wrong password keeps the admin on the sign-in page with a message', async () => {
  const page = await browser.newPage();
  await page.goto(`${cofre.base}/login`);
  await page.getByLabel('Email').fill(cofre.demo.adminEmail);
  await page.getByLabel('Senha').fill('not the password');
  // Wait for hydration: the form then submits without leaving the page.
  await page.waitForFunction(() => performance.getEntriesByType('resource').some((r) => r.name.endsWith('_bg.wasm')));
  await page.waitForTimeout(300);
  await page.getByRole('button', { name: 'Entrar' }).click();
  await page.getByRole('alert').filter({ hasText: 'Email ou senha incorretos' }).waitFor();
  await page.screenshot({ path: join(screenshots, 'console-login-error.png') });
  assert.ok(page.url().startsWith(`${cofre.base}/login`));
});
