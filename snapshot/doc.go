// Package snapshot defines the versioned, checksummed binary form of a model
// and its stream position, encodes and decodes it, splits it into chunks that
// fit a broker's message limit and reassembles the newest complete one.
package snapshot
