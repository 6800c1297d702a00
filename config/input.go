package config

import (
	"fmt"
	"strings"

	"streamer/ingest"
)

// exampleMapping returns input.examples as the decoder's mapping: nil for
// the default schema, which the decoder reads by a path of its own. Its
// errors name the key.
func (c Config) exampleMapping() (*ingest.ExampleMapping, error) {
	in := c.Input.Examples
	var m ingest.ExampleMapping
	var err error
	if m.ID, m.IDFromKey, err = idPointer("input.examples.id", in.ID); err != nil {
		return nil, err
	}
	m.IDNumbers, m.TextWithFeatures = in.IDNumbers, in.TextWithFeatures
	if m.TSNumbers, err = ingest.ParseTimeUnit(in.TSNumbers); err != nil {
		return nil, fmt.Errorf("input.examples.ts_numbers: %w", err)
	}
	for _, f := range []struct {
		key string
		val string
		to  *ingest.Pointer
	}{
		{"input.examples.ts", in.TS, &m.TS}, {"input.examples.features", in.Features, &m.Features},
		{"input.examples.indices", in.Indices, &m.Indices}, {"input.examples.values", in.Values, &m.Values},
		{"input.examples.vector", in.Vector, &m.Vector}, {"input.examples.label", in.Label, &m.Label},
	} {
		if *f.to, err = optionalPointer(f.key, f.val); err != nil {
			return nil, err
		}
	}
	for k, s := range in.Text {
		p, err := ingest.ParsePointer(strings.TrimSpace(s))
		if err != nil {
			return nil, fmt.Errorf("input.examples.text[%d]: %w", k, err)
		}
		m.Text = append(m.Text, p)
	}
	for k, s := range in.FeatureFields {
		name, at, ok := strings.Cut(s, "=")
		name = strings.TrimSpace(name)
		if !ok || name == "" {
			return nil, fmt.Errorf("input.examples.feature_fields[%d]: %q is not name=/pointer", k, s)
		}
		p, err := ingest.ParsePointer(strings.TrimSpace(at))
		if err != nil {
			return nil, fmt.Errorf("input.examples.feature_fields[%d]: %w", k, err)
		}
		m.Fields = append(m.Fields, ingest.FeatureField{Name: name, At: p})
	}
	if err := c.checkExampleMapping(&m); err != nil {
		return nil, err
	}
	if m.IsDefault() {
		return nil, nil
	}
	return &m, nil
}

// checkExampleMapping names the key of what ingest's Validate would
// refuse.
func (c Config) checkExampleMapping(m *ingest.ExampleMapping) error {
	seen := map[string]int{}
	for k, f := range m.Fields {
		if j, ok := seen[f.Name]; ok {
			return fmt.Errorf("input.examples.feature_fields[%d]: %s is named by feature_fields[%d] too", k, f.Name, j)
		}
		seen[f.Name] = k
	}
	switch {
	case m.Indices.IsZero() != m.Values.IsZero():
		return fmt.Errorf("input.examples.indices and input.examples.values: both or neither")
	case len(m.Text) == 0 && m.Features.IsZero() && len(m.Fields) == 0 && m.Indices.IsZero() && m.Vector.IsZero():
		return fmt.Errorf("input.examples: no payload is mapped (text, features, feature_fields, indices/values or vector)")
	}
	return m.Validate()
}

// labelMapping returns input.labels as the decoder's mapping: nil for the
// default schema.
func (c Config) labelMapping() (*ingest.LabelMapping, error) {
	in := c.Input.Labels
	var m ingest.LabelMapping
	var err error
	if m.ID, m.IDFromKey, err = idPointer("input.labels.id", in.ID); err != nil {
		return nil, err
	}
	m.IDNumbers = in.IDNumbers
	if m.Label, err = ingest.ParsePointer(strings.TrimSpace(in.Label)); err != nil {
		return nil, fmt.Errorf("input.labels.label: %w", err)
	}
	if m.IsDefault() {
		return nil, nil
	}
	return &m, nil
}

// idPointer reads an id key: a pointer, or KeyID.
func idPointer(key, val string) (ingest.Pointer, bool, error) {
	val = strings.TrimSpace(val)
	if val == KeyID {
		return ingest.Pointer{}, true, nil
	}
	p, err := ingest.ParsePointer(val)
	if err != nil {
		return p, false, fmt.Errorf("%s: want a JSON Pointer or %q: %w", key, KeyID, err)
	}
	return p, false, nil
}

// optionalPointer reads a pointer key, where "" maps nothing.
func optionalPointer(key, val string) (ingest.Pointer, error) {
	val = strings.TrimSpace(val)
	if val == "" {
		return ingest.Pointer{}, nil
	}
	p, err := ingest.ParsePointer(val)
	if err != nil {
		return p, fmt.Errorf("%s: %w", key, err)
	}
	return p, nil
}
