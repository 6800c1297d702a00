package schemaregistry

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"strconv"
	"time"

	"github.com/hamba/avro/v2"
	lru "github.com/hashicorp/golang-lru/v2"
	"github.com/twmb/franz-go/pkg/sr"
	"golang.org/x/sync/singleflight"

	"streamer/ingest"
	"streamer/internal/tlsconfig"
)

// Config says how to reach the registry. The zero value of each field but
// URL means the default beside it.
type Config struct {
	// URL is the registry's base URL, http or https.
	URL string
	// Username and Password are sent by HTTP basic authentication when
	// Username is set.
	Username string
	Password string
	// TLS, when set, is what an https registry is trusted by; nil: the
	// system roots.
	TLS *tlsconfig.Files
	// Timeout bounds each request; 0 means 10s.
	Timeout time.Duration
	// CacheSchemas is how many parsed schemas are kept, the least
	// recently used dropped first; 0 means 1000.
	CacheSchemas int
}

// Default sizes.
const (
	DefaultTimeout      = 10 * time.Second
	DefaultCacheSchemas = 1000
)

// Validate names the first bad field, as the end of its configuration
// key (url, timeout).
func (c Config) Validate() error {
	u, err := url.Parse(c.URL)
	switch {
	case c.URL == "":
		return errors.New("url: empty")
	case err != nil:
		return fmt.Errorf("url: %w", err)
	case u.Scheme != "http" && u.Scheme != "https" || u.Host == "":
		return fmt.Errorf("url: %q is not an http or https URL", c.URL)
	case c.Timeout < 0:
		return fmt.Errorf("timeout: %v, want >= 0", c.Timeout)
	case c.CacheSchemas < 0:
		return fmt.Errorf("cache_schemas: %d, want >= 0", c.CacheSchemas)
	case c.Password != "" && c.Username == "":
		return errors.New("password: set without a username")
	}
	return nil
}

// LogValue keeps the password out of logs.
func (c Config) LogValue() slog.Value {
	pw := ""
	if c.Password != "" {
		pw = "[redacted]"
	}
	return slog.GroupValue(
		slog.String("url", c.URL), slog.Bool("tls", c.TLS != nil),
		slog.String("username", c.Username), slog.String("password", pw),
	)
}

// String prints the configuration without the password.
func (c Config) String() string { return c.LogValue().String() }

// Client fetches and registers schemas. It is safe for concurrent use.
type Client struct {
	sr    *sr.Client
	cache *lru.Cache[uint32, avro.Schema]
	// fetches makes one request of the records that wait for one schema.
	fetches singleflight.Group
}

// New returns a client of the registry; it connects to nothing yet.
func New(cfg Config) (*Client, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	timeout, size := cfg.Timeout, cfg.CacheSchemas
	if timeout == 0 {
		timeout = DefaultTimeout
	}
	if size == 0 {
		size = DefaultCacheSchemas
	}
	transport := http.DefaultTransport.(*http.Transport).Clone()
	if cfg.TLS != nil {
		tc, err := cfg.TLS.Load()
		if err != nil {
			return nil, fmt.Errorf("tls.%w", err)
		}
		transport.TLSClientConfig = tc
	}
	opts := []sr.ClientOpt{sr.URLs(cfg.URL), sr.HTTPClient(&http.Client{Timeout: timeout, Transport: transport}), sr.UserAgent("streamer")}
	if cfg.Username != "" {
		opts = append(opts, sr.BasicAuth(cfg.Username, cfg.Password))
	}
	cl, err := sr.NewClient(opts...)
	if err != nil {
		return nil, err
	}
	cache, err := lru.New[uint32, avro.Schema](size)
	if err != nil {
		return nil, err
	}
	return &Client{sr: cl, cache: cache}, nil
}

// AvroSchema returns the Avro schema of id (GET /schemas/ids/{id}), from
// the cache when it was fetched before. Its error wraps
// ingest.ErrSchemaNotFound when the registry answers 404, and
// ingest.ErrSchemaUnusable when the schema is not Avro or does not parse
// (a schema with references to others is not supported); any other error
// is the registry's being away or failing, worth asking again.
func (c *Client) AvroSchema(ctx context.Context, id uint32) (avro.Schema, error) {
	if s, ok := c.cache.Get(id); ok {
		return s, nil
	}
	v, err, _ := c.fetches.Do(strconv.FormatUint(uint64(id), 10), func() (any, error) {
		return c.fetch(ctx, id)
	})
	if err != nil {
		return nil, err
	}
	return v.(avro.Schema), nil
}

func (c *Client) fetch(ctx context.Context, id uint32) (avro.Schema, error) {
	s, err := c.sr.SchemaByID(ctx, int(id))
	var re *sr.ResponseError
	switch {
	case errors.As(err, &re) && re.StatusCode == http.StatusNotFound:
		return nil, fmt.Errorf("registry: %w: %v", ingest.ErrSchemaNotFound, err)
	case err != nil:
		return nil, fmt.Errorf("registry: %w", err)
	case s.Type != sr.TypeAvro:
		return nil, fmt.Errorf("registry: %w: a %s schema, not Avro", ingest.ErrSchemaUnusable, s.Type)
	}
	// A cache per schema: hamba's shared cache would resolve a named type
	// of one schema to the type of that name in another, an older version
	// of the same record.
	parsed, err := avro.ParseWithCache(s.Schema, "", &avro.SchemaCache{})
	if err != nil {
		return nil, fmt.Errorf("registry: %w: %v", ingest.ErrSchemaUnusable, err)
	}
	c.cache.Add(id, parsed)
	return parsed, nil
}

// Register registers the Avro schema under subject (POST
// /subjects/{subject}/versions) and returns its id; registering a schema
// the subject has already returns the id it has.
func (c *Client) Register(ctx context.Context, subject, schema string) (uint32, error) {
	if _, err := avro.ParseWithCache(schema, "", &avro.SchemaCache{}); err != nil {
		return 0, fmt.Errorf("schema of %s: %w", subject, err)
	}
	id, err := c.sr.RegisterSchema(ctx, subject, sr.Schema{Schema: schema, Type: sr.TypeAvro}, -1, -1)
	if err != nil {
		return 0, fmt.Errorf("register the schema of %s: %w", subject, err)
	}
	if id < 0 || id > 1<<32-1 {
		return 0, fmt.Errorf("register the schema of %s: the registry answered id %d", subject, id)
	}
	return uint32(id), nil
}
