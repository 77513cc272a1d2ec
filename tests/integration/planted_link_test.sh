#!/usr/bin/env bash
# Issue 32, item 4: links another user plants in a folder others can write are never written
# through. A second user, made here (CI runs as root; a link root plants is not another user's),
# plants in a sticky 1777 folder (as /tmp) links to root's 0700 folder and file:
# 1. `hpo sweep --journal SHARED/journal.log` (a planted link) and a journal in a folder of
#    theirs: exit 2, one line naming the path, nothing written; a world-writable folder that is
#    not sticky is refused the same way, nothing created in it;
# 2. a dev-mode sweep with its journal (ours) in the shared folder, trial-0 planted: the trainer
#    refuses trial-0 (its FAIL reason names it; a refusal is exit 2, not retried), trial 1 trains
#    in a folder of its own; under umask 077 the journal, its report and the trial's files are
#    private;
# 3. `hpo report --output SHARED/report.html` (planted): exit 2, one line; a report of a 0600
#    journal is 0600, of a 0640 one 0640 (umask 022);
# and the victim folder and file are untouched throughout.
# Args: hpo binary, trainer binary.
HPO=$1 TRAINER=$2
source tests/integration/lib.sh
if [ "$(id -u)" -ne 0 ] || ! command -v useradd > /dev/null || ! command -v runuser > /dev/null; then
  fail "needs root, useradd and runuser to make a second user that plants the links (CI runs as root)"
  finish
fi
U=tf-probe-$$
useradd --system --no-create-home --shell /usr/sbin/nologin --user-group "$U" ||
  { fail "cannot create user $U"; finish; }
# The shared folder in /tmp: the second user must reach it, and root's test folder is closed to it.
S=$(mktemp -d /tmp/tf-planted-XXXXXX)
O=$(mktemp -d /tmp/tf-open-XXXXXX)
trap 'cleanup; rm -rf "$S" "$O"; userdel "$U" 2>/dev/null' EXIT
chmod 1777 "$S"
chmod 0777 "$O"
as_user() { runuser -u "$U" -- "$@"; }

VICTIM=$WORK/victim
mkdir -m 700 "$VICTIM"
echo secret > "$VICTIM/secret"
victim_state() { ls -A "$VICTIM"; stat -c '%n %s %y %a' "$VICTIM" "$VICTIM/secret"; md5sum "$VICTIM/secret"; }
before=$(victim_state)
as_user ln -s "$VICTIM" "$S/trial-0"
as_user ln -s "$VICTIM/secret" "$S/journal.log"
as_user ln -s "$VICTIM/secret" "$S/report.html"
as_user mkdir -m 777 "$S/theirs"
[ "$(stat -c %U "$S/trial-0")" = "$U" ] || fail "the links were not planted by $U"

# exit2_one_line WHAT PATTERN CMD...: CMD exits 2 with one line on stderr that matches PATTERN.
exit2_one_line() {
  local what=$1 pattern=$2; shift 2
  local err rc
  err=$("$@" 2>&1 >/dev/null); rc=$?
  echo "$what: exit $rc: $err"
  [ "$rc" -eq 2 ] || fail "$what: exit $rc, not 2"
  [ "$(printf '%s\n' "$err" | grep -c .)" -eq 1 ] || fail "$what: not one line: $err"
  printf '%s\n' "$err" | grep -q -- "$pattern" || fail "$what: does not say '$pattern': $err"
}
synthetic_sweep "$S/journal.log" 1 1 0
exit2_one_line "sweep, planted journal.log" "$S/journal.log: is a symbolic link" "$HPO" sweep "${args[@]}"
synthetic_sweep "$S/theirs/j.log" 1 1 0
exit2_one_line "sweep, journal in their folder" "$S/theirs: belongs to uid $(id -u "$U")" \
  "$HPO" sweep "${args[@]}"
synthetic_sweep "$O/j.log" 1 1 0
exit2_one_line "sweep, world-writable folder" "can be written by other users and is not sticky" \
  "$HPO" sweep "${args[@]}"
[ -z "$(ls -A "$O")" ] || fail "hpo created something in the world-writable folder: $(ls -A "$O")"
[ -z "$(ls -A "$S/theirs")" ] || fail "hpo created something in the other user's folder"

# 2. A real sweep (bert-tiny, 2 steps) with its journal in the shared folder; trial-0 is planted.
write_train_yaml "$WORK/train.yaml" train.max_steps=2 train.eval_every_steps=2 output.save=last
write_sweep_yaml "$WORK/sweep.yaml" name=planted journal="$S/mine.log" \
  parameters.lr='{distribution: log_uniform, min: 1.0e-5, max: 1.0e-3}' \
  parameters.batch_size='{values: [16]}' search='{method: random, random: {trials: 2, seed: 0}}'

(umask 077; exec "$HPO" sweep "$WORK/sweep.yaml") > "$WORK/sweep.out" 2>&1
echo "sweep: exit $?"; tail -4 "$WORK/sweep.out"
J=$S/mine.log
expect_states "$J" "['FAIL', 'COMPLETE']"
reason=$(pyq "$J" "T[0]['user_attrs'].get('fail_reason','') + ' ' + T[0]['user_attrs'].get('stderr_tail','')")
echo "trial 0: $reason" | cut -c1-300
grep -q "$S/trial-0: is a symbolic link that belongs to uid $(id -u "$U")" <<< "$reason" ||
  fail "trial 0's failure does not name the planted trial-0"
[ -L "$S/trial-0" ] || fail "trial-0 is no longer the planted link"
T1=$S/trial-1
[ -s "$T1/metrics.jsonl" ] && [ -s "$T1/model/model.safetensors" ] || fail "trial 1 wrote no metrics or model"
for f in "$J" "$S/mine.html" "$T1/metrics.jsonl" "$T1/model/model.safetensors" "$T1"/tensorboard/*; do
  [ "$(stat -c %a "$f")" = 600 ] || fail "$f has mode $(stat -c %a "$f") under umask 077, not 600"
done
for d in "$T1" "$T1/model" "$S/logs"; do
  [ "$(stat -c %a "$d")" = 700 ] || fail "$d has mode $(stat -c %a "$d") under umask 077, not 700"
done

# 3. Reports.
exit2_one_line "report onto a planted link" "$S/report.html: is a symbolic link that belongs to uid" \
  "$HPO" report --journal "$J" --output "$S/report.html"
rm -f "$S/mine.html"
(umask 022; exec "$HPO" report --journal "$J" --output "$S/mine.html") > /dev/null ||
  fail "hpo report of our own journal failed"
[ "$(stat -c %a "$S/mine.html")" = 600 ] || fail "the report of a 0600 journal is $(stat -c %a "$S/mine.html")"
chmod 640 "$J"
(umask 022; exec "$HPO" report --journal "$J" --output "$WORK/r640.html") > /dev/null
[ "$(stat -c %a "$WORK/r640.html")" = 640 ] || fail "the report of a 0640 journal is $(stat -c %a "$WORK/r640.html")"

[ "$(victim_state)" = "$before" ] || fail "the victim changed: $(victim_state)"
[ "$(cat "$VICTIM/secret")" = secret ] || fail "the victim file was written"
finish
