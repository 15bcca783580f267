package live

// Stats is what the broker holds at one moment, for an operator's
// monitoring: plain numbers, no workspace or user named.
type Stats struct {
	// Streams is the open live streams; Subscriptions the subscriptions
	// they hold in all (the activity topic's included).
	Streams, Subscriptions int
	// Upstreams is the feeds of workspace sessions the broker holds
	// (lingering ones included); UpstreamsLive those whose frames flow,
	// UpstreamsFailing those whose last attempt failed.
	Upstreams, UpstreamsLive, UpstreamsFailing int
	// Working and Awaiting count the running workspaces the Hub last saw
	// working, and awaiting an answer (the activity topic's facts).
	Working, Awaiting int
	// Finishes counts the times a workspace went quiet after working
	// since the broker was made: the activity topic's `finished`. Agents
	// of one workspace working at once count as one spell of work.
	Finishes uint64
}

// Stats returns what the broker holds now. It takes the broker's lock
// once and each stream's briefly, and allocates nothing, so a scrape of
// thousands of streams costs microseconds.
func (b *Broker) Stats() Stats {
	b.mu.Lock()
	defer b.mu.Unlock()
	st := Stats{Streams: len(b.streams), Upstreams: len(b.ups), Finishes: b.marks.finishes}
	for _, s := range b.streams {
		s.mu.Lock()
		st.Subscriptions += len(s.subs)
		s.mu.Unlock()
	}
	for _, u := range b.ups {
		switch u.state {
		case upLive:
			st.UpstreamsLive++
		case upFailed:
			st.UpstreamsFailing++
		}
	}
	for _, o := range b.marks.observed {
		st.Working += count(o.Running && o.Working)
		st.Awaiting += count(o.Running && o.Awaiting)
	}
	return st
}

func count(b bool) int {
	if b {
		return 1
	}
	return 0
}
