/**
 * The platform's words for a validation problem: `field: rule` (the field as a dotted path); the rule
 * alone for the body itself, or when the rule already names its field ("url must be a string").
 */
export function fieldRuleText(field: string, rule: string): string {
  if (!field || rule.startsWith(`${field} `)) return rule;
  return `${field}: ${rule}`;
}
