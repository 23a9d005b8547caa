// Capability "progress" (declare it in plugin.json): a long call reports how
// far it is. The import is emitted only into plugins that call reportProgress,
// so others need not declare the capability.
import { Answer, answer, request } from "./index";
import { number, quote } from "./json";

@external("agenthost:progress", "report")
declare function progress_report(req: u64): u64;

/** Says how far the call is (0..1) and what it is doing. */
export function reportProgress(fraction: f64, message: string): Answer {
  return answer(progress_report(request('{"fraction":' + number(fraction) + ',"message":' + quote(message) + "}")));
}
