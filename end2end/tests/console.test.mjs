// The console in a real browser against a real `cofre serve` with the demo company.
// Each test signs in in a fresh browser context and saves a screenshot (docs/ keeps
// the README's copies). The tests share one server and run in order.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { startCofre, launchBrowser, screenshots, root } from './harness.mjs';

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

/// A fresh context (own cookies), signed in as `email`, on the hydrated landing page.
async function signedIn(email, password = cofre.demo.adminPassword) {
  const context = await browser.newContext();
  const page = await context.newPage();
  const errors = [];
  page.on('pageerror', (e) => errors.push(e.message));
  // Anything the Content-Security-Policy refused would break the console unseen.
  page.on('console', (m) => {
    if (/Content.Security.Policy/i.test(m.text())) errors.push(m.text());
  });
  await page.goto(`${cofre.base}/login`);
  await hydrated(page);
  await page.getByLabel('Email').fill(email);
  await page.getByLabel('Senha').fill(password);
  await page.getByRole('button', { name: 'Entrar' }).click();
  await page.waitForURL(`${cofre.base}/`);
  await hydrated(page);
  return { context, page, errors };
}

/// Until the WebAssembly has hydrated the page, buttons do nothing.
async function hydrated(page) {
  await page.waitForSelector('body[data-hydrated="true"]', { timeout: 30_000 });
}

async function goto(page, path) {
  await page.goto(`${cofre.base}${path}`);
  await hydrated(page);
}

async function api(path, appId, init = {}) {
  return fetch(`${cofre.base}${path}`, {
    ...init,
    headers: { Authorization: appId, 'Content-Type': 'application/json', ...(init.headers ?? {}) },
  });
}

async function shot(page, name) {
  await page.screenshot({ path: join(screenshots, name), fullPage: true });
}

test('sign-in: a wrong password stays on the form with a message; the right one opens the campaigns', async () => {
  const context = await browser.newContext();
  const page = await context.newPage();
  await goto(page, '/login');
  await page.getByLabel('Email').fill(cofre.demo.adminEmail);
  await page.getByLabel('Senha').fill('not the password');
  await page.getByRole('button', { name: 'Entrar' }).click();
  await page.getByRole('alert').filter({ hasText: 'Email ou senha incorretos' }).waitFor();
  assert.ok(page.url().startsWith(`${cofre.base}/login`));
  await shot(page, 'console-login-error.png');
  await context.close();

  const { page: home, errors, context: signed } = await signedIn(cofre.demo.adminEmail);
  await home.getByRole('heading', { name: 'Campanhas' }).waitFor();
  await home.getByRole('heading', { name: /Conta principal/ }).waitFor();
  assert.ok(await home.getByText('cobranca@demo.cofre.dev').isVisible());
  // The session cookie is HttpOnly: scripts on the page cannot read it.
  assert.equal(await home.evaluate(() => document.cookie.includes('cofre_session')), false);
  await shot(home, 'console-campaigns.png');
  assert.deepEqual(errors, []);
  await signed.close();
});

test('API/Plugins: a new MASTER application shows its AppID once, and the AppID works', async () => {
  const { page, context } = await signedIn(cofre.demo.adminEmail);
  await goto(page, '/api-plugins');
  const form = page.locator('details.new-app');
  await form.getByText('Nova API/Plugin').click();
  await form.getByLabel('Nome').fill('Integração central');
  await form.getByLabel(/MASTER/).check();
  await form.getByRole('button', { name: 'Criar', exact: true }).click();
  const appIdField = page.locator('#issued-app-id');
  await appIdField.waitFor();
  const appId = await appIdField.inputValue();
  assert.match(appId, /^[A-Za-z0-9+/=]{40,}$/);
  await page.getByText('não será mostrado de novo').waitFor();
  await shot(page, 'console-new-master.png');
  const scopes = await api('/api/v1/application/scopes', appId);
  assert.equal(scopes.status, 200);
  const card = page.locator('article.application', { hasText: 'Integração central' });
  await card.getByText('MASTER').first().waitFor();

  // Shown once: after a reload nothing on the page carries it.
  await goto(page, '/api-plugins');
  await page.locator('article.application', { hasText: 'Integração central' }).waitFor();
  assert.equal(await page.locator('#issued-app-id').count(), 0);
  assert.equal((await page.content()).includes(appId), false);
  await context.close();
});

