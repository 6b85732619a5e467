#!/usr/bin/env bash
# Client smoke test: sluice through the AWS CLI v1 (`awscli` from PyPI), in
# either of SQS's wire protocols:
#   * AWS JSON 1.0: the current awscli (it bundles its own botocore), `aws` on PATH;
#   * AWS Query: AWS=tests/clients/python/awscli_query.sh, awscli 1.29.80 on
#     botocore 1.31.80, the last botocore whose SQS model is `query`.
#
# SMOKE_EXPECT_PROTOCOL (json or query, default json) is the protocol the CLI
# must speak: the server's own count of SQS requests by protocol (/metrics,
# sluice_requests_total{protocol=...}) must grow by exactly the number of CLI
# calls made, in that protocol only. So the suite needs the server to itself
# while it runs.
#
# Run by scripts/client-smoke, which starts sluice, sets SLUICE_ENDPOINT and
# puts the client venv first on PATH. By hand:
#   SLUICE_ENDPOINT=http://127.0.0.1:PORT PATH=target/client-venv/bin:$PATH \
#     bash tests/clients/python/smoke_awscli.sh
#   SLUICE_ENDPOINT=... SMOKE_EXPECT_PROTOCOL=query AWS=tests/clients/python/awscli_query.sh \
#     PY=target/client-venv/bin/python bash tests/clients/python/smoke_awscli.sh
#
# Output: `ok - NAME` / `not ok - NAME` per step, then
# `smoke-result: suite=awscli-PROTOCOL passed=N failed=M`; exit 1 if any failed.
# Outputs are parsed with python (no jq needed).
set -euo pipefail

: "${SLUICE_ENDPOINT:?SLUICE_ENDPOINT is not set}"
AWS=${AWS:-aws}
PY=${PY:-python3}
PROTOCOL=${SMOKE_EXPECT_PROTOCOL:-json}
case "$PROTOCOL" in
  json | query) ;;
  *) echo "SMOKE_EXPECT_PROTOCOL must be json or query, not $PROTOCOL" >&2; exit 2 ;;
esac

# Never read the host's AWS config or credentials; never ask IMDS.
export AWS_ACCESS_KEY_ID=AKIDSLUICESMOKE
export AWS_SECRET_ACCESS_KEY=sluice-smoke-secret
unset AWS_SESSION_TOKEN AWS_PROFILE AWS_DEFAULT_PROFILE
export AWS_DEFAULT_REGION=us-east-1
export AWS_CONFIG_FILE=/dev/null
export AWS_SHARED_CREDENTIALS_FILE=/dev/null
export AWS_EC2_METADATA_DISABLED=true
export AWS_MAX_ATTEMPTS=1
export AWS_PAGER=""

ACCOUNT=${SLUICE_ACCOUNT:-000000000000} # sluice's default account (W3)
QUEUE="smoke-cli-$$-$(date +%s)"
passed=0
failed=0
ERR=$(mktemp)
CALLS=$(mktemp) # one line per CLI call (calls run in subshells)
trap 'rm -f "$ERR" "$CALLS"' EXIT

# Over HTTPS, SLUICE_CA_BUNDLE is the server's CA (a private one in tests).
# Each call is one request (AWS_MAX_ATTEMPTS=1, no list is long enough to page).
sqs() { echo "$1" >>"$CALLS"; "$AWS" sqs --endpoint-url "$SLUICE_ENDPOINT" ${SLUICE_CA_BUNDLE:+--ca-bundle "$SLUICE_CA_BUNDLE"} --output json --cli-connect-timeout 5 --cli-read-timeout 30 "$@"; }

