/**
 * The corridors of docs/architecture.md ("The rooms and the corridors"), checked on every import of src/ (`npm run lint:deps`,
 * run by CI before the tests). A rule names the corridor it keeps; each named exception is its own rule. Every rule is
 * proven by a planted import that breaks it (test/unit/corridors.test.ts).
 */

/**
 * The rooms of core/, lowest first: a room imports its own files and the rooms below it, never one above. emulator.ts,
 * account-sweep.ts and idle-release.ts sit on top of them all: they compose the instance, and no room imports them (a room that needs
 * part of the instance names the part, e.g. `LifecycleHost`, `AreaHost`, `SocketHost`).
 */
const CORE_ROOMS = ['faults', 'state', 'journal', 'http', 'stream', 'socket'];

/**
 * Helpers any room of core/ may use, because they import nothing of src/ (a rule below holds them to it): zod problems
 * in words, bounded memory while a body streams, a value in a message, tar and zip writers.
 */
const CORE_LEAVES = '^src/core/(http/(validation|memory|describe)[.]ts|archive/)';

function roomRule(room, index) {
  const allowed = CORE_ROOMS.slice(0, index + 1).join('|');
  const below = CORE_ROOMS.slice(0, index);
  return {
    name: `core-${room}-only-below`,
    comment: below.length
      ? `core/${room}/ imports its own files, the rooms below it (${below.join(', ')}) and the leaf helpers; never a room above it nor the instance.`
      : `core/${room}/ is the lowest room: it imports its own files and the leaf helpers only.`,
    severity: 'error',
    from: { path: `^src/core/${room}/` },
    to: { path: '^src/core/', pathNot: [`^src/core/(${allowed})/`, CORE_LEAVES] },
  };
}

