package service

import "github.com/wharfhub/wharf/hub"

// The notifications family's reads and writes (writes.go).

func (w *writes) PushDevices() ([]hub.PushDevice, error) { return w.tx.PushDevices() }

func (w *writes) PutPushDevice(d hub.PushDevice) error {
	return w.did(w.tx.PutPushDevice(d), &pushDeviceSaved{d: d})
}

func (w *writes) DeletePushDevice(id string) (bool, error) {
	ok, err := w.tx.DeletePushDevice(id)
	if err == nil && ok {
		w.record(pushDeviceRemoved{id: id})
	}
	return ok, err
}

func (w *writes) PutPushDelivery(d hub.PushDelivery) error {
	return w.did(w.tx.PutPushDelivery(d), pushDeliverySaved{d: d})
}

func (w *writes) DeletePushDelivery(k hub.PushDeliveryKey) error {
	return w.did(w.tx.DeletePushDelivery(k), pushDeliveryDeleted{k: k})
}

func (w *writes) PutNotificationCursor(ws, cursor string) error {
	return w.did(w.tx.PutNotificationCursor(ws, cursor), notificationCursorSaved{ws: ws, cursor: cursor})
}
