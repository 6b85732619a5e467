#!/usr/bin/env python3
"""Runs the fidelity cases (see fidelity.py for what they are and how to run them)."""

import os
import sys
import traceback

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import botocore  # noqa: E402

import fidelity  # noqa: E402
import cases_core  # noqa: E402,F401  (each module registers its cases)
import cases_dlq  # noqa: E402,F401
import cases_fifo  # noqa: E402,F401
import cases_messages  # noqa: E402,F401
import cases_query_api  # noqa: E402,F401
import cases_regions  # noqa: E402,F401
import cases_sns_topics  # noqa: E402,F401
import cases_sns_subscriptions  # noqa: E402,F401
import cases_sns_publish  # noqa: E402,F401
import cases_sns_filter  # noqa: E402,F401
import cases_sns_http  # noqa: E402,F401
import sns_common  # noqa: E402


def main(argv):
    only = argv[argv.index("-k") + 1] if "-k" in argv else None
    suite = f"fidelity-{fidelity.PROTOCOL} (botocore {botocore.__version__})"
    per_cat = {}
    passed = failed = skipped = 0
    for category, name, rule, source, fn in fidelity.CASES:
        if only and only not in f"{category}/{name}":
            continue
        try:
            fn()
        except fidelity.Skip as why:
            skipped += 1
            print(f"ok - {category}/{name} [{rule}] # SKIP {why}", flush=True)
            continue
        except Exception as e:  # noqa: BLE001  (a case fails on any exception)
            failed += 1
            per_cat.setdefault(category, [0, 0])[1] += 1
            why = str(e).replace("\n", " ")[:600]
            print(f"not ok - {category}/{name} [{rule}]: {type(e).__name__}: {why}", flush=True)
            if os.environ.get("FIDELITY_TRACE"):
                traceback.print_exc()
        else:
            passed += 1
            per_cat.setdefault(category, [0, 0])[0] += 1
            print(f"ok - {category}/{name} [{rule}]", flush=True)
    sns_common.cleanup()
    fidelity.cleanup()
    for category, (p, f) in sorted(per_cat.items()):
        print(f"category: {category} passed={p} failed={f}")
    sns = [(p, f) for category, (p, f) in per_cat.items() if category.startswith("sns-")]
    if sns:
        sns_passed = sum(p for p, _ in sns)
        sns_total = sum(p + f for p, f in sns)
        print(f"sns-recorded: {sns_passed} of {sns_total} cases restating AWS's recorded SNS answers pass")
    print(f"skipped: {skipped}")
    print(f"smoke-result: suite={suite} passed={passed} failed={failed}")
    return 1 if failed or not passed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
