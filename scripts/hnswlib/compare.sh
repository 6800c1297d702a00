#!/bin/sh
# compare.sh: the fill rate of streamer's graph against hnswlib's on the
# same points, measured in turns in one run (see README.md here).
#
#	scripts/hnswlib/compare.sh dense 20000 3
#	scripts/hnswlib/compare.sh sparse 50000 1
#
# Arguments: dense or sparse, the points to fill with (the window length),
# the rounds. STREAMER and HNSWFILL name the binaries (default: go run and
# /tmp/hnswfill); THREADS the threads of both (default 1).
set -eu
kind=${1:?dense or sparse}
points=${2:-20000}
rounds=${3:-3}
threads=${THREADS:-1}
streamer=${STREAMER:-go run ./cmd/streamer}
hnswfill=${HNSWFILL:-/tmp/hnswfill}
tflag=
[ "$threads" -gt 1 ] && tflag="--threads $threads"
pts=${TMPDIR:-/tmp}/bench-ann-$kind-$points.pts

field() { sed -n "s/.*\"$1\":\([0-9.e+-]*\).*/\1/p"; }

r=1
while [ "$r" -le "$rounds" ]; do
	ours=$($streamer bench ann --generate "$kind" --points "$points" --window "$points" --sample 100 $tflag --export "$pts")
	theirs=$($hnswfill --points "$points" --threads "$threads" "$pts")
	ow=$(echo "$ours" | field fill_inserts_per_sec)
	oc=$(echo "$ours" | field fill_cpu_inserts_per_sec)
	tw=$(echo "$theirs" | field fill_inserts_per_sec)
	tc=$(echo "$theirs" | field fill_cpu_inserts_per_sec)
	echo "$ours"
	echo "$theirs"
	awk -v ow="$ow" -v oc="$oc" -v tw="$tw" -v tc="$tc" -v r="$r" 'BEGIN {
		printf "{\"round\":%d,\"streamer_fill_per_sec\":%.0f,\"hnswlib_fill_per_sec\":%.0f,\"ratio_wall\":%.3f,\"streamer_fill_per_cpu_sec\":%.0f,\"hnswlib_fill_per_cpu_sec\":%.0f,\"ratio_cpu\":%.3f}\n", r, ow, tw, ow / tw, oc, tc, oc / tc }'
	r=$((r + 1))
done
