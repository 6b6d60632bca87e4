// The tables of each code's data of common's own error classes (EncodingErrorData, IdentifierErrorData,
// TxnErrorData, ClientWireErrorData): a `new` is checked at compile time to carry its code's data (each line
// marked to expect an error fails the tests' typecheck once such a mistake compiles), and the raisers give what
// the tables say.
import { expect } from 'chai';
import { expectCode } from './helpers.js';
import {
  ClientWireError,
  ClientWireErrorCode,
  EncodingError,
  EncodingErrorCode,
  IdentifierError,
  IdentifierErrorCode,
  TxnError,
  TxnErrorCode,
  b58decode,
  didFromVerkey,
  resolveVerkey,
} from '@quire/common';

describe('EncodingError, IdentifierError, TxnError: data typed per code', () => {
  it('refuses, at compile time, a code without its data or with the data of another code', () => {
    const made: unknown[] = [
      // @ts-expect-error INVALID_JSON requires { position, reason }
      () => new EncodingError(EncodingErrorCode.INVALID_JSON, { reason: 'r' }),
      // @ts-expect-error an out-of-range integer is a bigint
      () => new EncodingError(EncodingErrorCode.INTEGER_OUT_OF_RANGE, { value: '18446744073709551616' }),
      // @ts-expect-error INVALID_ATTRIB_VALUE names raw, enc or hash
      () => new EncodingError(EncodingErrorCode.INVALID_ATTRIB_VALUE, { field: 'dest' }),
      // @ts-expect-error INVALID_HEX carries nothing
      () => new EncodingError(EncodingErrorCode.INVALID_HEX, { position: 3 }),
      // @ts-expect-error INVALID_DID names the did
      () => new IdentifierError(IdentifierErrorCode.INVALID_DID, { length: 3 }),
      // @ts-expect-error the reason of an undecodable identifier is 'not base58'
      () => new IdentifierError(IdentifierErrorCode.INVALID_VERKEY, { verkey: 'v', reason: 'bad' }),
      // @ts-expect-error INVALID_TXN requires a reason
      () => new TxnError(TxnErrorCode.INVALID_TXN),
      // @ts-expect-error a frame too large names its length and the limit
      () => new ClientWireError(ClientWireErrorCode.MALFORMED_FRAME, { reason: 'frame too large' }),
      // @ts-expect-error an envelope's reason is one of its own
      () => new ClientWireError(ClientWireErrorCode.MALFORMED_ENVELOPE, { reason: 'varint too long' }),
    ];
    expect(made).to.have.length(9);
  });

  it('names the identifier that is not base58 under its own field, and -1 for key bytes that are not bytes', () => {
    expectCode(() => resolveVerkey('0OIl'), IdentifierError, IdentifierErrorCode.INVALID_DID, { did: '0OIl', reason: 'not base58' });
    expectCode(() => resolveVerkey('V4SGRU86Z58d6TV7PBUe6f', '0OIl'), IdentifierError, IdentifierErrorCode.INVALID_VERKEY, {
      verkey: '0OIl',
      reason: 'not base58',
    });
    expectCode(() => didFromVerkey('key' as unknown as Uint8Array), IdentifierError, IdentifierErrorCode.INVALID_KEY_LENGTH, { expected: 32, length: -1 });
    expectCode(() => b58decode('ab0'), EncodingError, EncodingErrorCode.INVALID_BASE58, { position: 2 });
  });
});
