// Package demo runs the whole job on an embedded broker: it produces a
// stream of examples (generated, or read from a file) with a few labels
// revealed late, runs the service on it, reads the predictions back and
// summarizes what happened.
package demo
