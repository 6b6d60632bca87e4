/**
 * Error classes with stable string codes. Every error raised by Quire code is a `QuireError`; programs
 * and tests branch on `code` (and `data`), never on message text.
 */
export class QuireError extends Error {
  readonly code: string;
  readonly data: Record<string, unknown>;

  constructor(code: string, data: Record<string, unknown> = {}, message?: string) {
    super(message ?? `${code}${formatData(data)}`);
    this.name = new.target.name;
    this.code = code;
    this.data = data;
  }
}

/** The data each code of a table carries: one record type per code (`{ reason?: string }`; `Record<string, never>` for none). */
export type CodeData<C extends string> = { [K in C]: Record<string, unknown> };

/**
 * The arguments of a {@link CodedError}: with a data table `D`, each code takes its own data (required when the code's
 * data has a required field); without one, any record.
 */
export type CodedErrorArgs<C extends string, D extends CodeData<C> | undefined> =
  D extends CodeData<C>
    ? { [K in C]: Record<string, never> extends D[K] ? [code: K, data?: D[K], message?: string] : [code: K, data: D[K], message?: string] }[C]
    : [code: C, data?: Record<string, unknown>, message?: string];

/**
 * The base of an error class with its own table of codes: `class FooError extends CodedError<FooErrorCode> {}` types
 * `code` as one of the table's values and takes `(code, data?, message?)` like {@link QuireError}. Given the table of
 * each code's data as well, `class FooError extends CodedError<FooErrorCode, FooErrorData> {}`, every `new FooError`
 * is checked to carry the data of its code (as Lodestar's per-code error types).
 */
export class CodedError<C extends string, D extends CodeData<C> | undefined = undefined> extends QuireError {
  declare readonly code: C;
  /** The data of the code (any code's, as read: narrow by `code`); a record like every QuireError's. */
  declare readonly data: D extends CodeData<C> ? D[C] & Record<string, unknown> : Record<string, unknown>;
  constructor(...args: CodedErrorArgs<C, D>) {
    const [code, data, message] = args as [C, Record<string, unknown> | undefined, string | undefined];
    super(code, data ?? {}, message);
  }
}

function formatData(data: Record<string, unknown>): string {
  const keys = Object.keys(data);
  if (keys.length === 0) return '';
  const parts = keys.map((k) => `${k}=${renderDatum(data[k])}`);
  return ` (${parts.join(', ')})`;
}

function renderDatum(v: unknown): string {
  if (typeof v === 'string') return v.length > 80 ? JSON.stringify(v.slice(0, 80) + '…') : JSON.stringify(v);
  if (typeof v === 'bigint') return v.toString();
  if (v instanceof Uint8Array) return `<${v.length} bytes>`;
  if (typeof v === 'object' && v !== null) {
    // nested detail (e.g. one failure per node): compact JSON, big integers exact, cut to a readable length
    let text: string;
    try {
      text = JSON.stringify(v, (_k, x: unknown) => (typeof x === 'bigint' ? x.toString() : x instanceof Uint8Array ? `<${x.length} bytes>` : x)) ?? String(v);
    } catch {
      text = String(v);
    }
    return text.length > 400 ? text.slice(0, 400) + '…' : text;
  }
  return String(v);
}

/** Codes of {@link EncodingError}. */
export const EncodingErrorCode = {
  /** Text is not well-formed JSON (data: `position`, `reason`). */
  INVALID_JSON: 'INVALID_JSON',
  /** An object holds the same key twice (data: `key`; `position` in JSON text, `offset` in MessagePack bytes, where known). */
  DUPLICATE_KEY: 'DUPLICATE_KEY',
  /** A string holds an unpaired UTF-16 surrogate (data: `position` when parsing; none when encoding). */
  LONE_SURROGATE: 'LONE_SURROGATE',
  /**
   * NaN, Infinity, or a float token that overflows float64 (data: `position` in JSON text, `offset` in MessagePack
   * bytes, or the `value` as text when encoding).
   */
  NON_FINITE_NUMBER: 'NON_FINITE_NUMBER',
  /** An integer outside [-2^63, 2^64-1], which no stored txn can hold (data: `value`; `position` when parsing). */
  INTEGER_OUT_OF_RANGE: 'INTEGER_OUT_OF_RANGE',
  /** Nesting deeper than the decoder's limit (data: `limit`; `position` when parsing JSON). */
  TOO_DEEP: 'TOO_DEEP',
  /** Bytes are not valid UTF-8 (data: `offset` of a MessagePack string; none for JSON bytes). */
  INVALID_UTF8: 'INVALID_UTF8',
  /** Not a base58 string of the Bitcoin alphabet (data: `position` of the first bad character, or `type` of a value that is not a string). */
  INVALID_BASE58: 'INVALID_BASE58',
  /** Not padded standard base64 (RFC 4648 section 4), or non-canonical trailing bits (data: none). */
  INVALID_BASE64: 'INVALID_BASE64',
  /** Not an even-length lowercase/uppercase hex string (data: none). */
  INVALID_HEX: 'INVALID_HEX',
  /** A value the encoding cannot represent (undefined at top level, function, symbol, Uint8Array, class instance...) (data: `type`). */
  UNSUPPORTED_VALUE: 'UNSUPPORTED_VALUE',
  /**
   * A map mixes integer and string keys, or has a key that is neither (data: the `type` of a key of neither kind, the
   * `key` of an audit map that is not a ledger id, the `offset` of a MessagePack key; none for a mix of kinds).
   */
  INVALID_MAP_KEY: 'INVALID_MAP_KEY',
  /** ATTRIB / GET_ATTR `raw`, `enc` or `hash` that is not a string (data: `field`). */
  INVALID_ATTRIB_VALUE: 'INVALID_ATTRIB_VALUE',
  /** MessagePack input ends in the middle of a value (data: `offset`). */
  MSGPACK_TRUNCATED: 'MSGPACK_TRUNCATED',
  /** MessagePack type byte that canonical MP never produces: bin, ext, float32, reserved (data: `byte`, `offset`). */
  MSGPACK_UNSUPPORTED_TYPE: 'MSGPACK_UNSUPPORTED_TYPE',
  /** Bytes remain after the first MessagePack value (data: `offset`). */
  MSGPACK_TRAILING_BYTES: 'MSGPACK_TRAILING_BYTES',
} as const;
export type EncodingErrorCode = (typeof EncodingErrorCode)[keyof typeof EncodingErrorCode];

