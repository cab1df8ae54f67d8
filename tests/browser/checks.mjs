// SPDX-License-Identifier: Apache-2.0
// What the browser tests share: one line per check, a closing count and exit
// status, and Debian's chromium launched by playwright-core (no download).
import { chromium } from 'playwright-core';

let passed = 0;
let failed = 0;

export function check(name, ok, detail = '') {
  if (ok) passed++;
  else failed++;
  console.log(`${ok ? 'ok' : 'FAIL'} ${name}${ok || !detail ? '' : ': ' + detail}`);
  return ok;
}

export const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

// The predicate's first truthy value, asked every 100 ms (a throw counts as not yet); throws after seconds.
export async function waitFor(what, predicate, seconds) {
  const until = Date.now() + seconds * 1000;
  while (Date.now() < until) {
    try {
      const value = await predicate();
      if (value) return value;
    } catch (e) {
      /* not yet */
    }
    await sleep(100);
  }
  throw new Error(`timed out waiting for ${what}`);
}

// Prints "N passed, N failed" and exits 0 only when something passed and nothing failed.
export function finish() {
  console.log(`${passed} passed, ${failed} failed`);
  process.exit(failed === 0 && passed > 0 ? 0 : 1);
}

export function launchChromium() {
  return chromium.launch({
    executablePath: '/usr/bin/chromium',
    args: ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking',
      '--disable-component-update', '--disable-sync'],
  });
}
