// SPDX-License-Identifier: Apache-2.0
// The dashboard in a real browser (Debian's chromium, headless, driven by
// playwright-core): the page opens, a policed container is denied a connect
// while the page watches, and the row must appear within 2 s with the right
// fields; the name of the program that made it, markup, must show as text.
// Then the agent reads a file outside its paths: that denial (from the BPF LSM
// programs, or under landlock from the kernel audit log) reaches the page by
// the same trail.
//
// node dashboard.mjs --url URL --token TOKEN --go FILE --container ID --hostile NAME --screenshot FILE
//   --go: the file whose creation lets the container's agent make its connect
//   --hostile: the agent's program, /bin/NAME (its command name is the first 15 bytes)
// Prints one line per check and ends with "N passed, N failed".
import { check, finish, launchChromium, waitFor } from './checks.mjs';
import { writeFileSync } from 'node:fs';
import { parseArgs } from 'node:util';

const { values: opt } = parseArgs({
  options: {
    url: { type: 'string' },
    token: { type: 'string' },
    go: { type: 'string' },
    container: { type: 'string' },
    hostile: { type: 'string' },
    screenshot: { type: 'string' },
  },
});
const base = opt.url.replace(/\/$/, '');
const hostileExe = `/bin/${opt.hostile}`;
const hostileComm = opt.hostile.slice(0, 15); // the kernel's TASK_COMM_LEN less its NUL

async function api(path, headers = {}) {
  return fetch(base + path, { headers: { Authorization: `Bearer ${opt.token}`, ...headers }, redirect: 'manual' });
}

