import os
import time


def test_sleeps_when_asked():
    # capture.sh sets SUITE_SLEEP to make a run that gets killed in the middle.
    time.sleep(float(os.environ.get("SUITE_SLEEP", "0")))
