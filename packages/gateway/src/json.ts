// JSON bodies: written losslessly (big integers such as reqIds survive), and re-indented for `?fmt` without a parse
// that would round big numbers.
import { parseJson, stringifyJson } from '@quire/common';

/** Re-indents JSON text (two spaces, as serde_json's pretty printer) without parsing its numbers. */
export function prettyJson(text: string): string {
  let out = '';
  let depth = 0;
  let inString = false;
  const nl = (): string => '\n' + '  '.repeat(depth);
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (inString) {
      out += c;
      if (c === '\\') out += text[++i] ?? '';
      else if (c === '"') inString = false;
      continue;
    }
    switch (c) {
      case '"':
        inString = true;
        out += c;
        break;
      case '{':
      case '[': {
        const close = c === '{' ? '}' : ']';
        let j = i + 1;
        while (text[j] === ' ' || text[j] === '\n' || text[j] === '\t' || text[j] === '\r') j++;
        if (text[j] === close) {
          out += c + close;
          i = j;
        } else {
          depth++;
          out += c + nl();
        }
        break;
      }
      case '}':
      case ']':
        depth--;
        out += nl() + c;
        break;
      case ',':
        out += ',' + nl();
        break;
      case ':':
        out += ': ';
        break;
      case ' ':
      case '\n':
      case '\t':
      case '\r':
        break;
      default:
        out += c;
    }
  }
  return out;
}

/** A reply `{op: 'REPLY', result}` as indy-vdr-proxy prints it: pretty drops identifier, reqId and state_proof. */
export function replyText(result: Record<string, unknown>, pretty: boolean): string {
  if (!pretty) return stringifyJson({ op: 'REPLY', result });
  const { identifier: _i, reqId: _r, state_proof: _s, ...rest } = result;
  return prettyJson(stringifyJson({ op: 'REPLY', result: rest }));
}

export function jsonText(value: unknown, pretty: boolean): string {
  const text = stringifyJson(value);
  return pretty ? prettyJson(text) : text;
}

/** Parses a JSON string field of a reply (GET_NYM's `data`...), undefined when absent or not JSON. */
export function parseJsonField(v: unknown): unknown {
  if (typeof v !== 'string') return v ?? undefined;
  try {
    return parseJson(v);
  } catch {
    return undefined;
  }
}
