// common is the one package @quire/testing stands on, so its tests take the shared assertions by path, which keeps
// the package graph acyclic; every other package imports @quire/testing.
import fc from 'fast-check';

export { expectCode } from '../../../testing/src/index.js';

/** JSON values whose text parseJson accepts: fc.jsonValue minus integral doubles of 2^63 and above,
 * which JSON.stringify prints as integer tokens that parseJson rightly refuses. */
export const acceptedJsonValue = (maxDepth: number) => fc.jsonValue({ maxDepth }).filter((v) => !/(^|[^\d.eE+-])-?\d{19,}(?![\d.eE])/.test(JSON.stringify(v)));
