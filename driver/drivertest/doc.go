// Package drivertest is the one conformance suite every driver runs, case
// for case: each behaviour a driver must have is a case in Cases, and each
// driver's tests call Exercise with a Harness factory. Adding a behaviour to
// a driver means adding its case here, so the drivers cannot drift apart.
package drivertest
