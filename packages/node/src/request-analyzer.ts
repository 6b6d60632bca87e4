// The consensus core's view of a client request (consensus.md §2): envelope and static validation,
// signature check against the current uncommitted domain state (cached by full digest in the
// requests package's SignatureVerifier), the ledger it is ordered on, and its digests.
//
// A client write has been through exactly these checks in the client path (RequestPipeline.receive) a moment before it
// reaches consensus: the client path hands over the result with the request object (`admit`), and the core's check of
// that very object takes it instead of parsing, hashing and validating the request a second time. PROPAGATEs from
// peers are always checked in full. The signers' keys are checked again when the request is applied in a batch.
import type { ClientRequestBody, RequestAnalyzer, RequestCheck, RequestInfo } from '@quire/consensus';
import { type RequestExecutor, parseRequest, toRequestError, wrapReason } from '@quire/requests';

export class ExecutorRequestAnalyzer implements RequestAnalyzer {
  /** client writes checked by the client path, by object identity, until the core looks at them */
  private readonly admitted = new WeakMap<object, RequestInfo>();

  constructor(private readonly executor: RequestExecutor) {}

  /** The client path checked `request` (this very object) as a write with outcome `info`. */
  admit(request: ClientRequestBody, info: RequestInfo): void {
    this.admitted.set(request, info);
  }

  analyze(request: ClientRequestBody): RequestCheck {
    const known = this.admitted.get(request);
    if (known !== undefined) {
      this.admitted.delete(request);
      return { ok: true, info: known };
    }
    let identifier: string | null = null;
    let reqId: number | bigint | undefined;
    try {
      const req = parseRequest(request);
      identifier = req.identifier;
      reqId = req.reqId;
      const handler = this.executor.registry.writeHandlerOf(req.type);
      handler.validateStatic(req);
      this.executor.verifier.verify(req, this.executor.idr, this.executor.views[0]);
      return {
        ok: true,
        info: { digest: req.digest, payloadDigest: req.payloadDigest, ledgerId: handler.ledgerId, identifier: req.identifier ?? req.author, reqId: req.reqId },
      };
    } catch (e) {
      const err = toRequestError(e);
      return { ok: false, code: err.code, reason: wrapReason(err, identifier, reqId) };
    }
  }
}
