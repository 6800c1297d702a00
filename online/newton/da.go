package newton

import (
	"context"
	"math"

	"streamer/online/linalg"
	"streamer/online/model"
)

const (
	daStartTemperature = 10  // T at a cold start (thesis §6.4)
	daAnnealing        = 1.5 // T is divided by this after each temperature
	daMaxInner         = 100 // alternations of w and p at one temperature
	daMaxOuter         = 50  // temperatures
	daEpsilon          = 1e-6
)

// da solves the deterministic-annealing S3VM (thesis §6.4, eq. 6.6–6.12).
// At each temperature T it alternates the w-step (finite Newton on eq. 6.10
// with fixed soft labels p) and the p-step (eq. 6.12 under the balance
// constraint mean(p) = r) until the mean KL divergence between successive p
// falls below ε; that fixed point is the path's solution at T. T is lowered
// from 10 by ÷1.5 until the entropy of p falls below ε per row, and the
// solution of lowest transductive cost on the path is returned. The
// annealing also stops when the entropy falls by less than ε per row from
// one temperature to the next: when r·u is not a whole number, the balance
// constraint keeps the fractional part soft, and the entropy has a floor.
//
// A warm start re-solves at the temperature of the warm solution only, from
// its soft labels for rows still present and hard labels thresholded at
// ratio r for new rows: the cold path chose that temperature, and a small
// change of the window moves its fixed point a little. With
// Params.Reanneal (one-versus-rest problems) it walks the whole path again
// from the warm weights.
func (b *binary) da(ctx context.Context, warm *model.Solution) (*model.Solution, error) {
	if len(b.unlabeled) == 0 {
		return b.supervised(ctx, hingeLoss, warm), nil
	}
	s := b.newton(hingeLoss, true)
	b.addLabeledTerms(s)
	s.setWeights(b.startWeights(warm))
	u := len(b.unlabeled)
	p := make([]float64, u)
	temp := float64(daStartTemperature)
	anneal := warm == nil || b.par.Reanneal
	if anneal {
		for j := range p {
			p[j] = b.r
		}
	} else {
		temp = b.warmSoftLabels(warm, s.o, p)
	}
	for _, row := range b.unlabeled {
		s.terms.add(row, 1, 0)
		s.terms.add(row, -1, 0)
	}
	b.setSoftCosts(s, p)
	sol := &model.Solution{}
	addRun(&sol.Stats, s.minimize(ctx, warm != nil))
	var best *daBest
	prevEntropy := math.Inf(1)
	nu2 := math.NaN() // the last p-step's 2ν, where the next one's root search starts
	for range daMaxOuter {
		q, err := b.daFixedPoint(ctx, s, p, temp, &nu2, &sol.Stats)
		if err != nil {
			return nil, err
		}
		best = best.offer(b, s, q, temp)
		h := entropy(p)
		if !anneal || h < float64(u)*daEpsilon || prevEntropy-h < float64(u)*daEpsilon {
			break
		}
		prevEntropy = h
		temp /= daAnnealing
	}
	sol.W = best.w
	sol.Stats.Objective = best.cost
	sol.Temperature = best.temp
	sol.Unlabeled = make(map[uint64]float64, u)
	for j, row := range b.unlabeled {
		sol.Unlabeled[b.prob.key(row)] = best.p[j]
	}
	return sol, nil
}

// daFixedPoint alternates p-steps and w-steps at temperature temp, starting
// from weights that minimize the w-objective for p, until the p-step moves p
// by less than ε per row in KL divergence. It leaves in p the last p-step's
// labels and returns the labels the current weights were solved for. nu2
// carries 2ν from one p-step to the next.
func (b *binary) daFixedPoint(ctx context.Context, s *newton, p []float64, temp float64, nu2 *float64, st *model.Stats) ([]float64, error) {
	u := len(p)
	q := append([]float64(nil), p...)
	for range daMaxInner {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		*nu2 = b.optimizeP(s.o, p, temp, *nu2)
		if klDivergence(p, q) < float64(u)*daEpsilon {
			break
		}
		b.setSoftCosts(s, p)
		addRun(st, s.minimize(ctx, true))
		copy(q, p)
	}
	return q, nil
}

// daBest keeps the point of lowest transductive cost met on the path.
type daBest struct {
	cost float64
	w, p []float64
	temp float64
}

// offer returns the better of d (nil: none yet) and the current point of s,
// whose weights were solved for soft labels p at temperature temp.
func (d *daBest) offer(b *binary, s *newton, p []float64, temp float64) *daBest {
	c := b.transductiveCost(s)
	if d != nil && d.cost <= c {
		return d
	}
	return &daBest{
		cost: c,
		w:    append([]float64(nil), s.w...),
		p:    append([]float64(nil), p...),
		temp: temp,
	}
}

