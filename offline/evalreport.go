package offline

import (
	"math"

	"streamer/online/active"
	"streamer/online/train"

	"streamer/snapshot"
)

// Scores are one learner's figures in an eval run.
type Scores struct {
	// Accuracy and MacroF1 are prequential: the revealed labels against the
	// predictions made when their examples arrived, those made before any
	// model existed left out (counted in Unscored).
	Accuracy float64 `json:"accuracy"`
	MacroF1  float64 `json:"macro_f1"`
	// AllAccuracy and AllMacroF1 score every example's prediction at
	// arrival against the label its file carries, revealed or not. An
	// example that arrived before any model existed counts as wrong (a
	// false negative of its class; see NoModel).
	AllAccuracy float64 `json:"all_accuracy"`
	AllMacroF1  float64 `json:"all_macro_f1"`
	// TestAccuracy and TestMacroF1 score the model in force at the end of
	// the stream on the test file's labeled rows (nil without a test file;
	// no model at all counts every row wrong).
	TestAccuracy *float64 `json:"test_accuracy,omitempty"`
	TestMacroF1  *float64 `json:"test_macro_f1,omitempty"`
}

// TestPoint scores the models in force after Examples examples on the test
// file.
type TestPoint struct {
	Examples           int     `json:"examples"`
	SSLAccuracy        float64 `json:"ssl_accuracy"`
	SSLMacroF1         float64 `json:"ssl_macro_f1"`
	SupervisedAccuracy float64 `json:"supervised_accuracy"`
	SupervisedMacroF1  float64 `json:"supervised_macro_f1"`
}

// Tenth scores every labeled example's prediction at arrival over one
// tenth of the stream, for both learners.
type Tenth struct {
	Examples           int     `json:"examples"` // the tenth's last example
	SSLAccuracy        float64 `json:"ssl_all_accuracy"`
	SupervisedAccuracy float64 `json:"supervised_all_accuracy"`
	// NoModel counts the tenth's examples that arrived before the
	// semi-supervised learner had a model (counted wrong).
	NoModel int `json:"no_model"`
}

// SolveRecord is one solve of the semi-supervised learner in a run, as it
// reported it.
type SolveRecord struct {
	Examples  int    `json:"examples"` // examples seen when it ran
	Version   uint64 `json:"version"`
	Algorithm string `json:"algorithm"` // what ran: auto's choice
	// Lambda is the λ it ran with (solver.lambda_search may raise it).
	Lambda float64 `json:"lambda,omitempty"`
	// LabelHalfLife is the half-life, in window positions, of the labeled
	// rows' weights the search chose with λ; 0 for none.
	LabelHalfLife float64 `json:"label_half_life,omitempty"`
	// Trial is the record of each candidate auto's trial weighed, when it
	// ran one (docs/MATH.md, "Choosing an algorithm").
	Trial map[train.Algorithm]float64 `json:"trial,omitempty"`
	// KernelRank is the dimension of the kernel map, 0 without one.
	KernelRank int `json:"kernel_rank,omitempty"`
	Window     int `json:"window"`
	Labeled    int `json:"labeled"`
	Classes    int `json:"classes"` // classes labeled in the window
	// LabeledEdges and AgreeingEdges count the kNN edges between labeled
	// rows and those joining one class; VoteWeight is the share of the
	// neighbours' vote in the predictions (0: the model alone).
	LabeledEdges  int     `json:"labeled_edges"`
	AgreeingEdges int     `json:"agreeing_edges"`
	VoteWeight    float64 `json:"vote_weight"`
	Seconds       float64 `json:"seconds"`
}

// AlarmRecord is a drift alarm in a run.
type AlarmRecord struct {
	Examples  int64   `json:"examples"` // examples seen when it fired
	Detector  string  `json:"detector"`
	Statistic float64 `json:"statistic"`
	Threshold float64 `json:"threshold"`
	// Reactions are what the learner was told (pipeline.Alarm).
	Reactions []string `json:"reactions,omitempty"`
	// Classes are those of the errors since the change, for an alarm of
	// the labels (pipeline.Alarm).
	Classes []string `json:"classes,omitempty"`
	// SwitchedFrom and SwitchedTo name the learner's algorithms where the
	// rise of an alarm of the labels began at its switch (pipeline.Alarm).
	SwitchedFrom string `json:"switched_from,omitempty"`
	SwitchedTo   string `json:"switched_to,omitempty"`
}

