#!/usr/bin/env bash
# Client smoke test: sluice's SNS through the AWS CLI v1 (`awscli` from PyPI),
# unchanged: `aws sns` (AWS Query, Version=2010-03-31, rule N1) on the same
# port as `aws sqs`: the topic's lifecycle, raw and enveloped delivery, a
# filter policy, a FIFO topic and an HTTP endpoint in this script.
#
# Run by scripts/client-smoke on each engine, which starts sluice, sets
# SLUICE_ENDPOINT and puts the client venv first on PATH. By hand:
#   SLUICE_ENDPOINT=http://127.0.0.1:PORT PATH=target/client-venv/bin:$PATH \
#     bash tests/clients/python/smoke_awscli_sns.sh
#
# Output: `ok - NAME` / `not ok - NAME` per step, then
# `smoke-result: suite=awscli-sns passed=N failed=M`; exit 1 if any failed.
# Outputs are parsed with python (no jq needed).
set -euo pipefail

: "${SLUICE_ENDPOINT:?SLUICE_ENDPOINT is not set}"
AWS=${AWS:-aws}
PY=${PY:-python3}

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

ACCOUNT=${SLUICE_ACCOUNT:-000000000000} # sluice's default account
TOPIC="smoke-cli-sns-$$-$(date +%s)"
QUEUE="$TOPIC-q"
passed=0
failed=0
ERR=$(mktemp)
trap 'rm -f "$ERR"' EXIT

aws_() {
  local service=$1
  shift
  "$AWS" "$service" --endpoint-url "$SLUICE_ENDPOINT" ${SLUICE_CA_BUNDLE:+--ca-bundle "$SLUICE_CA_BUNDLE"} \
    --output json --cli-connect-timeout 5 --cli-read-timeout 30 "$@"
}

ok() { passed=$((passed + 1)); echo "ok - $1"; }
not_ok() {
  failed=$((failed + 1))
  echo "not ok - $1"
  shift
  printf '%s\n' "$@" | sed 's/^/#   /'
}

