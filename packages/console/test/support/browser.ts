import { existsSync, mkdirSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { type Browser, type Page, chromium } from 'playwright-core';

/** Debian's Chromium (package `chromium`); never a downloaded browser. */
export const CHROMIUM = process.env.FLINT_CHROMIUM ?? '/usr/bin/chromium';

/** Why the browser tests cannot run here, or undefined when they can. */
export const browserMissing: string | undefined = existsSync(CHROMIUM) ? undefined : `${CHROMIUM} is not installed (apt-get install chromium)`;

if (browserMissing !== undefined) {
  // In CI (FLINT_REQUIRE_BROWSER=1) a missing browser is a failure, never a silent skip.
  if (process.env.FLINT_REQUIRE_BROWSER === '1') throw new Error(`FLINT_REQUIRE_BROWSER=1 but ${browserMissing}`);
  console.log(`skipping the console's browser tests: ${browserMissing}`);
}

/** Screenshots of every browser test land here (git-ignored), one PNG per test step. */
export const SCREENSHOTS = join(dirname(fileURLToPath(import.meta.url)), '..', '..', 'test-results', 'screenshots');

export function launchBrowser(): Promise<Browser> {
  return chromium.launch({
    executablePath: CHROMIUM,
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--no-first-run', '--disable-sync'],
  });
}

/** Saves a full-page screenshot as test-results/screenshots/<name>.png. */
export async function screenshot(page: Page, name: string): Promise<void> {
  mkdirSync(SCREENSHOTS, { recursive: true });
  await page.screenshot({ path: join(SCREENSHOTS, `${name}.png`), fullPage: true });
}

/** A page of the console with the errors it logged (a test fails on any). */
export interface ConsolePage {
  page: Page;
  errors: string[];
  /** Opens `path` (e.g. `/functions?fn=x`) on the console at `base`. */
  open(path: string): Promise<void>;
  close(): Promise<void>;
}

export async function openConsolePage(browser: Browser, base: string): Promise<ConsolePage> {
  const context = await browser.newContext({ viewport: { width: 1400, height: 900 } });
  const page = await context.newPage();
  const errors: string[] = [];
  page.on('pageerror', (err) => errors.push(String(err)));
  page.on('console', (msg) => {
    // A failed API call the page shows as an error is expected in some tests; anything else is a defect.
    if (msg.type() === 'error' && !/Failed to load resource/.test(msg.text())) errors.push(msg.text());
  });
  return {
    page,
    errors,
    open: async (path) => {
      await page.goto(`${base}${path}`);
    },
    close: () => context.close(),
  };
}
