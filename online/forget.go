package online

import "slices"

// reaction is what drift made of a learner's window and schedule: a part
// of the window to forget at the next solve, a solve due at once, solves
// due sooner for a while. The learner's mu guards it.
type reaction struct {
	// forget, when not 0, is the position before which the next solve
	// forgets the labels, or with rows the rows, of the window; classes
	// holds, for some classes, the position before which it forgets the
	// labels of that class.
	forget  uint64
	rows    bool
	classes map[string]uint64
	// forgotten is the position before which labels were forgotten, and
	// forgottenClass the same for one class's labels: a late label of
	// such a row is not taken.
	forgotten      uint64
	forgottenClass map[string]uint64
	// urgent makes a solve due now, until one freezes the window.
	urgent bool
	// asked counts the forgets asked for (Forget, ForgetClasses), applied
	// those the newest solve carried out, and reacted is the version of
	// the first model solved after the newest forget applied.
	asked, applied, reacted uint64
	// While landed (rows that entered the window since the start) is
	// below quickUntil, solves are due factor times sooner.
	landed     uint64
	quickUntil uint64
	factor     int
}

// sooner returns the count that makes a solve due, divided by the
// factor while solves come sooner.
func (r *reaction) sooner(due int) int {
	if r.landed >= r.quickUntil || r.factor <= 1 {
		return due
	}
	return max(1, due/r.factor)
}

// Admitted returns the position of example id in the learner's stream:
// the number of examples the window admitted before it, which orders its
// rows. For an example it does not hold (never admitted, or gone), it
// returns the position the next example would take, and false.
func (l *Learner) Admitted(id string) (uint64, bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if key, ok := l.keyOf[id]; ok {
		return key, true
	}
	return l.nextKey, false
}

// Forget makes the next solve forget what the window admitted before
// position (Admitted), and makes it due at once; labels that arrive
// later for rows before position are not taken: with rows, the rows
// themselves (evicted from the window as a slide evicts them), else only
// their labels, the rows staying in the window unlabeled. What the drift
// detectors found the labels to say no longer holds; the inputs may
// still tell the new labels' story, which is why rows stay by default.
// The solve does the work, on its own goroutine: Forget itself only
// records it, so that the caller (the consumer, which scores) never waits
// for the window.
func (l *Learner) Forget(position uint64, rows bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.reaction.forget = max(l.reaction.forget, position)
	l.reaction.forgotten = max(l.reaction.forgotten, position)
	l.reaction.rows = l.reaction.rows || rows
	l.reaction.urgent = true
	l.reaction.asked++
}

// ForgetClasses is Forget for the labels of some classes only: the next
// solve forgets the labels of those classes on what the window admitted
// before position, and is due at once; a later label of one of those
// classes for such a row is not taken. The other classes' labels stay:
// a change of what one class means leaves what the others mean.
func (l *Learner) ForgetClasses(position uint64, classes []string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.reaction.classes == nil {
		l.reaction.classes = map[string]uint64{}
	}
	if l.reaction.forgottenClass == nil {
		l.reaction.forgottenClass = map[string]uint64{}
	}
	for _, c := range classes {
		l.reaction.classes[c] = max(l.reaction.classes[c], position)
		l.reaction.forgottenClass[c] = max(l.reaction.forgottenClass[c], position)
	}
	l.reaction.urgent = true
	l.reaction.asked++
}

// Forgets returns how many forgets were asked for so far (Forget,
// ForgetClasses): what Reacted takes.
func (l *Learner) Forgets() uint64 {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.reaction.asked
}

// Reacted returns the version of the first model solved after the
// forgets-th forget asked for (Forgets) took effect, or after a later
// one, and false while no solve has carried it out yet: the models of
// lower versions learned from what it took.
func (l *Learner) Reacted(forgets uint64) (uint64, bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.reaction.applied < forgets || l.reaction.reacted == 0 {
		return 0, false
	}
	return l.reaction.reacted, true
}

// solvedAfter records that the model of version solved after applying
// the forgets counted up to forgets.
func (l *Learner) solvedAfter(forgets, version uint64) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if forgets > l.reaction.applied {
		l.reaction.applied, l.reaction.reacted = forgets, version
	}
}

// refused reports whether a label of class for the row at key was
// forgotten before it came.
func (r *reaction) refused(key uint64, class string) bool {
	return key < r.forgotten || key < r.forgottenClass[class]
}

// Quicken makes solves due factor times sooner (after a factor-th of the
// examples and of the labels that make one due) until examples more rows
// have entered the window: a model that follows the stream more closely
// while it may be changing.
func (l *Learner) Quicken(factor, examples int) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.reaction.factor = factor
	l.reaction.quickUntil = l.reaction.landed + uint64(max(0, examples))
}

// applyForget forgets what Forget and ForgetClasses asked the next solve
// to, and returns how many forgets were asked for by then. The rows go
// under the window's lock only, so that Observe keeps handing rows off
// meanwhile; their bookkeeping goes under mu.
func (l *Learner) applyForget() uint64 {
	l.mu.Lock()
	asked := l.reaction.asked
	before, rows, classes := l.reaction.forget, l.reaction.rows, l.reaction.classes
	l.reaction.forget, l.reaction.rows, l.reaction.classes = 0, false, nil
	if before == 0 && len(classes) == 0 {
		l.mu.Unlock()
		return asked
	}
	l.changed = true
	for key, class := range l.labels {
		if (key < before && !rows) || key < classes[class] {
			delete(l.labels, key)
			delete(l.chosen, key)
			l.unlabeled[key] = true
		}
	}
	if !rows {
		l.mu.Unlock()
		return asked
	}
	l.flushPending()
	l.mu.Unlock()
	l.winMu.Lock()
	gone := l.window.EvictOldest(func(key uint64) bool { return key < before })
	l.winMu.Unlock()
	l.mu.Lock()
	l.forget(gone)
	l.mu.Unlock()
	return asked
}

// Unlabeled returns, sorted, the ids of the window's rows whose labels a
// forget took or refused: what a snapshot keeps, so that a restore,
// which reads the labels topic again, does not learn them again
// (Unlabel).
func (l *Learner) Unlabeled() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	out := make([]string, 0, len(l.unlabeled))
	for key := range l.unlabeled {
		if id, ok := l.idOf[key]; ok {
			out = append(out, id)
		}
	}
	slices.Sort(out)
	return out
}

// Unlabel takes the labels of the window's rows of ids, as the forget that
// Unlabeled listed did before a restart, and takes no later label for
// them. Ids the window does not hold are passed over.
func (l *Learner) Unlabel(ids []string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, id := range ids {
		key, ok := l.keyOf[id]
		if !ok {
			continue
		}
		if _, had := l.labels[key]; had {
			delete(l.labels, key)
			delete(l.chosen, key)
			l.changed = true
		}
		l.unlabeled[key] = true
	}
}