test('API/Plugins: removing a scope makes the API refuse it at once', async () => {
  const { page, context } = await signedIn(cofre.demo.adminEmail);
  await goto(page, '/api-plugins');
  const form = page.locator('details.new-app');
  await form.getByText('Nova API/Plugin').click();
  await form.getByLabel('Nome').fill('Leitura de chaves');
  await form.getByRole('button', { name: 'Criar', exact: true }).click();
  await page.locator('#issued-app-id').waitFor();
  const appId = await page.locator('#issued-app-id').inputValue();
  assert.equal((await api('/api/v1/pix-keys', appId)).status, 200);

  const card = page.locator('article.application', { hasText: 'Leitura de chaves' });
  await card.getByText('Acesso total').waitFor();
  await card.getByText('Editar escopos e IPs').click();
  await card.getByLabel('FILE_POST').check();
  await card.getByRole('button', { name: 'Salvar acesso' }).click();
  // The saved scopes, as listed after the save (not the checkbox's own label).
  await page.locator('article.application', { hasText: 'Leitura de chaves' })
    .locator('dd', { hasText: /^FILE_POST$/ }).waitFor();
  const refused = await api('/api/v1/pix-keys', appId);
  assert.equal(refused.status, 403);
  assert.equal((await refused.json()).code, 'SCOPE_MISSING');
  const edited = page.locator('article.application', { hasText: 'Leitura de chaves' });
  assert.equal(await edited.getByText('Acesso total').count(), 0);
  await shot(page, 'console-scopes.png');
  await context.close();
});

test('the campaign wizard makes account, application, Pix key and withdraw key in one go', async () => {
  const { page, context } = await signedIn(cofre.demo.adminEmail);
  await page.getByRole('link', { name: 'Nova campanha' }).click();
  await hydrated(page);
  await page.getByLabel('Nome da campanha').fill('Natal 2026');
  await page.getByLabel('Tipo da chave Pix').selectOption('EMAIL');
  // A bad key is named under its field, and nothing is created.
  await page.getByLabel(/^Chave Pix/).fill('not an email');
  await page.getByRole('button', { name: 'Criar campanha' }).click();
  await page.locator('#campaign-key-error').filter({ hasText: 'valor inválido' }).waitFor();
  assert.equal(await page.getByRole('heading', { name: 'Campanha criada' }).count(), 0);
  await page.getByLabel(/^Chave Pix/).fill('natal@demo.cofre.dev');
  await page.getByLabel(/Chave de saque/).fill('financeiro@demo-externo.com.br');
  await page.getByRole('button', { name: 'Criar campanha' }).click();
  await page.getByRole('heading', { name: 'Campanha criada' }).waitFor();
  const created = page.locator('.created');
  const accountId = (await created.locator('dd code').first().textContent()).trim();
  assert.match(accountId, /^acc_/);
  const appId = await page.locator('#issued-app-id').inputValue();
  await shot(page, 'console-campaign-wizard.png');

  // The campaign's AppID sees its own account and key.
  const keys = await (await api('/api/v1/pix-keys', appId)).json();
  assert.equal(keys.account.accountId, accountId);
  assert.equal(keys.pixKeys[0].key, 'natal@demo.cofre.dev');

  // Money in by the sandbox, so the dashboard has a balance, a transaction and a bar.
  const paid = await api('/api/v1/sandbox/pix', appId, {
    method: 'POST',
    body: JSON.stringify({ pixKey: 'natal@demo.cofre.dev', value: 12345, payer: { name: 'Joana' } }),
  });
  assert.ok(paid.ok, `sandbox Pix: ${paid.status}`);

  await page.getByRole('link', { name: 'Ver campanhas' }).click();
  const card = page.locator(`article[data-account="${accountId}"]`);
  await card.waitFor();
  await card.getByText('natal@demo.cofre.dev').waitFor();
  await card.getByText('financeiro@demo-externo.com.br (EMAIL)').waitFor();
  await card.getByText('R$ 123,45').first().waitFor();
  await card.getByRole('img', { name: /Entradas em 14 dias: R\$ 123,45/ }).waitFor();
  await shot(page, 'console-campaigns-new.png');

  // End campaign: confirm, then the key is gone.
  await card.getByRole('button', { name: 'Encerrar campanha' }).click();
  await card.getByRole('button', { name: 'Confirmar encerramento' }).click();
  await page.getByText('Campanha encerrada').waitFor();
  await page.locator(`article[data-account="${accountId}"]`).getByText('Nenhuma chave Pix.').waitFor();
  const after = await (await api('/api/v1/pix-keys', appId)).json();
  assert.deepEqual(after.pixKeys, []);
  await context.close();
});