// setSoftCosts gives row j's two terms (y = +1, y = -1) the costs
// λ_u p_j/u and λ_u (1-p_j)/u of eq. 6.8.
func (b *binary) setSoftCosts(s *newton, p []float64) {
	c := b.par.LambdaU / float64(len(b.unlabeled))
	base := len(b.labeled)
	for j, pj := range p {
		s.terms.c[base+2*j] = c * pj
		s.terms.c[base+2*j+1] = c * (1 - pj)
	}
}

// warmSoftLabels fills p from the warm solution for rows still present and
// by thresholding at ratio r for new rows, and returns the temperature to
// resume at.
func (b *binary) warmSoftLabels(warm *model.Solution, o []float64, p []float64) float64 {
	var fresh []int
	for j, row := range b.unlabeled {
		v, ok := warm.Unlabeled[b.prob.key(row)]
		switch {
		case !ok:
			fresh = append(fresh, row)
		case v < 0: // a TSVM label -1
			p[j] = 0
		default:
			p[j] = min(v, 1)
		}
	}
	hard := b.thresholdLabels(fresh, o)
	for j, row := range b.unlabeled {
		if y, ok := hard[row]; ok {
			p[j] = (y + 1) / 2
		}
	}
	if warm.Temperature > 0 {
		return warm.Temperature
	}
	return daStartTemperature
}

// optimizeP sets p_j = 1/(1 + exp((g_j - 2ν)/T)) with
// g_j = λ_u[h(o_j) - h(-o_j)], h the squared hinge (eq. 6.12), ν chosen
// so that mean(p) = r, and returns 2ν. The root search starts at start (NaN: none), the last
// p-step's 2ν: successive p-steps move it little.
func (b *binary) optimizeP(o, p []float64, temp, start float64) float64 {
	g := make([]float64, len(p))
	for j, row := range b.unlabeled {
		g[j] = b.par.LambdaU * (squaredHinge(o[row]) - squaredHinge(-o[row]))
	}
	nu2 := balanceRoot(g, temp, clampFraction(b.r, len(p)), start)
	for j := range p {
		p[j] = linalg.Logistic((nu2 - g[j]) / temp)
	}
	return nu2
}

// squaredHinge returns max(0, 1 - z)², the L2-SVM loss of an output z on
// the side of its label.
func squaredHinge(z float64) float64 {
	if z >= 1 {
		return 0
	}
	return (1 - z) * (1 - z)
}

// clampFraction keeps r inside (0, 1): the balance equation has no root at
// its ends.
func clampFraction(r float64, u int) float64 {
	lo := 0.5 / float64(u)
	return min(max(r, lo), 1-lo)
}

// balanceRoot solves (1/u) Σ_j logistic((x - g_j)/T) = r for x = 2ν by
// safeguarded Newton iterations inside a bisection bracket, from start
// when it lies inside the bracket, else from the bracket's middle.
func balanceRoot(g []float64, temp, r, start float64) float64 {
	u := float64(len(g))
	f := func(x float64) (val, slope float64) {
		for _, gj := range g {
			pj := linalg.Logistic((x - gj) / temp)
			val += pj
			slope += pj * (1 - pj)
		}
		return val/u - r, slope / (u * temp)
	}
	gmin, gmax := g[0], g[0]
	for _, gj := range g {
		gmin, gmax = min(gmin, gj), max(gmax, gj)
	}
	margin := temp * (math.Abs(math.Log(r/(1-r))) + 1)
	lo, hi := gmin-margin, gmax+margin
	for v, _ := f(lo); v > 0; v, _ = f(lo) {
		lo -= hi - lo
	}
	for v, _ := f(hi); v < 0; v, _ = f(hi) {
		hi += hi - lo
	}
	x := (lo + hi) / 2
	if start > lo && start < hi {
		x = start
	}
	for range 200 {
		v, slope := f(x)
		if math.Abs(v) < 1e-12 {
			break
		}
		if v > 0 {
			hi = x
		} else {
			lo = x
		}
		next := x - v/slope
		if slope == 0 || math.IsNaN(next) || next <= lo || next >= hi {
			next = (lo + hi) / 2
		}
		if hi-lo < 1e-15*(1+math.Abs(x)) {
			break
		}
		x = next
	}
	return x
}

// klDivergence returns Σ_j KL(p_j ‖ q_j) of Bernoulli distributions.
func klDivergence(p, q []float64) float64 {
	var kl float64
	for j := range p {
		a, b := clampProb(p[j]), clampProb(q[j])
		kl += a*math.Log(a/b) + (1-a)*math.Log((1-a)/(1-b))
	}
	return kl
}

// entropy returns Σ_j H(p_j) of Bernoulli distributions.
func entropy(p []float64) float64 {
	var h float64
	for _, pj := range p {
		a := clampProb(pj)
		h -= a*math.Log(a) + (1-a)*math.Log(1-a)
	}
	return h
}

func clampProb(p float64) float64 { return min(max(p, 1e-15), 1-1e-15) }
