package snapshot

import (
	"bytes"
	"fmt"
	"strconv"
)

// Record is one record of the snapshot topic, as any Kafka client carries
// it.
type Record struct {
	Key     string
	Headers map[string]string
	Value   []byte
}

// The headers of snapshot records.
const (
	HeaderModel   = "snapshot-model"   // the model's name
	HeaderVersion = "snapshot-version" // the model version
	HeaderChunk   = "snapshot-chunk"   // a chunk's index; absent on a manifest
	HeaderChunks  = "snapshot-chunks"  // number of chunks; 0: the manifest holds the snapshot
	HeaderEpoch   = "snapshot-epoch"   // the learner's epoch; absent: 0
)

// Split lays out an encoded snapshot of model name, stamped st, as topic
// records whose values are at most maxValue bytes. A snapshot that fits is
// one manifest record. A larger one is chunks followed by an empty
// manifest. Chunks are keyed name#slot#i, with the slot alternating with
// the version: on a compacted topic a snapshot's chunks then outlive the
// next snapshot's, so the manifest kept for a key always has its chunks,
// even when a writer dies halfway through the next one.
//
// A snapshot of epoch 0 is keyed as before epochs were kept: its manifest
// by name. One of a later epoch has the epoch in every key (name@e for the
// manifest, name@e#slot#i for chunks), so that a fenced learner, writing
// late under its old epoch, can neither overwrite its successor's chunks
// nor make compaction drop its successor's manifest.
func Split(name string, st Stamp, data []byte, maxValue int) []Record {
	key := name
	if st.Epoch > 0 {
		key = fmt.Sprintf("%s@%d", name, st.Epoch)
	}
	if maxValue <= 0 || len(data) <= maxValue {
		return []Record{manifest(key, name, st, 0, data)}
	}
	n := (len(data) + maxValue - 1) / maxValue
	out := make([]Record, 0, n+1)
	for i := range n {
		part := data[i*maxValue : min(len(data), (i+1)*maxValue)]
		h := headers(name, st, n)
		h[HeaderChunk] = strconv.Itoa(i)
		out = append(out, Record{Key: fmt.Sprintf("%s#%d#%d", key, st.Version%2, i), Headers: h, Value: part})
	}
	return append(out, manifest(key, name, st, n, nil))
}

func manifest(key, name string, st Stamp, chunks int, data []byte) Record {
	return Record{Key: key, Headers: headers(name, st, chunks), Value: data}
}

func headers(name string, st Stamp, chunks int) map[string]string {
	h := map[string]string{
		HeaderModel:   name,
		HeaderVersion: strconv.FormatUint(st.Version, 10),
		HeaderChunks:  strconv.Itoa(chunks),
	}
	if st.Epoch > 0 {
		h[HeaderEpoch] = strconv.FormatUint(st.Epoch, 10)
	}
	return h
}

// Assembler reads snapshot records in topic order and keeps, per model, the
// newest snapshot (by Stamp) whose manifest and chunks were all seen and
// whose checksum holds; of two with the same stamp, the later. Records it
// cannot use are reported and skipped.
type Assembler struct {
	pending map[string]map[Stamp]*chunkSet // model -> stamp -> chunks
	latest  map[string]Complete
	// OnComplete, when set, sees every snapshot completed, in topic order,
	// newer than the latest or not.
	OnComplete func(name string, c Complete)
}

// Complete is an assembled, checksum-verified encoded snapshot.
type Complete struct {
	Epoch   uint64
	Version uint64
	Data    []byte
}

// Stamp returns the snapshot's (epoch, version).
func (c Complete) Stamp() Stamp { return Stamp{Epoch: c.Epoch, Version: c.Version} }

type chunkSet struct {
	parts [][]byte
	have  int
}

// NewAssembler returns an empty Assembler.
func NewAssembler() *Assembler {
	return &Assembler{pending: map[string]map[Stamp]*chunkSet{}, latest: map[string]Complete{}}
}

