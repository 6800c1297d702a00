// Package replay recomputes predictions over a stretch of a topic, for
// backfills: with a pinned snapshot (scoring only) or retraining as the
// live service would, deterministically. It reads partitions directly,
// never joins the live consumer group and never commits offsets.
package replay
