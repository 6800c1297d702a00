package config

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestDefaultInputIsTheDefaultSchema: the defaults of input map today's
// schema, which the decoder reads by its own path.
func TestDefaultInputIsTheDefaultSchema(t *testing.T) {
	cfg, err := Load("", nil)
	if err != nil {
		t.Fatal(err)
	}
	dec, err := cfg.Decoder()
	if err != nil || dec.Examples != nil || dec.Labels != nil {
		t.Fatalf("default input: examples %+v, labels %+v, err %v", dec.Examples, dec.Labels, err)
	}
}

// TestModerationInput loads the mapping of docs/INPUT.md's example and
// decodes its post and label with it.
func TestModerationInput(t *testing.T) {
	doc, err := os.ReadFile("../docs/INPUT.md")
	if err != nil {
		t.Fatal(err)
	}
	_, block, _ := strings.Cut(string(doc), "```yaml\n")
	block, _, _ = strings.Cut(block, "```")
	path := filepath.Join(t.TempDir(), "streamer.yaml")
	os.WriteFile(path, []byte(block), 0o644)
	cfg, err := Load(path, nil)
	if err != nil {
		t.Fatal(err)
	}
	dec, err := cfg.Decoder()
	if err != nil || dec.Examples == nil || dec.Labels == nil {
		t.Fatalf("mapping not built: %+v, %v", dec, err)
	}
	ex, err := dec.DecodeExample([]byte(`{"post_id": 78, "title": "Win", "body": "a prize", "author": {"followers": 12}, "created_at": 1764331200, "verdict": "spam"}`))
	if err != nil || ex.ID != "78" || ex.TS.Unix() != 1764331200 || ex.Label != "spam" || ex.Vector.NNZ() == 0 {
		t.Fatalf("example %+v, %v", ex, err)
	}
	l, err := dec.DecodeLabelRecord(context.Background(), nil, []byte(`{"post_id": 78, "verdict": "spam"}`))
	if err != nil || l.ID != "78" || l.Label != "spam" {
		t.Fatalf("label %+v, %v", l, err)
	}
	// The lists are comma-separated in --set and the environment.
	t.Setenv("STREAMER_INPUT_EXAMPLES_TEXT", "/title,/body")
	cfg, err = Load("", []string{"input.examples.feature_fields=a=/x,b=/y", "input.examples.text_with_features=true"})
	if err != nil || len(cfg.Input.Examples.Text) != 2 || len(cfg.Input.Examples.FeatureFields) != 2 {
		t.Fatalf("lists from the environment and --set: %+v, %v", cfg.Input.Examples, err)
	}
}

func TestBadInputNamesTheKey(t *testing.T) {
	tests := []struct {
		set []string
		key string
	}{
		{[]string{"input.examples.id=post_id"}, "input.examples.id: want a JSON Pointer or \"key\""},
		{[]string{"input.examples.id="}, "input.examples.id"},
		{[]string{"input.examples.ts=created_at"}, "input.examples.ts: JSON Pointer \"created_at\" does not start with /"},
		{[]string{"input.examples.ts_numbers=minutes"}, "input.examples.ts_numbers"},
		{[]string{"input.examples.text=/title,body"}, "input.examples.text[1]"},
		{[]string{"input.examples.label=/a~2"}, "input.examples.label"},
		{[]string{"input.examples.feature_fields=followers"}, "input.examples.feature_fields[0]"},
		{[]string{"input.examples.feature_fields=a=/x,a=/y"}, "input.examples.feature_fields[1]"},
		{[]string{"input.examples.feature_fields=a=x"}, "input.examples.feature_fields[0]"},
		{[]string{"input.examples.indices="}, "input.examples.indices and input.examples.values"},
		{[]string{"input.examples.text=", "input.examples.features=", "input.examples.indices=", "input.examples.values=", "input.examples.vector="}, "input.examples: no payload"},
		{[]string{"input.labels.id=id"}, "input.labels.id"},
		{[]string{"input.labels.label="}, "input.labels.label"},
	}
	for _, tt := range tests {
		_, err := Load("", tt.set)
		if err == nil || !strings.Contains(err.Error(), ": "+tt.key) {
			t.Errorf("--set %v: err = %v, want it to say %q", tt.set, err, tt.key)
		}
	}
}

func TestSchemaRegistryKeys(t *testing.T) {
	t.Setenv("STREAMER_SCHEMA_REGISTRY_PASSWORD", "hunter2")
	cfg, err := Load("", []string{"input.format=avro", "output.format=avro", "schema_registry.url=https://registry:8081",
		"schema_registry.username=team", "schema_registry.tls.enable=true", "schema_registry.tls.ca_file=/etc/ca.pem"})
	if err != nil {
		t.Fatal(err)
	}
	r := cfg.Registry()
	if !cfg.UsesSchemaRegistry() || r.URL != "https://registry:8081" || r.Password != "hunter2" || r.TLS == nil || r.TLS.CAFile != "/etc/ca.pem" {
		t.Fatalf("registry settings %+v", r)
	}
	if strings.Contains(r.String(), "hunter2") {
		t.Fatalf("password printed: %s", r)
	}
	if cfg, err := Load("", nil); err != nil || cfg.UsesSchemaRegistry() || cfg.Input.Format != FormatJSON || cfg.Output.Format != FormatJSON {
		t.Fatalf("defaults: %+v, %v", cfg.Input, err)
	}
}

func TestBadSchemaRegistryNamesTheKey(t *testing.T) {
	tests := []struct {
		set []string
		key string
	}{
		{[]string{"input.format=protobuf"}, "input.format"},
		{[]string{"output.format=xml"}, "output.format"},
		{[]string{"input.format=avro"}, "schema_registry.url must be set"},
		{[]string{"output.format=avro"}, "schema_registry.url must be set"},
		{[]string{"input.format=avro", "schema_registry.url=registry:8081"}, "schema_registry.url"},
		{[]string{"input.format=avro", "schema_registry.url=http://r", "schema_registry.password=x"}, "schema_registry.password"},
		{[]string{"input.format=avro", "schema_registry.url=http://r", "schema_registry.timeout=-1s"}, "schema_registry.timeout"},
		{[]string{"input.format=avro", "schema_registry.url=http://r", "schema_registry.cache_schemas=-1"}, "schema_registry.cache_schemas"},
		{[]string{"schema_registry.tls.cert_file=c.pem"}, "schema_registry.tls.cert_file"},
	}
	for _, tt := range tests {
		_, err := Load("", tt.set)
		if err == nil || !strings.Contains(err.Error(), ": "+tt.key) {
			t.Errorf("--set %v: err = %v, want it to say %q", tt.set, err, tt.key)
		}
	}
}
