package consumer

import (
	"fmt"
	"log/slog"
	"strings"

	"github.com/segmentio/kafka-go"
)

// ReaderErrorLogger logs to log what kafka-go's reader reports as errors,
// as warnings, but for a partition reader canceled by a rebalance or a
// shutdown ("… context canceled"), which happens in normal operation:
// every time the group's assignment changes, such as when a topic it
// reads is created. That goes to debug.
func ReaderErrorLogger(log *slog.Logger) kafka.Logger {
	return kafka.LoggerFunc(func(msg string, args ...any) {
		text := "kafka reader: " + fmt.Sprintf(msg, args...)
		if strings.HasSuffix(text, "context canceled") {
			log.Debug(text)
			return
		}
		log.Warn(text)
	})
}