test('a user without API_PLUGINS does not see the section, and its server fns answer 403', async () => {
  const { page, context } = await signedIn(cofre.demo.memberEmail);
  await page.getByRole('heading', { name: 'Campanhas' }).waitFor();
  const nav = page.getByRole('navigation', { name: 'Seções' });
  assert.equal(await nav.getByRole('link', { name: 'API/Plugins' }).count(), 0);
  assert.equal(await nav.getByRole('link', { name: 'Plugins' }).count(), 0);
  assert.equal(await page.getByRole('link', { name: 'Nova campanha' }).count(), 0);
  await goto(page, '/api-plugins');
  await page.getByRole('alert').filter({ hasText: 'API_PLUGINS' }).waitFor();
  await shot(page, 'console-no-api-plugins.png');
  const answer = await page.evaluate(async () => {
    const r = await fetch('/console/fn/applications', { method: 'POST', headers: { Accept: 'application/json' } });
    return { status: r.status, body: await r.json() };
  });
  assert.equal(answer.status, 403);
  assert.equal(answer.body.Refused.code, 'CONSOLE_PERMISSION_MISSING');
  await context.close();
});

test('an uploaded example plugin is validated, bound, and its invocation shows in the log', async () => {
  const { page, context } = await signedIn(cofre.demo.adminEmail);
  await goto(page, '/plugins');
  await page.getByLabel('Nome').fill('Política de chaves');
  await page.getByLabel('Versão').fill('1.0.0');
  await page.getByLabel(/Componente/).setInputFiles(
    join(root, 'plugins', 'examples', 'target', 'wasm32-wasip2', 'release', 'pix_key_policy.wasm'),
  );
  await page.getByRole('button', { name: 'Enviar e validar' }).click();
  await page.getByText('Componente válido').waitFor();
  const card = page.locator('article.plugin', { hasText: 'Política de chaves' });
  await card.getByText('0.1.0').first().waitFor();

  await card.getByText('Ligar a um gancho').click();
  await card.getByLabel('Gancho').selectOption('check-pix-key');
  await card.getByLabel(/Configuração/).fill('allowed_types=EMAIL');
  await card.getByRole('button', { name: 'Salvar ligação' }).click();
  await page.locator('article.plugin dd', { hasText: 'check-pix-key → todas as contas allowed_types=EMAIL' }).waitFor();

  // The company rule refuses a random key over the API...
  const denied = await api('/api/v1/pix-keys', cofre.demo.masterAppId, {
    method: 'POST',
    body: JSON.stringify({ type: 'EVP' }),
  });
  assert.equal(denied.status, 400);
  assert.equal((await denied.json()).code, 'PIX_KEY_TYPE_NOT_ALLOWED');

  // ...and the console shows that invocation.
  const bound = page.locator('article.plugin', { hasText: 'Política de chaves' });
  await bound.getByRole('button', { name: 'Ver invocações' }).click();
  const row = bound.locator('table.invocations tbody tr').first();
  await row.waitFor();
  assert.match(await row.textContent(), /check-pix-key.*DENY.*PIX_KEY_TYPE_NOT_ALLOWED/);
  await shot(page, 'console-plugins.png');
  await context.close();
});

test('support switches a feature and the audit trail names who did it; English on request', async () => {
  const { page, context } = await signedIn(cofre.demo.supportEmail);
  await page.getByRole('link', { name: 'Suporte', exact: true }).click();
  await hydrated(page);
  const company = page.locator('article.company', { hasText: 'Cofre Demo' });
  await company.getByRole('button', { name: 'Desativar SPLIT' }).click();
  await page.locator('article.company', { hasText: 'Cofre Demo' }).getByRole('button', { name: 'Ativar SPLIT' }).waitFor();
  const trail = page.locator('table.audit tbody tr').first();
  await trail.waitFor();
  assert.match(await trail.textContent(), /suporte@cofre\.dev.*FEATURE_DISABLED.*SPLIT/);
  await shot(page, 'console-support.png');

  await page.getByRole('link', { name: 'EN' }).click();
  await page.getByRole('heading', { name: 'Audit trail' }).waitFor();
  assert.equal(await page.getAttribute('html', 'lang'), 'en');
  await context.close();
});

