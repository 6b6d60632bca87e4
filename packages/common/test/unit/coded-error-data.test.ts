// CodedError with a table of each code's data: a `new` is checked to carry the data of its code (the @ts-expect-error
// lines fail the tests' typecheck, in npm test, once such a mistake compiles), and the error holds what it was given.
import { expect } from 'chai';
import { CodedError, QuireError } from '@quire/common';

const TableCode = { NEEDS: 'NEEDS', NONE: 'NONE', OPTIONAL: 'OPTIONAL' } as const;
type TableCode = (typeof TableCode)[keyof typeof TableCode];
type TableData = {
  NEEDS: { reason: string; at: number };
  NONE: Record<string, never>;
  OPTIONAL: { reason?: string };
};
class TableError extends CodedError<TableCode, TableData> {}
/** A class without a data table takes any record, as before. */
class LooseError extends CodedError<TableCode> {}

describe('CodedError: data typed per code', () => {
  it('holds the code, the data of its code and the message', () => {
    const e = new TableError(TableCode.NEEDS, { reason: 'r', at: 3 });
    expect(e).to.be.instanceOf(QuireError);
    expect(e.name).to.equal('TableError');
    expect([e.code, e.data]).to.deep.equal(['NEEDS', { reason: 'r', at: 3 }]);
    expect(e.message).to.equal('NEEDS (reason="r", at=3)');
    expect(new TableError(TableCode.NONE).data).to.deep.equal({});
    expect(new TableError(TableCode.OPTIONAL, {}, 'custom').message).to.equal('custom');
    expect(new LooseError(TableCode.NEEDS, { anything: 1 }).data).to.deep.equal({ anything: 1 });
  });

  it('refuses, at compile time, a code without its required data or with the data of another code', () => {
    const made: unknown[] = [
      // @ts-expect-error NEEDS requires { reason, at }
      () => new TableError(TableCode.NEEDS),
      // @ts-expect-error the data of another shape
      () => new TableError(TableCode.NEEDS, { length: 1 }),
      // @ts-expect-error a field of the wrong type
      () => new TableError(TableCode.NEEDS, { reason: 1, at: 3 }),
      // @ts-expect-error NONE carries nothing
      () => new TableError(TableCode.NONE, { reason: 'r' }),
    ];
    expect(made).to.have.length(4);
  });
});
