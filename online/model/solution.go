package model

// Solution is the result of a solve and the state a warm start takes.
type Solution struct {
	// W holds the weights of the features and, last, of the bias.
	W []float64
	// Unlabeled holds, by row key, the TSVM label (±1) or the DA soft label
	// p ∈ [0, 1] of each unlabeled row; nil for the other algorithms.
	Unlabeled map[uint64]float64
	// LabeledAtStart is the number of labeled rows when TSVM last set its
	// transductive labels afresh (a cold start); 0 for the others.
	LabeledAtStart int
	// Temperature is DA's temperature at the returned weights.
	Temperature float64
	Stats       Stats
}

// Stats describes a solve.
type Stats struct {
	Objective   float64 // the objective of docs/MATH.md at W (transductive cost for tsvm, da)
	NewtonSteps int     // finite Newton steps over all runs
	CGLSIters   int     // CGLS iterations over all runs (SR's block CG: its iterations, once per response)
	Active      int     // active terms at the end
	Runs        int     // finite Newton runs (1 for the supervised algorithms)
	Switches    int     // TSVM label switches
	EigenIters  int     // SR eigensolver iterations
	Seconds     float64 // wall time
}
