#!/usr/bin/env bash
# `trainer tokenize` as a user runs it: the golden texts (data/golden/tokens_sts_dev.jsonl, from
# Hugging Face tokenizers) piped through it give the golden ids on every line; --pair gives
# [CLS] A [SEP] B [SEP] with token types; --max_len truncates; bad input is a one-line error;
# invalid UTF-8 on stdin gives one warning line and the ids of the text without the bad bytes.
# Args: path of the trainer binary.
set -uo pipefail
TRAINER=$1
PY=/usr/bin/python3
GOLDEN=data/golden/tokens_sts_dev.jsonl
VOCAB=data/bert-uncased-vocab/vocab.txt
failures=0
fail() { echo "FAIL: $*"; failures=$((failures + 1)); }
tmp=$(mktemp -d "${TEST_TMPDIR:-/tmp}/tokenize-XXXXXX")
trap 'rm -rf "$tmp"' EXIT

# one_line_error PATTERN CMD... (stdin from the caller): exit 2, one stderr line matching
# PATTERN, nothing on stdout.
one_line_error() {
  local pattern=$1; shift
  local out err rc
  out=$("$@" 2>"$tmp/err"); rc=$?; err=$(cat "$tmp/err")
  [ "$rc" -eq 2 ] || fail "$* exited $rc, want 2 ($err)"
  [ -z "$out" ] || fail "$* wrote to stdout: $out"
  [ "$(printf '%s\n' "$err" | wc -l)" -eq 1 ] || fail "$* stderr is not one line: $err"
  echo "$err" | grep -qE -- "$pattern" || fail "$* stderr lacks /$pattern/: $err"
}

# The golden texts, one a line (none holds a newline), through the binary.
"$PY" -c '
import json, sys
with open(sys.argv[2], "w", encoding="utf-8", newline="\n") as out:
    for line in open(sys.argv[1], encoding="utf-8"):
        out.write(json.loads(line)["text"] + "\n")
' "$GOLDEN" "$tmp/texts.txt" || fail "cannot read $GOLDEN"
"$TRAINER" tokenize --vocab "$VOCAB" < "$tmp/texts.txt" > "$tmp/ids.jsonl" 2> "$tmp/err" ||
  fail "trainer tokenize failed: $(cat "$tmp/err")"
"$PY" -c '
import json, sys
want = [json.loads(l)["ids"] for l in open(sys.argv[1], encoding="utf-8")]
got = [json.loads(l) for l in open(sys.argv[2], encoding="utf-8")]
same = sum(1 for w, g in zip(want, got) if list(g) == ["ids"] and g["ids"] == w)
print("golden: %d / %d lines identical (%d output lines)" % (same, len(want), len(got)))
bad = [i + 1 for i, (w, g) in enumerate(zip(want, got)) if g.get("ids") != w][:5]
if bad: print("first differing lines:", bad)
sys.exit(0 if same == len(want) == len(got) else 1)
' "$GOLDEN" "$tmp/ids.jsonl" || fail "output differs from $GOLDEN"
[ -s "$tmp/err" ] && fail "valid UTF-8 input wrote to stderr: $(cat "$tmp/err")"

# Invalid UTF-8: each bad byte sequence reads as U+FFFD, which the tokenizer drops, and one
# warning line names stdin's first such line and how many lines had one.
out=$(printf 'Hello\ncaf\xe9 au lait\n\xff\xfe\nna\xc3\xafve\n' |
  "$TRAINER" tokenize --vocab "$VOCAB" 2> "$tmp/err")
want=$(printf 'Hello\ncaf au lait\n\nna\xc3\xafve\n' | "$TRAINER" tokenize --vocab "$VOCAB")
[ "$out" = "$want" ] || fail "invalid UTF-8 gave $out, want $want"
[ "$(wc -l < "$tmp/err")" -eq 1 ] || fail "invalid UTF-8: stderr is not one line: $(cat "$tmp/err")"
grep -qxF 'trainer: warning: stdin:2: invalid UTF-8 (2 lines; each bad byte sequence read as U+FFFD, which the tokenizer drops)' \
  "$tmp/err" || fail "invalid UTF-8 warning: $(cat "$tmp/err")"

# --pair: token types, and the exact JSON layout.
out=$(printf 'Hello, world!\tBye.\n' | "$TRAINER" tokenize --vocab "$VOCAB" --pair)
want='{"ids": [101, 7592, 1010, 2088, 999, 102, 9061, 1012, 102], "token_type_ids": [0, 0, 0, 0, 0, 0, 1, 1, 1]}'
[ "$out" = "$want" ] || fail "--pair gave $out, want $want"
# --max_len: single keeps [SEP]; a pair is cut longest-first ("a b c d e" | "x y", 8).
out=$(printf 'Hello, world!\n' | "$TRAINER" tokenize --vocab "$VOCAB" --max_len 4)
[ "$out" = '{"ids": [101, 7592, 1010, 102]}' ] || fail "--max_len 4 gave $out"
out=$(printf 'a b c d e\tx y\n' | "$TRAINER" tokenize --vocab "$VOCAB" --pair --max_len=8)
want='{"ids": [101, 1037, 1038, 1039, 102, 1060, 1061, 102], "token_type_ids": [0, 0, 0, 0, 0, 1, 1, 1]}'
[ "$out" = "$want" ] || fail "--pair --max_len=8 gave $out, want $want"
# CRLF input reads like LF; an empty line gives [CLS] [SEP].
out=$(printf 'Hello\r\n\n' | "$TRAINER" tokenize --vocab "$VOCAB" | tr '\n' '|')
[ "$out" = '{"ids": [101, 7592, 102]}|{"ids": [101, 102]}|' ] || fail "CRLF / empty lines gave $out"

# Bad input.
"$TRAINER" tokenize --help | grep -q -- '--pair' || fail "--help lacks --pair"
one_line_error 'give one of --vocab and --model' "$TRAINER" tokenize < /dev/null
one_line_error '/nonexistent/vocab.txt: cannot open' \
  "$TRAINER" tokenize --vocab /nonexistent/vocab.txt < /dev/null
printf 'hello\nworld\n' > "$tmp/vocab.txt"
one_line_error "$tmp/vocab.txt: vocab lacks the special token\(s\) \[CLS\], \[SEP\], \[UNK\], \[PAD\]" \
  "$TRAINER" tokenize --vocab "$tmp/vocab.txt" < /dev/null
one_line_error '--max_len must be at least 2, got 1' \
  "$TRAINER" tokenize --vocab "$VOCAB" --max_len 1 < /dev/null
one_line_error '--max_len must be at least 3 with --pair, got 2' \
  "$TRAINER" tokenize --vocab "$VOCAB" --pair --max_len 2 < /dev/null
printf 'a\tb\nno tab here\n' > "$tmp/pairs.txt"
out=$("$TRAINER" tokenize --vocab "$VOCAB" --pair < "$tmp/pairs.txt" 2> "$tmp/err"); rc=$?
[ "$rc" -eq 2 ] || fail "--pair on a line without a tab exited $rc, want 2"
grep -q 'stdin:2: --pair expects two tab-separated sentences, got 1 field(s)' "$tmp/err" ||
  fail "--pair error: $(cat "$tmp/err")"

if [ "$failures" -ne 0 ]; then echo "$failures failure(s)"; exit 1; fi
echo "all tokenize checks passed"
