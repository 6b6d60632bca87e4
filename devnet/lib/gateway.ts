// The devnet's HTTP gateway (@quire/gateway, docs/gateway.md): started by the devnet's supervisor once the pool
// orders, on :9000 with the default base port (base port - 701, like von-network's webserver beside its nodes),
// namespace quire:devnet, CORS open (a local development pool). `--no-gateway` skips it. Its ledger explorer
// (docs/explorer.md) signs VALIDATOR_INFO and serves the "register a DID" form with the devnet's trustee.
import { Gateway } from '@quire/gateway';
import { TRUSTEE_SEED } from './node-api.js';

export const DEVNET_NAMESPACE = 'quire:devnet';

/** The gateway's port for a base port: 9000 for the default 9701 (base + 2000 when that would be below 1024). */
export function gatewayPort(basePort: number): number {
  return basePort - 701 >= 1024 ? basePort - 701 : basePort + 2000;
}

export function gatewayUrl(basePort: number): string {
  return `http://127.0.0.1:${gatewayPort(basePort)}`;
}

/** Starts the gateway on the pool genesis file; throws when it cannot listen (the caller says so and goes on). */
export async function startDevnetGateway(genesisFile: string, basePort: number): Promise<Gateway> {
  const gw = await Gateway.create(
    {
      host: '127.0.0.1',
      port: gatewayPort(basePort),
      namespace: DEVNET_NAMESPACE,
      cors: true,
      logLevel: process.env.LOG_LEVEL ?? 'warn',
      explorer: { registerForm: true, signerSeed: TRUSTEE_SEED },
    },
    { genesisFile },
  );
  try {
    await gw.listen();
  } catch (e) {
    await gw.close();
    throw e;
  }
  return gw;
}
