package service

import (
	"fmt"
	"strings"

	"github.com/segmentio/kafka-go"
)

// readerErrorLogger logs what kafka-go's reader reports as errors as
// warnings, but for a partition reader canceled by a rebalance or a
// shutdown ("… context canceled"), which happens in normal operation:
// every time the group's assignment changes, such as when a topic it
// reads is created. That goes to debug.
func (s *Service) readerErrorLogger() kafka.Logger {
	return kafka.LoggerFunc(func(msg string, args ...any) {
		text := "kafka reader: " + fmt.Sprintf(msg, args...)
		if strings.HasSuffix(text, "context canceled") {
			s.log.Debug(text)
			return
		}
		s.log.Warn(text)
	})
}
