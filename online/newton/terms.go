package newton

// lossKind says how a term charges its output.
type lossKind int

const (
	// hingeLoss charges c/2 · max(0, 1 - y·o)², the l2-SVM loss.
	hingeLoss lossKind = iota
	// squaredLoss charges c/2 · (y - o)², the RLS loss; always active.
	squaredLoss
)

// terms is the data-fitting part of an objective whose labels are fixed for
// one finite Newton run: Σ_k c_k/2 · loss(y_k, o_{pos_k}). Positions index
// the outputs the solver keeps; an unlabeled DA row is two terms (y = ±1) on
// one position, a TSVM row one term with its current label y'.
type terms struct {
	kind lossKind
	pos  []int
	y    []float64
	c    []float64
}

func (t *terms) len() int { return len(t.pos) }

func (t *terms) add(pos int, y, c float64) {
	t.pos = append(t.pos, pos)
	t.y = append(t.y, y)
	t.c = append(t.c, c)
}

// active reports whether term k is in the active set j(w) at output o.
func (t *terms) active(k int, o float64) bool {
	return t.kind == squaredLoss || t.y[k]*o < 1
}

// value returns Σ_k c_k/2 · loss at outputs o (indexed by position).
func (t *terms) value(o []float64) float64 {
	var f float64
	for k, p := range t.pos {
		if t.active(k, o[p]) {
			e := t.y[k] - o[p]
			f += t.c[k] * e * e
		}
	}
	return f / 2
}

// aggregate sums the active terms per position into a cost C_p and a
// target Y_p with Σ_k c_k (y_k - o)² = C_p (Y_p - o)² + const, which is all
// the Newton system of thesis eq. 6.4 (and 6.10 for DA) depends on. cost and
// target have one entry per position and are overwritten; it returns the
// number of active terms.
func (t *terms) aggregate(o, cost, target []float64) int {
	clear(cost)
	clear(target)
	active := 0
	for k, p := range t.pos {
		if t.c[k] == 0 || !t.active(k, o[p]) {
			continue
		}
		cost[p] += t.c[k]
		target[p] += t.c[k] * t.y[k]
		active++
	}
	for p, c := range cost {
		if c > 0 {
			target[p] /= c
		}
	}
	return active
}
