package synth

import (
	"math"
	"math/rand/v2"
	"slices"

	"streamer/vector"
)

// SparseTextConfig describes sparse, text-like data: bag-of-words rows with
// Zipfian word frequencies grouped by topic, sublinear term frequencies and
// unit L2 norm, labelled by a planted linear separator with some noise.
type SparseTextConfig struct {
	Rows       int     // number of rows
	Dim        int     // feature space size; 0 means 2^18
	NNZ        int     // mean number of distinct words per row; 0 means 80
	Topics     int     // number of topics; 0 means 20
	TopicWords int     // vocabulary size of a topic; 0 means 2000
	TopicShare float64 // fraction of a row's words drawn from its topic; 0 means 0.6
	Noise      float64 // probability that a label is flipped
	Seed       uint64
}

func (c SparseTextConfig) withDefaults() SparseTextConfig {
	if c.Dim <= 0 {
		c.Dim = 1 << 18
	}
	if c.NNZ <= 0 {
		c.NNZ = 80
	}
	if c.Topics <= 0 {
		c.Topics = 20
	}
	if c.TopicWords <= 0 {
		c.TopicWords = 2000
	}
	if c.TopicShare <= 0 {
		c.TopicShare = 0.6
	}
	return c
}

// SparseText is generated sparse text-like data.
type SparseText struct {
	Rows   []vector.Vector
	Labels []float64 // ±1 after noise
	Topics []int     // the topic each row was drawn from
	// Separator is the planted weight vector (length Dim): +1 on the words
	// of positive-class topics, -1 on those of negative-class topics. Labels
	// are the sign of Separator·x - Threshold before noise.
	Separator []float64
	Threshold float64
}

// GenerateSparseText draws the rows of cfg. Topics alternate between the two
// classes, so the classes follow the cluster structure as in real text.
func GenerateSparseText(cfg SparseTextConfig) SparseText {
	cfg = cfg.withDefaults()
	r := rand.New(rand.NewPCG(cfg.Seed, 0x3c6ef372fe94f82b))
	topics := make([][]int32, cfg.Topics)
	sep := make([]float64, cfg.Dim)
	for t := range topics {
		topics[t] = make([]int32, cfg.TopicWords)
		sign := 1.0
		if t%2 == 1 {
			sign = -1
		}
		for w := range topics[t] {
			j := int32(r.IntN(cfg.Dim))
			topics[t][w] = j
			sep[j] += sign
		}
	}
	background := rand.NewZipf(r, 1.1, 2, uint64(cfg.Dim-1))
	inTopic := rand.NewZipf(r, 1.05, 4, uint64(cfg.TopicWords-1))
	out := SparseText{
		Rows:      make([]vector.Vector, cfg.Rows),
		Labels:    make([]float64, cfg.Rows),
		Topics:    make([]int, cfg.Rows),
		Separator: sep,
	}
	scores := make([]float64, cfg.Rows)
	counts := map[int32]float64{}
	for i := range out.Rows {
		t := r.IntN(cfg.Topics)
		clear(counts)
		words := cfg.NNZ/2 + r.IntN(cfg.NNZ+1)
		for len(counts) < words {
			var j int32
			if r.Float64() < cfg.TopicShare {
				j = topics[t][inTopic.Uint64()]
			} else {
				// Permute the background ranks so frequent words are spread
				// over the space, as hashing does.
				j = int32((background.Uint64() * 2654435761) % uint64(cfg.Dim))
			}
			counts[j]++
		}
		out.Rows[i] = bagOfWords(counts)
		out.Topics[i] = t
		scores[i] = out.Rows[i].DotDense(sep)
	}
	out.Threshold = median(scores)
	for i, s := range scores {
		y := 1.0
		if s < out.Threshold {
			y = -1
		}
		if r.Float64() < cfg.Noise {
			y = -y
		}
		out.Labels[i] = y
	}
	return out
}

// bagOfWords turns word counts into a sparse row with sublinear term
// frequency 1+log(tf) and unit norm.
func bagOfWords(counts map[int32]float64) vector.Vector {
	idx := make([]int32, 0, len(counts))
	for j := range counts {
		idx = append(idx, j)
	}
	slices.Sort(idx)
	val := make([]float64, len(idx))
	for k, j := range idx {
		val[k] = 1 + math.Log(counts[j])
	}
	v := vector.Sparse(idx, val)
	v.Normalize()
	return v
}

func median(xs []float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	s := slices.Clone(xs)
	slices.Sort(s)
	return s[len(s)/2]
}
