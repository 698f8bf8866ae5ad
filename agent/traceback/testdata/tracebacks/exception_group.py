raise ExceptionGroup("several", [ValueError("one"), TypeError("two")])
