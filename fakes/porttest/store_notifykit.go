package porttest

import (
	"crypto/sha256"
	"errors"
	"fmt"
	"maps"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/wharfhub/wharf/hub"
)

// The fixtures and renderings the NotificationStore's subtests share.

// pushDevice returns user's device id with every field set: a selection
// and cutoffs naming w1, w2 and a workspace that never existed, a sealed
// subscription that is not text, and times n nanoseconds after t0 and
// below the second.
func (k storeKit) pushDevice(id, user string, n int) hub.PushDevice {
	at := func(i int) time.Time { return k.t0.Add(time.Duration(n*10 + i)) }
	return hub.PushDevice{ID: id, User: user,
		DeviceSession:  sha256.Sum256([]byte("login of " + id)),
		Subscription:   []byte("\x00\xffsealed subscription of " + id),
		EndpointDigest: sha256.Sum256([]byte("https://fcm.googleapis.com/fcm/send/" + id)),
		WorkspaceIDs:   []string{"w2", "gone", "w1"},
		AllWorkspaces:  true, NeedsAnswer: true, Completed: true,
		Cutoffs: []hub.PushCutoff{
			{WorkspaceID: "w2", Category: hub.CategoryCompleted, Since: at(1)},
			{WorkspaceID: "w2", Category: hub.CategoryNeedsAnswer, Since: at(2)},
			{WorkspaceID: "gone", Category: hub.CategoryNeedsAnswer, Since: at(3)},
		},
		CreatedAt: at(0), LastSentAt: at(4), LastAckAt: at(5)}
}

// delivery returns the delivery of notification id in workspace ws to
// device, with every field set, journaled n nanoseconds after t0. The
// notification's ids hold bytes an agent may send: NUL, invalid UTF-8,
// quotes.
func (k storeKit) delivery(ws, device, id string, n int) hub.PushDelivery {
	at := func(i int) time.Time { return k.t0.Add(time.Duration(n)).Add(time.Duration(i) * time.Minute) }
	return hub.PushDelivery{
		Key: hub.PushDeliveryKey{WorkspaceID: ws, DeviceID: device, NotificationID: id},
		Notification: hub.Notification{ID: id, ConversationID: "agent:\x00\"conv\" " + id,
			SourceID: "req\xff-" + id, Kind: hub.NotifyQuestionPending, CreatedAt: at(-1)},
		State:     hub.DeliveryHeld,
		CreatedAt: at(0), HeldAt: at(1), ReleasedAt: at(2), NextAt: at(3), Deadline: at(4), SettledAt: at(5),
		Attempts: 3,
	}
}

// notice returns a notification id as a session builds one: a JSON
// tuple of the agent, the conversation, the kind and the source.
func notice(source string) string {
	return `["codex","agent:c1","question-pending","` + source + `"]`
}

// render writes every field of v found by reflection, nested records and
// lists included, times as Unix nanoseconds and digests in hex, so a
// comparison says which field differs, a field added to a record is
// compared without being named here, and two stores compare equal only
// when they keep the same values (a time's zone and monotonic reading are
// not values).
func render(v any) string {
	var b strings.Builder
	renderValue(&b, reflect.ValueOf(v))
	return b.String()
}

func renderValue(b *strings.Builder, v reflect.Value) {
	if tm, ok := v.Interface().(time.Time); ok {
		if tm.IsZero() {
			b.WriteString("zero")
		} else {
			fmt.Fprintf(b, "%d", tm.UnixNano())
		}
		return
	}
	switch v.Kind() {
	case reflect.Struct:
		b.WriteString("{")
		for i := range v.NumField() {
			fmt.Fprintf(b, "%s=", v.Type().Field(i).Name)
			renderValue(b, v.Field(i))
			b.WriteString(" ")
		}
		b.WriteString("}")
	case reflect.Slice, reflect.Array:
		if v.Type().Elem().Kind() == reflect.Uint8 {
			bs := make([]byte, v.Len())
			for i := range bs {
				bs[i] = byte(v.Index(i).Uint())
			}
			fmt.Fprintf(b, "%x", bs) // nil and empty alike: neither store tells them apart
			return
		}
		b.WriteString("[")
		for i := range v.Len() {
			renderValue(b, v.Index(i))
			b.WriteString(" ")
		}
		b.WriteString("]")
	case reflect.String:
		fmt.Fprintf(b, "%q", v.String())
	default:
		fmt.Fprint(b, v.Interface())
	}
}

