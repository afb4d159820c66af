package libsql

import "strings"

// go-libsql reports errors as text ("… error code = N: … SQLite failure:
// `<SQLite's message>`"), with libSQL's own status code, not SQLite's
// result code; SQLite's message is what identifies the condition.

func isUnique(err error) bool {
	return err != nil && strings.Contains(err.Error(), "UNIQUE constraint failed")
}

func isBusy(err error) bool {
	if err == nil {
		return false
	}
	msg := err.Error()
	return strings.Contains(msg, "database is locked") || strings.Contains(msg, "SQLITE_BUSY")
}

func isMissingSchema(err error) bool {
	if err == nil {
		return false
	}
	msg := err.Error()
	return strings.Contains(msg, "no such table") || strings.Contains(msg, "no such column")
}
