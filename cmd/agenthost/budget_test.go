package main

import (
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agenthost/agenthost/host/llm/llmtest"
	"github.com/agenthost/agenthost/host/money"
	"github.com/agenthost/agenthost/host/testenv"
	"github.com/agenthost/agenthost/host/wasm/manifest"
	"github.com/agenthost/agenthost/host/wasm/wasmtest"
)

// The budget figures of the serve tests. Plugin time costs CHF 36 an hour
// (a rappen a second); lookup is limited to 2 s, so each tool call holds
// CHF 0.02 while it runs 0.2 s (CHF 0.002). The model costs CHF 3 per
// million prompt tokens and 1 per million completion tokens.
const (
	budgetPluginPerHour = "36"
	budgetToolTimeoutMs = 2000
	budgetSleep         = `{"topic":"prices","sleepMs":200}`
	budgetOverdraft     = "0.02"
	budgetParallel      = 20
)

// budgetWorld is a server over the embedded database with plugin time and
// the scripted model priced, and the overdraft set through the environment
// (so that the tests also run, and fail, against a server without it).
type budgetWorld struct {
	model *llmtest.Server
	data  string
	logs  *syncBuffer
	tools string // -plugins
}

func startBudgetWorld(t *testing.T) *budgetWorld {
	t.Helper()
	w := &budgetWorld{model: llmtest.New(t), data: t.TempDir(), logs: &syncBuffer{}}
	// The agent loops on a slow lookup until something stops it; the model
	// takes a moment, so that parallel runs' calls are in flight together
	// (the bound does not depend on it).
	w.model.SetDefault(llmtest.EndpointChat, llmtest.CallTools(llmtest.Call("lookup", budgetSleep)).WithDelay(200*time.Millisecond))
	t.Setenv("AGENTHOST_OPENAI_BASE_URL", w.model.URL())
	t.Setenv("AGENTHOST_OPENAI_API_KEY", "")
	t.Setenv(overdraftEnv, budgetOverdraft)
	notebook := withLimits(t, wasmtest.Module(t, "notebook"), "notebook", func(l *manifest.Limits) { l.TimeoutMs = budgetToolTimeoutMs })
	w.tools = pluginsDir(t, map[string][]byte{"notebook": notebook})
	return w
}

// tenant bootstraps a tenant offering lookup, with a credit.
func (w *budgetWorld) tenant(t *testing.T, name, credit string) tenantClient {
	t.Helper()
	tc := bootstrapTenant(t, w.data, w.tools, name, []string{"lookup"})
	if _, stderr, err := run0(t, "admin", "limits", "-data", w.data, "-tenant", tc.tenant, "-credit", credit); err != nil {
		t.Fatalf("limits: %v\n%s", err, stderr)
	}
	return tc
}

