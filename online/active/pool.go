package active

// Pool is the window as a Selector sees it, frozen: every row's id and
// label, and for the candidate rows their kNN lists and, once a model
// exists, their class distributions. It is not changed once handed to a
// Selector.
type Pool struct {
	// IDs holds every row of the window; a requested id that is not among
	// them has left the window and is forgotten.
	IDs []string
	// Labels holds each row's label, "" for an unlabeled row.
	Labels []string
	// Neighbours holds each row's kNN list (rows of the pool, nearest
	// first). A row with none (nil) is not a candidate: a window without a
	// graph gives lists to a sample of its rows only.
	Neighbours [][]int32
	// Classes names the columns of Probs; Probs holds each candidate row's
	// class distribution by the model in force (nil rows, or a nil Probs
	// before any model).
	Classes []string
	Probs   [][]float64
	// Epoch and Version stamp the model that gave Probs (0 and 0 before
	// any model).
	Epoch, Version uint64
	// Uncertainty ranks by the model's margin alone, every row with a
	// distribution a candidate, whatever its kNN list: for windows whose
	// graph does not carry the labels (sparse rows: text), where a
	// label teaches only the row it is given to.
	Uncertainty bool
	// Density holds how typical of the window each row is (its mean
	// likeness to its nearest rows), which weighs the margin of a pool
	// ranked by uncertainty, so that outliers are not asked about; nil
	// weighs every row alike.
	Density []float64
	// Likeness, when set, returns how alike rows i and j are, in [0, 1]:
	// a pool ranked by uncertainty weighs a row's score by one minus its
	// likeness to the nearest labeled or requested row, so that the
	// requests spread over the window instead of asking many times about
	// one kind of example.
	Likeness func(i, j int) float64
}

// Len returns the number of rows.
func (p *Pool) Len() int { return len(p.IDs) }

// candidate reports whether row i may be chosen: it has a kNN list, or,
// ranked by uncertainty alone, a distribution.
func (p *Pool) candidate(i int) bool {
	if p.Uncertainty {
		return p.Probs != nil && p.Probs[i] != nil
	}
	return len(p.Neighbours[i]) > 0
}

// symmetric returns the pool's kNN graph made symmetric, as adjacency
// lists: i ~ j when either lists the other.
func (p *Pool) symmetric() [][]int32 {
	adj := make([][]int32, p.Len())
	for i, nbrs := range p.Neighbours {
		for _, j := range nbrs {
			if int(j) == i {
				continue
			}
			adj[i] = append(adj[i], j)
			adj[j] = append(adj[j], int32(i))
		}
	}
	for i := range adj {
		adj[i] = dedup(adj[i])
	}
	return adj
}

func dedup(xs []int32) []int32 {
	seen := make(map[int32]bool, len(xs))
	out := xs[:0]
	for _, x := range xs {
		if !seen[x] {
			seen[x] = true
			out = append(out, x)
		}
	}
	return out
}
