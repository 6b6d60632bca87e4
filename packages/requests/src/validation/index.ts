export * from './fields.js';
export * from './limits.js';
export * from './schema.js';
