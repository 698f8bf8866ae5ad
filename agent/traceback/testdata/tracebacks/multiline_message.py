raise RuntimeError("first line\nsecond line")
