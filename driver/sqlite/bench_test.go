package sqlite_test

import (
	"testing"

	"github.com/leasehold/leasehold/driver"
	"github.com/leasehold/leasehold/driver/drivertest"
)

// The benchmarks are drivertest's, shared with Postgres; here on a fresh
// file (WAL, synchronous=FULL) with a fake store clock.

func benchOpen(b *testing.B) driver.Driver { return open(b).Driver }

func BenchmarkRunClaim(b *testing.B)        { drivertest.BenchRunClaim(b, benchOpen) }
func BenchmarkRunComplete(b *testing.B)     { drivertest.BenchRunComplete(b, benchOpen) }
func BenchmarkRunCompleteMany(b *testing.B) { drivertest.BenchRunCompleteMany(b, benchOpen) }
func BenchmarkRunEnqueue(b *testing.B)      { drivertest.BenchRunEnqueue(b, benchOpen) }
func BenchmarkRunCycle(b *testing.B)        { drivertest.BenchRunCycle(b, benchOpen) }
func BenchmarkRunEventAppend(b *testing.B)  { drivertest.BenchRunEventAppend(b, benchOpen) }
func BenchmarkJournalAppend(b *testing.B)   { drivertest.BenchJournalAppend(b, benchOpen) }
func BenchmarkReads(b *testing.B)           { drivertest.BenchReads(b, benchOpen) }