# assert_json NAME JSON PYTHON-EXPR...: each expression is evaluated with `d`
# bound to the parsed JSON and must be true.
assert_json() {
  local name=$1 json=$2
  shift 2
  local msg
  if msg=$(printf '%s' "$json" | "$PY" -c '
import json, sys
d = json.load(sys.stdin)
for expr in sys.argv[1:]:
    if not eval(expr):
        sys.exit("assertion failed: " + expr + "\n  in " + json.dumps(d, ensure_ascii=False))
' "$@" 2>&1); then
    ok "$name"
  else
    not_ok "$name" "$msg"
  fi
}

field() { "$PY" -c 'import json,sys; print(json.load(sys.stdin)[sys.argv[1]])' "$1"; }

if version=$("$AWS" --version 2>&1); then
  echo "# $version"
else
  not_ok "aws --version" "$version"
fi

# 1. create-topic, twice: the same ARN (N1)
TOPIC_ARN="arn:aws:sns:us-east-1:$ACCOUNT:$TOPIC"
if out=$(aws_ sns create-topic --name "$TOPIC" 2>"$ERR") &&
  again=$(aws_ sns create-topic --name "$TOPIC" 2>"$ERR"); then
  assert_json "n1 create-topic (idempotent)" "{\"first\": $out, \"again\": $again}" \
    "d['first']['TopicArn'] == '$TOPIC_ARN'" "d['again'] == d['first']"
else
  not_ok "n1 create-topic" "$(cat "$ERR")"
  echo "smoke-result: suite=awscli-sns passed=$passed failed=$failed"
  exit 1
fi

# 2. a queue, and subscribe it raw (N3)
QUEUE_URL=""
SUB_ARN=""
if out=$(aws_ sqs create-queue --queue-name "$QUEUE" 2>"$ERR"); then
  QUEUE_URL=$(printf '%s' "$out" | field QueueUrl)
  QUEUE_ARN="arn:aws:sqs:us-east-1:$ACCOUNT:$QUEUE"
  if out=$(aws_ sns subscribe --topic-arn "$TOPIC_ARN" --protocol sqs --notification-endpoint "$QUEUE_ARN" \
    --attributes RawMessageDelivery=true --return-subscription-arn 2>"$ERR"); then
    assert_json "n1 subscribe" "$out" "d['SubscriptionArn'].startswith('$TOPIC_ARN:')"
    SUB_ARN=$(printf '%s' "$out" | field SubscriptionArn)
  else
    not_ok "n1 subscribe" "$(cat "$ERR")"
  fi
else
  not_ok "create-queue" "$(cat "$ERR")"
fi

# 3. list-subscriptions-by-topic names it
if out=$(aws_ sns list-subscriptions-by-topic --topic-arn "$TOPIC_ARN" 2>"$ERR"); then
  assert_json "n1 list-subscriptions-by-topic" "$out" \
    "[s['SubscriptionArn'] for s in d['Subscriptions']] == ['$SUB_ARN']" \
    "d['Subscriptions'][0]['Protocol'] == 'sqs'" \
    "d['Subscriptions'][0]['Endpoint'] == '$QUEUE_ARN'" \
    "d['Subscriptions'][0]['TopicArn'] == '$TOPIC_ARN'" \
    "d['Subscriptions'][0]['Owner'] == '$ACCOUNT'"
else
  not_ok "n1 list-subscriptions-by-topic" "$(cat "$ERR")"
fi

# 4. publish with an attribute; the queue has it before the answer (N2, N3)
BODY='hello from aws sns ✓ <&> "quoted"'
if out=$(aws_ sns publish --topic-arn "$TOPIC_ARN" --message "$BODY" \
  --message-attributes '{"colour":{"DataType":"String","StringValue":"blue"}}' 2>"$ERR"); then
  assert_json "n2 publish" "$out" "len(d['MessageId']) == 36"
  if [ -n "$QUEUE_URL" ] && got=$(aws_ sqs receive-message --queue-url "$QUEUE_URL" --message-attribute-names All \
    --wait-time-seconds 0 2>"$ERR"); then
    [ -n "$got" ] || got='{}'
    assert_json "n3 raw delivery received with aws sqs" "$got" \
      "len(d.get('Messages', [])) == 1" \
      "d['Messages'][0]['Body'] == '''$BODY'''" \
      "d['Messages'][0]['MessageAttributes'] == {'colour': {'DataType': 'String', 'StringValue': 'blue'}}"
  else
    not_ok "n3 raw delivery received with aws sqs" "$(cat "$ERR")"
  fi
else
  not_ok "n2 publish" "$(cat "$ERR")"
fi

# 4b. a filter policy set with set-subscription-attributes: only the
# matching publish reaches the queue (N4)
RED_URL=""
if out=$(aws_ sqs create-queue --queue-name "$QUEUE-red" 2>"$ERR"); then
  RED_URL=$(printf '%s' "$out" | field QueueUrl)
  if sub=$(aws_ sns subscribe --topic-arn "$TOPIC_ARN" --protocol sqs \
    --notification-endpoint "arn:aws:sqs:us-east-1:$ACCOUNT:$QUEUE-red" --return-subscription-arn 2>"$ERR") &&
    aws_ sns set-subscription-attributes --subscription-arn "$(printf '%s' "$sub" | field SubscriptionArn)" \
      --attribute-name FilterPolicy --attribute-value '{"colour":["red"]}' >/dev/null 2>"$ERR" &&
    aws_ sns publish --topic-arn "$TOPIC_ARN" --message not-red \
      --message-attributes '{"colour":{"DataType":"String","StringValue":"blue"}}' >/dev/null 2>"$ERR" &&
    aws_ sns publish --topic-arn "$TOPIC_ARN" --message red \
      --message-attributes '{"colour":{"DataType":"String","StringValue":"red"}}' >/dev/null 2>"$ERR" &&
    got=$(aws_ sqs receive-message --queue-url "$RED_URL" --max-number-of-messages 10 --wait-time-seconds 0 2>"$ERR"); then
    [ -n "$got" ] || got='{}'
    # Not raw: the envelope carries the message.
    assert_json "n4 a filter policy lets only the matching message through" "$got" \
      "[json.loads(m['Body'])['Message'] for m in d.get('Messages', [])] == ['red']" \
      "json.loads(d['Messages'][0]['Body'])['Type'] == 'Notification'"
  else
    not_ok "n4 filter policy" "$(cat "$ERR")"
  fi
else
  not_ok "n4 create-queue" "$(cat "$ERR")"
fi

# 4c. a FIFO topic into a FIFO queue: the group's order, a duplicate
# dropped, sequence numbers (N7)
FIFO_TOPIC_ARN="arn:aws:sns:us-east-1:$ACCOUNT:$TOPIC.fifo"
FIFO_URL=""
if aws_ sns create-topic --name "$TOPIC.fifo" --attributes FifoTopic=true,ContentBasedDeduplication=true \
  >/dev/null 2>"$ERR" &&
  out=$(aws_ sqs create-queue --queue-name "$QUEUE.fifo" --attributes FifoQueue=true 2>"$ERR") &&
  FIFO_URL=$(printf '%s' "$out" | field QueueUrl) &&
  aws_ sns subscribe --topic-arn "$FIFO_TOPIC_ARN" --protocol sqs \
    --notification-endpoint "arn:aws:sqs:us-east-1:$ACCOUNT:$QUEUE.fifo" \
    --attributes RawMessageDelivery=true >/dev/null 2>"$ERR" &&
  first=$(aws_ sns publish --topic-arn "$FIFO_TOPIC_ARN" --message one --message-group-id g 2>"$ERR") &&
  aws_ sns publish --topic-arn "$FIFO_TOPIC_ARN" --message two --message-group-id g >/dev/null 2>"$ERR" &&
  aws_ sns publish --topic-arn "$FIFO_TOPIC_ARN" --message one --message-group-id g >/dev/null 2>"$ERR" &&
  got=$(aws_ sqs receive-message --queue-url "$FIFO_URL" --max-number-of-messages 10 --wait-time-seconds 0 2>"$ERR"); then
  [ -n "$got" ] || got='{}'
  assert_json "n7 a FIFO topic keeps the group's order and drops the duplicate" \
    "{\"first\": $first, \"got\": $got}" \
    "d['first']['SequenceNumber'].isdigit()" \
    "[m['Body'] for m in d['got'].get('Messages', [])] == ['one', 'two']"
else
  not_ok "n7 FIFO topic" "$(cat "$ERR")"
fi

# 4d. an HTTP endpoint (a python listener writing each POST to a file) is
# confirmed with confirm-subscription and its token, then notified (N6)
HOOK_DIR=$(mktemp -d)
"$PY" - "$HOOK_DIR" <<'EOF' &
import http.server, os, sys
d = sys.argv[1]
seen = [0]
class H(http.server.BaseHTTPRequestHandler):
    def do_POST(self):
        body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
        kind = self.headers.get("x-amz-sns-message-type", "none")
        seen[0] += 1
        # Written whole, then named, so the script never reads half a file.
        with open(os.path.join(d, "partial"), "wb") as f:
            f.write(body)
        os.replace(os.path.join(d, "partial"), os.path.join(d, f"{seen[0]:03d}-{kind}.json"))
        self.send_response(200)
        self.send_header("Content-Length", "0")
        self.end_headers()
    def log_message(self, *a):
        pass
s = http.server.HTTPServer(("127.0.0.1", 0), H)
with open(os.path.join(d, "partial"), "w") as f:
    f.write(str(s.server_address[1]))
os.replace(os.path.join(d, "partial"), os.path.join(d, "port"))
s.serve_forever()
EOF
HOOK_PID=$!
wait_for() { # wait_for GLOB: the first file matching it, within 10 s
  for _ in $(seq 100); do
    for f in $HOOK_DIR/$1; do [ -e "$f" ] && { echo "$f"; return 0; }; done
    sleep 0.1
  done
  return 1
}
if wait_for port >/dev/null &&
  aws_ sns subscribe --topic-arn "$TOPIC_ARN" --protocol http \
    --notification-endpoint "http://127.0.0.1:$(cat "$HOOK_DIR/port")/hook" >/dev/null 2>"$ERR" &&
  confirmation=$(wait_for '*-SubscriptionConfirmation.json') &&
  token=$(field Token <"$confirmation") &&
  confirmed=$(aws_ sns confirm-subscription --topic-arn "$TOPIC_ARN" --token "$token" 2>"$ERR") &&
  aws_ sns publish --topic-arn "$TOPIC_ARN" --message "to the hook" >/dev/null 2>"$ERR" &&
  notification=$(wait_for '*-Notification.json'); then
  assert_json "n6 an HTTP endpoint confirmed with confirm-subscription, then notified" \
    "{\"confirmed\": $confirmed, \"notification\": $(cat "$notification")}" \
    "d['confirmed']['SubscriptionArn'].startswith('$TOPIC_ARN:')" \
    "d['notification']['Type'] == 'Notification'" \
    "d['notification']['Message'] == 'to the hook'"
else
  not_ok "n6 HTTP subscription" "$(cat "$ERR")" "$(ls "$HOOK_DIR")"
fi
kill "$HOOK_PID" 2>/dev/null || true
rm -rf "$HOOK_DIR"

# 5. list-topics lists it
if out=$(aws_ sns list-topics 2>"$ERR"); then
  assert_json "n1 list-topics" "$out" "'$TOPIC_ARN' in [t['TopicArn'] for t in d['Topics']]"
else
  not_ok "n1 list-topics" "$(cat "$ERR")"
fi

# 6. delete-topic, then get-topic-attributes is NotFound; deleting again succeeds (N1)
if aws_ sns delete-topic --topic-arn "$TOPIC_ARN" >/dev/null 2>"$ERR" &&
  aws_ sns delete-topic --topic-arn "$TOPIC_ARN" >/dev/null 2>"$ERR"; then
  rc=0
  aws_ sns get-topic-attributes --topic-arn "$TOPIC_ARN" >/dev/null 2>"$ERR" || rc=$?
  if [ "$rc" -ne 0 ] && grep -q '(NotFound) when calling the GetTopicAttributes operation' "$ERR"; then
    ok "n1 delete-topic, then get-topic-attributes -> NotFound (exit $rc)"
  else
    not_ok "n1 delete-topic, then get-topic-attributes -> NotFound" "exit $rc" "$(cat "$ERR")"
  fi
else
  not_ok "n1 delete-topic" "$(cat "$ERR")"
fi

for url in "$QUEUE_URL" "$RED_URL" "$FIFO_URL"; do
  [ -z "$url" ] || aws_ sqs delete-queue --queue-url "$url" >/dev/null 2>&1 || true
done
aws_ sns delete-topic --topic-arn "$FIFO_TOPIC_ARN" >/dev/null 2>&1 || true

echo "smoke-result: suite=awscli-sns passed=$passed failed=$failed"
[ "$failed" -eq 0 ]
