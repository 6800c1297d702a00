package schemaregistry

import (
	"context"
	"encoding/base64"
	"encoding/pem"
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/twmb/franz-go/pkg/sr"
	"github.com/twmb/franz-go/pkg/sr/srfake"

	"streamer/ingest"
	"streamer/internal/tlsconfig"
)

// No schema registry server is packaged for this machine: the tests serve
// the registry's REST calls from franz-go's srfake, an in-process
// httptest server of Confluent's API.

const postSchema = `{"type": "record", "name": "Post", "fields": [{"name": "post_id", "type": "long"}]}`

func TestAvroSchema(t *testing.T) {
	reg := srfake.New()
	defer reg.Close()
	reg.SeedSchema("posts-value", 1, 7, sr.Schema{Schema: postSchema, Type: sr.TypeAvro})
	reg.SeedSchema("other-value", 1, 8, sr.Schema{Schema: `{"type": "object"}`, Type: sr.TypeJSON})
	reg.SeedSchema("bad-value", 1, 9, sr.Schema{Schema: `{"type": "record", "name": "X", "fields": [{"name": "a", "type": "nope"}]}`, Type: sr.TypeAvro})
	var gets atomic.Int64
	reg.Intercept(func(w http.ResponseWriter, r *http.Request) bool {
		if strings.HasPrefix(r.URL.Path, "/schemas/ids/") {
			gets.Add(1)
		}
		return false
	})
	c, err := New(Config{URL: reg.URL(), CacheSchemas: 1})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	for range 3 {
		s, err := c.AvroSchema(ctx, 7)
		if err != nil || !strings.Contains(s.String(), "post_id") {
			t.Fatalf("schema 7: %v, %v", s, err)
		}
	}
	if n := gets.Load(); n != 1 {
		t.Fatalf("%d requests for one schema read three times: not cached", n)
	}
	for id, want := range map[uint32]error{404: ingest.ErrSchemaNotFound, 8: ingest.ErrSchemaUnusable, 9: ingest.ErrSchemaUnusable} {
		if _, err := c.AvroSchema(ctx, id); !errors.Is(err, want) {
			t.Errorf("schema %d: err = %v, want %v", id, err, want)
		}
	}
	// The cache holds one schema: 7 was pushed out by none of the failures,
	// and is fetched again once another took its place.
	reg.SeedSchema("posts-value", 2, 10, sr.Schema{Schema: postSchema, Type: sr.TypeAvro})
	c.AvroSchema(ctx, 10)
	c.AvroSchema(ctx, 7)
	if n := gets.Load(); n != 6 {
		t.Fatalf("%d requests, want 6: the cache is not bounded to one schema", n)
	}
}

// TestRegistryDown: a registry that fails or is gone is neither a schema
// not found nor an unusable one, for the caller to ask again.
func TestRegistryDown(t *testing.T) {
	reg := srfake.New()
	reg.SeedSchema("posts-value", 1, 7, sr.Schema{Schema: postSchema, Type: sr.TypeAvro})
	reg.Intercept(func(w http.ResponseWriter, r *http.Request) bool {
		http.Error(w, `{"error_code": 50001, "message": "store unavailable"}`, http.StatusInternalServerError)
		return true
	})
	c, err := New(Config{URL: reg.URL()})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if _, err := c.AvroSchema(ctx, 7); err == nil || errors.Is(err, ingest.ErrSchemaNotFound) || errors.Is(err, ingest.ErrSchemaUnusable) {
		t.Fatalf("a failing registry: err = %v", err)
	}
	reg.Close()
	if _, err := c.AvroSchema(ctx, 7); err == nil || errors.Is(err, ingest.ErrSchemaNotFound) {
		t.Fatalf("a registry gone: err = %v", err)
	}
}

func TestRegister(t *testing.T) {
	reg := srfake.New()
	defer reg.Close()
	c, err := New(Config{URL: reg.URL()})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	id, err := c.Register(ctx, "predictions-value", postSchema)
	if err != nil {
		t.Fatal(err)
	}
	again, err := c.Register(ctx, "predictions-value", postSchema)
	if err != nil || again != id {
		t.Fatalf("registered again: id %d (%v), first %d", again, err, id)
	}
	if s, err := c.AvroSchema(ctx, id); err != nil || !strings.Contains(s.String(), "Post") {
		t.Fatalf("the registered schema by id: %v, %v", s, err)
	}
	if _, err := c.Register(ctx, "x-value", `{"type": "nope"}`); err == nil {
		t.Fatal("a schema that does not parse was registered")
	}
}

func TestBasicAuthAndTLS(t *testing.T) {
	reg := srfake.NewRegistry(srfake.WithAuth("Basic " + base64.StdEncoding.EncodeToString([]byte("team:hunter2"))))
	reg.SeedSchema("posts-value", 1, 7, sr.Schema{Schema: postSchema, Type: sr.TypeAvro})
	srv := httptest.NewTLSServer(reg.Handler())
	defer srv.Close()
	ca := filepath.Join(t.TempDir(), "ca.pem")
	os.WriteFile(ca, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw}), 0o600)
	ctx := context.Background()
	good := Config{URL: srv.URL, Username: "team", Password: "hunter2", TLS: &tlsconfig.Files{CAFile: ca}}
	c, err := New(good)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.AvroSchema(ctx, 7); err != nil {
		t.Fatalf("with the password and the CA: %v", err)
	}
	for name, cfg := range map[string]Config{
		"wrong password": {URL: srv.URL, Username: "team", Password: "x", TLS: good.TLS},
		"untrusted":      {URL: srv.URL, Username: "team", Password: "hunter2"},
	} {
		c, err := New(cfg)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := c.AvroSchema(ctx, 7); err == nil || errors.Is(err, ingest.ErrSchemaNotFound) {
			t.Errorf("%s: err = %v", name, err)
		}
	}
	if s := good.String(); strings.Contains(s, "hunter2") {
		t.Fatalf("password printed: %s", s)
	}
}

func TestValidate(t *testing.T) {
	for _, tt := range []struct {
		cfg   Config
		field string
	}{
		{Config{}, "url"},
		{Config{URL: "registry:8081"}, "url"},
		{Config{URL: "ftp://registry"}, "url"},
		{Config{URL: "http://r", Timeout: -1}, "timeout"},
		{Config{URL: "http://r", CacheSchemas: -1}, "cache_schemas"},
		{Config{URL: "http://r", Password: "x"}, "password"},
	} {
		if err := tt.cfg.Validate(); err == nil || !strings.HasPrefix(err.Error(), tt.field) {
			t.Errorf("Validate(%+v) = %v, want it to name %s", tt.cfg, err, tt.field)
		}
	}
	if _, err := New(Config{URL: "https://r", TLS: &tlsconfig.Files{CAFile: "/no/such/ca.pem"}}); err == nil || !strings.Contains(err.Error(), "tls.ca_file") {
		t.Fatalf("a missing CA file: %v", err)
	}
}