/// A Pix received on the demo key, disputed by the sandbox's central bank.
async function disputedPix(value) {
  const paid = await api('/api/v1/sandbox/pix', cofre.demo.masterAppId, {
    method: 'POST',
    body: JSON.stringify({ pixKey: 'cobranca@demo.cofre.dev', value, payer: { name: 'Joana' } }),
  });
  assert.ok(paid.ok, `sandbox Pix: ${paid.status}`);
  const { transaction } = await paid.json();
  const opened = await api('/api/v1/sandbox/dispute', cofre.demo.masterAppId, {
    method: 'POST',
    body: JSON.stringify({ transactionID: transaction.transactionID }),
  });
  assert.equal(opened.status, 200);
  return (await opened.json()).dispute;
}

test('support accepts a dispute on the Support page and its status changes', async () => {
  const dispute = await disputedPix(4321);
  // Another one stays in review, and an onboarding waits for KYC review.
  const waiting = await disputedPix(1500);
  const form = new FormData();
  form.append('purpose', 'KYC_DOCUMENT');
  form.append('file', new Blob(['%PDF-1.4\n1 0 obj<<>>endobj\ntrailer<<>>\n%%EOF\n'], { type: 'application/pdf' }), 'contrato-social.pdf');
  const uploaded = await fetch(`${cofre.base}/api/v1/files`, {
    method: 'POST', headers: { Authorization: cofre.demo.masterAppId }, body: form,
  });
  assert.equal(uploaded.status, 201);
  const { file } = await uploaded.json();
  const onboarding = await api('/api/v1/kyc/onboarding', cofre.demo.masterAppId, {
    method: 'POST',
    body: JSON.stringify({
      taxID: '11.222.333/0001-81',
      correlationID: 'kyc-e2e',
      representatives: [{
        name: 'Maria Souza', taxID: '529.982.247-25', email: 'maria@demo.cofre.dev',
        birthDate: '1990-01-01', documents: [file.id],
      }],
    }),
  });
  assert.equal(onboarding.status, 201);

  const { page, context, errors } = await signedIn(cofre.demo.supportEmail);
  await page.getByRole('link', { name: 'Suporte', exact: true }).click();
  await hydrated(page);
  await page.getByRole('heading', { name: 'Disputas' }).waitFor();
  const kyc = page.locator('article[data-onboarding="kyc-e2e"]');
  await kyc.getByText('Em análise').waitFor();
  await kyc.getByText('contrato-social.pdf').waitFor();
  await kyc.getByRole('button', { name: 'Pedir documentos' }).waitFor();
  const card = page.locator(`article[data-dispute="${dispute.id}"]`);
  await card.waitFor();
  await card.getByText('Em análise').waitFor();
  await card.getByText('R$ 43,21').waitFor();
  await card.getByText('Cofre Demo').waitFor();
  await card.getByLabel('Nota (opcional)').fill('Fraude confirmada pelo pagador');
  await card.getByRole('button', { name: 'Aceitar disputa' }).click();

  const closed = page.locator(`article[data-dispute="${dispute.id}"][data-status="ACCEPTED"]`);
  await closed.getByText('Aceita (valor devolvido ao pagador)').waitFor();
  await closed.getByText('Fraude confirmada pelo pagador').waitFor();
  assert.equal(await closed.getByRole('button', { name: 'Aceitar disputa' }).count(), 0);
  const other = page.locator(`article[data-dispute="${waiting.id}"]`);
  assert.equal(await other.getAttribute('data-status'), 'IN_REVIEW');
  await other.getByRole('button', { name: 'Aceitar disputa' }).waitFor();
  const trail = page.locator('table.audit tbody tr').first();
  assert.match(await trail.textContent(), new RegExp(`suporte@cofre\\.dev.*DISPUTE_ACCEPT.*${dispute.id}`));
  await shot(page, 'console-support-disputes.png');

  // The REST API agrees: accepted, and the other one untouched.
  const rest = await (await api(`/api/v1/dispute/${dispute.id}`, cofre.demo.masterAppId)).json();
  assert.equal(rest.dispute.status, 'ACCEPTED');
  assert.equal(rest.dispute.resolutionNote, 'Fraude confirmada pelo pagador');
  const untouched = await (await api(`/api/v1/dispute/${waiting.id}`, cofre.demo.masterAppId)).json();
  assert.equal(untouched.dispute.status, 'IN_REVIEW');
  assert.deepEqual(errors, []);
  await context.close();
});

