package driver

import "context"

// JournalNotifier is an optional interface of a Driver whose store can
// tell other processes that journal entries were committed (Postgres
// LISTEN/NOTIFY, fed by a trigger on the journal table). Found by type
// assertion, like EventNotifier; a notification is only a wake-up, and a
// consumer reads the journal (JournalRead) after every one.
type JournalNotifier interface {
	// JournalNotify returns a channel of world ids whose journals got new
	// entries — sent only after they committed, by any process sharing the
	// store. Best effort, as RunEventsNotify: ids may coalesce or be
	// dropped, so a consumer keeps a poll; "" (never a world id) means
	// entries of any world may have been missed. The channel is closed
	// when ctx ends (or the store closes).
	JournalNotify(ctx context.Context) (<-chan string, error)
}
