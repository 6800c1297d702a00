// Package collapse holds a slog.Handler that collapses repeated log lines:
// during an outage every retry loop, and kafka-go's readers through their
// ErrorLogger, log the same warning over and over. Of the records of one
// kind (level and message) at or above a level, it writes the first, then
// at most one per step, the steps doubling up to a bound, each with the
// number of records of the kind it did not write since the last line
// ("repeated"). It starts no goroutine: suppressed records are written
// when a later record of any kind finds them due, or at Flush.
package collapse
