package main

import (
	"context"
	"fmt"
	"os"
	"sync"

	"github.com/wharfhub/wharf/hub"
)

// A daemon child started with pushJournalEnv tells every push delivery it
// journals (serve.go's testStore hook): the only sign, outside its
// database, that the Hub has journaled a delivery it has yet to send, or
// settled one it will never send, which the push tests wait for before
// they kill the daemon or change what the Hub is to decide.

// pushJournalEnv makes a daemon child tell its journal (journalTeller).
const pushJournalEnv = "WHARF_TEST_PUSH_JOURNAL"

func init() {
	if os.Getenv(pushJournalEnv) == "1" {
		testStore = func(s hub.Store) hub.Store { return &journalTeller{Store: s, n: map[string]int{}} }
	}
}

// journalTeller is a store that writes one line to stderr for every
// delivery a committed transaction journaled:
//
//	pushjournal <pid>: device=<id> kind=<kind> state=<state> n=<count>
//
// n counts the lines of that device, kind and state in this process, so
// each line is unique and a test waits for exactly the one it means
// (journalLine). Ids and kinds are no secrets.
type journalTeller struct {
	hub.Store
	mu sync.Mutex
	n  map[string]int
}

func (s *journalTeller) Update(ctx context.Context, fn func(hub.Tx) error) error {
	var puts []hub.PushDelivery
	err := s.Store.Update(ctx, func(tx hub.Tx) error {
		puts = puts[:0] // a store may run fn again
		return fn(journalTx{Tx: tx, puts: &puts})
	})
	if err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, d := range puts {
		key := fmt.Sprint(d.Key.DeviceID, d.Notification.Kind, d.State)
		s.n[key]++
		fmt.Fprint(os.Stderr, journalLine(os.Getpid(), d.Key.DeviceID, string(d.Notification.Kind), string(d.State), s.n[key]))
	}
	return nil
}

// journalTx records the deliveries put in one transaction.
type journalTx struct {
	hub.Tx
	puts *[]hub.PushDelivery
}

func (t journalTx) PutPushDelivery(d hub.PushDelivery) error {
	err := t.Tx.PutPushDelivery(d)
	if err == nil {
		*t.puts = append(*t.puts, d)
	}
	return err
}

// journalLine is the line journalTeller writes for the nth delivery of
// device, kind and state that process pid journaled.
func journalLine(pid int, device, kind, state string, n int) string {
	return fmt.Sprintf("pushjournal %d: device=%s kind=%s state=%s n=%d\n", pid, device, kind, state, n)
}
