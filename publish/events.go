package publish

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/segmentio/kafka-go"

	"streamer/brokers"
	"streamer/pipeline"
)

// DriftEvent is the record of a drift alarm on the events topic, keyed by
// model name.
type DriftEvent struct {
	Event    string `json:"event"` // "drift_alarm"
	Model    string `json:"model"`
	Detector string `json:"detector"`
	// Statistic is the detector's statistic when it alarmed, Threshold
	// what it exceeded.
	Statistic float64 `json:"statistic"`
	Threshold float64 `json:"threshold"`
	// Examples is the stream's position: the examples the process had
	// read; ChangeAt where the detector places the change, in examples
	// for the detectors without labels and in window positions for the
	// labels detector.
	Examples int64 `json:"examples"`
	ChangeAt int64 `json:"change_at"`
	// EventTime is the time of the newest example read, Time the
	// process's clock at the alarm.
	EventTime time.Time `json:"event_time,omitzero"`
	Time      time.Time `json:"time"`
	// ModelEpoch and ModelVersion stamp the model in force.
	ModelEpoch   uint64   `json:"model_epoch"`
	ModelVersion uint64   `json:"model_version"`
	Reactions    []string `json:"reactions"`
	// Classes, for an alarm of the labels, are the classes of the errors
	// since the change: the labels and the predictions they contradicted.
	Classes []string `json:"classes,omitempty"`
	// SwitchedFrom and SwitchedTo, for an alarm of the labels whose rise
	// began where the learner's models changed algorithm, name the two;
	// nothing was forgotten for it.
	SwitchedFrom string `json:"switched_from,omitempty"`
	SwitchedTo   string `json:"switched_to,omitempty"`
}

// NewDriftEvent returns the record of alarm a of the named model.
func NewDriftEvent(model string, a pipeline.Alarm) DriftEvent {
	reactions := a.Reactions
	if reactions == nil {
		reactions = []string{}
	}
	return DriftEvent{
		Event: "drift_alarm", Model: model, Detector: a.Detector, Statistic: a.Statistic, Threshold: a.Threshold,
		Examples: a.Examples, ChangeAt: a.Since, EventTime: a.EventTime, Time: a.Time,
		ModelEpoch: a.Model.Epoch, ModelVersion: a.Model.Version, Reactions: reactions, Classes: a.Classes,
		SwitchedFrom: string(a.SwitchedFrom), SwitchedTo: string(a.SwitchedTo),
	}
}

// EventWriter writes events to a topic, keyed by model name, each
// acknowledged by every in-sync replica before Write returns.
type EventWriter struct {
	w *kafka.Writer
}

// NewEventWriter returns a writer of events to topic.
func NewEventWriter(conn *brokers.Connection, topic string) *EventWriter {
	return &EventWriter{w: &kafka.Writer{
		Addr:         kafka.TCP(conn.Addrs...),
		Transport:    conn.Transport,
		Topic:        topic,
		Balancer:     &kafka.Hash{},
		RequiredAcks: kafka.RequireAll,
		BatchTimeout: sendAtOnce,
		MaxAttempts:  3,
	}}
}

// WriteDrift writes the record of a drift alarm.
func (e *EventWriter) WriteDrift(ctx context.Context, ev DriftEvent) error {
	data, err := json.Marshal(ev)
	if err != nil {
		return fmt.Errorf("encode drift event: %w", err)
	}
	if err := e.w.WriteMessages(ctx, kafka.Message{Key: []byte(ev.Model), Value: data}); err != nil {
		return fmt.Errorf("write drift event of %s (%s at example %d): %w", ev.Model, ev.Detector, ev.Examples, err)
	}
	return nil
}

// Close closes the writer.
func (e *EventWriter) Close() error { return e.w.Close() }
