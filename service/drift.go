package service

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"streamer/online/drift"
	"streamer/pipeline"
	"streamer/publish"
)

// The pipeline's drift alarms (pipeline.DriftConfig) are counted, logged
// and said by /readyz on the goroutine that found them, the consumer's,
// and written to the events topic (kafka.topics.events) by a background
// member of their own, so that a slow broker never holds the consumer: an
// alarm that finds the queue full is counted lost
// (streamer_drift_events_lost_total), as one whose record cannot be
// written.

// driftQueue is the number of alarms waiting for the events topic.
const driftQueue = 64

// eventTimeout bounds the writing of one event.
const eventTimeout = 10 * time.Second

// onDriftAlarm is the pipeline's OnAlarm: it must not block.
func (s *Service) onDriftAlarm(a pipeline.Alarm) {
	s.log.Info("drift alarm", "detector", a.Detector, "statistic", a.Statistic, "threshold", a.Threshold,
		"examples", a.Examples, "change_at", a.Since, "model_version", a.Model.Version, "epoch", a.Model.Epoch,
		"reactions", a.Reactions, "classes", a.Classes, "switched_from", a.SwitchedFrom, "switched_to", a.SwitchedTo)
	if slices.Contains(a.Reactions, "solve") {
		s.reacted.Store(true)
	}
	select {
	case s.driftAlarms <- a:
	default:
		s.metrics.DriftEventsLost.Inc()
	}
}

// writeDriftEvents writes the alarms queued to the events topic until ctx
// ends, then those still queued, within eventTimeout.
func (s *Service) writeDriftEvents(ctx context.Context, w *publish.EventWriter) error {
	for {
		select {
		case a := <-s.driftAlarms:
			s.writeDriftEvent(ctx, w, a)
		case <-ctx.Done():
			last, cancel := context.WithTimeout(context.WithoutCancel(ctx), eventTimeout)
			defer cancel()
			for {
				select {
				case a := <-s.driftAlarms:
					s.writeDriftEvent(last, w, a)
				default:
					return nil
				}
			}
		}
	}
}

func (s *Service) writeDriftEvent(ctx context.Context, w *publish.EventWriter, a pipeline.Alarm) {
	wctx, cancel := context.WithTimeout(ctx, eventTimeout)
	defer cancel()
	if err := w.WriteDrift(wctx, publish.NewDriftEvent(s.cfg.Model.Name, a)); err != nil {
		s.metrics.DriftEventsLost.Inc()
		s.log.Warn("drift event lost", "topic", s.cfg.Kafka.Topics.Events, "error", err)
	}
}

// driftLine is /readyz's line about drift: the alarms so far and the
// last one; "" when the watch is off.
func (s *Service) driftLine() string {
	st := s.pipe.DriftStatus()
	if len(st.Detectors) == 0 {
		return ""
	}
	var on []string
	for _, d := range st.Detectors {
		if d.On {
			on = append(on, d.Detector)
		}
	}
	line := fmt.Sprintf("drift: watching %s; %d alarms", strings.Join(on, ", "), st.Alarms)
	if a := st.Last; a != nil {
		line += fmt.Sprintf("; last: %s at example %d (%s ago), model %d.%d", a.Detector, a.Examples,
			time.Since(a.Time).Round(time.Second), a.Model.Epoch, a.Model.Version)
		if len(a.Classes) > 0 {
			line += ", classes: " + strings.Join(a.Classes, ", ")
		}
		if a.SwitchedTo != "" {
			line += fmt.Sprintf(", at the learner's switch from %s to %s: nothing forgotten", a.SwitchedFrom, a.SwitchedTo)
		}
		if len(a.Reactions) > 0 {
			line += ", reacted: " + strings.Join(a.Reactions, ", ")
		}
	}
	return line
}

// driftStatus returns the state of the named detector; zero when the
// watch is off.
func driftStatus(pipe *pipeline.Pipeline, name string) drift.Status {
	for _, d := range pipe.DriftStatus().Detectors {
		if d.Detector == name {
			return d
		}
	}
	return drift.Status{}
}
