import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect } from 'chai';
import { ActionEvent, RestartLog, UpgradeLog, formatLogTimestamp, formatWhen, parseLogTime } from '../../src/upgrade/index.js';

describe('upgrade: action logs (requests.md 6.1)', () => {
  let dir: string;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'quire-actionlog-'));
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it('renders the two time columns as the spec example does', () => {
    const written = Date.UTC(2020, 7, 30, 12, 0, 10, 52);
    expect(formatLogTimestamp(written)).to.equal('2020-08-30 12:00:10.052000');
    expect(formatWhen(Date.UTC(2020, 7, 29, 14, 0, 0))).to.equal('2020-08-29 14:00:00+00:00');
    expect(formatWhen(Date.UTC(2020, 7, 29, 14, 0, 0, 5))).to.equal('2020-08-29 14:00:00.005000+00:00');
    expect(parseLogTime('2020-08-30 12:00:10.052972')).to.equal(written);
    expect(parseLogTime('2020-08-29 16:00:00+02:00')).to.equal(Date.UTC(2020, 7, 29, 14, 0, 0));
    expect(parseLogTime('yesterday')).to.equal(undefined);
  });

  it('writes upgrade lines TAB-separated with version, upgrade_id and package, and reads them back', () => {
    const log = new UpgradeLog(dir);
    const data = { whenMs: Date.UTC(2020, 7, 29, 14, 0, 0), version: '1.1.89', upgradeId: '159864425174633180012', pkgName: 'quire-node' };
    log.append(ActionEvent.SCHEDULED, data, Date.UTC(2020, 7, 30, 12, 0, 10, 52));
    log.append(ActionEvent.STARTED, data, Date.UTC(2020, 7, 30, 12, 1, 0));
    const text = readFileSync(join(dir, 'upgrade_log'), 'utf8');
    expect(text.split('\n')[0]).to.equal('2020-08-30 12:00:10.052000\tscheduled\t2020-08-29 14:00:00+00:00\t1.1.89\t159864425174633180012\tquire-node');
    const again = new UpgradeLog(dir);
    expect(again.entries()).to.have.length(2);
    expect(again.lastEvent()).to.deep.equal({ loggedAtMs: Date.UTC(2020, 7, 30, 12, 1, 0), event: 'started', data });
  });

  it('reads an Indy-written line', () => {
    writeFileSync(join(dir, 'upgrade_log'), '2020-08-30 12:00:10.052972\tscheduled\t2020-08-29 14:00:00+00:00\t1.1.89\t1598644251746331800\tsovrin\n');
    const e = new UpgradeLog(dir).lastEvent()!;
    expect(e.event).to.equal('scheduled');
    expect(e.data).to.deep.equal({ whenMs: Date.UTC(2020, 7, 29, 14), version: '1.1.89', upgradeId: '1598644251746331800', pkgName: 'sovrin' });
  });

  it('skips a torn last line and unreadable lines, with a warning, and appends after them', () => {
    const good = '2020-08-30 12:00:10.052972\tscheduled\t2020-08-29 14:00:00+00:00\t1.1.89\t15\tquire-node\n';
    writeFileSync(join(dir, 'upgrade_log'), good + 'garbage line\n' + '2020-08-30 12:00:11.000000\tstar');
    const warnings: string[] = [];
    const log = new UpgradeLog(dir, (msg) => warnings.push(msg));
    expect(log.entries().map((e) => e.event)).to.deep.equal(['scheduled']);
    expect(warnings).to.have.length(2);
    log.append(ActionEvent.CANCELLED, log.lastEvent()!.data, Date.UTC(2021, 0, 1));
    const reread = new UpgradeLog(dir);
    expect(reread.entries().map((e) => e.event)).to.deep.equal(['scheduled', 'cancelled']);
  });

  it('restart lines hold time, event and when only', () => {
    const log = new RestartLog(dir);
    log.append(ActionEvent.SCHEDULED, { whenMs: Date.UTC(2030, 0, 1, 10) }, Date.UTC(2029, 11, 31));
    expect(readFileSync(join(dir, 'restart_log'), 'utf8')).to.equal('2029-12-31 00:00:00.000000\tscheduled\t2030-01-01 10:00:00+00:00\n');
    expect(new RestartLog(dir).lastEvent()!.data).to.deep.equal({ whenMs: Date.UTC(2030, 0, 1, 10) });
  });
});