// unsetIn names a field of v, nested records and the elements of lists
// included, left at its zero value, or "".
func unsetIn(v any) string {
	var find func(reflect.Value, string) string
	find = func(v reflect.Value, path string) string {
		if v.IsZero() {
			return path
		}
		if _, ok := v.Interface().(time.Time); ok {
			return ""
		}
		switch v.Kind() {
		case reflect.Struct:
			for i := range v.NumField() {
				if p := find(v.Field(i), path+"."+v.Type().Field(i).Name); p != "" {
					return p
				}
			}
		case reflect.Slice:
			if v.Type().Elem().Kind() == reflect.Uint8 {
				return "" // bytes are data: a zero byte is one
			}
			for i := range v.Len() {
				if p := find(v.Index(i), fmt.Sprintf("%s[%d]", path, i)); p != "" {
					return p
				}
			}
		}
		return ""
	}
	return find(reflect.ValueOf(v), reflect.TypeOf(v).Name())
}

// renderAll renders each of vs, one a line.
func renderAll[T any](vs []T) string {
	out := make([]string, len(vs))
	for i, v := range vs {
		out[i] = render(v)
	}
	return strings.Join(out, "\n")
}

// deviceIDs and deliveryIDs list the ids of ds in order, comma-separated;
// a delivery as workspace/device/notification.
func deviceIDs(ds []hub.PushDevice) string {
	var out []string
	for _, d := range ds {
		out = append(out, d.ID)
	}
	return strings.Join(out, ",")
}

func deliveryIDs(ds []hub.PushDelivery) string {
	var out []string
	for _, d := range ds {
		out = append(out, d.Key.WorkspaceID+"/"+d.Key.DeviceID+"/"+d.Key.NotificationID)
	}
	return strings.Join(out, ",")
}

// notificationState renders everything the NotificationStore holds, so a
// test can tell that a refused, rolled-back or read-only write changed
// nothing.
func notificationState(tx hub.Tx) (string, error) {
	ds, err := tx.PushDevices()
	if err != nil {
		return "", err
	}
	dls, err := tx.PushDeliveries()
	if err != nil {
		return "", err
	}
	cs, err := tx.NotificationCursors()
	if err != nil {
		return "", err
	}
	var b strings.Builder
	b.WriteString(renderAll(ds) + "\n" + renderAll(dls) + "\n")
	for _, ws := range slices.Sorted(maps.Keys(cs)) {
		fmt.Fprintf(&b, "%s=%q ", ws, cs[ws])
	}
	return b.String(), nil
}

// seedNotifications registers users ann and bob and workspaces w1 and w2
// (seedPair), then stores ann's devices a1 and a2 and bob's b1, a
// delivery to each device in each workspace, and a cursor of each
// workspace.
func (k storeKit) seedNotifications(t *testing.T, s hub.Store) {
	k.seedPair(t, s)
	k.update(t, s, func(tx hub.Tx) error {
		errs := []error{tx.PutPushDevice(k.pushDevice("a1", "ann", 1)), tx.PutPushDevice(k.pushDevice("a2", "ann", 2)),
			tx.PutPushDevice(k.pushDevice("b1", "bob", 3))}
		n := 0
		for _, dev := range []string{"a1", "a2", "b1"} {
			for _, ws := range []string{"w1", "w2"} {
				n++
				errs = append(errs, tx.PutPushDelivery(k.delivery(ws, dev, notice("n"), n)))
			}
		}
		errs = append(errs, tx.PutNotificationCursor("w1", "epoch-1:7"), tx.PutNotificationCursor("w2", "epoch-2:9"))
		return errors.Join(errs...)
	})
}

// strNotice writes notice("n") for each N of s.
func strNotice(s string) string { return strings.ReplaceAll(s, "N", notice("n")) }

// seededDeliveries is deliveryIDs of what seedNotifications stores.
var seededDeliveries = strNotice("w1/a1/N,w2/a1/N,w1/a2/N,w2/a2/N,w1/b1/N,w2/b1/N")
