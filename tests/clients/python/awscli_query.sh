#!/usr/bin/env bash
# The AWS CLI that speaks SQS's AWS Query protocol: awscli 1.29.80, which
# requires botocore 1.31.80, the last botocore whose SQS model is `query`
# (requirements-query-cli.txt). scripts/client-smoke installs both with
# `pip install --target target/client-venv/query-cli`; this runs that CLI
# with the client venv's python, the folder first on PYTHONPATH so that its
# awscli and botocore come before the venv's current ones. Arguments are the
# CLI's: smoke_awscli.sh runs it as AWS=tests/clients/python/awscli_query.sh.
#
#   SLUICE_QUERY_CLI  the --target folder (default target/client-venv/query-cli)
#   PY                the python to run it with (default target/client-venv/bin/python)
set -euo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../../.." && pwd)
DIR=${SLUICE_QUERY_CLI:-$ROOT/target/client-venv/query-cli}
if [ ! -d "$DIR/awscli" ] || [ ! -d "$DIR/botocore" ]; then
  echo "awscli_query.sh: no awscli and botocore in $DIR (scripts/client-smoke installs them)" >&2
  exit 2
fi
PYTHONPATH=$DIR${PYTHONPATH:+:$PYTHONPATH} exec "${PY:-$ROOT/target/client-venv/bin/python}" -m awscli "$@"