# requests_by_protocol: the server's count of SQS requests by protocol, as
# JSON, from /metrics (over HTTPS trusting SLUICE_CA_BUNDLE).
requests_by_protocol() {
  "$PY" -c '
import json, re, ssl, sys, urllib.request
ctx = ssl.create_default_context(cafile=sys.argv[2] or None)
with urllib.request.urlopen(sys.argv[1].rstrip("/") + "/metrics", timeout=10, context=ctx) as r:
    text = r.read().decode()
counts = {}
for m in re.finditer(r"^sluice_requests_total\{(.*)\} (\d+)$", text, re.M):
    p = re.search(r"protocol=\"([^\"]*)\"", m.group(1))
    if p:
        counts[p.group(1)] = counts.get(p.group(1), 0) + int(m.group(2))
print(json.dumps(counts))
' "$SLUICE_ENDPOINT" "${SLUICE_CA_BUNDLE:-}"
}

ok() { passed=$((passed + 1)); echo "ok - $1"; }
not_ok() {
  failed=$((failed + 1))
  echo "not ok - $1"
  shift
  printf '%s\n' "$@" | sed 's/^/#   /'
}

# assert_json NAME JSON PYTHON-EXPR...: each expression is evaluated with `d`
# bound to the parsed JSON (and hashlib/struct imported) and must be true.
assert_json() {
  local name=$1 json=$2
  shift 2
  local msg
  if msg=$(printf '%s' "$json" | "$PY" -c '
import hashlib, json, struct, sys
d = json.load(sys.stdin)
def md5(s): return hashlib.md5(s.encode("utf-8")).hexdigest()
def md5_attrs(attrs):  # W4, String/Number only
    out = b""
    for n in sorted(attrs):
        a = attrs[n]
        for part in (n, a["DataType"]):
            b = part.encode("utf-8"); out += struct.pack(">I", len(b)) + b
        out += b"\x01"
        v = a["StringValue"].encode("utf-8"); out += struct.pack(">I", len(v)) + v
    return hashlib.md5(out).hexdigest()
for expr in sys.argv[1:]:
    if not eval(expr):
        sys.exit("assertion failed: " + expr + "\n  in " + json.dumps(d, ensure_ascii=False))
' "$@" 2>&1); then
    ok "$name"
  else
    not_ok "$name" "$msg"
  fi
}

if version=$("$AWS" --version 2>&1); then
  echo "# $version, expected protocol $PROTOCOL"
else
  not_ok "aws --version" "$version"
fi
if ! BASELINE=$(requests_by_protocol 2>"$ERR"); then
  not_ok "request counts before the run (/metrics)" "$(cat "$ERR")"
  BASELINE='{}'
fi

# 1. create-queue
if out=$(sqs create-queue --queue-name "$QUEUE" --attributes VisibilityTimeout=40 2>"$ERR"); then
  assert_json create-queue "$out" "d['QueueUrl'].endswith('/$ACCOUNT/$QUEUE')"
  URL=$(printf '%s' "$out" | "$PY" -c 'import json,sys; print(json.load(sys.stdin)["QueueUrl"])')
else
  not_ok create-queue "$(cat "$ERR")"
  echo "smoke-result: suite=awscli-$PROTOCOL passed=$passed failed=$failed"
  exit 1
fi

# 2. send-message with String and Number attributes
BODY='hello from the aws cli ✓ <&> "quoted"'
ATTRS='{"colour":{"DataType":"String","StringValue":"blue ✓"},"count":{"DataType":"Number","StringValue":"42"}}'
if out=$(sqs send-message --queue-url "$URL" --message-body "$BODY" --message-attributes "$ATTRS" 2>"$ERR"); then
  assert_json send-message "$out" \
    "d['MD5OfMessageBody'] == md5('''$BODY''')" \
    "d['MD5OfMessageAttributes'] == md5_attrs(json.loads('''$ATTRS'''))" \
    "len(d['MessageId']) == 36"
else
  not_ok send-message "$(cat "$ERR")"
fi

# 3. receive-message with all attributes
RH=""
if out=$(sqs receive-message --queue-url "$URL" --attribute-names All --message-attribute-names All \
  --wait-time-seconds 1 2>"$ERR"); then
  assert_json receive-message "$out" \
    "len(d['Messages']) == 1" \
    "d['Messages'][0]['Body'] == '''$BODY'''" \
    "d['Messages'][0]['MD5OfBody'] == md5('''$BODY''')" \
    "d['Messages'][0]['MessageAttributes'] == json.loads('''$ATTRS''')" \
    "d['Messages'][0]['MD5OfMessageAttributes'] == md5_attrs(json.loads('''$ATTRS'''))" \
    "d['Messages'][0]['Attributes']['ApproximateReceiveCount'] == '1'"
  RH=$(printf '%s' "$out" | "$PY" -c 'import json,sys
try: print(json.load(sys.stdin)["Messages"][0]["ReceiptHandle"])
except Exception: print("")')
else
  not_ok receive-message "$(cat "$ERR")"
fi

# 4. get-queue-attributes: one message in flight, configured visibility
if out=$(sqs get-queue-attributes --queue-url "$URL" --attribute-names All 2>"$ERR"); then
  assert_json get-queue-attributes "$out" \
    "d['Attributes']['VisibilityTimeout'] == '40'" \
    "d['Attributes']['ApproximateNumberOfMessages'] == '0'" \
    "d['Attributes']['ApproximateNumberOfMessagesNotVisible'] == '1'" \
    "d['Attributes']['QueueArn'] == 'arn:aws:sqs:us-east-1:$ACCOUNT:$QUEUE'"
else
  not_ok get-queue-attributes "$(cat "$ERR")"
fi

# 5. delete-message, then the queue is empty
if [ -z "$RH" ]; then
  not_ok delete-message "no receipt handle (receive-message failed)"
elif out=$(sqs delete-message --queue-url "$URL" --receipt-handle "$RH" 2>"$ERR") &&
  out=$(sqs get-queue-attributes --queue-url "$URL" \
    --attribute-names ApproximateNumberOfMessages ApproximateNumberOfMessagesNotVisible 2>"$ERR"); then
  assert_json delete-message "$out" \
    "d['Attributes'] == {'ApproximateNumberOfMessages': '0', 'ApproximateNumberOfMessagesNotVisible': '0'}"
else
  not_ok delete-message "$(cat "$ERR")"
fi

# 6. error: get-queue-url of a missing queue. The CLI prints
#   An error occurred (AWS.SimpleQueueService.NonExistentQueue) when calling the GetQueueUrl operation: ...
# (botocore takes the code from the x-amzn-query-error header) and exits 255.
rc=0
sqs get-queue-url --queue-name "missing-$QUEUE" >/dev/null 2>"$ERR" || rc=$?
if [ "$rc" -ne 0 ] && grep -q '(AWS.SimpleQueueService.NonExistentQueue) when calling the GetQueueUrl operation' "$ERR"; then
  ok "get-queue-url missing queue -> AWS.SimpleQueueService.NonExistentQueue (exit $rc)"
else
  not_ok "get-queue-url missing queue -> AWS.SimpleQueueService.NonExistentQueue" "exit $rc" "$(cat "$ERR")"
fi

# 7. delete-queue
if sqs delete-queue --queue-url "$URL" >/dev/null 2>"$ERR" &&
  out=$(sqs list-queues --queue-name-prefix smoke-cli- 2>"$ERR"); then
  [ -n "$out" ] || out='{}'
  assert_json delete-queue "$out" "'$URL' not in d.get('QueueUrls', [])"
else
  not_ok delete-queue "$(cat "$ERR")"
fi

# 8. the protocol: the server counted every call as $PROTOCOL, and nothing
# else in between (W1).
if now=$(requests_by_protocol 2>"$ERR"); then
  calls=$(wc -l <"$CALLS")
  assert_json "server counted all $calls calls as $PROTOCOL" \
    "{\"before\": $BASELINE, \"after\": $now}" \
    "{p: n - d['before'].get(p, 0) for p, n in d['after'].items() if n != d['before'].get(p, 0)} == {'$PROTOCOL': $calls}"
else
  not_ok "request counts after the run (/metrics)" "$(cat "$ERR")"
fi

echo "smoke-result: suite=awscli-$PROTOCOL passed=$passed failed=$failed"
[ "$failed" -eq 0 ]
