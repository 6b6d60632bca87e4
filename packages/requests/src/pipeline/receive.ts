/**
 * The receipt path of a client request (requests.md §1.2 steps 1-6): size and parse, envelope,
 * type schema and static rules, signatures (writes and actions), then routing: a write gets the
 * read-only check and REQACK (the node propagates it; forced POOL_CONFIG / POOL_UPGRADE are also
 * validated now, §5.5), a read is answered, an action is authorized. Never throws: every outcome
 * is a value.
 */
import { TxnType } from '@quire/common';
import { RequestError, RequestErrorCode, toRequestError } from '../errors.js';
import type { ActionHandler, ParsedRequest, ReadHandler, ReceiptContext, WriteHandler } from '../handler.js';
import type { RequestExecutor } from '../executor/executor.js';
import { answerRead, type UnsignedReadReply, type ReadRootChoice, StoresReadContext } from '../reads/read-context.js';
import type { ExecutorStores } from '../executor/stores.js';
import { parseRequest } from './parse.js';

/** Writes allowed while the pool is read-only (requests.md §1.5). */
const READ_ONLY_ALLOWED = new Set(['109', '111', '120', '122']);

export interface ReceiveOptions {
  /** The node's clock (seconds). */
  now: number;
  /** False while the pool is read-only (POOL_CONFIG writes=false). */
  writable: boolean;
  /** The request came from a client (NODE_UPGRADE is refused). Default true. */
  fromClient?: boolean;
}

export type ReceiveOutcome =
  | { kind: 'nack'; request: ParsedRequest | null; error: RequestError }
  | { kind: 'write'; request: ParsedRequest; handler: WriteHandler; forced: boolean }
  | { kind: 'read'; request: ParsedRequest; reply: UnsignedReadReply }
  | { kind: 'action'; request: ParsedRequest; handler: ActionHandler; error: RequestError | null };

export class RequestPipeline {
  private readonly reads: StoresReadContext;
  constructor(
    private readonly executor: RequestExecutor,
    stores: ExecutorStores,
    opts: { readRoot?: ReadRootChoice } = {},
  ) {
    this.reads = new StoresReadContext(stores, opts.readRoot);
  }

  /** Processes one client message (text, bytes, or an already parsed JSON value). */
  async receive(message: unknown, opts: ReceiveOptions): Promise<ReceiveOutcome> {
    let req: ParsedRequest | null = null;
    try {
      req = parseRequest(message);
      const handler = this.executor.registry.handlerOf(req.type);
      if (handler.type === TxnType.NODE_UPGRADE && opts.fromClient !== false) throw new RequestError(RequestErrorCode.EXTERNAL_NODE_UPGRADE);
      handler.validateStatic(req);
      if (handler.kind === 'read') return { kind: 'read', request: req, reply: await answerRead(handler as ReadHandler, req, this.reads) };
      this.executor.verifier.verify(req, this.executor.idr, this.executor.views[0]);
      if (handler.kind === 'action') {
        const ctx = this.receiptContext(0, opts.now);
        try {
          handler.validateDynamic(req, ctx);
          return { kind: 'action', request: req, handler, error: null };
        } catch (e) {
          return { kind: 'action', request: req, handler, error: toRequestError(e) };
        }
      }
      if (!opts.writable && !READ_ONLY_ALLOWED.has(req.type)) throw new RequestError(RequestErrorCode.POOL_READ_ONLY);
      const ctx = this.receiptContext(handler.ledgerId, opts.now);
      await handler.validateAtReceipt?.(req, ctx);
      const forced = handler.forceable === true && req.operation.force === true;
      if (forced) handler.validateDynamic(req, ctx);
      return { kind: 'write', request: req, handler, forced };
    } catch (e) {
      return { kind: 'nack', request: req, error: toRequestError(e) };
    }
  }

  private receiptContext(ledgerId: number, now: number): ReceiptContext {
    const base = this.executor.context(ledgerId, now, this.executor.ledgerViews[ledgerId].uncommittedSize + 1);
    return { ...base, now };
  }
}
