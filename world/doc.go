// Package world holds the I/O side of worlds around the pure journal core:
// the group committer that shares one store transaction (one fsync) among
// concurrent appends to a world, and the expiry sweeper service. The world
// host (mirror, turns, handoff protocol, hot band) joins it in a later
// release.
package world
