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
)

// Split lays out an encoded snapshot of model name as topic records whose
// values are at most maxValue bytes. A snapshot that fits is one manifest
// record keyed by the model's name. A larger one is chunks followed by an
// empty manifest. Chunks are keyed name#slot#i, with the slot alternating
// with the version: on a compacted topic a snapshot's chunks then outlive
// the next snapshot's, so the manifest kept for a key always has its chunks,
// even when a writer dies halfway through the next one.
func Split(name string, version uint64, data []byte, maxValue int) []Record {
	if maxValue <= 0 || len(data) <= maxValue {
		return []Record{manifest(name, version, 0, data)}
	}
	n := (len(data) + maxValue - 1) / maxValue
	out := make([]Record, 0, n+1)
	for i := range n {
		part := data[i*maxValue : min(len(data), (i+1)*maxValue)]
		out = append(out, Record{
			Key: fmt.Sprintf("%s#%d#%d", name, version%2, i),
			Headers: map[string]string{
				HeaderModel:   name,
				HeaderVersion: strconv.FormatUint(version, 10),
				HeaderChunk:   strconv.Itoa(i),
				HeaderChunks:  strconv.Itoa(n),
			},
			Value: part,
		})
	}
	return append(out, manifest(name, version, n, nil))
}

func manifest(name string, version uint64, chunks int, data []byte) Record {
	return Record{
		Key: name,
		Headers: map[string]string{
			HeaderModel:   name,
			HeaderVersion: strconv.FormatUint(version, 10),
			HeaderChunks:  strconv.Itoa(chunks),
		},
		Value: data,
	}
}

// Assembler reads snapshot records in topic order and keeps, per model, the
// last snapshot whose manifest and chunks were all seen and whose checksum
// holds. Records it cannot use are reported and skipped.
type Assembler struct {
	pending map[string]map[uint64]*chunkSet // model -> version -> chunks
	latest  map[string]Complete
	// OnComplete, when set, sees every snapshot completed, in topic order.
	OnComplete func(name string, c Complete)
}

// Complete is an assembled, checksum-verified encoded snapshot.
type Complete struct {
	Version uint64
	Data    []byte
}

type chunkSet struct {
	parts [][]byte
	have  int
}

// NewAssembler returns an empty Assembler.
func NewAssembler() *Assembler {
	return &Assembler{pending: map[string]map[uint64]*chunkSet{}, latest: map[string]Complete{}}
}

// Add takes the next record of the topic. An error says why the record (or
// the snapshot it completes) was not used; the Assembler stays usable.
func (a *Assembler) Add(r Record) error {
	name := r.Headers[HeaderModel]
	if name == "" {
		return fmt.Errorf("snapshot record %q has no %s header", r.Key, HeaderModel)
	}
	version, err := strconv.ParseUint(r.Headers[HeaderVersion], 10, 64)
	if err != nil {
		return fmt.Errorf("snapshot record %q: bad %s: %w", r.Key, HeaderVersion, err)
	}
	chunks, err := strconv.Atoi(r.Headers[HeaderChunks])
	if err != nil || chunks < 0 || chunks > 1<<20 {
		return fmt.Errorf("snapshot record %q: bad %s %q", r.Key, HeaderChunks, r.Headers[HeaderChunks])
	}
	if c, ok := r.Headers[HeaderChunk]; ok {
		return a.addChunk(name, version, chunks, c, r.Value)
	}
	return a.addManifest(name, version, chunks, r.Value)
}

func (a *Assembler) addChunk(name string, version uint64, chunks int, index string, value []byte) error {
	i, err := strconv.Atoi(index)
	if err != nil || i < 0 || i >= chunks {
		return fmt.Errorf("snapshot %s v%d: bad chunk index %q of %d", name, version, index, chunks)
	}
	byVersion := a.pending[name]
	if byVersion == nil {
		byVersion = map[uint64]*chunkSet{}
		a.pending[name] = byVersion
	}
	set := byVersion[version]
	if set == nil || len(set.parts) != chunks {
		set = &chunkSet{parts: make([][]byte, chunks)}
		byVersion[version] = set
		a.dropOld(name, version)
	}
	if set.parts[i] == nil {
		set.have++
	}
	set.parts[i] = value
	return nil
}

// dropOld forgets chunks of versions other than the two newest of a model:
// the two slots a writer alternates between.
func (a *Assembler) dropOld(name string, newest uint64) {
	for v := range a.pending[name] {
		if v+1 < newest || v > newest+1 {
			delete(a.pending[name], v)
		}
	}
}

func (a *Assembler) addManifest(name string, version uint64, chunks int, value []byte) error {
	data := value
	if chunks > 0 {
		set := a.pending[name][version]
		if set == nil || set.have != chunks || len(set.parts) != chunks {
			return fmt.Errorf("snapshot %s v%d: manifest without its %d chunks", name, version, chunks)
		}
		data = bytes.Join(set.parts, nil)
	}
	if err := Verify(data); err != nil {
		return fmt.Errorf("snapshot %s v%d: %w", name, version, err)
	}
	c := Complete{Version: version, Data: data}
	a.latest[name] = c
	if a.OnComplete != nil {
		a.OnComplete(name, c)
	}
	return nil
}

// Latest returns the last complete snapshot of model name.
func (a *Assembler) Latest(name string) (Complete, bool) {
	c, ok := a.latest[name]
	return c, ok
}
