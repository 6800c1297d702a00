// Package servicebench holds the harnesses of `streamer bench` that measure
// the service whole, from outside, against an embedded broker in this
// process: drain (a `streamer run` child process catching up with a topic
// filled before it started), load (a child under producers going as fast
// as they can), scale (scorer children sharing a filled topic, a standby
// learner's takeover, and a rolling restart of scorers) and http (the
// service in this process, scoring over POST /v1/predict). Each takes a
// config and returns a report whose JSON keys are the command's output.
//
// It reads the service from outside, as an operator would: its topics,
// its metrics endpoint, its HTTP API and /proc (http, which runs it in
// this process, also asks its pipeline whether the model is solved). It
// may depend on every other
// package, and it runs the CLI's binary (DrainConfig.Executable and the
// like), but no package depends on it except the CLI's wiring, so
// measuring code never ships inside the service's packages.
package servicebench
