import { existsSync, mkdirSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { chromium, type Browser } from 'playwright-core';

/** A system Chromium (Debian's chromium package by default; CHROMIUM_PATH for another); never a downloaded browser. */
export const CHROMIUM = process.env.CHROMIUM_PATH || '/usr/bin/chromium';
export const SCREENSHOTS = new URL('../../test-output/screenshots/', import.meta.url);

/**
 * Launches the system Chromium headless; a machine without it fails here, naming the package to install.
 * `media`: the fake capture devices and permission prompts a real-time call page needs.
 */
export async function launchChromium(opts: { media?: boolean } = {}): Promise<Browser> {
  if (!existsSync(CHROMIUM))
    throw new Error(
      `${CHROMIUM} is missing, and the browser tests need it: Debian/Ubuntu: apt-get install chromium; elsewhere set CHROMIUM_PATH to a Chromium or Chrome binary`,
    );
  mkdirSync(SCREENSHOTS, { recursive: true });
  return chromium.launch({
    executablePath: CHROMIUM,
    args: [
      '--headless',
      '--no-sandbox',
      '--disable-gpu',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
      '--autoplay-policy=no-user-gesture-required',
      ...(opts.media ? ['--use-fake-ui-for-media-stream', '--use-fake-device-for-media-stream'] : []),
    ],
  });
}

export const screenshotPath = (name: string) => new URL(`${name}.png`, SCREENSHOTS).pathname;

/** A tiny static server on its own port: a page of another origin than the emulator's listeners. */
export async function otherOrigin(html: string): Promise<{ url: string; close(): Promise<void> }> {
  const server: Server = createServer((_req, res) => {
    res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
    res.end(html);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    // `localhost`, not 127.0.0.1: a different host as well as a different port from the emulator's.
    url: `http://localhost:${port}/`,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
