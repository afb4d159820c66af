package drivertest

// Cases returns every conformance case, in a fixed order.
func Cases() []Case {
	var all []Case
	for _, group := range [][]Case{schemaCases, worldCases, appendCases, leaseCases, sweepCases, importCases, propertyCases, runCases, effectCases, renewManyCases, inputCases, hostileCases, runRoundTripCases, effectLedgerCases, appendMoreCases, edgeCases, enqueueTxCases, snoozeCases, retentionCases, uniqueScopeCases, releaseCases, queueCases, queueLimitSetCases, retryCases, queueEventCases} {
		all = append(all, group...)
	}
	return append(all, enqueueOrderCase, runListCase, runCountsCase, eventNotifyCase,
		Case{"RunEnqueueBatchKeepsEveryColumnInInputOrder", caseRunEnqueueBatchKeepsEveryColumn},
		Case{"RunReclaimedRunKeepsItsPlaceInTheQueue", caseReclaimedRunKeepsItsPlace})
}
