package drivertest

import (
	"fmt"
	"sort"
	"strings"
)

// fingerprint is every row of every table of the store, in a stable
// order: what "a refused input changes nothing" (SPEC §5) is checked
// against. It reads the catalogue rather than a list of tables, so a table
// added by a later migration is covered without touching this; the
// catalogue is read once per env and the rows in one query per call.
//
// Postgres renders a row generically (row::text) and hashes each table;
// SQLite has neither, so each column is quote()d (a BLOB as X'…') and the
// rows are concatenated. Both orders are by the rendered row, not by an
// id, so a table without one is as stable.
func (e *env) fingerprint() (fingerprint, error) {
	if e.h.Query == nil {
		return nil, fmt.Errorf("the harness has no Query")
	}
	if e.fpQuery == "" {
		q, err := e.fingerprintQuery()
		if err != nil {
			return nil, err
		}
		e.fpQuery = q
	}
	var all string
	if err := e.h.Query(e.ctx, e.fpQuery, &all); err != nil {
		return nil, fmt.Errorf("fingerprint: %w", err)
	}
	fp := fingerprint{}
	for _, part := range strings.Split(all, "\x1e") {
		table, rows, _ := strings.Cut(part, "\x1f")
		fp[table] = rows
	}
	return fp, nil
}

// fingerprintQuery is one query answering every table as
// name \x1f rows, the tables joined by \x1e.
func (e *env) fingerprintQuery() (string, error) {
	var tablesSQL, sep string
	var table func(name string) (string, error)
	switch e.d.Name() {
	case "postgres":
		tablesSQL = `SELECT coalesce(string_agg(tablename, ',' ORDER BY tablename), '') FROM pg_tables WHERE schemaname = current_schema()`
		sep = ` || chr(30) || `
		table = func(name string) (string, error) {
			return fmt.Sprintf(`(SELECT '%s' || chr(31) || count(*)::text || ' ' || coalesce(md5(string_agg(t::text, E'\n' ORDER BY t::text)), '') FROM %q t)`, name, name), nil
		}
	case "sqlite":
		tablesSQL = `SELECT coalesce(group_concat(name, ','), '') FROM (SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name)`
		sep = ` || char(30) || `
		table = func(name string) (string, error) {
			var cols string
			q := fmt.Sprintf(`SELECT coalesce(group_concat('quote("' || name || '")', ' || '','' || '), '') FROM pragma_table_info('%s')`, name)
			if err := e.h.Query(e.ctx, q, &cols); err != nil {
				return "", fmt.Errorf("columns of %s: %w", name, err)
			}
			return fmt.Sprintf(`(SELECT '%s' || char(31) || count(*) || ' ' || coalesce(group_concat(r, char(10)), '') FROM (SELECT %s AS r FROM %q ORDER BY 1))`, name, cols, name), nil
		}
	default:
		return "", fmt.Errorf("no fingerprint for driver %s", e.d.Name())
	}
	var tables string
	if err := e.h.Query(e.ctx, tablesSQL, &tables); err != nil {
		return "", fmt.Errorf("listing tables: %w", err)
	}
	var parts []string
	for _, name := range strings.Split(tables, ",") {
		p, err := table(name)
		if err != nil {
			return "", err
		}
		parts = append(parts, p)
	}
	return "SELECT " + strings.Join(parts, sep), nil
}

// fingerprint maps each table of a store to its rows, rendered.
type fingerprint map[string]string

// changedTables names, sorted, the tables whose rows differ between two
// fingerprints (or that only one has).
func changedTables(before, after fingerprint) []string {
	var out []string
	for t, rows := range before {
		if a, ok := after[t]; !ok || a != rows {
			out = append(out, t)
		}
	}
	for t := range after {
		if _, ok := before[t]; !ok {
			out = append(out, t)
		}
	}
	sort.Strings(out)
	return out
}
