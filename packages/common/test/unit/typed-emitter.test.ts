import { expect } from 'chai';
import { TypedEmitter, backoffDelay } from '@quire/common';

class Counter extends TypedEmitter<{ tick: (n: number) => void; done: () => void }> {
  fire(n: number): void {
    this.emit('tick', n);
  }
}

describe('TypedEmitter', () => {
  it('calls listeners in order, once() listeners once, and reports a throwing listener without stopping the others', () => {
    const errors: [string, unknown][] = [];
    const e = new Counter((event, err) => errors.push([event, err]));
    const seen: string[] = [];
    e.on('tick', (n) => seen.push(`a${n}`));
    e.on('tick', () => {
      throw new Error('boom');
    });
    e.once('tick', (n) => seen.push(`once${n}`));
    e.fire(1);
    e.fire(2);
    expect(seen).to.deep.equal(['a1', 'once1', 'a2']);
    expect(errors.map(([ev, err]) => `${ev}:${(err as Error).message}`)).to.deep.equal(['tick:boom', 'tick:boom']);
    expect(e.listenerCount('tick')).to.equal(2);
  });
});

describe('backoffDelay', () => {
  it('doubles from min up to max, with a jitter factor in [0.5, 1)', () => {
    expect(backoffDelay(0, 250, 5_000, () => 0)).to.equal(125);
    expect(backoffDelay(0, 250, 5_000, () => 0.999999)).to.equal(250);
    expect(backoffDelay(3, 250, 5_000, () => 0.999999)).to.equal(2_000);
    expect(backoffDelay(10, 250, 5_000, () => 0.999999)).to.equal(5_000);
    expect(backoffDelay(1_000, 250, 5_000, () => 0)).to.equal(2_500);
  });
});
