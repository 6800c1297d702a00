// Package anngraph keeps an approximate k-nearest-neighbour graph over a
// sliding window of recent vectors, updated incrementally as vectors enter and
// leave, and exposes the graph Laplacian of the window as an operator for the
// solver. It knows nothing of labels, models or Kafka.
//
// A Window holds up to Config.MaxExamples points (and, with Config.MaxAge,
// only those recent enough by event time). Each point has a kNN list: its
// nearest known points, nearest first. Three structures keep the lists good
// at the cost of an index update, never a rebuild:
//
//   - A hierarchical navigable small world graph (hnsw.go; Malkov and
//     Yashunin) finds an inserted point's neighbours. Deletion is real: every
//     link has its reverse recorded, the links to an evicted point go, and
//     the points that lost one get a replacement among the evicted point's
//     own links.
//   - Every distance computed while inserting a point is offered to both
//     ends: the new point's list takes the nearest found, and each point
//     met takes the new one if it beats its current last entry. The points
//     that list the new point's nearest neighbours are offered it too, which
//     catches the far-from-the-crowd points whose neighbour it is.
//   - Lists keep Config.ListDepth (2K) candidates, so an eviction seldom
//     leaves one short; reverse lists (who lists me) remove an evicted point
//     from every list at once, and a list left with fewer than K entries is
//     refilled by a search from its point. No list ever refers to a point
//     that left the window.
//
// Window.Snapshot copies, under the window's lock, what a solve needs (keys,
// times, vector references, lists as row indices) into an immutable View, so
// that inserts can go on while a solve reads. View.Laplacian symmetrizes the
// graph (i ~ j when either lists the other), weighs its edges and returns the
// operator M = L^p with its factor B (BᵀB = M) that the solver's CGLS runs
// on, as docs/MATH.md describes.
//
// Window.InsertBatch inserts many points at once, placing them on
// Config.InsertWorkers goroutines against the graph as it stood before the
// batch, then linking them in order (batch.go).
//
// The state depends only on Config (Seed included, InsertWorkers not) and
// the sequence of inserts and batches: replaying the inserted examples in
// the same batches rebuilds it exactly.
package anngraph