// SeedReport is the result of one run, with one label seed.
type SeedReport struct {
	Seed           uint64  `json:"seed"`
	LabelsRevealed int     `json:"labels_revealed"`
	SSL            Scores  `json:"ssl"`
	Supervised     Scores  `json:"supervised"`
	Solves         int64   `json:"solves"`
	SolveSeconds   float64 `json:"solve_seconds"`
	Seconds        float64 `json:"seconds"`
	Unscored       int     `json:"unscored"`
	// NoModel and SupervisedNoModel count the labeled examples of the file
	// that arrived before the learner (the baseline) had a model.
	NoModel           int `json:"no_model"`
	SupervisedNoModel int `json:"supervised_no_model"`
	// Curve and BaselineCurve are prequential (a point every few revealed
	// labels); AllCurve and SupervisedAllCurve score every labeled example
	// (a point every few examples; RecentAccuracy there covers the examples
	// since the previous point).
	Curve              []snapshot.CurvePoint `json:"curve,omitempty"`
	BaselineCurve      []snapshot.CurvePoint `json:"supervised_curve,omitempty"`
	AllCurve           []snapshot.CurvePoint `json:"all_curve,omitempty"`
	SupervisedAllCurve []snapshot.CurvePoint `json:"supervised_all_curve,omitempty"`
	TestCurve          []TestPoint           `json:"test_curve,omitempty"`
	// Tenths score the stream tenth by tenth; SolveLog has every solve.
	Tenths   []Tenth       `json:"tenths,omitempty"`
	SolveLog []SolveRecord `json:"solve_log,omitempty"`
	// Alarms are the drift alarms of the run (configuration key drift).
	Alarms []AlarmRecord `json:"alarms"`
	// SpentCurve is every-example accuracy against the labels spent;
	// Requests counts the label requests of an active run.
	SpentCurve []SpentPoint   `json:"spent_curve,omitempty"`
	Requests   *RequestCounts `json:"requests,omitempty"`
	// Review scores review routing, with ReviewPrecision.
	Review *ReviewScores `json:"review,omitempty"`
}

// SpentPoint is the every-example accuracy after Examples examples, for
// Labels labels spent (revealed at random, or answers to requests).
type SpentPoint struct {
	Examples    int     `json:"examples"`
	Labels      int     `json:"labels"`
	AllAccuracy float64 `json:"all_accuracy"`
}

// RequestCounts counts an active run's label requests by strategy, and
// the accuracy of the predictions they carried on those answered.
type RequestCounts struct {
	Sent     map[string]uint64  `json:"sent"`
	Answered map[string]uint64  `json:"answered"`
	Accuracy map[string]float64 `json:"accuracy"`
}

func requestCounts(st active.Stats) *RequestCounts {
	rc := &RequestCounts{Sent: st.Sent, Answered: st.Answered, Accuracy: map[string]float64{}}
	for k, n := range st.Scored {
		if n > 0 {
			rc.Accuracy[k] = float64(st.Right[k]) / float64(n)
		}
	}
	return rc
}

// activeGain returns the every-example accuracy of the active runs minus
// that of the random runs, seed by seed, and its spread.
func activeGain(act, random []SeedReport) (mean, std float64) {
	var d [][]float64
	for k := range act {
		d = append(d, []float64{act[k].SSL.AllAccuracy - random[k].SSL.AllAccuracy})
	}
	m, sd := meanStd(d)
	return m[0], sd[0]
}

// meanSpent averages the runs' spent curves point by point.
func meanSpent(runs []SeedReport) []SpentPoint {
	var out []SpentPoint
	for i, p := range runs[0].SpentCurve {
		var vs [][]float64
		for _, r := range runs {
			if i < len(r.SpentCurve) && r.SpentCurve[i].Examples == p.Examples {
				vs = append(vs, []float64{float64(r.SpentCurve[i].Labels), r.SpentCurve[i].AllAccuracy})
			}
		}
		m, _ := meanStd(vs)
		out = append(out, SpentPoint{Examples: p.Examples, Labels: round(m[0]), AllAccuracy: m[1]})
	}
	return out
}

