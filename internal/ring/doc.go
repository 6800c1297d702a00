// Package ring holds Ring, a buffer of the newest items of a stream up to
// a bound: the pipeline's recent prequential scores, the learner's graded
// predictions and the drift watch's graded labels are each one.
//
// It knows nothing of what it holds, and it imports nothing of this
// module.
package ring
