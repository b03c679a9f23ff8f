#!/usr/bin/env bash
# Restore a job's inputs from Glacier / Deep Archive before the job starts, so the
# job reads without waiting and never pays for the same restore twice.
#
# Written for a real bucket (it is documentation; CI does not run it). Try the
# commands on this machine first against `archivefs serve` (see docs/cli.md).
#
#   ./prefetch_before_batch_job.sh s3://my-bucket/run42/ /scratch/run42
#
# Exit codes of `archivefs prefetch`: 0 all restored (and copied), 3 the estimate
# is above --max-cost (nothing was sent), 4 --timeout passed (the restores go on;
# run the script again later: the journal makes it resume without new requests).
set -euo pipefail

INPUTS=${1:?usage: $0 s3://bucket/prefix/ [scratch-dir]}
SCRATCH=${2:-}
PROFILE=${AWS_PROFILE:-default}
BUDGET=${BUDGET_USD:-25}        # refuse to spend more than this on restores and reads
TIER=${TIER:-Bulk}              # Bulk: cheapest; GLACIER 5-12 h, DEEP_ARCHIVE up to 48 h

# 1. What is there, and in which state (one bulk listing, no HEAD per object).
archivefs --profile "$PROFILE" status "$INPUTS"

# 2. What restoring and reading it will cost, before anything is paid for.
archivefs --profile "$PROFILE" estimate "$INPUTS" --tier "$TIER" --days 3

# 3. Restore everything in one batch (one request per object or bundle), wait with
#    progress, and copy the requested files to fast scratch storage if asked (at
#    $SCRATCH/<bucket>/<key>; bundle members are extracted, never whole bundles).
#    Re-running is free: objects already restoring or restored are not requested again.
prefetch=(archivefs --profile "$PROFILE" prefetch "$INPUTS"
          --tier "$TIER" --days 3 --max-cost "$BUDGET" --timeout $((48 * 3600)))
if [[ -n "$SCRATCH" ]]; then
    prefetch+=(--to "$SCRATCH")
fi
"${prefetch[@]}"

# 4. The batch job reads restored data (or the scratch copy) at full speed.
if [[ -n "$SCRATCH" ]]; then
    python my_analysis.py --input "$SCRATCH/${INPUTS#s3://}"
else
    python my_analysis.py --input "archive::$INPUTS"
fi
