package synth

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"time"
)

// TextStreamConfig describes a stream of short text documents in a few
// classes, each class made of topics with their own Zipfian vocabulary over
// a shared background: the cluster structure that semi-supervised learning
// feeds on.
type TextStreamConfig struct {
	Classes    []string      // class names; nil means ham and spam
	Topics     int           // topics per class; 0 means 4
	Vocabulary int           // background words; 0 means 20000
	TopicWords int           // words of a topic's own vocabulary; 0 means 400
	Words      int           // mean words per document; 0 means 40
	TopicShare float64       // fraction of a document's words from its topic; 0 means 0.3
	Start      time.Time     // time of the first document; zero means 2026-01-01
	Interval   time.Duration // time between documents; 0 means 1s
	Seed       uint64
}

func (c TextStreamConfig) withDefaults() TextStreamConfig {
	if c.Classes == nil {
		c.Classes = []string{"ham", "spam"}
	}
	if c.Topics <= 0 {
		c.Topics = 4
	}
	if c.Vocabulary <= 0 {
		c.Vocabulary = 20000
	}
	if c.TopicWords <= 0 {
		c.TopicWords = 400
	}
	if c.Words <= 0 {
		c.Words = 40
	}
	if c.TopicShare <= 0 {
		c.TopicShare = 0.3
	}
	if c.Start.IsZero() {
		c.Start = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	}
	if c.Interval <= 0 {
		c.Interval = time.Second
	}
	return c
}

// Document is one generated example.
type Document struct {
	ID    string
	TS    time.Time
	Label string
	Text  string
}

// TextStream generates documents one at a time, reproducibly from its seed.
type TextStream struct {
	cfg        TextStreamConfig
	r          *rand.Rand
	topics     [][]int // per topic (class-major), its word ids
	background *rand.Zipf
	inTopic    *rand.Zipf
	n          int
	sb         strings.Builder
}

// NewTextStream returns the stream of cfg.
func NewTextStream(cfg TextStreamConfig) *TextStream {
	cfg = cfg.withDefaults()
	r := rand.New(rand.NewPCG(cfg.Seed, 0xa54ff53a5f1d36f1))
	s := &TextStream{
		cfg:        cfg,
		r:          r,
		background: rand.NewZipf(r, 1.1, 1, uint64(cfg.Vocabulary-1)),
		inTopic:    rand.NewZipf(r, 1.2, 2, uint64(cfg.TopicWords-1)),
	}
	for range len(cfg.Classes) * cfg.Topics {
		words := make([]int, cfg.TopicWords)
		for w := range words {
			words[w] = r.IntN(cfg.Vocabulary)
		}
		s.topics = append(s.topics, words)
	}
	return s
}

// Next returns the next document.
func (s *TextStream) Next() Document {
	cfg := s.cfg
	class := s.r.IntN(len(cfg.Classes))
	topic := s.topics[class*cfg.Topics+s.r.IntN(cfg.Topics)]
	s.sb.Reset()
	words := cfg.Words/2 + s.r.IntN(cfg.Words+1)
	for w := range words {
		if w > 0 {
			s.sb.WriteByte(' ')
		}
		id := int(s.background.Uint64())
		if s.r.Float64() < cfg.TopicShare {
			id = topic[s.inTopic.Uint64()]
		}
		s.sb.WriteString(Word(id))
	}
	d := Document{
		ID:    fmt.Sprintf("doc-%08d", s.n),
		TS:    cfg.Start.Add(time.Duration(s.n) * cfg.Interval),
		Label: cfg.Classes[class],
		Text:  s.sb.String(),
	}
	s.n++
	return d
}

var (
	consonants = []string{"b", "c", "d", "f", "g", "h", "j", "k", "l", "m", "n", "p", "r", "s", "t", "v", "w", "z"}
	vowels     = []string{"a", "e", "i", "o", "u", "ai", "ou"}
)

// Word returns the pronounceable pseudo-word numbered id; distinct ids give
// distinct words.
func Word(id int) string {
	var b strings.Builder
	for {
		b.WriteString(consonants[id%len(consonants)])
		id /= len(consonants)
		b.WriteString(vowels[id%len(vowels)])
		id /= len(vowels)
		if id == 0 {
			return b.String()
		}
		id--
	}
}