async function main() {
  await waitFor('the dashboard', async () => (await api('/api/containers')).ok, 10);
  await waitFor(`container ${opt.container} running`, async () => {
    const list = await (await api('/api/containers')).json();
    return list.some((c) => c.id === opt.container && c.status === 'running');
  }, 10);

  // The API's guard, beside its control above (the token opens it).
  check('no token: 401', (await fetch(base + '/api/containers')).status === 401);
  check('a wrong token: 401', (await api('/api/containers', { Authorization: 'Bearer wrong-token-0123456789' })).status === 401);
  const cross = await api('/api/containers', { Origin: 'http://attacker.example' });
  check('no CORS header for another origin', cross.ok && !cross.headers.has('access-control-allow-origin'));
  check('a strict content security policy', (cross.headers.get('content-security-policy') || '').includes("script-src 'self'"));
  check('a POST other than an answer is refused', (await fetch(base + '/api/containers', {
    method: 'POST', headers: { Authorization: `Bearer ${opt.token}` } })).status === 405);

  const browser = await launchChromium();
  try {
    const page = await browser.newPage({ viewport: { width: 1400, height: 900 } });
    const pageErrors = [];
    page.on('pageerror', (e) => pageErrors.push(String(e)));
    await page.goto(`${base}/?token=${encodeURIComponent(opt.token)}`);
    check('the token in the address leaves it for a cookie', new URL(page.url()).search === '');
    await page.waitForSelector(`#containers tr[data-container="${opt.container}"]`, { timeout: 10000 });
    await page.waitForFunction(() => document.getElementById('connection').textContent === 'live', null, { timeout: 10000 });
    check('the page lists the container, live', true);

    const row = `#feed tbody tr.denied[data-container="${opt.container}"][data-op="connect"]`;
    const openRow = `#feed tbody tr.denied[data-container="${opt.container}"][data-op="open"]`;
    check('control: no denial on the page before the agent acts', (await page.$$(`${row}, ${openRow}`)).length === 0);
    writeFileSync(opt.go, '');
    const t0 = Date.now();
    let appeared = true;
    try {
      await page.waitForSelector(row, { timeout: 2000 });
    } catch (e) {
      appeared = false;
    }
    const latency = Date.now() - t0;
    check(`the denied connect is on the page within 2 s (${latency} ms)`, appeared);
    if (appeared) {
      const cells = await page.$eval(row, (tr) => Object.fromEntries(
        [...tr.children].map((td) => [td.className, td.textContent])));
      check('its container', cells.container === opt.container, cells.container);
      check('its process, markup shown as text', cells.process.startsWith(`${hostileComm}[`) &&
        cells.process.endsWith(` ${hostileExe}`), cells.process);
      check('its op', cells.op === 'connect', cells.op);
      check('its target', cells.target === '192.0.2.1:443', cells.target);
      check('its rule', cells.rule === 'not in allowed_hosts', cells.rule);
      check('its errno', cells.errno === 'EPERM (1)', cells.errno);
      check('its time', /^(\d{4}-\d\d-\d\d )?\d\d:\d\d:\d\d\.\d{3}$/.test(cells.time), cells.time);
      check('in red', await page.$eval(row, (tr) => getComputedStyle(tr.querySelector('.op')).color) === 'rgb(198, 40, 40)');
    }
    // The read comes after the connect's program ends (it holds 5 s).
    let openCells = null;
    try {
      await page.waitForSelector(openRow, { timeout: 10000 });
      openCells = await page.$eval(openRow, (tr) => Object.fromEntries(
        [...tr.children].map((td) => [td.className, td.textContent])));
    } catch (e) {
      /* checked below */
    }
    check('the denied file read is on the page too', openCells !== null &&
      // The BPF LSM's rule says `not in allowed_paths`, Landlock's (which cannot tell) `... or read_only_paths`.
      openCells.target === '/secret.txt' && openCells.rule.startsWith('not in allowed_paths') &&
      openCells.errno === 'EACCES (13)', JSON.stringify(openCells));
    check('the markup made no element',  await page.evaluate(() =>
      document.querySelectorAll('#feed img, #feed b, #containers img, #containers b').length === 0 && window.__pwned === undefined));

    // Filters: by op, then by container.
    await page.selectOption('#filter-op', 'connect');
    check('the op filter keeps only connects', await page.$$eval('#feed tbody tr', (rows) =>
      rows.filter((r) => !r.hidden).every((r) => r.dataset.op === 'connect') && rows.some((r) => !r.hidden)));
    await page.selectOption('#filter-op', '');
    await page.selectOption('#filter-container', opt.container);
    check('the container filter keeps only its rows', await page.$$eval('#feed tbody tr', (rows) =>
      rows.filter((r) => !r.hidden).every((r) => r.dataset.container === document.getElementById('filter-container').value)));

    // The container's trail, searchable, with its chart.
    await page.click(`#containers tr[data-container="${opt.container}"]`);
    await page.waitForSelector('#detail-trail tbody tr[data-type="start"]', { timeout: 5000 });
    const backend = (await (await api('/api/containers')).json()).find((c) => c.id === opt.container).enforcement;
    const startText = await page.textContent('#detail-trail tbody tr[data-type="start"]');
    // What the backend cannot report never reaches the trail: the start row must say so, or say nothing.
    const start = (await (await api(`/api/trail?id=${encodeURIComponent(opt.container)}`)).json())
      .records.find((r) => r.type === 'start');
    const unreported = start.not_reported || [];
    check(`the trail's start row names the backend and what it does not report (${backend}: ${unreported.length})`,
      startText.includes(`enforced by ${backend}`) && (unreported.length === 0
        ? !startText.includes('not reported') : startText.includes(`not reported by this backend: ${unreported.join('; ')}`)),
      startText);
    await page.fill('#detail-search', 'onerror');
    check('the trail search finds the hostile program', await page.$$eval('#detail-trail tbody tr', (rows) =>
      rows.length === 1 && rows[0].textContent.includes('<img')));
    check('the chart has bars', (await page.$$('#detail-chart rect')).length > 0);
    await page.fill('#detail-search', '');
    check('no script error on the page', pageErrors.length === 0, pageErrors.join('; '));
    await page.screenshot({ path: opt.screenshot, fullPage: true });
    console.log(`screenshot: ${opt.screenshot}`);
  } finally {
    await browser.close();
  }
}

try {
  await main();
} catch (e) {
  check('the browser test ran to its end', false, e.message);
}
finish();
