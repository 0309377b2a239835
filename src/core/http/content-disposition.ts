/**
 * `Content-Disposition: attachment` for a stored name, per RFC 6266: `filename*` carries the name in UTF-8
 * (RFC 8187 percent-encoding), and `filename` an ASCII stand-in for clients that read only that one. A
 * header value holds Latin-1 at most, and no control characters, so the name itself never goes in raw.
 */
export function attachment(name: string): string {
  const fallback = asciiFallback(name);
  const encoded = encodeRfc8187(name);
  // The UTF-8 form only when it says more than the fallback (plain ASCII names keep the short header).
  return fallback === name ? `attachment; filename="${fallback}"` : `attachment; filename="${fallback}"; filename*=UTF-8''${encoded}`;
}

/** Printable ASCII only, without the quote and backslash a quoted-string would need escaped; `_` for the rest. */
function asciiFallback(name: string): string {
  let out = '';
  for (const ch of name) out += /^[\x20-\x7e]$/.test(ch) && ch !== '"' && ch !== '\\' ? ch : '_';
  return out || 'download';
}

/** RFC 8187 `value-chars`: attr-chars as they are, every other UTF-8 byte as %XX. */
function encodeRfc8187(name: string): string {
  let out = '';
  for (const byte of Buffer.from(name, 'utf8')) {
    const c = String.fromCharCode(byte);
    out += /[A-Za-z0-9!#$&+.^_`|~-]/.test(c) ? c : `%${byte.toString(16).toUpperCase().padStart(2, '0')}`;
  }
  return out;
}
