/**
 * Who the bot of a room is: the voice it speaks with, its language and its greeting. A call's bot is
 * the session's role (`timbre`, roles.json) in the session's language; an agent session's bot is the
 * agent (agents.json). The greeting is an emulator rule: the fixture's `greeting` when it has one,
 * else a sentence made from the role's or agent's name in its language (DEFAULT_GREETING).
 */
import type { Emulator } from '../../../../core/emulator.js';
import { findRole } from '../../shared/roles.js';

export interface Persona {
  /** The synthesis voice of every word the bot says. */
  voiceId: string;
  /** `zh` / `en`: the language of its replies when the user's words do not say. */
  language: string;
  greeting: string;
}

/** The greeting of a role or agent whose fixture has none: its name, in its language. */
const DEFAULT_GREETING: Record<'zh' | 'en', (name: string) => string> = {
  zh: (name) => `你好，我是${name}。有什么可以帮你的吗？`,
  en: (name) => `Hello, this is ${name}. How can I help you?`,
};

/** The role every call uses when it names none, and whose voice speaks for an agent without one. */
const DEFAULT_ROLE = 'default';

export function personaOf(emu: Emulator, who: { kind: 'call' | 'agent'; role?: string; agentId?: string; language?: string }): Persona {
  const fallback = findRole(emu, DEFAULT_ROLE) ?? emu.fixtures.data['roles.json'][0];
  if (who.kind === 'call') {
    const role = findRole(emu, who.role ?? DEFAULT_ROLE);
    if (!role) throw new Error(`room bot: unknown role "${who.role}" (roles.json)`);
    const language = who.language ?? role.language;
    return { voiceId: role.voice_id, language, greeting: role.greeting ?? greetingFor(role.name, language) };
  }
  const agent = emu.fixtures.data['agents.json'].find((a) => a.agentId === who.agentId);
  if (!agent) throw new Error(`room bot: unknown agent "${who.agentId}" (agents.json)`);
  const voiceId = agent.voice_id ?? fallback?.voice_id;
  if (!voiceId) throw new Error(`room bot: agent "${agent.agentId}" has no voice_id and roles.json has no role to lend one`);
  const language = who.language ?? agent.language ?? 'en';
  return { voiceId, language, greeting: agent.greeting ?? greetingFor(agent.name, language) };
}

function greetingFor(name: string, language: string): string {
  return (language === 'zh' ? DEFAULT_GREETING.zh : DEFAULT_GREETING.en)(name);
}
