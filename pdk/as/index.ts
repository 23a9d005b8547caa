// The package's entry for the AssemblyScript compiler, which resolves
// `import ... from "@agenthost/as-pdk"` to node_modules/@agenthost/as-pdk/index.ts.
// (The compiler's `export *` does not pass on a module's own re-exports, so
// each module is listed.)
export * from "./assembly/index";
export * from "./assembly/json";
export { Host, Memory, Config, Var, LogLevel } from "@extism/as-pdk";
export * from "./assembly/progress";
