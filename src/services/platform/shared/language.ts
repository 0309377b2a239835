/** Language of a text the emulator spoke or heard: `zh` when it has Han characters, else `en`. */
export function languageOf(text: string): string {
  return /\p{Script=Han}/u.test(text) ? 'zh' : 'en';
}
