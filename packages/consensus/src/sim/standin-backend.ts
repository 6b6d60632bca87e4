// The simulator's fast in-memory world (consensus package tests): StandInExecutor replicas, the
// stand-in request analyzer with request checks shared by the nodes of a run, deterministic
// simulated BLS keys per (alias, rotation), and SimClient requests. The node package provides the
// real one (real executor, storage, requests and keys); both implement backend.ts.
import type { RequestCheck } from '../interfaces.js';
import type { ClientRequestBody } from '../messages.js';
import type { SimPool, SimPoolContext, SimReplica, SimRequestInfo, SimWorkload } from './backend.js';
import { simBlsPublicKey, simConsensusCrypto } from './sim-keys.js';
import { SimClient, SimRequestAnalyzer } from './sim-requests.js';
import { StandInExecutor, nodeDest } from './standin-executor.js';
import { VALIDATOR } from './standin-pool.js';
import { ConsensusError, ConsensusErrorCode } from '../errors.js';

class StandInWorkload implements SimWorkload {
  private readonly client = new SimClient(new Uint8Array(32).fill(7));
  private readonly steward = new SimClient(new Uint8Array(32).fill(8));
  private readonly analyzer = new SimRequestAnalyzer();

  constructor(
    private readonly seed: number,
    /** BLS key generation per alias (rotations so far), read by the replicas' crypto */
    readonly generations: Map<string, number>,
  ) {}

  write(i: number, invalid: boolean): ClientRequestBody {
    return this.client.request(`dest-${this.seed}-${i}`, { invalid });
  }

  variant(request: ClientRequestBody): ClientRequestBody {
    return this.client.variant(request);
  }

  addValidator(alias: string): ClientRequestBody {
    return this.steward.nodeRequest(nodeDest(alias), { alias, services: [VALIDATOR], blskey: simBlsPublicKey(alias, 0), node_ip: '10.0.0.1' });
  }

  rotateBlsKey(alias: string): ClientRequestBody {
    const gen = (this.generations.get(alias) ?? 0) + 1;
    this.generations.set(alias, gen);
    return this.steward.nodeRequest(nodeDest(alias), { alias, blskey: simBlsPublicKey(alias, gen) });
  }

  setValidator(alias: string, validator: boolean): ClientRequestBody {
    return this.steward.nodeRequest(nodeDest(alias), { alias, services: validator ? [VALIDATOR] : [] });
  }

  info(request: ClientRequestBody): SimRequestInfo {
    const check = this.analyzer.analyze(request);
    if (!check.ok) throw new ConsensusError(ConsensusErrorCode.SIMULATION, { reason: 'simulator built an invalid request' });
    return { digest: check.info.digest, payloadDigest: check.info.payloadDigest };
  }
}

class StandInReplica implements SimReplica<StandInExecutor> {
  readonly executor: StandInExecutor;
  requests: SimRequestAnalyzer;
  readonly crypto;

  constructor(
    alias: string,
    ctx: SimPoolContext,
    private readonly checks: Map<string, RequestCheck>,
    generations: Map<string, number>,
  ) {
    this.requests = new SimRequestAnalyzer(checks);
    this.executor = new StandInExecutor(
      this.requests,
      ctx.genesis.map((a) => ({ alias: a, blskey: simBlsPublicKey(a, 0) })),
    );
    this.crypto = simConsensusCrypto(
      alias,
      () => this.executor,
      () => generations.get(alias) ?? 0,
    );
  }

  crash(): void {
    this.executor.dropUncommitted();
  }

  restart(): void {
    this.requests = new SimRequestAnalyzer(this.checks);
  }
}

/** The stand-in world of one run (the default of `Simulation`). */
export function standInPool(ctx: SimPoolContext): SimPool<StandInExecutor> {
  /** request checks shared by the simulated nodes of the run (a pure function of the request) */
  const checks = new Map<string, RequestCheck>();
  const generations = new Map<string, number>();
  return {
    replica: (alias) => new StandInReplica(alias, ctx, checks, generations),
    workload: new StandInWorkload(ctx.seed, generations),
  };
}
