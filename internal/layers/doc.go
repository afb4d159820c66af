// Package layers holds the check that the import graph keeps the layers
// docs/ARCHITECTURE.md states: the pure core imports no driver and no I/O,
// the machinery no concrete driver, the drivers not each other, and so on.
// It has no code of its own; the rule table and the check are in its test,
// which fails naming the offending import, or a package the table does not
// place (so a new package cannot arrive without a stated layer).
package layers