// configPath writes the model configuration: the scripted model, priced.
func (w *budgetWorld) configPath(t *testing.T) string {
	t.Helper()
	p := filepath.Join(w.data, "budget.yaml")
	if err := os.WriteFile(p, []byte(`llm:
  models:
    agent:
      - provider: openai
        model: scripted
        contextWindow: 8000
        inputCHFPer1M: 3
        outputCHFPer1M: 1
`), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// budgetOf reads the tenant's budget through the API; nothing may be held
// any more.
func budgetOf(t *testing.T, tc tenantClient) (spent, credit money.Amount, admitted bool, reason string) {
	t.Helper()
	st, b := tc.do(t, http.MethodGet, "/api/v1/billing/budget", nil)
	var v struct {
		CreditCHF     *string `json:"creditCHF"`
		SpentTotalCHF string  `json:"spentTotalCHF"`
		ReservedCHF   string  `json:"reservedCHF"`
		Admitted      bool    `json:"admitted"`
		Reason        string  `json:"reason"`
	}
	if err := json.Unmarshal(b, &v); st != http.StatusOK || err != nil || v.CreditCHF == nil {
		t.Fatalf("budget: HTTP %d %s %v", st, b, err)
	}
	spent, err1 := money.Parse(v.SpentTotalCHF)
	credit, err2 := money.Parse(*v.CreditCHF)
	if err1 != nil || err2 != nil {
		t.Fatalf("budget: %s", b)
	}
	if v.ReservedCHF != "" && v.ReservedCHF != "0.00" {
		t.Errorf("budget after every call ended: CHF %s still held", v.ReservedCHF)
	}
	return spent, credit, v.Admitted, v.Reason
}

// budgetCase is one attack of 20 parallel callers on a tenant's credit,
// through the clients given (one per host; caller i uses client i mod n).
type budgetCase struct {
	name   string
	credit string
	run    func(t *testing.T, tcs []tenantClient) (refusals []string)
}

var budgetCases = []budgetCase{
	{"direct tool calls", "0.03", budgetDirectCalls},
	{"workflows", "0.10", budgetWorkflows},
}

// budgetDirectCalls: each caller calls lookup five times; without holds,
// 100 calls of CHF 0.002 spend CHF 0.20 of 0.03. With them a call is
// refused while others hold what is left. Then a lone caller runs until
// the credit is spent and is refused before anything runs.
func budgetDirectCalls(t *testing.T, tcs []tenantClient) []string {
	var mu sync.Mutex
	var refusals []string
	lookup := func(tc tenantClient) (int, []byte) {
		return tc.do(t, http.MethodPost, "/api/v1/workspaces/"+tc.workspace+"/tools/lookup", json.RawMessage(budgetSleep))
	}
	var wg sync.WaitGroup
	for i := range budgetParallel {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 5 {
				st, b := lookup(tcs[i%len(tcs)])
				switch st {
				case http.StatusOK:
				case http.StatusPaymentRequired:
					mu.Lock()
					refusals = append(refusals, string(b))
					mu.Unlock()
				default:
					t.Errorf("lookup: HTTP %d %s", st, b)
					return
				}
			}
		}()
	}
	wg.Wait()
	for i := 0; ; i++ {
		st, b := lookup(tcs[i%len(tcs)])
		if st == http.StatusPaymentRequired {
			refusals = append(refusals, string(b))
			break
		}
		if st != http.StatusOK || i == 50 {
			t.Errorf("lookup %d after the parallel ones: HTTP %d %s, want it refused once the credit is spent", i, st, b)
			break
		}
	}
	if spent, credit, _, _ := budgetOf(t, tcs[0]); spent < credit {
		t.Errorf("a lone call refused with CHF %s spent of CHF %s", spent, credit)
	}
	return refusals
}

// budgetWorkflows: 20 workflows start at once; their agents loop on the
// slow lookup until the tenant's limit stops them, each ending
// budgetExceeded with the reason in its answer (or refused at the start,
// 402, once the credit is spent).
func budgetWorkflows(t *testing.T, tcs []tenantClient) []string {
	ids := make([]string, budgetParallel)
	var wg sync.WaitGroup
	for i := range budgetParallel {
		wg.Add(1)
		go func() {
			defer wg.Done()
			tc := tcs[i%len(tcs)]
			st, b := tc.do(t, http.MethodPost, "/api/v1/workspaces/"+tc.workspace+"/workflows", map[string]string{"prompt": fmt.Sprintf("look up prices %d", i)})
			var wf struct {
				ID string `json:"id"`
			}
			switch {
			case st == http.StatusAccepted && json.Unmarshal(b, &wf) == nil:
				ids[i] = wf.ID
			case st == http.StatusPaymentRequired:
			default:
				t.Errorf("start: HTTP %d %s", st, b)
			}
		}()
	}
	wg.Wait()
	var refusals []string
	for i, id := range ids {
		if id == "" {
			continue
		}
		tc := tcs[(i+1)%len(tcs)] // followed on the other host, when there are two
		h := host{base: tc.base + "/api/v1"}
		for _, e := range h.events(t, tc.token, id, func(e hostEvent) bool { return e.typ == "complete" }) {
			if e.typ == "agentSummary" && !strings.Contains(e.data, `"reason":"budgetExceeded"`) {
				t.Errorf("workflow %s: %s, want it ended budgetExceeded", id, e.data)
			}
			if e.typ == "message" && strings.Contains(e.data, "spending limit is reached") {
				refusals = append(refusals, e.data)
			}
		}
	}
	return refusals
}

// checkBudget: the tenant spent at most its credit plus the overdraft, some
// calls were refused naming the credit, and the budget says so once the
// credit is spent.
func checkBudget(t *testing.T, tc tenantClient, refusals []string) {
	t.Helper()
	overdraft, _ := money.Parse(budgetOverdraft)
	spent, credit, admitted, reason := budgetOf(t, tc)
	t.Logf("%d parallel callers: CHF %s spent of CHF %s credit (overdraft CHF %s), %d refusal(s)",
		budgetParallel, spent, credit, overdraft, len(refusals))
	if spent > credit+overdraft {
		t.Errorf("CHF %s spent of CHF %s credit: more than the overdraft of CHF %s over", spent, credit, overdraft)
	}
	if len(refusals) == 0 {
		t.Errorf("no call was refused")
	}
	for _, r := range refusals {
		if !strings.Contains(r, "credit exhausted") {
			t.Errorf("refusal %s does not name the credit", r)
			break
		}
	}
	if spent >= credit && (admitted || !strings.Contains(reason, "credit exhausted")) {
		t.Errorf("budget says admitted=%v %q with the credit spent", admitted, reason)
	}
}

// TestServeBudgetUnderParallelCalls: a tenant's credit holds against 20
// parallel callers, through serve over HTTP on the embedded database, with
// plugin time priced: direct tool calls are refused (402, the limit named)
// once the credit is reached, and 20 parallel workflows end budgetExceeded
// with the reason; either way the tenant spends at most its credit plus
// the overdraft (each call holds its estimate before it starts), and
// nothing stays held.
func TestServeBudgetUnderParallelCalls(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a server and runs 40 parallel callers")
	}
	w := startBudgetWorld(t)
	tcs := make([]tenantClient, len(budgetCases))
	for i, c := range budgetCases {
		tcs[i] = w.tenant(t, fmt.Sprintf("tenant%d", i), c.credit)
	}
	base := hostileServer(t, w.data, w.logs, w.tools, "-config", w.configPath(t), "-plugin-chf-per-hour", budgetPluginPerHour)
	for i, c := range budgetCases {
		tcs[i].base = base
		t.Run(c.name, func(t *testing.T) { checkBudget(t, tcs[i], c.run(t, tcs[i:i+1])) })
	}
}