module.exports = {
  forbidden: [
    ...CORE_ROOMS.map(roomRule),
    {
      name: 'core-leaves-import-nothing',
      comment: 'The leaf helpers of core/ import nothing of src/: that is what lets every room use them.',
      severity: 'error',
      from: { path: CORE_LEAVES },
      to: { path: '^src/', pathNot: CORE_LEAVES },
    },
    {
      name: 'no-circular',
      comment: 'No import circle anywhere in src/, type-only imports included: what sits below what must be readable from the imports.',
      severity: 'error',
      from: { path: '^src/' },
      to: { circular: true },
    },
    {
      name: 'core-not-to-audio',
      comment:
        'core/ knows no service and no audio engine: a service that needs the engine in a schema (a tag list) declares ' +
        'that schema itself and registers it (core/service.ts).',
      severity: 'error',
      from: { path: '^src/core/' },
      to: { path: '^src/audio/' },
    },
    {
      name: 'core-not-to-entry',
      comment:
        'core/ never imports the entry (app.ts, config.ts, main.ts, index.ts…): the settings core reads are its own ' +
        '`EmulatorConfig`, which the entry extends.',
      severity: 'error',
      from: { path: '^src/core/' },
      to: { path: '^src/[^/]+[.]ts$' },
    },
    {
      name: 'client-stands-alone',
      comment:
        'The published client (speech-emulator/client) imports nothing of the server: its types are written out and ' +
        'held equal to the server by test/client/types.test.ts.',
      severity: 'error',
      from: { path: '^src/client/' },
      to: { path: '^src/', pathNot: '^src/client/' },
    },
    {
      name: 'core-and-audio-stay-below-services',
      comment: 'core/ and audio/ never import from services/: they know nothing of a service.',
      severity: 'error',
      from: { path: '^src/(core|audio)/' },
      to: { path: '^src/services/' },
    },
    {
      name: 'core-audio-not-to-control',
      comment: 'core/ and audio/ never import from control/: the control plane is built on them, not under them.',
      severity: 'error',
      from: { path: '^src/(core|audio)/' },
      to: { path: '^src/control/' },
    },
    {
      name: 'services-not-to-control',
      comment: 'Neither service imports control/: the control plane reads the services, never the other way.',
      severity: 'error',
      from: { path: '^src/services/' },
      to: { path: '^src/control/' },
    },
    {
      name: 'services-not-to-composer',
      comment: 'src/app.ts composes the listeners from the services; a service never imports its composer.',
      severity: 'error',
      from: { path: '^src/services/' },
      to: { path: '^src/app[.]ts$' },
    },
    {
      name: 'shared-stays-below-services',
      comment: 'services/shared/ holds what both services read and neither owns: it imports neither.',
      severity: 'error',
      from: { path: '^src/services/shared/' },
      to: { path: '^src/services/(speech|platform)/' },
    },
    {
      name: 'speech-and-platform-apart',
      comment: 'The two services never import each other; what both need lives in services/shared/.',
      severity: 'error',
      from: { path: '^src/services/speech/' },
      to: { path: '^src/services/platform/' },
    },
    {
      name: 'platform-and-speech-apart',
      comment: 'The two services never import each other; what both need lives in services/shared/.',
      severity: 'error',
      from: { path: '^src/services/platform/' },
      to: { path: '^src/services/speech/' },
    },
    {
      name: 'platform-area-not-to-sibling',
      comment:
        'A platform area imports core/, audio/, services/shared/, platform/shared/, the envelope and the families, ' +
        'never a sibling area (mcp/ has its own rule below).',
      severity: 'error',
      from: { path: '^src/services/platform/([^/]+)/', pathNot: '^src/services/platform/(shared|mcp)/' },
      to: { path: '^src/services/platform/[^/]+/', pathNot: ['^src/services/platform/shared/', '^src/services/platform/$1/'] },
    },
    {
      name: 'platform-shared-below-areas',
      comment: 'platform/shared/ holds what several platform areas use: it imports the envelope and the families, ' + 'never an area.',
      severity: 'error',
      from: { path: '^src/services/platform/shared/' },
      to: { path: '^src/services/platform/[^/]+/', pathNot: '^src/services/platform/shared/' },
    },
    {
      name: 'mcp-only-to-the-operations-it-mirrors',
      comment:
        'The named exception of docs/architecture.md: each /mcp tool is an HTTP operation called directly, so mcp/ imports ' +
        'the models and schemas of tts/, voices/ and diarization/ (a copy would drift), and no other area.',
      severity: 'error',
      from: { path: '^src/services/platform/mcp/' },
      to: {
        path: '^src/services/platform/[^/]+/',
        pathNot: ['^src/services/platform/(shared|mcp)/', '^src/services/platform/(tts|voices|diarization)/(model|schema)[.]ts$'],
      },
    },
    {
      name: 'speech-area-not-to-sibling',
      comment:
        "A speech area imports core/, audio/, services/shared/ and the service's own top-level files (model, schema, " +
        'errors, state…), never a sibling area (the stores of voices/ and files/ have their own rule below).',
      severity: 'error',
      from: { path: '^src/services/speech/([^/]+)/', pathNot: '^src/services/speech/bidi/' },
      to: {
        path: '^src/services/speech/[^/]+/',
        pathNot: ['^src/services/speech/$1/', '^src/services/speech/(voices|files)/'],
      },
    },
    {
      name: 'bidi-only-to-the-socket-it-builds-on',
      comment:
        'The named exception of the speech sockets: the bidirectional socket is the synthesis socket with sentence ' +
        'buffering on top, so bidi/ uses the shared socket parts of ws/ (piece, schema, socket route) and no other area.',
      severity: 'error',
      from: { path: '^src/services/speech/bidi/' },
      to: {
        path: '^src/services/speech/[^/]+/',
        pathNot: ['^src/services/speech/(bidi|voices|files)/', '^src/services/speech/ws/(piece|schema|socket|subtitles)[.]ts$'],
      },
    },
    {
      name: 'speech-stores-not-their-routes',
      comment:
        'The named exception of the speech service: voices/ and files/ keep the records that voice cloning, voice ' +
        'design and async synthesis make and read, so those areas use their models and stores, never their routes.',
      severity: 'error',
      from: { path: '^src/services/speech/([^/]+)/' },
      to: { path: '^src/services/speech/(voices|files)/routes[.]ts$', pathNot: '^src/services/speech/$1/' },
    },
    {
      name: 'tapes-above-core-and-services',
      comment:
        'The tapes (src/tapes/) record and replay exchanges around the services: core/, audio/ and the services never ' +
        'import them (a service declares what its tapes need in its registration, core/service.ts `tapes`), so an ' +
        'emulator started without --record or --replay never loads them.',
      severity: 'error',
      from: { path: '^src/(core|audio|services)/' },
      to: { path: '^src/tapes/' },
    },
    {
      name: 'tapes-not-to-services',
      comment:
        'The tapes read the services through their registrations (core/service.ts), handed to them by the composer; ' +
        'they never import a service, the control plane or the entry.',
      severity: 'error',
      from: { path: '^src/tapes/' },
      to: { path: '^src/(services|control)/|^src/[^/]+[.]ts$' },
    },
    {
      name: 'every-import-resolves',
      comment:
        'An import of our own files the checker cannot resolve would pass every rule unseen (packages are not ' +
        'followed, so only relative imports are held to it).',
      severity: 'error',
      from: { path: '^src/' },
      to: { couldNotResolve: true, path: '^[.]' },
    },
  ],
  options: {
    // Not `includeOnly: '^src/'`: that would drop an unresolved import (its name is as written, `./gone.js`) before
    // every-import-resolves could see it.
    doNotFollow: { path: 'node_modules' },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
    enhancedResolveOptions: { extensions: ['.ts', '.js'] },
  },
};
