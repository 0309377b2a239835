/**
 * The compose files agree with the Dockerfile and with docs/scaling.md: the ports the image exposes
 * are the ones published, the data volume is where the image keeps its data dir, the healthcheck is
 * the image's, and the scaling file runs HAProxy with the configuration the doc prints (which
 * test/foundation/scaling-haproxy.test.ts runs for real) against the services it defines.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { docConfig } from '../helpers/proxies.js';

const ROOT = join(import.meta.dirname, '..', '..');
const read = (file: string) => readFileSync(join(ROOT, file), 'utf8');

interface Service {
  build?: string;
  image?: string;
  ports?: string[];
  environment?: Record<string, string>;
  volumes?: string[];
  healthcheck?: { test: string[] };
  depends_on?: Record<string, { condition: string }>;
}
const compose = (file: string) => parse(read(file), { merge: true }) as { services: Record<string, Service>; volumes?: Record<string, unknown> };

/** What the Dockerfile's final stage says: exposed ports, the data dir it prepares, its healthcheck command, its ENV ports. */
function dockerfile() {
  const text = read('Dockerfile').replace(/\\\n\s*/g, ' ');
  const final = text.slice(text.lastIndexOf('\nFROM '));
  const exposed = [...final.matchAll(/^EXPOSE (.+)$/gm)].flatMap((m) => m[1]!.replace(/#.*/, '').trim().split(/\s+/));
  const dataDir = /mkdir -p (\/\S+) && chown node:node \1/.exec(final)?.[1];
  const health = /^HEALTHCHECK .*?CMD (\[.*\])$/m.exec(final)?.[1];
  const env = Object.fromEntries([...final.matchAll(/\b(EMULATOR_\w+_PORT)=(\d+)/g)].map((m) => [m[1]!, m[2]!]));
  return { exposed, dataDir, health: health ? ['CMD', ...(JSON.parse(health) as string[])] : undefined, env };
}

/** "host:container" → the container port. */
const containerPort = (mapping: string) =>
  mapping
    .split(':')
    .at(-1)!
    .replace(/\/tcp$/, '');

describe('the compose files, against the Dockerfile and docs/scaling.md', () => {
  const image = dockerfile();
  const listeners = [image.env.EMULATOR_SPEECH_PORT!, image.env.EMULATOR_SPEECH_BACKUP_PORT!, image.env.EMULATOR_PLATFORM_PORT!];

  it('the Dockerfile exposes the three listeners its ENV sets, prepares /data and has a healthcheck', () => {
    // (Ports the emulator adds later, such as the call room's media, come on top of these.)
    expect(image.exposed).toEqual(expect.arrayContaining(listeners));
    expect(image.dataDir).toBe('/data');
    expect(image.health?.[0]).toBe('CMD');
  });

  it('docker-compose.yml publishes every exposed port, uses the image healthcheck; the persist override mounts the data dir', () => {
    const one = compose('docker-compose.yml').services['speech-emulator']!;
    expect(one.build).toBe('.');
    expect(one.ports!.map(containerPort).sort()).toEqual([...image.exposed].sort());
    expect(one.healthcheck!.test).toEqual(image.health);
    const persist = compose('docker-compose.persist.yml');
    const over = persist.services['speech-emulator']!;
    expect(over.environment!.EMULATOR_DATA_DIR).toBe(image.dataDir);
    const [volume, at] = over.volumes![0]!.split(':');
    expect(at).toBe(image.dataDir);
    expect(persist.volumes).toHaveProperty(volume!);
  });

  it('docker-compose.scaling.yml: two emulators, each with its own data volume and link base, behind HAProxy with the doc configuration', () => {
    const file = compose('docker-compose.scaling.yml');
    const emulators = Object.entries(file.services).filter(([, s]) => s.build === '.');
    expect(emulators.map(([name]) => name)).toEqual(['emu-0', 'emu-1']);
    const proxy = file.services.proxy!;
    const published = proxy.ports!.map((p) => p.split(':'));
    // The proxy publishes the emulator's three listeners, each on the same number (clients use them as one emulator's).
    expect(published.map(([, c]) => c).sort()).toEqual([...listeners].sort());
    for (const [host, container] of published) expect(host).toBe(container);
    const volumes = new Set<string>();
    for (const [name, emu] of emulators) {
      expect(emu.ports, `${name} is reached through the proxy only`).toBeUndefined();
      expect(emu.healthcheck!.test).toEqual(image.health);
      expect(emu.environment!.EMULATOR_DATA_DIR).toBe(image.dataDir);
      const [volume, at] = emu.volumes![0]!.split(':');
      expect(at).toBe(image.dataDir);
      expect(file.volumes).toHaveProperty(volume!);
      volumes.add(volume!);
      expect(emu.environment!.EMULATOR_PUBLIC_URL).toBe(`http://localhost:${image.env.EMULATOR_PLATFORM_PORT}/${name}`);
      expect(proxy.depends_on![name]).toEqual({ condition: 'service_healthy' });
    }
    expect(volumes.size, 'never two emulators on one data dir').toBe(emulators.length);
    // HAProxy reads deploy/haproxy.cfg: the doc's configuration, unchanged; it names these services on the image's ports.
    const mount = proxy.volumes!.find((v) => v.includes('haproxy.cfg'))!;
    expect(mount.split(':')[1]).toBe('/usr/local/etc/haproxy/haproxy.cfg');
    const cfg = read(mount.split(':')[0]!);
    expect(cfg).toBe(docConfig('haproxy'));
    const targets = [...cfg.matchAll(/\b(emu-\d+):(\d+)\b/g)].map((m) => [m[1]!, m[2]!] as const);
    expect(new Set(targets.map(([name]) => name))).toEqual(new Set(emulators.map(([name]) => name)));
    for (const [, port] of targets) expect(image.exposed).toContain(port);
    for (const bind of cfg.matchAll(/\bbind :(\d+)/g)) expect(image.exposed).toContain(bind[1]);
  });
});
