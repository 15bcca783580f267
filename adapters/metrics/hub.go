package metrics

import (
	"context"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/wharfhub/wharf/hub/service"
)

// Source is what the Hub collector reads at each scrape: the Hub service
// (service.Hub implements it).
type Source interface {
	Stats(ctx context.Context) (service.Stats, error)
}

// statsTimeout bounds the Hub's answer to one scrape (it reads memory,
// but the first one may read the registry from the store).
const statsTimeout = 5 * time.Second

// hubCollector turns one service.Stats per scrape into metrics.
type hubCollector struct {
	src Source
}

func newHubCollector(src Source) *hubCollector { return &hubCollector{src: src} }

// desc makes a metric's description; every name is under namespace.
func desc(name, help string, labels ...string) *prometheus.Desc {
	return prometheus.NewDesc(namespace+"_"+name, help, labels, nil)
}

// The Hub's metrics. A name ending in _total is a counter since the Hub
// started; the others are gauges of what holds now.
var (
	descStreams       = desc("live_streams", "Open live streams.")
	descSubscriptions = desc("live_subscriptions", "Subscriptions held by the open live streams, the activity topic's included.")
	descUpstreams     = desc("live_upstreams", "Feeds of workspace sessions the live broker holds, by state: live (frames flow), "+
		"opening, failing (the last attempt failed; retried while subscribed).", "state")
	descWorkspaces        = desc("workspaces", "Registered workspaces.")
	descSessions          = desc("workspace_sessions", "Running workspace sessions.")
	descSessionStarts     = desc("workspace_session_starts_total", "Workspace sessions started.")
	descSessionStops      = desc("workspace_session_stops_total", "Workspace sessions the Hub ended (a stop, a forget, its shutdown).")
	descSessionCrashes    = desc("workspace_session_crashes_total", "Workspace sessions that ended on their own.")
	descWorking           = desc("workspaces_working", "Running workspaces whose agents the Hub last saw working.")
	descAwaiting          = desc("workspaces_awaiting", "Running workspaces the Hub last saw awaiting an answer (a permission or a question).")
	descFinishes          = desc("agent_work_finished_total", "Times a workspace went quiet after working (the activity topic's finished); agents of one workspace working at once count once.")
	descJournalsRecovered = desc("journal_recoveries_total", "Recovery journals settled when the Hub started.")
	descJournalsPending   = desc("journals_pending", "Recovery journals left pending; each fences folder and workspace changes until a restart settles it.")
	descLogins            = desc("logins_total", "Logins, by outcome: succeeded, failed (a wrong name or password), refused (by the login limits, before any password was checked).", "outcome")
	descUnlocks           = desc("credential_unlocks_total", "Keys unlocked with their passphrase.")
	descUses              = desc("credential_uses_total", "Uses of credentials by workspace sessions, by purpose (ssh-login, git-signature, token) "+
		"and outcome (allowed, refused: by the use policy, its owner or the approvals bound).", "purpose", "outcome")
	descClonesStarted  = desc("clone_jobs_started_total", "Clone jobs started.")
	descClonesFinished = desc("clone_jobs_finished_total", "Clone jobs ended, by result (succeeded, clone-failed, register-failed, start-failed, cleanup-failed, cancelled, timed-out).", "result")
	descPush           = desc("push_deliveries_total", "Web Push deliveries, by outcome: sent (a push service accepted it), discarded (settled unsent: "+
		"answered, seen, expired, its device gone), failed (an attempt a push service did not accept; it may be retried and sent).", "outcome")
)

var allDescs = []*prometheus.Desc{descStreams, descSubscriptions, descUpstreams, descWorkspaces, descSessions, descSessionStarts,
	descSessionStops, descSessionCrashes, descWorking, descAwaiting, descFinishes, descJournalsRecovered, descJournalsPending,
	descLogins, descUnlocks, descUses, descClonesStarted, descClonesFinished, descPush}

// Describe sends every metric's description (prometheus.Collector).
func (c *hubCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range allDescs {
		ch <- d
	}
}

// Collect reads the Hub's snapshot and sends its metrics
// (prometheus.Collector).
func (c *hubCollector) Collect(ch chan<- prometheus.Metric) {
	ctx, cancel := context.WithTimeout(context.Background(), statsTimeout)
	defer cancel()
	st, err := c.src.Stats(ctx)
	gauge := func(d *prometheus.Desc, v int, labels ...string) {
		ch <- prometheus.MustNewConstMetric(d, prometheus.GaugeValue, float64(v), labels...)
	}
	total := func(d *prometheus.Desc, v uint64, labels ...string) {
		ch <- prometheus.MustNewConstMetric(d, prometheus.CounterValue, float64(v), labels...)
	}
	l := st.Live
	gauge(descStreams, l.Streams)
	gauge(descSubscriptions, l.Subscriptions)
	gauge(descUpstreams, l.UpstreamsLive, "live")
	gauge(descUpstreams, l.Upstreams-l.UpstreamsLive-l.UpstreamsFailing, "opening")
	gauge(descUpstreams, l.UpstreamsFailing, "failing")
	if err == nil {
		gauge(descWorkspaces, st.Workspaces)
	} else {
		ch <- prometheus.NewInvalidMetric(descWorkspaces, err)
	}
	gauge(descSessions, st.WorkspaceSessions)
	total(descSessionStarts, st.SessionStarts)
	total(descSessionStops, st.SessionStops)
	total(descSessionCrashes, st.SessionCrashes)
	gauge(descWorking, l.Working)
	gauge(descAwaiting, l.Awaiting)
	total(descFinishes, l.Finishes)
	total(descJournalsRecovered, st.JournalsRecovered)
	gauge(descJournalsPending, st.JournalsPending)
	total(descLogins, st.Logins, "succeeded")
	total(descLogins, st.LoginFailures, "failed")
	total(descLogins, st.LoginRefusals, "refused")
	total(descUnlocks, st.CredentialUnlocks)
	for _, u := range st.CredentialUses {
		outcome := "refused"
		if u.Allowed {
			outcome = "allowed"
		}
		total(descUses, u.N, string(u.Purpose), outcome)
	}
	total(descClonesStarted, st.CloneJobsStarted)
	for _, f := range st.CloneJobsFinished {
		total(descClonesFinished, f.N, string(f.Status))
	}
	total(descPush, st.PushSent, "sent")
	total(descPush, st.PushDiscarded, "discarded")
	total(descPush, st.PushFailed, "failed")
}