// EvalReport is the result of `streamer eval`. With one seed its figures
// are that seed's; with several, each figure is the mean over the seeds,
// its *_std the sample standard deviation (n - 1), and PerSeed holds every
// run. Counts (labels revealed, solves, unscored, no model) are rounded
// means. Curve and BaselineCurve (by labels revealed) are those of the
// first seed; AllCurve, SupervisedAllCurve (by examples) and TestCurve are
// the means over the seeds, point by point, with their spreads.
type EvalReport struct {
	Examples       int     `json:"examples"`
	LabelsRevealed int     `json:"labels_revealed"`
	SSL            Scores  `json:"ssl"`
	Supervised     Scores  `json:"supervised"`
	SSLStd         Scores  `json:"ssl_std"`
	SupervisedStd  Scores  `json:"supervised_std"`
	Gain           Scores  `json:"gain"`     // SSL − Supervised, per seed, then averaged
	GainStd        Scores  `json:"gain_std"` // its spread over the seeds
	Solves         int64   `json:"solves"`
	SolveSeconds   float64 `json:"solve_seconds"`
	// Seconds is the whole run, every seed included.
	Seconds            float64               `json:"seconds"`
	BadRecords         int                   `json:"bad_records"`
	Unscored           int                   `json:"unscored"`
	NoModel            int                   `json:"no_model"`
	SupervisedNoModel  int                   `json:"supervised_no_model"`
	Algorithm          string                `json:"algorithm"`
	Seeds              []uint64              `json:"seeds"`
	Test               string                `json:"test,omitempty"`
	TestRows           int                   `json:"test_rows,omitempty"` // labeled rows of the test file
	PerSeed            []SeedReport          `json:"per_seed"`
	Curve              []snapshot.CurvePoint `json:"curve,omitempty"`
	BaselineCurve      []snapshot.CurvePoint `json:"supervised_curve,omitempty"`
	AllCurve           []snapshot.CurvePoint `json:"all_curve,omitempty"`
	SupervisedAllCurve []snapshot.CurvePoint `json:"supervised_all_curve,omitempty"`
	TestCurve          []TestPoint           `json:"test_curve,omitempty"`
	TestCurveStd       []TestPoint           `json:"test_curve_std,omitempty"`
	// AllCurveStd and SupervisedAllCurveStd are the spreads of the
	// every-example curves over the seeds (nil with one seed).
	AllCurveStd           []snapshot.CurvePoint `json:"all_curve_std,omitempty"`
	SupervisedAllCurveStd []snapshot.CurvePoint `json:"supervised_all_curve_std,omitempty"`
	// Tenths are the runs' means, tenth by tenth; each run's solves are in
	// PerSeed.
	Tenths []Tenth `json:"tenths,omitempty"`
	// Strategy is "active" for runs whose labels answered the learner's
	// requests, "random" for runs that revealed them at random.
	Strategy string `json:"strategy,omitempty"`
	// SpentCurve is the mean of the runs' every-example accuracy against
	// the labels spent.
	SpentCurve []SpentPoint `json:"spent_curve,omitempty"`
	// Random, with eval --active --compare-random, is the report of the
	// random reveals of the same seeds; ActiveGain the every-example
	// accuracy of the active runs minus theirs, seed by seed, averaged,
	// and ActiveGainStd its spread.
	Random        *EvalReport `json:"random,omitempty"`
	ActiveGain    float64     `json:"active_gain,omitempty"`
	ActiveGainStd float64     `json:"active_gain_std,omitempty"`
	// Review is the runs' mean review routing, with the first run's
	// coverage curve, and ReviewStd its spread (nil without
	// ReviewPrecision).
	Review    *ReviewScores `json:"review,omitempty"`
	ReviewStd *ReviewScores `json:"review_std,omitempty"`
}

// WithoutCurves returns a copy of r without its curves, per seed too: the
// figures that fit on a line.
func (r EvalReport) WithoutCurves() EvalReport {
	r.Curve, r.BaselineCurve, r.AllCurve, r.SupervisedAllCurve = nil, nil, nil, nil
	r.TestCurve, r.TestCurveStd, r.Tenths = nil, nil, nil
	r.AllCurveStd, r.SupervisedAllCurveStd, r.SpentCurve = nil, nil, nil
	if r.Random != nil {
		random := r.Random.WithoutCurves()
		r.Random = &random
	}
	runs := make([]SeedReport, len(r.PerSeed))
	for k, s := range r.PerSeed {
		s.Curve, s.BaselineCurve, s.AllCurve, s.SupervisedAllCurve, s.TestCurve = nil, nil, nil, nil, nil
		s.Tenths, s.SolveLog, s.SpentCurve = nil, nil, nil
		if s.Review != nil {
			rs := *s.Review
			rs.Curve = nil
			s.Review = &rs
		}
		runs[k] = s
	}
	if r.Review != nil {
		rs := *r.Review
		rs.Curve = nil
		r.Review = &rs
	}
	r.PerSeed = runs
	return r
}

