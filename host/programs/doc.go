// Package programs holds example world programs (host.Program): Bank, a
// ledger of accounts whose balances must never go negative, and KV, a
// key-value store with compare-and-set. The tests, `leasehold demo` and
// the benchmarks run them; they are also the model for writing one.
package programs