test('a subscription made over the API is listed with its instalments and canceled in the console', async () => {
  const created = await api('/api/v1/subscriptions', cofre.demo.masterAppId, {
    method: 'POST',
    body: JSON.stringify({
      correlationID: 'academia-e2e', value: 8990, customer: { name: 'João Pagador', taxID: '529.982.247-25' },
      frequency: 'MONTHLY', dayGenerateCharge: 10, dayDue: 5, type: 'RECURRENT', chargeType: 'BOLETO',
    }),
  });
  assert.equal(created.status, 201);
  const { subscription } = await created.json();

  const { page, context, errors } = await signedIn(cofre.demo.adminEmail);
  await page.getByRole('navigation', { name: 'Seções' }).getByRole('link', { name: 'Assinaturas' }).click();
  await hydrated(page);
  const card = page.locator(`article[data-subscription="${subscription.id}"]`);
  await card.getByRole('heading', { name: /academia-e2e/ }).waitFor();
  await card.getByText('João Pagador').waitFor();
  await card.getByText('R$ 89,90').waitFor();
  await card.getByText('Mensal').waitFor();
  await card.getByRole('button', { name: 'Parcelas' }).click();
  const rows = card.locator('table.instalments tbody tr');
  await rows.nth(11).waitFor();
  assert.equal(await rows.count(), 12);
  await rows.first().getByText('Agendada (sem cobrança)').waitFor();
  await card.getByRole('button', { name: 'Abrir carnê' }).waitFor();
  await shot(page, 'console-subscriptions.png');

  // The payment book form's URL answers the PDF to this browser's session.
  const action = await card.locator('form.payment-book').getAttribute('action');
  const book = await page.evaluate(async (url) => {
    const r = await fetch(`${url}?month=12&year=${new Date().getFullYear() + 1}`);
    return { status: r.status, type: r.headers.get('content-type'), head: (await r.text()).slice(0, 4) };
  }, action);
  assert.deepEqual(book, { status: 200, type: 'application/pdf', head: '%PDF' });

  await card.getByRole('button', { name: 'Cancelar assinatura' }).click();
  await card.getByRole('button', { name: 'Confirmar cancelamento' }).click();
  await page.getByText('Assinatura cancelada: academia-e2e').waitFor();
  const canceled = page.locator(`article[data-subscription="${subscription.id}"][data-status="CANCELED"]`);
  await canceled.getByText('Cancelada').waitFor();
  assert.equal(await canceled.getByRole('button', { name: 'Cancelar assinatura' }).count(), 0);
  const rest = await (await api(`/api/v1/subscriptions/${subscription.id}`, cofre.demo.masterAppId)).json();
  assert.equal(rest.subscription.status, 'CANCELED');
  assert.deepEqual(errors, []);
  await context.close();
});

test('every page hydrates under the Content-Security-Policy, and a script slipped into a page does not run', async () => {
  for (const [email, paths] of [
    [cofre.demo.adminEmail, ['/', '/campaigns/new', '/api-plugins', '/plugins', '/webhooks', '/subscriptions', '/users']],
    [cofre.demo.supportEmail, ['/support']],
  ]) {
    const { page, context, errors } = await signedIn(email);
    for (const path of paths) {
      const response = await page.goto(`${cofre.base}${path}`);
      assert.match(response.headers()['content-security-policy'], /script-src 'self' 'nonce-[^']+' 'wasm-unsafe-eval'/);
      await hydrated(page);
    }
    // Hydrated actions still reach the server fns.
    await page.getByRole('button', { name: 'Sair' }).click();
    await page.waitForURL(`${cofre.base}/login`);
    assert.deepEqual(errors, [], email);

    // What an injected <script> or event handler would do is refused by the browser.
    const ran = await page.evaluate(async () => {
      const script = document.createElement('script');
      script.textContent = 'window.__injected = true';
      document.body.append(script);
      const img = document.createElement('img');
      img.setAttribute('onerror', 'window.__handler = true');
      img.src = 'data:,';
      document.body.append(img);
      await new Promise((r) => setTimeout(r, 200));
      return Boolean(window.__injected || window.__handler);
    });
    assert.equal(ran, false);
    assert.ok(errors.some((e) => /Content.Security.Policy/i.test(e)), 'the browser reported the refusal');
    await context.close();
  }
});