// summarize reports the runs' means and spreads.
func summarize(runs []SeedReport) EvalReport {
	rep := EvalReport{PerSeed: runs}
	var ssl, sup, gain [][]float64
	var counts [][]float64
	for _, r := range runs {
		rep.Seeds = append(rep.Seeds, r.Seed)
		s, b := r.SSL.values(), r.Supervised.values()
		ssl, sup, gain = append(ssl, s), append(sup, b), append(gain, difference(s, b))
		counts = append(counts, []float64{float64(r.LabelsRevealed), float64(r.Solves), r.SolveSeconds,
			float64(r.Unscored), float64(r.NoModel), float64(r.SupervisedNoModel)})
	}
	m, sd := meanStd(ssl)
	rep.SSL, rep.SSLStd = scoresFrom(m), scoresFrom(sd)
	m, sd = meanStd(sup)
	rep.Supervised, rep.SupervisedStd = scoresFrom(m), scoresFrom(sd)
	m, sd = meanStd(gain)
	rep.Gain, rep.GainStd = scoresFrom(m), scoresFrom(sd)
	c, _ := meanStd(counts)
	rep.LabelsRevealed, rep.Solves, rep.SolveSeconds = round(c[0]), int64(round(c[1])), c[2]
	rep.Unscored, rep.NoModel, rep.SupervisedNoModel = round(c[3]), round(c[4]), round(c[5])
	first := runs[0]
	rep.Curve, rep.BaselineCurve = first.Curve, first.BaselineCurve
	rep.AllCurve, rep.AllCurveStd = meanCurve(runs, func(r SeedReport) []snapshot.CurvePoint { return r.AllCurve })
	rep.SupervisedAllCurve, rep.SupervisedAllCurveStd = meanCurve(runs, func(r SeedReport) []snapshot.CurvePoint { return r.SupervisedAllCurve })
	rep.TestCurve, rep.TestCurveStd = meanTestCurve(runs)
	rep.Tenths = meanTenths(runs)
	rep.SpentCurve = meanSpent(runs)
	rep.Review, rep.ReviewStd = meanReview(runs)
	return rep
}

// meanReview averages the runs' review scores; the curve is the first
// run's. The precision is that of every prediction decided in any run (a
// run that decided few weighs little), its spread that of the runs'
// precisions.
func meanReview(runs []SeedReport) (mean, std *ReviewScores) {
	if runs[0].Review == nil {
		return nil, nil
	}
	var vs, ps [][]float64
	var classes [][]ClassReview
	for _, r := range runs {
		classes = append(classes, r.Review.Classes)
		vs = append(vs, []float64{r.Review.Decided, float64(r.Review.Routed)})
		if r.Review.Precision != nil {
			ps = append(ps, []float64{*r.Review.Precision})
		}
	}
	m, sd := meanStd(vs)
	mean = &ReviewScores{TargetPrecision: runs[0].Review.TargetPrecision, Decided: m[0], Routed: round(m[1]), Classes: sumClasses(classes), Curve: runs[0].Review.Curve}
	std = &ReviewScores{TargetPrecision: mean.TargetPrecision, Decided: sd[0], Routed: round(sd[1])}
	if len(ps) > 0 { // the runs that decided any
		_, psd := meanStd(ps)
		pooled := pooledPrecision(mean.Classes)
		mean.Precision, std.Precision = &pooled, &psd[0]
	}
	return mean, std
}

// pooledPrecision returns the share right of the predictions decided in
// classes, 0 when none was.
func pooledPrecision(classes []ClassReview) float64 {
	var decided, right int
	for _, c := range classes {
		decided, right = decided+c.Decided, right+c.Right
	}
	if decided == 0 {
		return 0
	}
	return float64(right) / float64(decided)
}