// Add takes the next record of the topic. An error says why the record (or
// the snapshot it completes) was not used; the Assembler stays usable.
func (a *Assembler) Add(r Record) error {
	name := r.Headers[HeaderModel]
	if name == "" {
		return fmt.Errorf("snapshot record %q has no %s header", r.Key, HeaderModel)
	}
	st, err := recordStamp(r)
	if err != nil {
		return err
	}
	chunks, err := strconv.Atoi(r.Headers[HeaderChunks])
	if err != nil || chunks < 0 || chunks > 1<<20 {
		return fmt.Errorf("snapshot record %q: bad %s %q", r.Key, HeaderChunks, r.Headers[HeaderChunks])
	}
	if c, ok := r.Headers[HeaderChunk]; ok {
		return a.addChunk(name, st, chunks, c, r.Value)
	}
	return a.addManifest(name, st, chunks, r.Value)
}

// recordStamp reads a record's epoch (absent: 0) and version headers.
func recordStamp(r Record) (Stamp, error) {
	var st Stamp
	var err error
	if st.Version, err = strconv.ParseUint(r.Headers[HeaderVersion], 10, 64); err != nil {
		return st, fmt.Errorf("snapshot record %q: bad %s: %w", r.Key, HeaderVersion, err)
	}
	if e, ok := r.Headers[HeaderEpoch]; ok {
		if st.Epoch, err = strconv.ParseUint(e, 10, 64); err != nil {
			return st, fmt.Errorf("snapshot record %q: bad %s: %w", r.Key, HeaderEpoch, err)
		}
	}
	return st, nil
}

func (a *Assembler) addChunk(name string, st Stamp, chunks int, index string, value []byte) error {
	i, err := strconv.Atoi(index)
	if err != nil || i < 0 || i >= chunks {
		return fmt.Errorf("snapshot %s %v: bad chunk index %q of %d", name, st, index, chunks)
	}
	byStamp := a.pending[name]
	if byStamp == nil {
		byStamp = map[Stamp]*chunkSet{}
		a.pending[name] = byStamp
	}
	set := byStamp[st]
	if set == nil || len(set.parts) != chunks {
		set = &chunkSet{parts: make([][]byte, chunks)}
		byStamp[st] = set
		a.dropOld(name, st)
	}
	if set.parts[i] == nil {
		set.have++
	}
	set.parts[i] = value
	return nil
}

// dropOld forgets chunks of the versions of newest's epoch other than the
// two newest (the two slots a writer alternates between), and those of
// older epochs: a fenced writer's chunks are never waited for once its
// successor writes.
func (a *Assembler) dropOld(name string, newest Stamp) {
	for st := range a.pending[name] {
		sameEpoch := st.Epoch == newest.Epoch
		if (sameEpoch && (st.Version+1 < newest.Version || st.Version > newest.Version+1)) || st.Epoch < newest.Epoch {
			delete(a.pending[name], st)
		}
	}
}

func (a *Assembler) addManifest(name string, st Stamp, chunks int, value []byte) error {
	data := value
	if chunks > 0 {
		set := a.pending[name][st]
		if set == nil || set.have != chunks || len(set.parts) != chunks {
			return fmt.Errorf("snapshot %s %v: manifest without its %d chunks", name, st, chunks)
		}
		data = bytes.Join(set.parts, nil)
	}
	if err := Verify(data); err != nil {
		return fmt.Errorf("snapshot %s %v: %w", name, st, err)
	}
	c := Complete{Epoch: st.Epoch, Version: st.Version, Data: data}
	if prev, ok := a.latest[name]; !ok || !prev.Stamp().Newer(st) {
		a.latest[name] = c
	}
	if a.OnComplete != nil {
		a.OnComplete(name, c)
	}
	return nil
}

// Latest returns the newest complete snapshot of model name.
func (a *Assembler) Latest(name string) (Complete, bool) {
	c, ok := a.latest[name]
	return c, ok
}
