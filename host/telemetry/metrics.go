package telemetry

import (
	"context"
	"log/slog"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/agenthost/agenthost/host/store"
)

// metrics are the counters and histograms the host updates as things
// happen; figures read from the database at scrape time are the Collector's.
type metrics struct {
	runs         *prometheus.CounterVec
	rounds       prometheus.Counter
	modelCalls   *prometheus.CounterVec
	modelSeconds *prometheus.HistogramVec
	modelCost    *prometheus.CounterVec
	toolCalls    *prometheus.CounterVec
	toolSeconds  *prometheus.HistogramVec
	httpSeconds  *prometheus.HistogramVec
	poolWait     *prometheus.HistogramVec
	ingest       *prometheus.HistogramVec
}

func newMetrics(reg prometheus.Registerer) metrics {
	m := metrics{
		runs: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "agenthost_agent_runs_total",
			Help: "Agent runs by how they ended (completed, maxRoundsReached, budgetExceeded, stopped, failed): the abort reasons."}, []string{"outcome"}),
		rounds: prometheus.NewCounter(prometheus.CounterOpts{Name: "agenthost_agent_rounds_total", Help: "Agent loop rounds."}),
		modelCalls: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "agenthost_model_calls_total",
			Help: "Model calls of agent runs by operation and result (ok, error, refused)."}, []string{"operation", "result"}),
		modelSeconds: prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: "agenthost_model_call_seconds",
			Help: "Latency of model calls of agent runs.", Buckets: prometheus.ExponentialBuckets(0.05, 2, 12)}, []string{"operation"}),
		modelCost: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "agenthost_model_cost_chf_total",
			Help: "What agent runs' model calls cost, in CHF."}, []string{"operation"}),
		toolCalls: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "agenthost_tool_calls_total",
			Help: "Tool calls by tool and result (ok, or the error code: unknown_tool, invalid_arguments, timeout, …)."}, []string{"tool", "result"}),
		toolSeconds: prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: "agenthost_tool_call_seconds",
			Help: "Latency of tool calls, retries included.", Buckets: prometheus.ExponentialBuckets(0.005, 2, 14)}, []string{"tool"}),
		poolWait: prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: "agenthost_plugin_pool_wait_seconds",
			Help:    "How long tool calls waited for a plugin instance (all busy) or for a new one to start.",
			Buckets: prometheus.ExponentialBuckets(0.0001, 4, 10)}, []string{"tool"}),
		httpSeconds: prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: "agenthost_http_request_seconds",
			Help:    "Latency of HTTP requests by method, route and status (event streams count until they end).",
			Buckets: prometheus.ExponentialBuckets(0.001, 4, 10)}, []string{"method", "route", "status"}),
		ingest: prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: "agenthost_ingest_phase_seconds",
			Help:    "Time indexing a content spent in each phase: extract (the extractor plugin), chunk, store, embed.",
			Buckets: prometheus.ExponentialBuckets(0.001, 4, 10)}, []string{"phase"}),
	}
	reg.MustRegister(m.runs, m.rounds, m.modelCalls, m.modelSeconds, m.modelCost, m.toolCalls, m.toolSeconds, m.httpSeconds, m.poolWait, m.ingest)
	return m
}

// ObserveHTTP records one request (for the HTTP middleware).
func (t *Telemetry) ObserveHTTP(method, route, status string, d time.Duration) {
	t.m.httpSeconds.WithLabelValues(method, route, status).Observe(d.Seconds())
}

// ObserveIngestPhase records one phase of indexing a content (a
// ingest.PhaseObserver).
func (t *Telemetry) ObserveIngestPhase(phase string, d time.Duration) {
	t.m.ingest.WithLabelValues(phase).Observe(d.Seconds())
}

// Counter is what the collector reads from the database at each scrape.
type Counter interface {
	Counts(ctx context.Context, at time.Time) (store.Counts, error)
}

// Elector decides, at each scrape, whether this process exports the
// gauges read from the database. Every host and worker sharing a database
// reads the same figures, so if each exported them a sum() over the hosts
// would count them once per host: one process exports them, the others
// only say they do not (agenthost_database_gauges_exporter 0).
type Elector interface {
	ExportsDatabaseGauges(ctx context.Context) (bool, error)
}

