// SPDX-License-Identifier: Apache-2.0
// An ask answered in the dashboard (Debian's chromium, headless, driven by
// playwright-core): a policed container's lookup of a name its ask_hosts
// lists waits at the DNS gate, appears on the page, and resolves once the
// test clicks "once" there. Before that, while it waits, a page served on
// another loopback port (another origin, the same site: the dashboard's
// cookie goes along) posts a forged form to the answer's URL, and a script
// posts with the cookie alone: both are refused and the ask stays pending.
//
// node ask.mjs --url URL --token TOKEN --go FILE --container ID --out FILE --name NAME --address ADDRESS
//   --go: the file whose creation lets the container's agent look NAME up
//   --out: the agent's output, where the lookup's answer (ADDRESS) arrives
// Prints one line per check and ends with "N passed, N failed".
import { check, finish, launchChromium, waitFor } from './checks.mjs';
import { createServer } from 'node:http';
import { readFileSync, writeFileSync } from 'node:fs';
import { parseArgs } from 'node:util';

const { values: opt } = parseArgs({
  options: {
    url: { type: 'string' },
    token: { type: 'string' },
    go: { type: 'string' },
    container: { type: 'string' },
    out: { type: 'string' },
    name: { type: 'string' },
    address: { type: 'string' },
  },
});
const base = opt.url.replace(/\/$/, '');
const agentOut = () => { try { return readFileSync(opt.out, 'utf8'); } catch (e) { return ''; } };

async function pendingAsks() {
  const list = await (await fetch(base + '/api/containers', { headers: { Authorization: `Bearer ${opt.token}` } })).json();
  return (list.find((c) => c.id === opt.container) || {}).asks || [];
}

// The other origin: a page that posts the answer as a form would (text/plain carrying JSON, no custom header).
function attackerSite(target) {
  const server = createServer((req, res) => {
    res.setHeader('Content-Type', 'text/html');
    res.end(`<!doctype html><form id="f" method="POST" enctype="text/plain" action="${target}">` +
      '<input name=\'{"answer":"always","x":"\' value=\'"}\'></form>' +
      '<script>document.getElementById("f").submit()</script>');
  });
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve(server)));
}

async function main() {
  const browser = await launchChromium();
  let attacker = null;
  try {
    const context = await browser.newContext({ viewport: { width: 1400, height: 900 } });
    const page = await context.newPage();
    const pageErrors = [];
    page.on('pageerror', (e) => pageErrors.push(String(e)));
    await page.goto(`${base}/?token=${encodeURIComponent(opt.token)}`);
    await page.waitForSelector(`#containers tr[data-container="${opt.container}"]`, { timeout: 10000 });
    check('control: no ask on the page before the agent looks the name up',
      await page.$eval('#asks-section', (s) => s.hidden) && (await pendingAsks()).length === 0);

    writeFileSync(opt.go, '');
    const row = '#asks tbody tr.ask-row';
    await page.waitForSelector(row, { timeout: 10000 });
    const cells = await page.$eval(row, (tr) => Object.fromEntries([...tr.children].map((td) => [td.className, td.textContent])));
    const id = await page.$eval(row, (tr) => tr.dataset.ask);
    check('the held lookup appears on the page with its container and name',
      cells.container === opt.container && cells.subject === `host ${opt.name}`, JSON.stringify(cells));
    check('with the ask_hosts entry that asked', cells.context.startsWith('ask_hosts'), cells.context);
    check('the lookup waits', !agentOut().includes(opt.address) && !agentOut().includes('lookup-done'), agentOut());

    // Forged: a form posted from another origin, which carries the dashboard's cookie (same site) but no key.
    attacker = await attackerSite(`${base}/api/asks/${id}/answer`);
    const forged = await context.newPage();
    const response = await forged.goto(`http://127.0.0.1:${attacker.address().port}/`);
    const posted = await forged.waitForURL(`${base}/api/asks/${id}/answer`, { timeout: 5000 }).then(() => true, () => false);
    const refusedText = posted ? await forged.textContent('body') : '';
    check('a forged form post from another origin reaches the dashboard and is refused',
      posted && /refused|cookie alone|JSON/.test(refusedText), `${response && response.status()} ${refusedText}`);
    await forged.close();
    const cookieOnly = await page.evaluate(async (url) => {
      const r = await fetch(url, { method: 'POST', headers: { 'Content-Type': 'application/json' },
        body: JSON.stringify({ answer: 'always' }) });
      return r.status;
    }, `${base}/api/asks/${id}/answer`);
    check(`the page's cookie alone does not answer (${cookieOnly})`, cookieOnly === 403);
    check('the ask is still pending, the lookup still waiting',
      (await pendingAsks()).some((a) => a.id === id) && !agentOut().includes(opt.address));

    // The control: the page's own button answers.
    await page.click(`${row}[data-ask="${id}"] button.once`);
    await page.waitForFunction((want) => document.getElementById('ask-result').textContent.includes(want),
      `ask ${id} allowed once by uid 0`, { timeout: 5000 }).catch(() => {});
    check('approved on the page', (await page.textContent('#ask-result')) === `ask ${id} allowed once by uid 0`,
      await page.textContent('#ask-result'));
    const resolved = await waitFor('the lookup to resolve', async () => agentOut().includes(opt.address), 10).catch(() => false);
    check(`the held lookup resolves (${opt.name} -> ${opt.address})`, resolved, agentOut());
    await page.waitForSelector('#asks-section', { state: 'hidden', timeout: 5000 }).catch(() => {});
    check('and the ask leaves the page', await page.$eval('#asks-section', (s) => s.hidden));
    check('no script error on the page', pageErrors.length === 0, pageErrors.join('; '));
  } finally {
    if (attacker) attacker.close();
    await browser.close();
  }
}

try {
  await main();
} catch (e) {
  check('the browser test ran to its end', false, e.message);
}
finish();
