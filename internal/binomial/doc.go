// Package binomial holds confidence intervals for a share of successes
// in independent trials: the precision of automatic decisions, the
// share of a graph's labeled edges that join one class. It knows
// nothing of what is counted.
package binomial