// CollectStore registers gauges read from the database when scraped:
// workflows by state, files, chunks and vectors, jobs by state and kind,
// and each tenant's spending against its limits, exported only while el
// elects this process (nil: always, a single process). A failed read is
// logged and leaves those gauges out of that scrape.
func (t *Telemetry) CollectStore(c Counter, el Elector, logger *slog.Logger) {
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	t.reg.MustRegister(&storeCollector{c: c, el: el, log: logger})
}

var (
	descWorkflows = prometheus.NewDesc("agenthost_workflows", "Workflows by state.", []string{"state"}, nil)
	descFiles     = prometheus.NewDesc("agenthost_knowledge_files", "Files in the store.", nil, nil)
	descChunks    = prometheus.NewDesc("agenthost_knowledge_chunks", "Indexed chunks of the knowledge store.", nil, nil)
	descVectors   = prometheus.NewDesc("agenthost_knowledge_vectors", "Chunk embeddings of the knowledge store.", nil, nil)
	descJobs      = prometheus.NewDesc("agenthost_jobs", "Jobs of the queue by state and kind (the queue's depth: state available).", []string{"state", "kind"}, nil)
	descSpent     = prometheus.NewDesc("agenthost_tenant_spent_chf", "A tenant's spending in CHF, this calendar month and in total.", []string{"tenant", "period"}, nil)
	descLimit     = prometheus.NewDesc("agenthost_tenant_limit_chf", "A tenant's spending limits in CHF (credit, monthly), when set.", []string{"tenant", "limit"}, nil)
	descExporter  = prometheus.NewDesc("agenthost_database_gauges_exporter",
		"1 on the one process that exports the gauges read from the database (agenthost_workflows, _knowledge_*, _jobs, _tenant_*), 0 on the others.", nil, nil)
)

type storeCollector struct {
	c   Counter
	el  Elector
	log *slog.Logger
}

func (s *storeCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{descWorkflows, descFiles, descChunks, descVectors, descJobs, descSpent, descLimit, descExporter} {
		ch <- d
	}
}

func (s *storeCollector) Collect(ch chan<- prometheus.Metric) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	exports := true
	if s.el != nil {
		var err error
		if exports, err = s.el.ExportsDatabaseGauges(ctx); err != nil {
			s.log.Error("telemetry: deciding which process exports the database gauges", "err", err)
			exports = false
		}
	}
	flag := 0.0
	if exports {
		flag = 1
	}
	ch <- prometheus.MustNewConstMetric(descExporter, prometheus.GaugeValue, flag)
	if !exports {
		return
	}
	c, err := s.c.Counts(ctx, time.Now())
	if err != nil {
		s.log.Error("telemetry: reading counts for /metrics", "err", err)
		return
	}
	for _, state := range []string{"running", "completed", "stopped", "failed"} {
		ch <- prometheus.MustNewConstMetric(descWorkflows, prometheus.GaugeValue, float64(c.WorkflowsByStatus[state]), state)
	}
	ch <- prometheus.MustNewConstMetric(descFiles, prometheus.GaugeValue, float64(c.Files))
	ch <- prometheus.MustNewConstMetric(descChunks, prometheus.GaugeValue, float64(c.Chunks))
	ch <- prometheus.MustNewConstMetric(descVectors, prometheus.GaugeValue, float64(c.Vectors))
	for k, n := range c.JobsByState {
		ch <- prometheus.MustNewConstMetric(descJobs, prometheus.GaugeValue, float64(n), k[0], k[1])
	}
	for _, t := range c.Tenants {
		ch <- prometheus.MustNewConstMetric(descSpent, prometheus.GaugeValue, t.SpentMonth.CHF(), t.TenantID, "month")
		ch <- prometheus.MustNewConstMetric(descSpent, prometheus.GaugeValue, t.SpentTotal.CHF(), t.TenantID, "total")
		if t.Credit != nil {
			ch <- prometheus.MustNewConstMetric(descLimit, prometheus.GaugeValue, t.Credit.CHF(), t.TenantID, "credit")
		}
		if t.Monthly != nil {
			ch <- prometheus.MustNewConstMetric(descLimit, prometheus.GaugeValue, t.Monthly.CHF(), t.TenantID, "monthly")
		}
	}
}
