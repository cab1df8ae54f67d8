// SPDX-License-Identifier: Apache-2.0
// The page's live feed from a trail the test writes: the command broker's
// denials are shown; and when the feed falls behind (a trail that grows by
// 20,000 records at once, more than the 10,000 the event stream keeps), the
// page says how many records it did not show.
// Needs no kernel policy: the dashboard reads trails, whoever wrote them.
//
// node feed_skipped.mjs --url URL --trail FILE
// Prints one line per check and ends with "N passed, N failed".
import { appendFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { check, finish, launchChromium } from './checks.mjs';

const { values: opt } = parseArgs({ options: { url: { type: 'string' }, trail: { type: 'string' } } });

const browser = await launchChromium();
try {
  const page = await browser.newPage();
  await page.goto(opt.url);
  await page.waitForFunction(() => document.getElementById('connection').textContent === 'live');
  check('control: a feed that keeps up says nothing is missing', await page.isHidden('#feed-skipped'));
  // The command broker's records, as it writes them: a denied call and an allowed one that ran.
  appendFileSync(opt.trail, '{"type":"command","time":"2026-12-06T10:00:00.000Z","id":"agent","tool":"git",' +
    '"args":["push","--force","origin","main"],"cwd":"/w","verdict":"denied","backend":"static",' +
    '"rule":"commands.git.deny[0] \\"push --force *\\"","duration_ms":0}\n' +
    '{"type":"command","time":"2026-12-06T10:00:01.000Z","id":"agent","tool":"git","args":["status"],"cwd":"/w",' +
    '"verdict":"allowed","backend":"webhook","rule":"commands.git.allow[0] \\"status\\"; webhook: fine",' +
    '"status":0,"duration_ms":12}\n');
  const shownCommand = await page.waitForSelector('#feed tbody tr[data-type="command"]', { timeout: 5000 })
    .then(() => true, () => false);
  const rows = shownCommand ? await page.$$eval('#feed tbody tr[data-type="command"]',
    (trs) => trs.map((tr) => ({ denied: tr.classList.contains('denied'), text: tr.textContent }))) : [];
  check('a brokered call the policy denied is in the feed, marked denied, with its rule',
    rows.length === 1 && rows[0].denied && rows[0].text.includes('git push --force origin main') &&
    rows[0].text.includes('commands.git.deny[0]'), JSON.stringify(rows));
  check('control: an allowed call is not (the feed is of denials)',
    rows.every((r) => !r.text.includes('git status')), JSON.stringify(rows));
  let burst = '';
  for (let n = 1; n <= 20000; n++) burst += `{"type":"denial","id":"burst","op":"connect","target":"203.0.113.9:443","n":${n}}\n`;
  appendFileSync(opt.trail, burst);
  const shown = await page.waitForFunction(() => !document.getElementById('feed-skipped').hidden, null,
    { timeout: 10000 }).then(() => true, () => false);
  const text = shown ? await page.textContent('#feed-skipped') : '';
  // 10,000 when the dashboard reads the burst in one go; fewer when it reads it in parts.
  const missed = Number((/^(\d+) records were not shown here/.exec(text) || [])[1] || 0);
  check('a burst past the kept window: the page says how many records it did not show',
    missed > 0 && missed <= 10000, text);
} finally {
  await browser.close();
}
finish();