// TestTwoHostsBudget: the same attacks on two hosts sharing one
// PostgreSQL, callers alternating between them: the holds are rows taken
// under the tenant's row lock, so the bound is the same as on one host.
func TestTwoHostsBudget(t *testing.T) {
	if testing.Short() {
		t.Skip("starts two servers on PostgreSQL")
	}
	w := startBudgetWorld(t)
	database := testenv.Postgres(t)
	if _, stderr, err := run0(t, "migrate", "-database", database); err != nil {
		t.Fatalf("migrate: %v\n%s", err, stderr)
	}
	tcs := make([]tenantClient, len(budgetCases))
	for i, c := range budgetCases {
		out, stderr, err := run0(t, "admin", "bootstrap", "-database", database, "-tenant", fmt.Sprintf("Tenant%d", i), "-email", fmt.Sprintf("ada@t%d.example", i))
		if err != nil {
			t.Fatalf("bootstrap: %v\n%s", err, stderr)
		}
		m, tn := tokenLine.FindStringSubmatch(out), regexp.MustCompile(`(?m)^tenant (\S+)$`).FindStringSubmatch(out)
		if m == nil || tn == nil {
			t.Fatalf("bootstrap printed %q", out)
		}
		tcs[i] = tenantClient{token: m[2], workspace: m[1], tenant: tn[1]}
		for _, args := range [][]string{
			{"admin", "tools", "-database", database, "-plugins", w.tools, "-workspace", m[1], "-set", "core", "-extra", "lookup"},
			{"admin", "limits", "-database", database, "-tenant", tn[1], "-credit", c.credit},
		} {
			if _, stderr, err := run0(t, args...); err != nil {
				t.Fatalf("%v: %v\n%s", args, err, stderr)
			}
		}
	}
	// The hosts are child processes: they take prices and the model
	// configuration from the environment.
	t.Setenv(pluginPriceEnv, budgetPluginPerHour)
	t.Setenv("AGENTHOST_CONFIG", w.configPath(t))
	hosts := []host{startHost(t, database, w.tools), startHost(t, database, w.tools)}
	for i, c := range budgetCases {
		clients := []tenantClient{tcs[i], tcs[i]}
		for j := range clients {
			clients[j].base = strings.TrimSuffix(hosts[j].base, "/api/v1")
		}
		t.Run(c.name, func(t *testing.T) { checkBudget(t, clients[0], c.run(t, clients)) })
	}
}
