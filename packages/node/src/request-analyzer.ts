// The consensus core's view of a client request (consensus.md §2): envelope and static validation,
// signature check against the current uncommitted domain state (cached by full digest in the
// requests package's SignatureVerifier), the ledger it is ordered on, and its digests.
import type { ClientRequestBody, RequestAnalyzer, RequestCheck } from '@quire/consensus';
import { RequestError, RequestErrorCode, type RequestExecutor, parseRequest, toRequestError, wrapReason } from '@quire/requests';

export class ExecutorRequestAnalyzer implements RequestAnalyzer {
  constructor(private readonly executor: RequestExecutor) {}

  analyze(request: ClientRequestBody): RequestCheck {
    let identifier: string | null = null;
    let reqId: number | bigint | undefined;
    try {
      const req = parseRequest(request);
      identifier = req.identifier;
      reqId = req.reqId;
      const handler = this.executor.registry.get(req.type);
      if (handler === undefined) throw new RequestError(RequestErrorCode.UNKNOWN_TYPE, { type: req.type });
      if (handler.kind !== 'write') throw new RequestError(RequestErrorCode.NOT_A_WRITE, { type: req.type });
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
