// Package bench holds the harnesses of `streamer bench`: solve (a cold
// solve and a warm re-solve of a generated problem, one or several
// classes), ann (the sliding-window kNN graph against brute force), replay
// (replay throughput on an embedded broker), load (a `streamer run` child
// process under producers going as fast as they can) and drain (a
// `streamer run` child process catching up with a topic filled before it
// started) and scale (scorer replicas sharing a filled topic, and a
// standby learner's takeover). Each takes a config and returns a report whose JSON keys are
// the command's output.
//
// It is the one package that may depend on every other one, the CLI's
// binary included (load and drain run it); no library package depends on
// it, so measuring code never ships inside the service's packages.
package bench
