// SPDX-License-Identifier: Apache-2.0
// The page when the live feed falls behind: a dashboard on this host follows a
// trail that grows by 20,000 records at once (more than the 10,000 the event
// stream keeps), and the page must say how many records it did not show.
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