/** The data of each {@link EncodingErrorCode}, checked wherever an EncodingError is made. */
export type EncodingErrorData = {
  INVALID_JSON: { position: number; reason: string };
  DUPLICATE_KEY: { key: string | number; position?: number; offset?: number };
  LONE_SURROGATE: { position?: number };
  NON_FINITE_NUMBER: { position: number } | { offset: number } | { value: string };
  INTEGER_OUT_OF_RANGE: { value: bigint; position?: number };
  TOO_DEEP: { limit: number; position?: number };
  INVALID_UTF8: { offset?: number };
  INVALID_BASE58: { position: number } | { type: string };
  INVALID_BASE64: Record<string, never>;
  INVALID_HEX: Record<string, never>;
  UNSUPPORTED_VALUE: { type: string };
  INVALID_MAP_KEY: { type?: string; key?: string; offset?: number };
  INVALID_ATTRIB_VALUE: { field: 'raw' | 'enc' | 'hash' };
  MSGPACK_TRUNCATED: { offset: number };
  MSGPACK_UNSUPPORTED_TYPE: { byte: number; offset: number };
  MSGPACK_TRAILING_BYTES: { offset: number };
};

/** Malformed or unrepresentable data in one of the encodings of formats.md section 1. */
export class EncodingError extends CodedError<EncodingErrorCode, EncodingErrorData> {}

/** Codes of {@link IdentifierError}. */
export const IdentifierErrorCode = {
  /** A DID that does not decode to 16 or 32 bytes (data: `did`, and its `length` in bytes or `reason` 'not base58'). */
  INVALID_DID: 'INVALID_DID',
  /**
   * A verkey that is neither `~` + base58(16 bytes) nor base58(32 bytes) (data: `verkey`, and its `length` in bytes, -1
   * for a node dest that is not base58, or `reason` 'not base58'; only the `type` of a verkey that is not a string).
   */
  INVALID_VERKEY: 'INVALID_VERKEY',
  /** An abbreviated verkey paired with a DID that is not 16 bytes (data: `did`, `length`). */
  ABBREVIATED_VERKEY_NEEDS_16_BYTE_DID: 'ABBREVIATED_VERKEY_NEEDS_16_BYTE_DID',
  /** Raw key bytes of the wrong length (data: `expected`, `length`, -1 for a value that is not bytes). */
  INVALID_KEY_LENGTH: 'INVALID_KEY_LENGTH',
} as const;
export type IdentifierErrorCode = (typeof IdentifierErrorCode)[keyof typeof IdentifierErrorCode];

/** The data of each {@link IdentifierErrorCode}, checked wherever an IdentifierError is made. */
export type IdentifierErrorData = {
  INVALID_DID: { did: string; length: number } | { did: string; reason: 'not base58' };
  INVALID_VERKEY: { verkey: string; length: number } | { verkey: string; reason: 'not base58' } | { type: string };
  ABBREVIATED_VERKEY_NEEDS_16_BYTE_DID: { did: string; length: number };
  INVALID_KEY_LENGTH: { expected: number; length: number };
};

/** A DID or verkey that breaks the rules of formats.md 2.1. */
export class IdentifierError extends CodedError<IdentifierErrorCode, IdentifierErrorData> {}

/** Codes of {@link TxnError}. */
export const TxnErrorCode = {
  /** `operation` is not an object or has no string `type`, or an ATTRIB's `raw` or `enc` is not a string (data: that `field`). */
  INVALID_OPERATION: 'INVALID_OPERATION',
  /** `signature` without `identifier`: there is no signer to name (data: none). */
  SIGNATURE_WITHOUT_IDENTIFIER: 'SIGNATURE_WITHOUT_IDENTIFIER',
  /** `signatures` that is not an object of strings (data: `from`, the signer whose signature is not a string). */
  INVALID_SIGNATURES: 'INVALID_SIGNATURES',
  /** A stored txn whose layout breaks formats.md 4.1 / 10.1 (data: `reason`). */
  INVALID_TXN: 'INVALID_TXN',
} as const;
export type TxnErrorCode = (typeof TxnErrorCode)[keyof typeof TxnErrorCode];

/** The data of each {@link TxnErrorCode}, checked wherever a TxnError is made. */
export type TxnErrorData = {
  INVALID_OPERATION: { field?: 'raw' | 'enc' };
  SIGNATURE_WITHOUT_IDENTIFIER: Record<string, never>;
  INVALID_SIGNATURES: { from?: string };
  INVALID_TXN: { reason: string };
};

/** A request that cannot be turned into a transaction, or a stored transaction of the wrong shape. */
export class TxnError extends CodedError<TxnErrorCode, TxnErrorData> {}