// meanCurve averages the runs' every-example curves point by point (their
// points fall on the same examples); the spread is nil for one run.
func meanCurve(runs []SeedReport, curve func(SeedReport) []snapshot.CurvePoint) (mean, std []snapshot.CurvePoint) {
	if len(runs) == 1 {
		return curve(runs[0]), nil
	}
	for i, p := range curve(runs[0]) {
		var vs [][]float64
		for _, r := range runs {
			if c := curve(r); i < len(c) && c[i].Examples == p.Examples {
				vs = append(vs, []float64{c[i].Accuracy, c[i].RecentAccuracy, float64(c[i].Labels)})
			}
		}
		m, sd := meanStd(vs)
		mean = append(mean, snapshot.CurvePoint{Examples: p.Examples, Accuracy: m[0], RecentAccuracy: m[1], Labels: round(m[2])})
		std = append(std, snapshot.CurvePoint{Examples: p.Examples, Accuracy: sd[0], RecentAccuracy: sd[1]})
	}
	return mean, std
}

// meanTenths averages the runs' tenths, which cover the same examples.
func meanTenths(runs []SeedReport) []Tenth {
	var out []Tenth
	for i, t := range runs[0].Tenths {
		var vs [][]float64
		for _, r := range runs {
			if i < len(r.Tenths) {
				vs = append(vs, []float64{r.Tenths[i].SSLAccuracy, r.Tenths[i].SupervisedAccuracy, float64(r.Tenths[i].NoModel)})
			}
		}
		m, _ := meanStd(vs)
		out = append(out, Tenth{Examples: t.Examples, SSLAccuracy: m[0], SupervisedAccuracy: m[1], NoModel: round(m[2])})
	}
	return out
}

// meanTestCurve averages the runs' test curves point by point: every run
// checks the test set after the same numbers of examples.
func meanTestCurve(runs []SeedReport) (mean, std []TestPoint) {
	for i, p := range runs[0].TestCurve {
		var vs [][]float64
		for _, r := range runs {
			if i < len(r.TestCurve) {
				vs = append(vs, r.TestCurve[i].values())
			}
		}
		m, sd := meanStd(vs)
		mean = append(mean, testPointFrom(p.Examples, m))
		std = append(std, testPointFrom(p.Examples, sd))
	}
	return mean, std
}

func (s Scores) values() []float64 {
	return []float64{s.Accuracy, s.MacroF1, s.AllAccuracy, s.AllMacroF1, orNaN(s.TestAccuracy), orNaN(s.TestMacroF1)}
}

// scoresFrom reverses values: NaN stands for a figure that is absent.
func scoresFrom(v []float64) Scores {
	return Scores{Accuracy: v[0], MacroF1: v[1], AllAccuracy: v[2], AllMacroF1: v[3], TestAccuracy: unlessNaN(v[4]), TestMacroF1: unlessNaN(v[5])}
}

func (p TestPoint) values() []float64 {
	return []float64{p.SSLAccuracy, p.SSLMacroF1, p.SupervisedAccuracy, p.SupervisedMacroF1}
}

func testPointFrom(examples int, v []float64) TestPoint {
	return TestPoint{Examples: examples, SSLAccuracy: v[0], SSLMacroF1: v[1], SupervisedAccuracy: v[2], SupervisedMacroF1: v[3]}
}

func orNaN(p *float64) float64 {
	if p == nil {
		return math.NaN()
	}
	return *p
}

func unlessNaN(x float64) *float64 {
	if math.IsNaN(x) {
		return nil
	}
	return &x
}

func difference(a, b []float64) []float64 {
	d := make([]float64, len(a))
	for i := range a {
		d[i] = a[i] - b[i]
	}
	return d
}

// meanStd returns the mean of the rows of vs, column by column, and their
// sample standard deviation (0 for a single row).
func meanStd(vs [][]float64) (mean, std []float64) {
	n := float64(len(vs))
	mean = make([]float64, len(vs[0]))
	std = make([]float64, len(vs[0]))
	for _, v := range vs {
		for j, x := range v {
			mean[j] += x / n
		}
	}
	if len(vs) < 2 {
		for j, m := range mean {
			if math.IsNaN(m) {
				std[j] = m // an absent figure has no spread either
			}
		}
		return mean, std
	}
	for _, v := range vs {
		for j, x := range v {
			std[j] += (x - mean[j]) * (x - mean[j]) / (n - 1)
		}
	}
	for j := range std {
		std[j] = math.Sqrt(std[j])
	}
	return mean, std
}

func round(x float64) int { return int(math.Round(x)) }
