"""What the smoke scripts share: each check counted, every failure shown,
and the one summary line scripts/client-smoke reads."""

import sys
import traceback

results = {"passed": 0, "failed": 0}


def check(name, fn):
    """Runs `fn` as the check `name`: passed unless it raises."""
    try:
        fn()
        results["passed"] += 1
        print(f"ok - {name}")
    except Exception:  # noqa: BLE001 - a smoke test reports every failure
        results["failed"] += 1
        print(f"not ok - {name}")
        traceback.print_exc(file=sys.stdout)


def finish(suite):
    """Prints the summary line and exits, non-zero when a check failed."""
    print(f"smoke-result: suite={suite} passed={results['passed']} failed={results['failed']}")
    sys.exit(1 if results["failed"] else 0)
