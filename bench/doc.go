// Package bench holds the harnesses of `streamer bench` that measure the
// library's parts in this process: solve (a cold solve and a warm re-solve
// of a generated problem, one class or several), ann (the sliding-window
// kNN graph against brute force, and the points for the hnswlib reference)
// and replay (replay throughput on an embedded broker). Each takes a config
// and returns a report whose JSON keys are the command's output. The
// harnesses that run the whole service are servicebench's.
//
// No library package depends on it, so measuring code never ships inside
// the service's packages; it starts no process.
package bench
